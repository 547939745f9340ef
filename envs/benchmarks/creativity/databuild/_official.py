"""Write CreativityBench's official task JSON (the format of the release's ``sample_tasks.json``).

The reader is ``lateralgym.envs.load_creativitybench``; what this writes, it reads back. Each entity's
parts are packed into one description (``"<part>: physical — ...; state — ..".``) with the gold part
marked ``[gold part]``, the judges' verdicts go in each entity's ``judge_output``, the similarity tier
becomes ``setting.difficulty`` (similar / mixed / dissimilar -> difficult / medium / low) and the gold
level an ``"Normal"`` / ``"Emergency N"`` affordance level. Two keys the release lacks keep what it
cannot hold: ``golds[0].gold_affordance.category`` and the task's ``split``.

What the format loses: attributes become free text, entity ids become ``<scene>/<name>``, and the
distractor counts the build used are only known through ``setting.entity_counts_macro``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lateralgym.envs.benchmarks.creativity import Affordance, CreativityTask, Entity, PartJudgement

__all__ = ["official_task", "pack_entity", "write_official"]

DIFFICULTY = {"similar": "difficult", "mixed": "medium", "dissimilar": "low"}
"""Our distractor similarity -> the release's ``setting.difficulty``."""


def _sentence(text: str) -> str:
    return text if text.endswith(".") else text + "."


def pack_entity(entity: Entity, gold_part: str | None = None) -> str:
    """An entity's parts as the release packs them, the gold part marked."""
    return " ".join(
        f"{p.name}{' [gold part]' if p.name == gold_part else ''}: physical — {p.physical.render()}; "
        f"state — {_sentence(p.state.render())}."
        for p in entity.parts
    )


def _affordance(affordance: Affordance) -> dict[str, Any]:
    level = "Normal" if affordance.level == 0 else f"Emergency {affordance.level}"
    return {
        "use_condition": affordance.use_condition,
        "environment_condition": affordance.environment_condition,
        "attribute": [[a, "physical"] for a in affordance.enabling_attributes],
        "affordance": affordance.action,
        "level": level,
        "recipient_condition": affordance.recipient_condition,
        "example_recipient": ", ".join(affordance.example_recipients),
        "failure_case": list(affordance.failure_cases),
        "category": affordance.category,
    }


def _judged(verdict: PartJudgement) -> dict[str, str]:
    return {
        "similar_affordance_reason": verdict.similar_affordance_reason,
        "similar_affordance": "Yes" if verdict.similar_affordance else "No",
        "affordance": verdict.affordance or "NA",
        "gold_change_reason": verdict.gold_change_reason,
        "gold_change": "Yes" if verdict.gold_change else "No",
        "decision_making_difficulty": "NA" if verdict.decision_difficulty is None else str(verdict.decision_difficulty),
    }


def official_task(task: CreativityTask, counts: Sequence[int] = (3, 6, 9, 12)) -> dict[str, Any]:
    """One task as a release task object."""
    judged = {j.entity: j for j in task.judge_output}
    entities = []
    for entity in task.entities:
        is_gold = entity.name == task.gold.entity
        record: dict[str, Any] = {
            "name": entity.name,
            "description": pack_entity(entity, task.gold.part if is_gold else None),
        }
        if entity.name in judged:
            record["judge_output"] = {v.part: _judged(v) for v in judged[entity.name].parts}
        entities.append(record)
    factors = task.factors
    result: dict[str, Any] = {
        "task_id": task.id,
        "scenario": task.scene,
        "setting": {
            "difficulty": DIFFICULTY[factors.distractor_similarity],
            "entity_count": factors.distractor_count,
            "sample_index": 1,
            "max_cases_per_tier": 1,
            "entity_counts_macro": list(counts),
            "scenario": task.scene,
            "level": factors.gold_level,
            "cluster_size_range": list(factors.cluster_size_range),
            "iteration": 1,
            "cluster_id": "NA",
        },
        "sampled_entity_count": factors.distractor_count,
        "golds": [
            {
                "gold_entity": task.gold.entity,
                "gold_part": task.gold.part,
                "gold_affordance": _affordance(task.gold.affordance),
            }
        ],
        "entities": entities,
        "items": [
            {"name": i.name, "description": i.description, "interactable": "Yes" if i.interactable else "No"}
            for i in task.items
        ],
        "environment": task.environment,
        "task": task.task,
        "solution": task.solution.model_dump(),
    }
    if task.split is not None:
        result["split"] = task.split
    return result


def write_official(tasks: Sequence[CreativityTask], path: Path) -> None:
    """Write ``tasks`` as a release task file (an indented JSON list), as ``load_creativitybench`` reads it."""
    records = [official_task(t) for t in tasks]
    path.write_text(json.dumps(records, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
