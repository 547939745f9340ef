"""Stages D, F and H of the KB pipeline (paper App. C): plan entity variants, then assemble them.

``plan_variants`` composes per-part physical variants into at most 8 physical entity variants and,
for each, per-part state variants into at most 6 state combinations (48 variants at most).
``assemble_entity`` turns the plan and the stage records into ``lateralgym.envs.Entity`` records,
and applies stage H's consistency check: an entity is kept only with complete part coverage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import ValidationError

from lateralgym.envs.benchmarks.creativity._schema import Entity, Part, Scene
from lateralgym.envs.benchmarks.creativity.databuild._kb_compose import compose
from lateralgym.envs.benchmarks.creativity.databuild._kb_schema import (
    AffordanceSet,
    PartSpec,
    PhysicalVariants,
    StateVariants,
)

__all__ = ["EntityDraft", "VariantPlan", "assemble_entity", "plan_variants"]

VariantPlan = list[tuple[tuple[int, ...], tuple[int, ...]]]
"""Entity variants in order: (physical variant index per part, state variant index per part)."""


@dataclass(frozen=True)
class EntityDraft:
    """An entity's stage B, C and E records, before composition."""

    base_id: str
    name: str
    scene: Scene
    parts: Sequence[PartSpec]
    physical: Sequence[PhysicalVariants]
    states: Sequence[StateVariants]


def plan_variants(draft: EntityDraft, *, max_physical: int, max_states: int, seed: int) -> VariantPlan:
    """Stages D and F: which (physical, state) part-variant choices make up each entity variant."""
    physical = compose([len(v.variants) for v in draft.physical], max_physical, seed=f"{seed}|{draft.base_id}|D")
    counts = [len(v.variants) for v in draft.states]
    return [
        (p, s)
        for index, p in enumerate(physical)
        for s in compose(counts, max_states, seed=f"{seed}|{draft.base_id}|F|{index}")
    ]


def assemble_entity(
    draft: EntityDraft,
    plan: VariantPlan,
    affordances: Mapping[tuple[int, int, int], AffordanceSet | None],
) -> tuple[list[Entity], str | None]:
    """Stage H: the entity's variants (ids ``<base_id>/1``, ``/2``, ...), or [] and why it was dropped.

    Args:
        draft: The entity's part records.
        plan: The variants to build (``plan_variants``).
        affordances: Stage G's records by (part index, physical index, state index); None where
            the question was given up.
    """
    missing = sorted({draft.parts[i].name for (i, _, _), reply in affordances.items() if reply is None})
    if missing:
        return [], f"no valid affordances for part(s) {', '.join(missing)}"
    entities: list[Entity] = []
    for number, (physical, state) in enumerate(plan, start=1):
        parts = []
        for i, spec in enumerate(draft.parts):
            reply = affordances.get((i, physical[i], state[i]))
            if reply is None:
                return [], f"part {spec.name} has no affordances for variant {number}"
            parts.append(
                Part(
                    name=spec.name,
                    physical=draft.physical[i].variants[physical[i]].to_physical(),
                    state=draft.states[i].variants[state[i]].to_state(),
                    affordances=tuple(a.to_affordance() for a in reply.affordances),
                    function=spec.function,
                    connected_to=tuple(spec.connected_to),
                )
            )
        try:
            entities.append(Entity(id=f"{draft.base_id}/{number}", name=draft.name, scene=draft.scene, parts=parts))
        except ValidationError as exc:
            return [], f"variant {number} is not a valid entity ({exc.errors()[0]['msg']})"
    return entities, None
