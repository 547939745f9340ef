"""CreativityBench's data model: the affordance knowledge base and the task.

All models are pydantic v2 and frozen. Field docstrings are the documentation of the JSONL formats
the package ships and that users can bring (see ``lateralgym.envs.load_items``).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, Field, ValidationInfo, field_validator, model_validator

from lateralgym.envs._items import Count, Flag, FrozenRecord, Text
from lateralgym.envs._jsonl import SharedList
from lateralgym.envs._matching import snake

Scene = Literal["kitchen", "living_room", "bedroom", "bathroom", "garage", "home_office", "dining_room", "garden"]
"""The eight household scenes of CreativityBench."""

SCENES: tuple[Scene, ...] = (
    "kitchen",
    "living_room",
    "bedroom",
    "bathroom",
    "garage",
    "home_office",
    "dining_room",
    "garden",
)

DistractorSimilarity = Literal["similar", "mixed", "dissimilar"]
"""Distractor similarity tier; the CreativityBench release calls them difficult / medium / low."""

ClusterBand = Literal["small", "medium", "large"]
"""Gold cluster size band, CreativityBench's three size ranges (2-4, 5-10, 10-50 members), told apart
by the lower bound of the task's ``cluster_size_range``: below 5 ``small``, 5 to 9 ``medium``, 10 or
more ``large``."""

CLUSTER_MEDIUM_FROM = 5
"""Clusters whose size range starts at this many members or more (and below ``CLUSTER_LARGE_FROM``)
are ``medium``: the paper's 5-10 range."""
CLUSTER_LARGE_FROM = 10
"""Clusters whose size range starts at this many members or more are ``large``: the paper's 10-50
range (its 5-10 and 10-50 ranges share 10, so the lower bound decides)."""


class PhysicalAttributes(FrozenRecord):
    """What a part is made of and how it is shaped; stable properties."""

    material: str = ""
    """Main material, e.g. ``"stainless steel"``."""
    shape: str = ""
    """Overall shape, e.g. ``"flat rectangular blade"``."""
    size: str = ""
    """Size in everyday words, e.g. ``"palm-sized"``."""
    weight: str = ""
    """``"light"``, ``"moderate"`` or ``"heavy"`` (free text allowed)."""
    surface: str = ""
    """Texture and finish, e.g. ``"smooth, glossy"``."""
    rigidity: str = ""
    """E.g. ``"rigid"``, ``"flexible"``, ``"elastic"``."""
    edges: str = ""
    """Edge and tip character, e.g. ``"sharp serrated edge"``."""
    thickness: str = ""
    """E.g. ``"2 mm sheet"``; the KB pipeline's (paper App. C) attribute, empty in hand-written data."""
    local_features: str = ""
    """Holes, hooks, ridges, teeth..., e.g. ``"a hanging hole at the end"`` (paper App. C)."""
    durability: str = ""
    """How much use or force it survives, e.g. ``"dents under hard blows"`` (paper App. C)."""
    elasticity: str = ""
    """Whether it springs back, e.g. ``"springs back when bent slightly"`` (paper App. C)."""
    others: str = ""
    """Any other physical attribute that matters for use (paper App. C)."""
    description: str = ""
    """Free-text summary; the only field the official CreativityBench release fills."""

    def render(self) -> str:
        """One line a person reads, fields in a fixed order (deterministic)."""
        return _render_fields(
            self,
            (
                "material",
                "shape",
                "size",
                "weight",
                "surface",
                "rigidity",
                "edges",
                "thickness",
                "local_features",
                "durability",
                "elasticity",
                "others",
            ),
        )


