"""``--sample``: a reproducible sample spread over a benchmark's strata (its ``data`` part), groups kept
whole; and the note a ``--limit`` cut gets when its first items all fall in one stratum."""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable
from typing import Any

import pytest

from lateralgym.envs import Benchmark, ConfigError, DataPart, get_benchmark
from lateralgym.envs.benchmarks import MultipleChoiceItem
from lateralgym.envs.benchmarks._mcq import ChoiceOutcome, ChoiceScene


class _ShelfData(DataPart[MultipleChoiceItem]):
    """Items ``<shelf>-<box>-<n>``: shelves of unequal size, boxes within a shelf, box ``x`` played whole."""

    def strata(self, item: MultipleChoiceItem) -> dict[str, Hashable]:
        shelf, box, _ = item.id.split("-")
        return {"shelf": shelf, "box": f"{shelf}-{box}"}

    def group_of(self, item: MultipleChoiceItem) -> str:
        shelf, box, n = item.id.split("-")
        return f"{shelf}-{box}" if box == "x" else item.id


class _Shelves(Benchmark[MultipleChoiceItem, ChoiceOutcome]):
    name = "shelves"
    item_type = MultipleChoiceItem
    outcome_type = ChoiceOutcome
    scene_type = ChoiceScene
    modes = ("mcq",)
    action_forms: Any = {"commit": "commit: <letter>"}
    data = _ShelfData()


def _item(item_id: str) -> MultipleChoiceItem:
    return MultipleChoiceItem(id=item_id, question="?", choices=("a", "b"), label=0)


def _shelves() -> list[MultipleChoiceItem]:
    """Shelf a: 60 items in 6 boxes; b: 30 in 3 boxes; c: 10 in one box; box a-x: 3 items played together."""
    items = [_item(f"a-{box}-{n}") for box in range(6) for n in range(10)]
    items += [_item(f"b-{box}-{n}") for box in range(3) for n in range(10)]
    items += [_item(f"c-0-{n}") for n in range(10)] + [_item(f"a-x-{n}") for n in range(3)]
    return items


DATA = _Shelves().data


def _ids(items: list[MultipleChoiceItem]) -> list[str]:
    return [item.id for item in items]


def test_a_sample_takes_each_stratum_in_proportion_and_reaches_every_one() -> None:
    items = [i for i in _shelves() if "-x-" not in i.id]  # 100 items: shelves of 60, 30, 10
    sample = DATA.sampled_items(items, 10, seed=0)
    assert Counter(i.id[0] for i in sample) == {"a": 6, "b": 3, "c": 1}
    assert len({i.id.rsplit("-", 1)[0] for i in sample}) == 10  # ten items, ten different boxes
    small = DATA.sampled_items(items, 3, seed=0)
    assert {i.id[0] for i in small} == {"a", "b", "c"}  # every shelf before any shelf twice


def test_a_sample_is_reproducible_grows_by_extension_and_ignores_the_files_order() -> None:
    items = _shelves()
    first = DATA.sampled_items(items, 12, seed=7)
    assert _ids(first) == _ids(DATA.sampled_items(items, 12, seed=7))
    assert _ids(first) != _ids(DATA.sampled_items(items, 12, seed=8))
    assert set(_ids(first)) <= set(_ids(DATA.sampled_items(items, 30, seed=7)))
    assert set(_ids(DATA.sampled_items(items[::-1], 12, seed=7))) == set(_ids(first))
    positions = [items.index(i) for i in first]
    assert positions == sorted(positions)  # played in dataset order


def test_a_sample_keeps_groups_whole_and_takes_everything_when_asked_for_as_many() -> None:
    items = _shelves()
    for seed in range(20):
        drawn = _ids(DATA.sampled_items(items, 40, seed=seed))
        assert sum("-x-" in i for i in drawn) in (0, 3)
    assert _ids(DATA.sampled_items(items, len(items), seed=0)) == _ids(items)
    with pytest.raises(ConfigError, match="--sample must be at least 1"):
        DATA.sampled_items(items, 0, seed=0)


def test_a_limit_completes_the_groups_it_touches_and_is_named_when_it_covers_one_stratum() -> None:
    items = _shelves()
    assert len(DATA.first_items(items, 5)) == 5
    boxed = [i for i in items if "-x-" in i.id] + [i for i in items if "-x-" not in i.id]
    assert _ids(DATA.first_items(boxed, 1)) == _ids(boxed[:3])  # box a-x is played whole
    note = DATA.cut_note(items, 20)
    assert note is not None and "one shelf ('a' of 3)" in note and "--sample 20" in note
    assert DATA.cut_note(items, 100) is None  # the first 100 reach every shelf


def test_creativity_samples_cover_every_scene_and_many_gold_entities() -> None:
    data = get_benchmark("creativity").data
    items = data.sample_items()
    for seed in range(3):
        sample = data.sampled_items(items, 20, seed=seed)
        assert len(sample) == 20
        assert len({t.scene for t in sample}) == len({t.scene for t in items}) == 8
        assert len({t.gold.entity for t in sample}) >= 10
    first = data.first_items(items, 20)
    assert len({t.scene for t in first}) == 1  # what --limit 20 plays: one scene
    assert "one scene" in (data.cut_note(items, 20) or "")


def test_brainteaser_samples_whole_puzzle_groups_of_both_kinds() -> None:
    data = get_benchmark("brainteaser").data
    items = data.sample_items()
    sample: list[Any] = data.sampled_items(items, 5, seed=0)
    groups = Counter(p.group_id for p in sample)
    sizes = Counter(p.group_id for p in items)
    assert all(groups[g] == sizes[g] for g in groups)  # the original and its reconstructions together
    assert {p.kind for p in sample} == {"sentence", "word"}


def test_splat_samples_every_difficulty_band_and_a_limit_of_easy_puzzles_is_named() -> None:
    data = get_benchmark("splat").data
    items = data.sample_items()
    assert Counter(p.band for p in data.sampled_items(items, 6, seed=0)) == {"easy": 2, "medium": 2, "hard": 2}
    assert "difficulty band ('easy' of 3)" in (data.cut_note(items, 5) or "")


def test_a_benchmark_without_strata_draws_a_simple_random_sample() -> None:
    data = get_benchmark("riddlesense").data
    items = data.sample_items()
    sample = data.sampled_items(items, 5, seed=0)
    assert len(sample) == 5 and _ids(sample) != _ids(items[:5])
    assert data.cut_note(items, 5) is None
