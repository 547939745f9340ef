"""``plan_kb_build``: what a KB build would ask, before anything is spent (``lateralgym kb build --dry-run``).

Counts are exact where the checkpoints already hold the inputs (a resumed build: its entity lists,
partonomies and variants) and estimated elsewhere, assuming 6 parts per entity and 3 physical and
3 state variants per part (the upper end of the paper's 2-3), so the estimate errs high. Tokens are
estimated from the real prompt texts (4 characters a token) and typical reply lengths per stage.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table

from lateralgym.databuild import CheckpointStore, estimate_cost_usd, format_cost
from lateralgym.envs._matching import snake
from lateralgym.envs.benchmarks.creativity._schema import Scene
from lateralgym.envs.benchmarks.creativity.databuild._kb_assemble import EntityDraft, plan_variants
from lateralgym.envs.benchmarks.creativity.databuild._kb_build import (
    CHECKPOINT_DIR,
    KB_STAGES,
    KBBuildConfig,
    affordance_key,
    part_key,
)
from lateralgym.envs.benchmarks.creativity.databuild._kb_prompts import (
    affordance_messages,
    entity_messages,
    partonomy_messages,
    physical_messages,
    state_messages,
)
from lateralgym.envs.benchmarks.creativity.databuild._kb_schema import (
    AFFORDANCES_PER_VARIANT,
    EntityCandidate,
    Partonomy,
    PartSpec,
    PhysicalVariant,
    PhysicalVariants,
    StateVariant,
    StateVariants,
    variant_schemas,
)

__all__ = ["ASSUMED_PARTS", "ASSUMED_VARIANTS", "KBPlan", "StagePlan", "plan_kb_build"]

ASSUMED_PARTS = 6
"""Parts assumed for an entity whose partonomy is not yet known."""
ASSUMED_VARIANTS = 3
"""Physical and state variants assumed for a part whose variants are not yet known."""
_REPLY_TOKENS = {"entities": 25, "parts": 300, "physical": 420, "states": 260, "affordances": 900}
"""Typical completion tokens: per listed entity (stage A), per reply otherwise."""
_SAMPLE_ENTITY = "stainless steel soup ladle with hooked handle"
_SAMPLE_PART = PartSpec(name="handle_grip", function="lets a hand hold and steer the ladle", connected_to=["bowl"])
_WORDS = "a plausible value of about eight words long here"
_SAMPLE_PHYSICAL = PhysicalVariant(**{name: _WORDS for name in PhysicalVariant.model_fields})
_SAMPLE_STATE = StateVariant(**{name: _WORDS for name in StateVariant.model_fields})


@dataclass
class StagePlan:
    """One stage's expected work: questions still to ask, answers already checkpointed, tokens."""

    stage: str
    calls: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass
class KBPlan:
    """The dry run of a build: a plan per stage, and the estimated cost (None when unknown)."""

    model: str
    stages: dict[str, StagePlan]
    cost_usd: float | None

    @property
    def calls(self) -> int:
        """Questions still to ask (re-asks after invalid replies not included)."""
        return sum(s.calls for s in self.stages.values())

    def table(self) -> Table:
        """A rich table of the plan, with a total row."""
        table = Table(title=f"Dry run: kb build with {self.model} (nothing is sent)")
        for column in ("stage", "calls", "cached", "prompt tokens", "completion tokens"):
            table.add_column(column, justify="left" if column == "stage" else "right")
        for plan in self.stages.values():
            table.add_row(
                plan.stage, str(plan.calls), str(plan.cached), f"{plan.prompt_tokens:,}", f"{plan.completion_tokens:,}"
            )
        totals = [sum(getattr(s, f) for s in self.stages.values()) for f in ("calls", "cached")]
        tokens = [sum(getattr(s, f) for s in self.stages.values()) for f in ("prompt_tokens", "completion_tokens")]
        table.add_row("total", *map(str, totals), *(f"{t:,}" for t in tokens), style="bold")
        table.caption = f"estimated cost: {format_cost(self.cost_usd)}"
        return table


def _tokens(messages: list[dict[str, str]]) -> int:
    return math.ceil(sum(len(m["content"]) for m in messages) / 4)


def _add(plan: StagePlan, cached: bool, prompt: list[dict[str, str]], completion: int) -> None:
    if cached:
        plan.cached += 1
        return
    plan.calls += 1
    plan.prompt_tokens += _tokens(prompt)
    plan.completion_tokens += completion