class StateAttributes(FrozenRecord):
    """The part's current condition in the scene; can change."""

    visibility: str = ""
    """E.g. ``"visible"``, ``"partially hidden"``."""
    accessibility: str = ""
    """E.g. ``"free"``, ``"blocked by the lid"``, ``"needs a screwdriver to remove"``."""
    moisture: str = ""
    """E.g. ``"dry"``, ``"damp"``."""
    temperature: str = ""
    """E.g. ``"room temperature"``, ``"hot"``."""
    fill: str = ""
    """Contents, e.g. ``"empty"``, ``"half full of water"``."""
    condition: str = ""
    """Wear or damage, e.g. ``"intact"``, ``"cracked"``."""
    internal: str = ""
    """Internal state beyond contents, e.g. ``"battery charged"``, ``"spring wound"`` (paper App. C)."""
    others: str = ""
    """Any other state that matters for use (paper App. C)."""
    description: str = ""
    """Free-text summary; the only field the official CreativityBench release fills."""

    def render(self) -> str:
        """One line a person reads, fields in a fixed order (deterministic)."""
        return _render_fields(
            self,
            ("visibility", "accessibility", "moisture", "temperature", "fill", "condition", "internal", "others"),
        )


def _render_fields(model: BaseModel, names: tuple[str, ...]) -> str:
    parts = [f"{name}: {getattr(model, name)}" for name in names if getattr(model, name)]
    description = getattr(model, "description", "")
    if description:
        parts.append(description)
    return "; ".join(parts) if parts else "NA"


class Affordance(FrozenRecord):
    """What a part can be used for, and under which conditions."""

    action: Text
    """The use, as a verb phrase: ``"pry open a stuck lid"``."""
    category: str = ""
    """A short snake_case functional class (``"pry"``, ``"wipe"``); parts sharing it form a cluster."""
    use_condition: str = "NA"
    """How the part must be held, prepared or positioned."""
    environment_condition: str = "NA"
    """What the surroundings must offer, or ``"NA"``."""
    recipient_condition: str = "NA"
    """What the thing acted on must be like."""
    enabling_attributes: tuple[Text, ...] = ()
    """Attribute names (``"edges"``, ``"rigidity"``) or phrases that make the use possible."""
    example_recipients: tuple[Text, ...] = ()
    """Things this use could act on."""
    failure_cases: tuple[Text, ...] = ()
    """When the use goes wrong."""
    level: Count = Field(ge=0, le=5)
    """0 = normal, designed use; 1..5 = emergency (creative) use, 5 the most far-fetched."""


class Part(FrozenRecord):
    """One part of an entity, with its attributes and affordances."""

    name: str
    """snake_case part name, unique within its entity (``"led_bulbs"``)."""
    physical: PhysicalAttributes = PhysicalAttributes()
    """Stable physical attributes."""
    state: StateAttributes = StateAttributes()
    """Current state in the scene."""
    affordances: tuple[Affordance, ...] = ()
    """Uses of this part; empty for parts loaded from the official release."""
    function: str = ""
    """What the part is for within its entity (the KB pipeline's partonomy, paper App. C); not shown to the player."""
    connected_to: tuple[str, ...] = ()
    """snake_case names of the entity's parts this one is attached to (the pipeline's partonomy connectivity)."""

    @field_validator("name")
    @classmethod
    def _snake_name(cls, value: str) -> str:
        if not value or snake(value) != value:
            raise ValueError(f"part name must be snake_case (got {value!r}; use {snake(value)!r})")
        return value

    def render(self) -> str:
        """``name: physical — ...; state — ...`` without any affordance."""
        return f"{self.name}: physical — {self.physical.render()}; state — {self.state.render()}"


