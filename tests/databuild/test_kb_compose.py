"""Stages D and F: coverage-oriented, deterministic subsampling of part-variant combinations."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lateralgym.envs.benchmarks.creativity.databuild._kb_compose import compose


def pairs(combos: list[tuple[int, ...]]) -> set[tuple[int, int, int, int]]:
    return {(i, c[i], j, c[j]) for c in combos for i, j in itertools.combinations(range(len(c)), 2)}


def test_small_products_are_kept_whole_in_order() -> None:
    assert compose([2, 1, 2], 8, seed="s") == [(0, 0, 0), (0, 0, 1), (1, 0, 0), (1, 0, 1)]


@settings(max_examples=60, deadline=None)
@given(counts=st.lists(st.integers(min_value=1, max_value=3), min_size=1, max_size=8), limit=st.sampled_from([3, 6, 8]))
def test_every_variant_of_every_part_is_covered_within_the_limit(counts: list[int], limit: int) -> None:
    combos = compose(counts, limit, seed="entity")
    assert len(combos) == min(limit, len(list(itertools.product(*(range(k) for k in counts)))))
    assert len(set(combos)) == len(combos)
    for part, variants in enumerate(counts):
        assert {c[part] for c in combos} == set(range(variants))
    assert compose(counts, limit, seed="entity") == combos  # deterministic


def test_pair_coverage_beats_the_first_combinations_in_order() -> None:
    counts = [3] * 8
    chosen = compose(counts, 8, seed="kitchen/ladle")
    naive = list(itertools.islice(itertools.product(*(range(k) for k in counts)), 8))
    assert len(pairs(chosen)) > len(pairs(naive))
    assert compose(counts, 8, seed="garage/hammer") != chosen  # the seed decides


@pytest.mark.parametrize(("counts", "limit"), [([], 8), ([2, 0], 8), ([2], 0)])
def test_impossible_requests_are_refused(counts: list[int], limit: int) -> None:
    with pytest.raises(ValueError, match="compose needs"):
        compose(counts, limit, seed="x")
