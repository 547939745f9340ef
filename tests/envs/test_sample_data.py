"""The shipped sample datasets.

The shipped files are read through the public loaders (``load_sample_kb``, ``load_sample_items``), so a
broken package-data setup fails here too. How the CreativityBench tasks are built (the task pipeline,
rebuilt byte for byte) and what they hold is tested in ``tests/databuild/test_sample_build.py``.
"""

from __future__ import annotations

import itertools
from collections import Counter, defaultdict

import pytest

from lateralgym.envs import load_sample_items, snake
from lateralgym.envs.benchmarks.brainteaser import MCQPuzzle
from lateralgym.envs.benchmarks.creativity import SCENES, AffordanceKB, CreativityTask, load_sample_kb
from lateralgym.envs.benchmarks.splat import SituationPuzzle

COUNTS = (3, 6, 9, 12)
SIMILARITIES = ("similar", "mixed", "dissimilar")
BANDS = ("small", "medium", "large")
LARGE_CATEGORIES = ("weigh_down", "pry", "wipe", "scoop", "prop_open")


# --- the shipped affordance KB and CreativityBench tasks --------------------------------------------


@pytest.fixture(scope="module")
def kb() -> AffordanceKB:
    return load_sample_kb()


@pytest.fixture(scope="module")
def tasks() -> list[CreativityTask]:
    items = load_sample_items("creativity")
    assert all(isinstance(t, CreativityTask) for t in items)
    return items  # type: ignore[return-value]


def filled(model: object) -> int:
    fields = model.model_dump()  # type: ignore[attr-defined]
    return sum(1 for name, value in fields.items() if name != "description" and value.strip())


def test_kb_size_scenes_parts_and_attributes(kb: AffordanceKB) -> None:
    assert len(kb.entities) >= 120
    assert {e.scene for e in kb.entities} == set(SCENES)
    for entity in kb.entities:
        assert 1 <= len(entity.parts) <= 8, entity.id
        assert entity.id.startswith(f"{entity.scene}/")
        for part in entity.parts:
            assert filled(part.physical) >= 3, (entity.id, part.name)
            assert filled(part.state) >= 2, (entity.id, part.name)
            assert part.affordances, (entity.id, part.name)
            for affordance in part.affordances:
                assert affordance.category == snake(affordance.category) != ""
                assert affordance.action


def test_kb_levels_variants_and_clusters(kb: AffordanceKB) -> None:
    levels = {a.level for e in kb.entities for p in e.parts for a in p.affordances}
    assert 0 in levels
    assert len(levels - {0}) >= 3, levels
    by_name: dict[str, set[str]] = defaultdict(set)
    for entity in kb.entities:
        by_name[snake(entity.name)].add(entity.id)
    assert any(len(ids) >= 2 for ids in by_name.values()), "no variants (same name, distinct ids)"
    categories = Counter(a.category for e in kb.entities for p in e.parts for a in p.affordances)
    assert min(categories[c] for c in LARGE_CATEGORIES) >= 10, {c: categories[c] for c in LARGE_CATEGORIES}


def test_kb_file_is_sorted_by_id(kb: AffordanceKB) -> None:
    ids = [e.id for e in kb.entities]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_tasks_cover_every_sampling_tier(tasks: list[CreativityTask]) -> None:
    assert len(tasks) >= 400
    assert len({t.id for t in tasks}) == len(tasks)
    tiers = Counter((t.factors.distractor_count, t.factors.distractor_similarity) for t in tasks)
    assert set(tiers) == set(itertools.product(COUNTS, SIMILARITIES))
    cells = Counter((t.factors.cluster_band, t.factors.gold_level) for t in tasks)
    assert set(cells) == set(itertools.product(BANDS, range(6)))
    assert {t.scene for t in tasks} == set(SCENES)


# --- BrainTeaser and situation puzzles --------------------------------------------------------------


def test_brainteaser_groups() -> None:
    puzzles = load_sample_items("brainteaser")
    assert all(isinstance(p, MCQPuzzle) for p in puzzles)
    groups: dict[str, list[MCQPuzzle]] = defaultdict(list)
    for puzzle in puzzles:
        assert isinstance(puzzle, MCQPuzzle)
        groups[puzzle.group_id].append(puzzle)
    assert len(groups) >= 20
    assert len({p.id for p in puzzles}) == len(puzzles)
    for group_id, members in groups.items():
        assert sorted(p.variant for p in members) == ["context", "original", "semantic"], group_id
        assert len({p.kind for p in members}) == 1, group_id
        for puzzle in members:
            assert len(set(puzzle.choices)) == len(puzzle.choices), puzzle.id
    assert {p.kind for p in puzzles} == {"sentence", "word"}
    assert any(p.choices[p.label] == "None of above." for p in puzzles)


def test_situation_puzzles() -> None:
    puzzles = load_sample_items("splat")
    assert all(isinstance(p, SituationPuzzle) for p in puzzles)
    assert len(puzzles) >= 30
    assert len({p.id for p in puzzles}) == len(puzzles)
    bands = Counter(p.band for p in puzzles)  # type: ignore[union-attr]
    assert set(bands) == {"easy", "medium", "hard"}, bands
    for puzzle in puzzles:
        assert isinstance(puzzle, SituationPuzzle)
        assert puzzle.story and puzzle.answer and puzzle.difficulty is not None
