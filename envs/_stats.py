"""Counts that describe a loaded dataset: what ``lateralgym data stats PATH`` prints.

``dataset_stats(items)`` counts whatever it is given (BrainTeaser puzzles, situation puzzles,
CreativityBench tasks or knowledge-base entities) along the axes the metrics break down by, so a
user sees at a glance whether a file covers every variant, band and sampling-factor tier.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lateralgym.envs._benchmark import benchmark_of, get_benchmark
from lateralgym.envs._schema import (
    SCENES,
    CreativityTask,
    Entity,
    MCQPuzzle,
    SituationPuzzle,
)

DatasetKind = str
"""``brainteaser``, ``situation``, ``creativity``, ``kb``, another benchmark's name, ``mixed`` or ``empty``."""

_VARIANT_KEYS = tuple(f"{k}/{v}" for k in ("sentence", "word") for v in ("original", "semantic", "context"))
_BANDS = ("easy", "medium", "hard", "none")
_SIMILARITY = ("similar", "mixed", "dissimilar")
_LEVEL_KINDS = ("normal", "emergency")
_CLUSTER_BANDS = ("small", "medium", "large")


class DatasetStats(BaseModel):
    """Counts over one dataset. Sections that do not apply to the dataset's kind stay empty."""

    model_config = ConfigDict(frozen=True)

    path: str | None = None
    """The file the items came from, when known."""
    kind: DatasetKind
    """What the items are; ``mixed`` when several kinds were counted together."""
    items: int
    """Number of records."""

    groups: int = 0
    """BrainTeaser: puzzle groups (an original with its reconstructions, keyed by ``SP-<n>``/``WP-<n>``)."""
    complete_groups: int = 0
    """BrainTeaser: groups holding all three variants (needed for group accuracy)."""
    variants: dict[str, int] = Field(default_factory=dict)
    """BrainTeaser: puzzles per ``kind/variant`` (``sentence/original``, ``word/context``, ...)."""

    bands: dict[str, int] = Field(default_factory=dict)
    """Situation puzzles per difficulty band (easy, medium, hard, and ``none`` without a difficulty)."""
    levels: dict[str, int] = Field(default_factory=dict)
    """Situation puzzles per difficulty level 1..9."""
    with_clues: int = 0
    defects: list[str] = Field(default_factory=list)
    """Release defects found in the records (a situation puzzle whose hidden answer is its story, or
    stands inside it, so the player is shown the answer), one line each naming the record."""
    """Situation puzzles that carry clues (LatEval)."""

    distractor_count: dict[str, int] = Field(default_factory=dict)
    """CreativityBench: tasks per number of distractor entities."""
    distractor_similarity: dict[str, int] = Field(default_factory=dict)
    """CreativityBench: tasks per distractor similarity tier."""
    gold_level: dict[str, int] = Field(default_factory=dict)
    """CreativityBench: tasks whose gold use is ``normal`` (level 0) or ``emergency`` (1..5)."""
    cluster_band: dict[str, int] = Field(default_factory=dict)
    """CreativityBench: tasks per gold cluster band (small, medium, large)."""
    scenes: dict[str, int] = Field(default_factory=dict)
    """CreativityBench: tasks per scene."""

    entities_per_scene: dict[str, int] = Field(default_factory=dict)
    """Knowledge base: entities per scene."""
    parts: int = 0
    """Knowledge base: parts over all entities."""
    affordances: int = 0
    """Knowledge base: affordances over all parts."""
    affordance_levels: dict[str, int] = Field(default_factory=dict)
    """Knowledge base: affordances per level (``0`` normal, ``1``..``5`` emergency)."""

    other: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Other benchmarks' items, counted along the axes their benchmark names (``Benchmark.stat_axes``)."""

    def rows(self) -> list[tuple[str, str, int]]:
        """``(section, key, count)`` rows in display order; empty sections are left out."""
        rows: list[tuple[str, str, int]] = [("dataset", "items", self.items)]
        if self.kind in ("brainteaser", "mixed") and (self.groups or self.variants):
            rows += [("groups", "groups", self.groups), ("groups", "complete groups", self.complete_groups)]
        sections: list[tuple[str, dict[str, int]]] = [
            ("kind/variant", self.variants),
            ("band", self.bands),
            ("difficulty level", self.levels),
            ("distractor count", self.distractor_count),
            ("distractor similarity", self.distractor_similarity),
            ("gold level", self.gold_level),
            ("cluster band", self.cluster_band),
            ("scene", self.scenes),
            ("entities per scene", self.entities_per_scene),
            ("affordance level", self.affordance_levels),
        ]
        sections += list(self.other.items())
        for section, counts in sections:
            rows += [(section, key, count) for key, count in counts.items()]
        if self.with_clues:
            rows.append(("clues", "puzzles with clues", self.with_clues))
        if self.kind in ("kb", "mixed") and self.entities_per_scene:
            rows += [("knowledge base", "parts", self.parts), ("knowledge base", "affordances", self.affordances)]
        return rows

    def render(self) -> str:
        """A plain-text table of every count, ready to print."""
        title = f"Dataset stats: {self.path}" if self.path else "Dataset stats"
        header = ("section", "key", "count")
        body = [(section, key, str(count)) for section, key, count in self.rows()]
        widths = [max(len(row[i]) for row in [header, *body]) for i in range(3)]

        def line(row: tuple[str, str, str]) -> str:
            return f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:>{widths[2]}}"

        rule = "  ".join("-" * w for w in widths)
        text = "\n".join([title, f"kind: {self.kind}", "", line(header), rule, *map(line, body)]) + "\n"
        if self.defects:
            text += f"\n{len(self.defects)} release defect(s) found:\n" + "".join(f"  - {d}\n" for d in self.defects)
        return text


