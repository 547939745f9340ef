"""Prompts of the task pipeline's LLM stages C, D and F, in LateralGym's own wording.

They carry the instructions, the information and the answer format of CreativityBench's task
generation (paper §4.2 and App. D): the task is written from the gold's recipient and conditions
without naming the entity, part or mechanism (C); a judge at temperature 0 checks that no other part
of the gold entity is preferable (D) and compares every part of a candidate distractor with the gold,
weighing accessibility, safety, willingness and commonness (F).
"""

from __future__ import annotations

import json

from lateralgym.envs import spaced
from lateralgym.envs.benchmarks.creativity import Affordance, Entity, Part

__all__ = ["compare_messages", "task_text_messages"]

_SYSTEM = "You build benchmark tasks about creative tool use in households. Answer with one JSON object only."


def _affordance_facts(entity: Entity, part: Part, affordance: Affordance) -> str:
    return json.dumps(
        {
            "scene": spaced(entity.scene),
            "entity": entity.name,
            "part": spaced(part.name),
            "part_attributes": part.render(),
            "use": affordance.action,
            "use_condition": affordance.use_condition,
            "environment_condition": affordance.environment_condition,
            "recipient_condition": affordance.recipient_condition,
            "example_recipients": list(affordance.example_recipients),
            "level": affordance.level,
        },
        ensure_ascii=False,
        indent=1,
    )


def task_text_messages(entity: Entity, part: Part, affordance: Affordance) -> list[dict[str, str]]:
    """Stage C (§4.2 "task generation"): a first-person problem the gold solves, hiding the answer."""
    prompt = f"""A person in a {spaced(entity.scene)} has a problem that the part below can solve.

Hidden answer (never reveal it):
{_affordance_facts(entity, part, affordance)}

Write the task as that person would say it, in the first person and in two to four sentences:
pick one concrete recipient that fits the recipient condition, say what is wrong and what they want
done, and end with a question such as "What can I use?". Do not name the entity, the part or how it
works, and do not hint at its material or shape. Also list two or three other loose items that are
in the scene but do not solve the problem, and the four-step reference solution.

Answer with this JSON object:
{{"task": "...",
 "recipient": {{"name": "...", "description": "..."}},
 "other_items": [{{"name": "...", "description": "..."}}],
 "solution": {{"prepare_recipient": "...", "prepare_use_condition": "...",
              "prepare_environment_condition": "...", "apply_affordance": "..."}}}}"""
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt}]


def compare_messages(
    gold_entity: Entity, gold_part: Part, gold: Affordance, task: str, entity: Entity, parts: tuple[Part, ...]
) -> list[dict[str, str]]:
    """Stage D (other parts of the gold entity) or F (every part of a candidate), judged against the gold.

    App. D's inter-part comparison: is the part's use similar to the gold's, should it replace the
    gold given accessibility, safety, willingness to use it and how common that use is, and how hard
    the choice between them is (1-5).
    """
    described = "\n".join(f"- {p.render()}" for p in parts)
    prompt = f"""Task: {task}

The intended answer is the {spaced(gold_part.name)} of the {gold_entity.name}, used to {gold.action}
(level {gold.level}: 0 is its normal use, 1-5 ever more improvised).

Compare each of these parts of the {entity.name} with the intended answer:
{described}

For each part decide:
- similar_affordance: could it do a similar job for this task? (true / false, with a reason)
- affordance: that similar use as a short verb phrase, or "" when there is none
- gold_change: should it replace the intended answer, being at least as good once you weigh
  accessibility, safety, a person's willingness to use it that way and how common that use is?
  (true / false, with a reason)
- decision_difficulty: how hard choosing between it and the intended answer is, 1 (obvious) to
  5 (cannot tell); null when it is not similar.

Answer with this JSON object, one entry per part listed, using the part names exactly as given:
{{"parts": [{{"part": "...", "similar_affordance": false, "similar_affordance_reason": "...",
  "affordance": "", "gold_change": false, "gold_change_reason": "...", "decision_difficulty": null}}]}}"""
    return [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": prompt}]
