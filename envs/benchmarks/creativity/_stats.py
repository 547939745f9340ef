"""What ``lateralgym data stats`` counts of CreativityBench tasks (by sampling factor and scene) and of
knowledge-base entities (per scene, parts, affordances by level)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from lateralgym.envs._benchmark import StatBlock
from lateralgym.envs.benchmarks.creativity._schema import SCENES, CreativityTask, Entity

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


def creativity_stats(records: Sequence[Any]) -> StatBlock:
    """Tasks per distractor count, similarity tier, gold level kind, cluster band and scene; or, for a
    knowledge base's entities, entities per scene, affordances per level, parts and affordances."""
    if records and isinstance(records[0], Entity):
        return _kb_stats([r for r in records if isinstance(r, Entity)])
    tasks = [r for r in records if isinstance(r, CreativityTask)]
    factors = [t.factors for t in tasks]
    return StatBlock(
        kind="creativity",
        sections={
            "distractor count": _numeric(Counter(f.distractor_count for f in factors)),
            "distractor similarity": _ordered(Counter(f.distractor_similarity for f in factors), _SIMILARITY),
            "gold level": _ordered(Counter(f.level_kind for f in factors), _LEVEL_KINDS),
            "cluster band": _ordered(Counter(f.cluster_band for f in factors), _CLUSTER_BANDS),
            "scene": _ordered(Counter(t.scene for t in tasks), SCENES, keep_zero=False),
        },
    )


def _kb_stats(entities: Sequence[Entity]) -> StatBlock:
    parts = [part for entity in entities for part in entity.parts]
    sections = {
        "entities per scene": _ordered(Counter(e.scene for e in entities), SCENES, keep_zero=False),
        "affordance level": _numeric(Counter(a.level for part in parts for a in part.affordances)),
    }
    if sections["entities per scene"]:
        sections["knowledge base"] = {"parts": len(parts), "affordances": sum(len(p.affordances) for p in parts)}
    return StatBlock(kind="kb", sections={k: v for k, v in sections.items() if v})
