"""Stage H of the task pipeline (paper §4.2, App. D): a gold, a tier and the judges' outputs become a task.

The scene lists the gold among its distractors in a seeded random order; the environment text is
first-person ("I am in the kitchen. Around me are the ..., and close by, next to the counter, I
notice the ..."), names entities but never parts and never marks the gold. The recipient is the one
interactable item. The four-step solution comes from stage C; the judges' verdicts of stages D (the
gold entity's other parts) and F (every part of every distractor) are kept per entity in
``judge_output``, as the official release does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from lateralgym.envs import spaced
from lateralgym.envs.benchmarks.creativity import (
    CreativityTask,
    Entity,
    EntityJudgement,
    GoldAnswer,
    SamplingFactors,
    SceneItem,
)
from lateralgym.envs.benchmarks.creativity.databuild._tasks_models import GoldRef, PartVerdict, TaskText
from lateralgym.envs.benchmarks.creativity.databuild._tiers import Tier, rng_for

__all__ = ["SURFACES", "environment_text", "package_task", "task_id"]

SURFACES: dict[str, str] = {
    "kitchen": "counter",
    "living_room": "coffee table",
    "bedroom": "dresser",
    "bathroom": "sink",
    "garage": "workbench",
    "home_office": "desk",
    "dining_room": "table",
    "garden": "potting bench",
}
"""Where the scene's loose items are, per scene."""


def _join_the(names: Sequence[str]) -> str:
    phrases = [f"the {n}" for n in names]
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


def environment_text(scene: str, entities: Sequence[Entity], items: Sequence[SceneItem]) -> str:
    """First-person description of the surroundings; names entities, never parts, never marks the gold."""
    text = f"I am in the {spaced(scene)}. Around me are {_join_the([e.name for e in entities])}."
    if items:
        text += f" Close by, next to the {SURFACES[scene]}, I notice {_join_the([i.name for i in items])}."
    return text


def task_id(gold: GoldRef, tier: Tier) -> str:
    """``<scene>-<entity>-<variant>-<part>-<index>-<similarity>-<count>``: readable, unique per (gold, tier).

    It spells out the gold, like the release's ids; agents only ever see an opaque key (``item_key``).
    """
    return f"{gold.entity_id.replace('/', '-')}-{gold.part}-{gold.index}-{tier.similarity}-{tier.count}"


def package_task(
    *,
    gold: GoldRef,
    gold_entity: Entity,
    text: TaskText,
    tier: Tier,
    band: tuple[int, int],
    verdicts: Mapping[str, Sequence[PartVerdict]],
    seed: int,
) -> CreativityTask:
    """Stage H: the ``CreativityTask`` of one gold in one tier.

    Args:
        gold: The gold affordance.
        gold_entity: Its entity.
        text: Stage C's task text and solution.
        tier: Stage G's tier and distractors.
        band: The gold cluster's size band.
        verdicts: Entity id -> its verdicts (the gold entity's from stage D, the distractors' from F).
        seed: The build seed.
    """
    identifier = task_id(gold, tier)
    rng = rng_for("scene-order", seed, identifier)
    ordered = [tier.distractors[int(i)] for i in rng.permutation(len(tier.distractors))]
    ordered.insert(int(rng.integers(0, len(ordered) + 1)), gold_entity)
    part = next(p for p in gold_entity.parts if p.name == gold.part)
    affordance = part.affordances[gold.index]
    items = (
        SceneItem(name=text.recipient.name, description=text.recipient.description, interactable=True),
        *(SceneItem(name=i.name, description=i.description) for i in text.other_items),
    )
    return CreativityTask(
        id=identifier,
        scene=gold_entity.scene,
        task=text.task,
        environment=environment_text(gold_entity.scene, ordered, items),
        entities=tuple(ordered),
        items=items,
        gold=GoldAnswer(entity=gold_entity.name, part=part.name, affordance=affordance),
        solution=text.solution,
        factors=SamplingFactors(
            cluster_size_range=band,
            gold_level=affordance.level,
            distractor_count=tier.count,
            distractor_similarity=tier.similarity,
        ),
        judge_output=tuple(
            EntityJudgement(entity=e.name, parts=tuple(v.judgement() for v in verdicts.get(e.id, ()))) for e in ordered
        ),
    )
