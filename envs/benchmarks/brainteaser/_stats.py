"""What ``lateralgym data stats`` counts of BrainTeaser puzzles: groups and variants."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from lateralgym.envs._benchmark import StatBlock
from lateralgym.envs.benchmarks.brainteaser._schema import MCQPuzzle

VARIANT_KEYS = tuple(f"{k}/{v}" for k in ("sentence", "word") for v in ("original", "semantic", "context"))


def puzzle_stats(puzzles: Sequence[MCQPuzzle]) -> StatBlock:
    """Puzzle groups (an original with its reconstructions), the complete ones (all three variants,
    which group accuracy needs) and puzzles per ``kind/variant``."""
    by_group: dict[str, set[str]] = {}
    for puzzle in puzzles:
        by_group.setdefault(puzzle.group_id, set()).add(puzzle.variant)
    variants = Counter(f"{p.kind}/{p.variant}" for p in puzzles)
    ordered = {key: variants.get(key, 0) for key in VARIANT_KEYS}
    ordered.update({key: variants[key] for key in sorted(variants) if key not in ordered})
    groups = {"groups": len(by_group), "complete groups": sum(len(v) == 3 for v in by_group.values())}
    return StatBlock(kind="brainteaser", sections={"groups": groups, "kind/variant": ordered})
