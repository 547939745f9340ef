"""What ``lateralgym data stats`` counts of CreativityBench tasks (by sampling factor and scene) and of
knowledge-base entities (per scene, parts, affordances by level)."""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from lateralgym.envs._benchmark import StatBlock
from lateralgym.envs._matching import snake
from lateralgym.envs.benchmarks.creativity._schema import SCENES, CreativityTask, Entity
from lateralgym.envs.benchmarks.creativity._splits import task_split

_SIMILARITY = ("similar", "mixed", "dissimilar")
_LEVEL_KINDS = ("normal", "emergency")
_CLUSTER_BANDS = ("small", "medium", "large")


def _ordered(counter: Counter[str], keys: Iterable[str], keep_zero: bool = True) -> dict[str, int]:
    """Counts in a fixed key order, then any other keys sorted; zeros kept for the fixed keys."""
    ordered = {key: counter.get(key, 0) for key in keys if keep_zero or counter.get(key)}
    ordered.update({key: counter[key] for key in sorted(counter) if key not in ordered})
    return ordered


def _numeric(counter: Counter[int]) -> dict[str, int]:
    return {str(key): counter[key] for key in sorted(counter)}


def creativity_stats(records: Iterable[Any]) -> StatBlock:
    """Tasks per distractor count, similarity tier, gold level kind, cluster band and scene, and per split
    (train / test, by gold entity) the tasks, distinct task texts, gold entities and kinds of use, with a
    gold entity found in both splits as a defect; or, for a knowledge base's entities, entities per scene,
    affordances per level, parts and affordances.

    The records are read once, one at a time: tasks are counted as they come and none is kept, only the
    per-split sets of ids, texts and names (``lateralgym data stats`` streams a file of any size through
    here); entities are kept.
    """
    stream = iter(records)
    first = next(stream, None)
    if isinstance(first, Entity):
        return _kb_stats([r for r in itertools.chain([first], stream) if isinstance(r, Entity)])
    counts: dict[str, Counter[Any]] = {name: Counter() for name in _TASK_SECTIONS}
    splits: dict[str, dict[str, set[Any]]] = {}
    for record in itertools.chain([first], stream):
        if not isinstance(record, CreativityTask):
            continue
        seen = splits.setdefault(task_split(record), {"tasks": set(), "texts": set(), "golds": set(), "kinds": set()})
        seen["tasks"].add(record.id)
        seen["texts"].add(record.task)  # distractor variants of one text count once
        seen["golds"].add((record.scene, snake(record.gold.entity)))
        seen["kinds"].add(record.gold.affordance.category)
        factors = record.factors
        counts["distractor count"][factors.distractor_count] += 1
        counts["distractor similarity"][factors.distractor_similarity] += 1
        counts["gold level"][factors.level_kind] += 1
        counts["cluster band"][factors.cluster_band] += 1
        counts["scene"][record.scene] += 1
    return StatBlock(
        kind="creativity",
        sections={
            "distractor count": _numeric(counts["distractor count"]),
            "distractor similarity": _ordered(counts["distractor similarity"], _SIMILARITY),
            "gold level": _ordered(counts["gold level"], _LEVEL_KINDS),
            "cluster band": _ordered(counts["cluster band"], _CLUSTER_BANDS),
            "scene": _ordered(counts["scene"], SCENES, keep_zero=False),
            **{
                f"{split} split": {
                    "tasks": len(seen["tasks"]),
                    "distinct task texts": len(seen["texts"]),
                    "gold entities": len(seen["golds"]),
                    "kinds of use": len(seen["kinds"]),
                }
                for split, seen in sorted(splits.items(), key=lambda kv: kv[0] != "train")
            },
        },
        defects=[
            f"gold entity {scene}/{name} is in both the train and the test split"
            for scene, name in sorted(
                splits.get("train", {}).get("golds", set()) & splits.get("test", {}).get("golds", set())
            )
        ],
    )


_TASK_SECTIONS = ("distractor count", "distractor similarity", "gold level", "cluster band", "scene")


def _kb_stats(entities: Sequence[Entity]) -> StatBlock:
    parts = [part for entity in entities for part in entity.parts]
    sections = {
        "entities per scene": _ordered(Counter(e.scene for e in entities), SCENES, keep_zero=False),
        "affordance level": _numeric(Counter(a.level for part in parts for a in part.affordances)),
    }
    if sections["entities per scene"]:
        sections["knowledge base"] = {"parts": len(parts), "affordances": sum(len(p.affordances) for p in parts)}
    return StatBlock(kind="kb", sections={k: v for k, v in sections.items() if v})