def _story_defect(puzzle: SituationPuzzle) -> str | None:
    """Why a situation puzzle gives its answer away up front, or None (SPLAT's release has two such
    rows, 172 and 565 of ``puzzles.xlsx``)."""
    answer, story = " ".join(puzzle.answer.lower().split()), " ".join(puzzle.story.lower().split())
    if answer == story:
        return f"{puzzle.id}: the hidden answer is the story itself"
    if answer in story:
        return f"{puzzle.id}: the hidden answer stands inside the story the player is shown"
    return None


def _ordered(counter: Counter[str], keys: Iterable[str], keep_zero: bool = True) -> dict[str, int]:
    """Counts in a fixed key order, then any other keys sorted; zeros kept for the fixed keys."""
    keys = list(keys)
    ordered = {key: counter.get(key, 0) for key in keys if keep_zero or counter.get(key)}
    ordered.update({key: counter[key] for key in sorted(counter) if key not in ordered})
    return ordered


def _numeric(counter: Counter[int]) -> dict[str, int]:
    return {str(key): counter[key] for key in sorted(counter)}


def dataset_stats(items: Sequence[Any], path: str | Path | None = None) -> DatasetStats:
    """Count a dataset's records along every axis its metrics break down by.

    Args:
        items: Records as ``load_items`` returns them (or the entities of a knowledge base).
        path: The file they came from, shown in the report.

    Returns:
        The counts; ``render()`` turns them into a table.
    """
    puzzles = [i for i in items if isinstance(i, MCQPuzzle)]
    stories = [i for i in items if isinstance(i, SituationPuzzle)]
    tasks = [i for i in items if isinstance(i, CreativityTask)]
    entities = [i for i in items if isinstance(i, Entity)]
    known = (MCQPuzzle, SituationPuzzle, CreativityTask, Entity)
    others: dict[str, list[Any]] = {}
    for item in items:
        if not isinstance(item, known):
            others.setdefault(benchmark_of(item).name, []).append(item)
    groups: tuple[tuple[DatasetKind, Sequence[object]], ...] = (
        ("brainteaser", puzzles),
        ("situation", stories),
        ("creativity", tasks),
        ("kb", entities),
        *others.items(),
    )
    present = [kind for kind, group in groups if group]
    kind: DatasetKind = "empty" if not present else present[0] if len(present) == 1 else "mixed"
    fields: dict[str, object] = {"path": str(path) if path is not None else None, "kind": kind, "items": len(items)}

    if puzzles:
        by_group: dict[str, set[str]] = {}
        for puzzle in puzzles:
            by_group.setdefault(puzzle.group_id, set()).add(puzzle.variant)
        fields["groups"] = len(by_group)
        fields["complete_groups"] = sum(len(variants) == 3 for variants in by_group.values())
        fields["variants"] = _ordered(Counter(f"{p.kind}/{p.variant}" for p in puzzles), _VARIANT_KEYS)
    if stories:
        fields["bands"] = _ordered(Counter(s.band or "none" for s in stories), _BANDS)
        fields["levels"] = _numeric(Counter(s.difficulty for s in stories if s.difficulty is not None))
        fields["with_clues"] = sum(bool(s.clues) for s in stories)
        fields["defects"] = [defect for s in stories if (defect := _story_defect(s)) is not None]
    if tasks:
        factors = [t.factors for t in tasks]
        fields["distractor_count"] = _numeric(Counter(f.distractor_count for f in factors))
        fields["distractor_similarity"] = _ordered(Counter(f.distractor_similarity for f in factors), _SIMILARITY)
        fields["gold_level"] = _ordered(Counter(f.level_kind for f in factors), _LEVEL_KINDS)
        fields["cluster_band"] = _ordered(Counter(f.cluster_band for f in factors), _CLUSTER_BANDS)
        fields["scenes"] = _ordered(Counter(t.scene for t in tasks), SCENES, keep_zero=False)
    if entities:
        parts = [part for entity in entities for part in entity.parts]
        fields["entities_per_scene"] = _ordered(Counter(e.scene for e in entities), SCENES, keep_zero=False)
        fields["parts"] = len(parts)
        fields["affordances"] = sum(len(part.affordances) for part in parts)
        fields["affordance_levels"] = _numeric(Counter(a.level for part in parts for a in part.affordances))
    if others:
        sections: dict[str, Counter[str]] = {}
        for name, group in others.items():
            benchmark = get_benchmark(name)
            for item in group:
                for axis, value in benchmark.stat_axes(item).items():
                    sections.setdefault(axis, Counter())[str(value)] += 1
        fields["other"] = {axis: dict(sorted(counts.items())) for axis, counts in sections.items()}
    return DatasetStats.model_validate(fields)