class Entity(FrozenRecord):
    """A household object in a scene. Variants (same name, other attributes) have their own ids."""

    id: Text
    """Unique id across the knowledge base, e.g. ``"kitchen/cast_iron_skillet/1"``."""
    name: Text
    """The name the player sees; variants may carry an index suffix."""
    scene: Scene
    """The scene the entity belongs to."""
    parts: tuple[Part, ...] = Field(min_length=1, max_length=8)
    """One to eight parts."""

    @field_validator("parts")
    @classmethod
    def _unique_parts(cls, parts: tuple[Part, ...], info: ValidationInfo) -> tuple[Part, ...]:
        # A field validator, not a model one: pydantic reruns "after" model validators on every
        # already-validated instance a task lists, and a 14K-task file lists entities ~100K times.
        names = [p.name for p in parts]
        if len(set(names)) != len(names):
            raise ValueError(f"entity {info.data.get('id')!r} has duplicate part names: {names}")
        return parts

    def part(self, name: str) -> Part | None:
        """The part whose name matches ``name`` (case and spacing ignored), or None."""
        key = snake(name)
        return next((p for p in self.parts if p.name == key), None)

    def describe(self) -> str:
        """Everything the player may learn by inspecting this entity: parts and attributes, no uses."""
        return "\n".join([f"{self.name}:"] + [f"  - {p.render()}" for p in self.parts])


class AffordanceKB(FrozenRecord):
    """A whole knowledge base: entities with parts, attributes and affordances."""

    entities: tuple[Entity, ...]
    """All entities, every variant its own instance."""

    @model_validator(mode="after")
    def _unique_ids(self) -> AffordanceKB:
        ids = [e.id for e in self.entities]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            raise ValueError(f"duplicate entity ids: {dupes}")
        return self

    def by_id(self, entity_id: str) -> Entity:
        """The entity with this id; KeyError names the id when missing."""
        for entity in self.entities:
            if entity.id == entity_id:
                return entity
        raise KeyError(f"no entity with id {entity_id!r} in the knowledge base")


class SceneItem(FrozenRecord):
    """A non-entity object in the task's scene, usually the recipient."""

    name: Text
    description: str = ""
    interactable: Flag = False
    """True for the item the task is about (the recipient)."""


class GoldAnswer(FrozenRecord):
    """The intended answer of a CreativityTask. Never shown to the player."""

    entity: Text
    """Name of the gold entity, as it appears in the scene."""
    part: Text
    """snake_case name of the gold part."""
    affordance: Affordance
    """The affordance that solves the task."""


class ReferenceSolution(FrozenRecord):
    """CreativityBench's four-step reference solution. Never shown to the player."""

    prepare_recipient: Text
    prepare_use_condition: Text
    prepare_environment_condition: Text
    apply_affordance: Text


class PartJudgement(FrozenRecord):
    """A judge's comparison of one part with the gold: one entry of CreativityBench's ``judge_output``.

    Written by the task pipeline's intra-entity check (the gold entity's other parts) and inter-part
    comparison (every part of every distractor); never shown to the player.
    """

    part: Text
    """snake_case name of the compared part."""
    similar_affordance: Flag
    """Whether the part could do a similar job to the gold affordance."""
    similar_affordance_reason: str = ""
    """Why (or why not)."""
    affordance: str = ""
    """The similar use the part offers, as a verb phrase; empty when none."""
    gold_change: Flag
    """Whether the part should replace the gold (a better choice); such distractors are never sampled."""
    gold_change_reason: str = ""
    """Why (or why not): accessibility, safety, willingness, commonness."""
    decision_difficulty: Count | None = Field(default=None, ge=1, le=5)
    """How hard choosing between this part and the gold is, 1 (easy) to 5; None when not similar."""


class EntityJudgement(FrozenRecord):
    """The judge's comparisons of an entity's parts with the gold (the release's per-entity ``judge_output``)."""

    entity: Text
    """Name of the entity, as it appears in the task."""
    parts: tuple[PartJudgement, ...] = ()
    """One comparison per part (for the gold entity: every part but the gold one)."""


