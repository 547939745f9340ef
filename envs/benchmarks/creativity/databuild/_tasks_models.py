"""Records of the task sampling pipeline (paper §4.2, App. D): its settings, its LLM stage outputs, its seeds.

The LLM stages answer in these models (validated by ``ask_json``, stored in the checkpoint store):
``TaskText`` (stage C, the first-person task and its four-step solution) and ``PartVerdicts``
(stage D, the gold entity's other parts, and stage F, every part of a candidate distractor, each
compared with the gold). ``TaskSeed`` is a hand-written stage C output tied to its gold, the form
LateralGym's shipped sample is written in.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

from lateralgym.databuild import DEFAULT_REASK_TEMPERATURE
from lateralgym.envs.benchmarks.creativity import PartJudgement, ReferenceSolution, SceneItem
from lateralgym.envs.benchmarks.creativity._schema import Scene

__all__ = [
    "BANDS",
    "DISTRACTOR_COUNTS",
    "GoldRef",
    "ItemText",
    "PartVerdict",
    "PartVerdicts",
    "TaskBuildConfig",
    "TaskSeed",
    "TaskText",
    "verdicts_schema",
]

BANDS: tuple[tuple[int, int], ...] = ((2, 4), (5, 10), (10, 50))
"""The paper's cluster size bands; a size in two bands (10) takes the higher one (the lower bound decides)."""

DISTRACTOR_COUNTS: tuple[int, ...] = (3, 6, 9, 12)
"""Distractor counts of the tiers (each crossed with similar / mixed / dissimilar)."""


@dataclass(frozen=True, order=True)
class GoldRef:
    """One affordance of the KB, a gold candidate: entity id, part name and index in the part's affordances."""

    entity_id: str
    part: str
    index: int

    @property
    def key(self) -> str:
        """The checkpoint key of everything asked about this gold: ``<entity id>#<part>#<index>``."""
        return f"{self.entity_id}#{self.part}#{self.index}"


class TaskBuildConfig(BaseModel):
    """Settings of a task build; defaults follow the paper (§4.2, App. D)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    per_tier: int = Field(default=10, ge=1)
    """Golds per (scene, cluster band, level) tier (paper: 10)."""
    diameter: float = Field(default=0.35, gt=0, lt=2)
    """Hard cap on a cluster's diameter, in cosine distance (complete linkage cut here)."""
    embed_field: Literal["action", "category"] = "action"
    """What is embedded per affordance: its description (paper), or its functional category."""
    cluster_scope: Literal["scene", "kb"] = "scene"
    """Cluster the affordances of each scene (paper) or of the whole KB at once."""
    distractor_scope: Literal["scene", "kb"] = "scene"
    """Draw distractors from the gold's scene (paper) or from the whole KB (a small KB)."""
    pool_size: int = Field(default=30, ge=1)
    """Candidate entities in the near pool and in the far pool each (paper: 30)."""
    counts: tuple[Annotated[int, Field(ge=1)], ...] = Field(default=DISTRACTOR_COUNTS, min_length=1)
    """Distractor counts of the tiers (paper: 3, 6, 9, 12; a trial build over a tiny KB may ask for 1 or 2)."""
    max_strata: int | None = Field(default=None, ge=1)
    """Draw golds from the first this many (scene, band, level) strata only, in sorted order (a trial
    build); None: every stratum (paper)."""
    tiers_per_gold: int | None = Field(default=None, ge=1)
    """Keep at most this many of a gold's tiers (the least used so far); None keeps all (paper)."""
    max_difficulty: int = Field(default=4, ge=1, le=5)
    """A candidate part judged harder than this to tell from the gold (ambiguous) excludes its entity."""
    seed: int = 0
    """Seed of every draw (gold order, distractor picks, entity order)."""
    test_fraction: float = Field(default=0.25, ge=0, le=1)
    """Share of tasks whose gold entities go to the test split."""
    text_temperature: float = Field(default=0.7, ge=0, le=2)
    """Temperature of stage C (writing the task)."""
    judge_temperature: float = Field(default=0.0, ge=0, le=2)
    """Temperature of stages D and F (the judges; paper: 0)."""
    reask_temperature: float = Field(default=DEFAULT_REASK_TEMPERATURE, ge=0, le=2)
    """Temperature of a re-ask after an invalid reply, with a per-attempt seed (every LLM stage); a first ask
    uses the stage's own temperature."""
    constrained_json: Literal["json_object", "json_schema"] | None = None
    """Send each LLM stage's JSON schema in ``response_format`` in this form (``ask_json``); None: prompts only."""


class _Lenient(BaseModel):
    """A model's JSON answer: extra keys are ignored, text is stripped."""

    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True, frozen=True)


def _at_most(limit: int) -> AfterValidator:
    """A length cap checked after parsing but left out of the JSON schema: llama.cpp's converter turns
    ``maxLength: N`` into N nested optional rules, and llama-cpp-python 0.3.36's server crashed on a schema
    with caps of 800 and 1200 (``--constrained-json``); caps of 200 are fine and stay in the schema."""

    def check(value: str) -> str:
        if len(value) > limit:
            raise ValueError(f"String should have at most {limit} characters")
        return value

    return AfterValidator(check)