def _assumed_parts() -> list[PartSpec]:
    return [PartSpec(name=f"part_{i}", function="holds the object together") for i in range(ASSUMED_PARTS)]


def plan_kb_build(config: KBBuildConfig, out: Path) -> KBPlan:
    """The plan of ``lateralgym kb build`` into ``out`` with ``config``; reads checkpoints, sends nothing.

    Raises:
        DataBuildError: A build is running in ``out`` (its checkpoints are locked), or one is unreadable.
    """
    stages = {stage: StagePlan(stage) for stage in KB_STAGES}
    root = out / CHECKPOINT_DIR
    store = CheckpointStore(root) if root.exists() else None
    try:
        for scene in config.scenes:
            wanted = config.entities_per_scene
            list_key = f"{scene}|n{wanted}|"
            lists = store.records("entity_lists") if store is not None else {}
            known = next((v for k, v in lists.items() if k.startswith(list_key)), None)
            if known is not None:
                names = [EntityCandidate.model_validate(e).name for e in known["entities"]]
                stages["entities"].cached += 1
            else:
                cached = store is not None and store.get("entities", f"{scene}|n{wanted}|r0") is not None
                _add(stages["entities"], cached, entity_messages(scene, wanted, []), 0)
                stages["entities"].completion_tokens += (
                    0 if cached else math.ceil(wanted * 1.2) * _REPLY_TOKENS["entities"]
                )
                names = [f"{_SAMPLE_ENTITY} {i}" for i in range(wanted)]
            for name in names:
                _plan_entity(stages, store, scene, name, config)
    finally:
        if store is not None:
            store.close()
    prompt = sum(s.prompt_tokens for s in stages.values())
    completion = sum(s.completion_tokens for s in stages.values())
    cost = estimate_cost_usd(config.model, prompt, completion, use_litellm=config.base_url is None)
    return KBPlan(model=config.model.partition("?")[0], stages=stages, cost_usd=cost)


def _plan_entity(
    stages: dict[str, StagePlan], store: CheckpointStore | None, scene: Scene, name: str, config: KBBuildConfig
) -> None:
    base_id = f"{scene}/{snake(name)}"

    def stored(stage: str, key: str) -> dict[str, object] | None:
        return store.get(stage, key) if store is not None else None

    partonomy = stored("parts", base_id)
    _add(stages["parts"], partonomy is not None, partonomy_messages(scene, name), _REPLY_TOKENS["parts"])
    parts = Partonomy.model_validate(partonomy).parts if partonomy is not None else _assumed_parts()
    physical_schema, state_schema = variant_schemas(config.min_variants)
    physical: list[PhysicalVariants] = []
    states: list[StateVariants] = []
    for part in parts:
        key = part_key(base_id, part.name, config.min_variants)
        ph, st = stored("physical", key), stored("states", key)
        _add(stages["physical"], ph is not None, physical_messages(name, part), _REPLY_TOKENS["physical"])
        _add(stages["states"], st is not None, state_messages(name, part, scene), _REPLY_TOKENS["states"])
        physical.append(
            physical_schema.model_validate(ph)
            if ph is not None
            else PhysicalVariants(
                variants=[_SAMPLE_PHYSICAL.model_copy(update={"summary": str(i)}) for i in range(ASSUMED_VARIANTS)]
            )
        )
        states.append(
            state_schema.model_validate(st)
            if st is not None
            else StateVariants(
                variants=[_SAMPLE_STATE.model_copy(update={"summary": str(i)}) for i in range(ASSUMED_VARIANTS)]
            )
        )
    draft = EntityDraft(base_id=base_id, name=name, scene=scene, parts=parts, physical=physical, states=states)
    plan = plan_variants(
        draft, max_physical=config.max_physical_variants, max_states=config.max_state_combinations, seed=config.seed
    )
    needed = sorted({(i, p[i], s[i]) for p, s in plan for i in range(len(parts))})
    count = config.affordances_per_variant
    reply_tokens = math.ceil(_REPLY_TOKENS["affordances"] * count / AFFORDANCES_PER_VARIANT)
    for i, p, s in needed:
        key = affordance_key(base_id, parts[i].name, config, p, s)
        messages = affordance_messages(name, parts[i], _SAMPLE_PHYSICAL, _SAMPLE_STATE, count)
        _add(stages["affordances"], stored("affordances", key) is not None, messages, reply_tokens)