class SamplingFactors(FrozenRecord):
    """The factors a CreativityTask was sampled under; metrics break down by each."""

    cluster_size_range: tuple[Count, Count]
    """Bounds on how many KB parts share the gold affordance's function."""
    gold_level: Count = Field(ge=0, le=5)
    """Level of the gold affordance: 0 normal, 1..5 emergency."""
    distractor_count: Count = Field(ge=0)
    """Number of distractor entities in the scene (3, 6, 9 or 12 in our sample data)."""
    distractor_similarity: DistractorSimilarity
    """How close the distractors are to the gold affordance."""

    @property
    def cluster_band(self) -> ClusterBand:
        """``small``, ``medium`` or ``large`` by the range's lower bound; see ``ClusterBand``."""
        low = self.cluster_size_range[0]
        return "large" if low >= CLUSTER_LARGE_FROM else "medium" if low >= CLUSTER_MEDIUM_FROM else "small"

    @property
    def level_kind(self) -> Literal["normal", "emergency"]:
        """``normal`` for level 0, else ``emergency``."""
        return "normal" if self.gold_level == 0 else "emergency"


class CreativityTask(FrozenRecord):
    """A CreativityBench task: find an entity part that can be repurposed to solve a problem."""

    repeated_lists: ClassVar[tuple[str, ...]] = ("judge_output",)
    """Fields whose items often repeat unchanged across a file's tasks (a gold's verdicts on a distractor,
    in each of the gold's tiers): a loader validates each distinct item (by its JSON) once and shares it."""
    shared_lists: ClassVar[tuple[SharedList, ...]] = (SharedList("entities", "entity", Entity),)
    """Fields whose items (by ``id``) repeat across a file's tasks (a 14K-task file shows each KB entity
    many times). Our JSONL writes each entity once, as an ``{"entity": {...}}`` line, and a task lists
    the ids; a loader validates each distinct entity once and shares the frozen object."""

    id: Text
    """Unique task id."""
    scene: Scene
    """Scene the task is set in."""
    task: Text
    """First-person problem statement."""
    environment: Text
    """First-person description of the surroundings."""
    entities: tuple[Entity, ...] = Field(min_length=2)
    """Gold entity plus distractors, with full part attributes. In our JSONL, each entity's id, defined
    by an ``{"entity": {...}}`` line before the task (or, the older embedded form, the whole entity)."""
    items: tuple[SceneItem, ...] = ()
    """Other scene items (the recipient among them)."""
    gold: GoldAnswer
    """The intended answer; hidden from the player."""
    solution: ReferenceSolution
    """The reference solution; hidden from the player."""
    factors: SamplingFactors
    """Sampling factors for metric breakdowns."""
    judge_output: tuple[EntityJudgement, ...] = ()
    """The task pipeline's part comparisons per entity (the release's ``judge_output``); hidden from the player."""
    split: Literal["train", "test"] | None = None
    """Train / test split by gold entity; None: ``lateralgym.envs.split_tasks`` hashes the gold entity's name."""

    @model_validator(mode="after")
    def _gold_in_scene(self) -> CreativityTask:
        names = [e.name for e in self.entities]
        keys = [snake(name) for name in names]  # normalised once: every task of a file is checked here
        if len(set(keys)) != len(names):
            raise ValueError(f"task {self.id!r} has entities with the same name: {names}")
        gold = snake(self.gold.entity)
        entity = self.entities[keys.index(gold)] if gold in keys else None  # ``self.entity``, on the keys above
        if entity is None:
            raise ValueError(f"gold entity {self.gold.entity!r} is not among the task's entities {names}")
        if entity.part(self.gold.part) is None:
            raise ValueError(
                f"gold part {self.gold.part!r} is not a part of {entity.name!r}: {[p.name for p in entity.parts]}"
            )
        return self

    def entity(self, name: str) -> Entity | None:
        """The scene entity whose name matches (case, spacing and snake_case ignored), or None."""
        key = snake(name)
        return next((e for e in self.entities if snake(e.name) == key), None)

    def comparison(self, entity: str, part: str) -> PartJudgement | None:
        """The judges' comparison of ``entity``'s ``part`` with the gold (``judge_output``: the release's,
        or the task pipeline's), or None. Judge-only material: never shown to the player."""
        judged = next((j for j in self.judge_output if snake(j.entity) == snake(entity)), None)
        key = snake(part)
        return next((v for v in judged.parts if v.part == key), None) if judged else None