class ItemText(_Lenient):
    """A loose item of the task's scene, as stage C writes it."""

    name: str = Field(min_length=1, max_length=80)
    description: Annotated[str, _at_most(800)] = ""


class TaskText(_Lenient):
    """Stage C: the first-person task, its recipient and other items, and the four-step solution."""

    task: Annotated[str, Field(min_length=20), _at_most(1200)]
    """The problem in the first person, hiding the entity, the part and the mechanism."""
    recipient: ItemText
    """The thing the task acts on."""
    other_items: tuple[ItemText, ...] = Field(default=(), max_length=6)
    """Other loose items in the scene (not the answer)."""
    solution: ReferenceSolution
    """prepare_recipient, prepare_use_condition, prepare_environment_condition, apply_affordance."""


class PartVerdict(_Lenient):
    """Stage D / F: one part compared with the gold."""

    part: str = Field(min_length=1)
    similar_affordance: bool
    """Could the part do a similar job?"""
    similar_affordance_reason: str = ""
    affordance: str = ""
    """The similar use, as a verb phrase ("" when none)."""
    gold_change: bool
    """Should it replace the gold (better on accessibility, safety, willingness or commonness)?"""
    gold_change_reason: str = ""
    decision_difficulty: Annotated[int, Field(ge=1, le=5, json_schema_extra={"enum": [1, 2, 3, 4, 5]})] | None = None
    """1 (obvious) to 5 (cannot tell which is better); null when not similar (the JSON schema lists the values,
    for grammar-constrained decoding)."""

    @field_validator("decision_difficulty", mode="before")
    @classmethod
    def _na_is_none(cls, value: Any) -> Any:
        if isinstance(value, str) and value.strip().upper() in ("", "NA", "N/A", "NONE", "NULL"):
            return None
        return value

    @field_validator("affordance", mode="before")
    @classmethod
    def _na_is_empty(cls, value: Any) -> Any:
        if value is None or (isinstance(value, str) and value.strip().upper() in ("NA", "N/A", "NONE")):
            return ""
        return value

    def judgement(self) -> PartJudgement:
        """The schema's ``PartJudgement`` of this verdict (the task's ``judge_output`` entry)."""
        return PartJudgement(**self.model_dump())


class PartVerdicts(_Lenient):
    """Stage D / F: the verdicts on every part asked about."""

    parts: tuple[PartVerdict, ...]


@functools.lru_cache(maxsize=4096)
def verdicts_schema(parts: tuple[str, ...]) -> type[PartVerdicts]:
    """``PartVerdicts`` that must judge exactly ``parts``, once each (a reply that skips one is re-asked)."""

    def _exactly(schema: dict[str, Any]) -> None:
        # The rule as a JSON schema (for grammar-constrained decoding): one verdict per part, in the
        # order asked, each naming its part (an enum alone let a small model judge one part twice).
        verdicts = []
        for name in parts:
            verdict = PartVerdict.model_json_schema()
            verdict["properties"]["part"] = {"const": name, "title": "Part", "type": "string"}
            verdicts.append(verdict)
        schema["properties"]["parts"] = {
            "items": False,
            "maxItems": len(parts),
            "minItems": len(parts),
            "prefixItems": verdicts,
            "title": "Parts",
            "type": "array",
        }

    class Checked(PartVerdicts):
        model_config = ConfigDict(json_schema_extra=_exactly)

        @model_validator(mode="after")
        def _exactly_these_parts(self) -> Checked:
            got = [v.part for v in self.parts]
            if sorted(got) != sorted(parts):
                raise ValueError(f"judge exactly these parts, once each: {list(parts)}; got {got}")
            return self

    Checked.__name__ = "PartVerdicts"
    return Checked


class TaskSeed(BaseModel):
    """A hand-written task before distractor sampling: a stage C output tied to its gold affordance."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    id: str = Field(min_length=1)
    """Unique seed id, e.g. ``garage-pry-01``."""
    scene: Scene
    """Scene of the task; must be the gold entity's scene."""
    gold_entity_id: str
    """KB id of the gold entity."""
    gold_part: str
    """snake_case name of the gold part."""
    gold_affordance_index: int = Field(ge=0)
    """Index of the gold affordance in the part's ``affordances``."""
    task: str = Field(min_length=1)
    """First-person problem statement; never names the gold entity or part."""
    recipient: SceneItem
    """The thing the task is about (``interactable`` true)."""
    other_items: tuple[SceneItem, ...] = ()
    """Other loose items in the scene."""
    solution: ReferenceSolution
    """Four-step reference solution."""

    @property
    def gold(self) -> GoldRef:
        """The gold affordance this seed was written for."""
        return GoldRef(self.gold_entity_id, self.gold_part, self.gold_affordance_index)

    def task_text(self) -> TaskText:
        """The seed as a stage C record."""
        return TaskText(
            task=self.task,
            recipient=ItemText(name=self.recipient.name, description=self.recipient.description),
            other_items=tuple(ItemText(name=i.name, description=i.description) for i in self.other_items),
            solution=self.solution,
        )
