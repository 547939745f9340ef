"""``benchmarks/bench_rl_ceiling.py`` chooses its L2 strength by cross-validation over folds by gold entity.

* ``entity_folds`` puts every task of a gold entity (its snake_case name, so every variant) in one
  fold, about as many tasks in each, with no randomness; it refuses more folds than entities.
* ``cross_validate`` fits on the other folds and scores each fold; ``choose_lambda`` takes the best
  mean across folds and, on a tie, the stronger pull (the larger lambda).
* ``fit`` (rows stacked, one softmax per task) learns a direction the gold follows when the pull is weak,
  and stays at its start when the pull is strong.

(The script's end-to-end run is in ``test_rl_baselines.py``.)
"""

from __future__ import annotations

import numpy as np
import pytest
from _bench_script import bench_script

from lateralgym.envs import load_sample_items, snake
from lateralgym.envs.benchmarks.creativity.rl.evaluation import split_tasks

TRAIN = split_tasks(load_sample_items("creativity"), "train")


def _synthetic(n_tasks: int, signal: float, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Tasks of 6 commits and 3 columns: column 0 marks the gold with strength ``signal`` plus noise,
    column 1 (the start's) is noise, column 2 is noise."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_tasks):
        gold = np.zeros(6, dtype=bool)
        gold[rng.integers(6)] = True
        x = rng.normal(size=(6, 3))
        x[:, 0] += signal * gold
        rows.append((x, gold))
    return rows


def test_no_gold_entity_straddles_a_fold_and_the_folds_are_balanced() -> None:
    bench = bench_script("bench_rl_ceiling")
    folds = bench.entity_folds(TRAIN, 5)
    assert len(folds) == len(TRAIN) and set(folds.tolist()) == set(range(5))
    fold_of: dict[str, set[int]] = {}
    for task, fold in zip(TRAIN, folds, strict=True):
        fold_of.setdefault(snake(task.gold.entity), set()).add(int(fold))
    assert all(len(found) == 1 for found in fold_of.values())
    largest = max(sum(snake(t.gold.entity) == name for t in TRAIN) for name in fold_of)
    counts = np.bincount(folds)
    assert counts.max() - counts.min() <= largest
    assert (bench.entity_folds(TRAIN, 5) == folds).all()  # no randomness: the same folds every run


def test_variants_spelt_differently_share_a_fold_and_too_many_folds_are_refused() -> None:
    bench = bench_script("bench_rl_ceiling")
    first = TRAIN[0]
    renamed = first.model_copy(update={"gold": first.gold.model_copy(update={"entity": first.gold.entity.upper()})})
    others = [t for t in TRAIN if snake(t.gold.entity) != snake(first.gold.entity)]
    folds = bench.entity_folds([first, *others, renamed], 3)
    assert folds[0] == folds[-1]
    with pytest.raises(ValueError, match="gold entities"):
        bench.entity_folds(TRAIN[:2], 5)
    with pytest.raises(ValueError, match="at least 2 folds"):
        bench.entity_folds(TRAIN, 1)


def test_a_tie_goes_to_the_stronger_pull() -> None:
    bench = bench_script("bench_rl_ceiling")
    assert bench.choose_lambda({0.01: [40.0, 60.0], 0.1: [50.0, 50.0], 1.0: [55.0, 45.0]}) == 1.0
    assert bench.choose_lambda({0.01: [60.0, 60.0], 0.1: [50.0, 50.0], 1.0: [55.0, 45.0]}) == 0.01


def test_cross_validation_picks_a_weak_pull_when_the_start_is_wrong_and_the_folds_teach() -> None:
    bench = bench_script("bench_rl_ceiling")
    rows = _synthetic(60, signal=2.0, seed=0)
    folds = np.arange(60) % 3
    start = np.array([0.0, 1.0, 0.0])  # the start reads a column that says nothing
    curve = bench.cross_validate([rows] * 3, folds, (1e-3, 1e-1, 1e3), start)
    assert set(curve) == {1e-3, 1e-1, 1e3} and all(len(rates) == 3 for rates in curve.values())
    assert np.mean(curve[1e-3]) > np.mean(curve[1e3]) + 20  # the strong pull stays at the useless start
    assert bench.choose_lambda(curve) < 1e3
    weak = bench.fit(rows, 1e-3, start)
    assert weak[0] > 1.0 and abs(weak[1]) < 0.5  # learnt the gold's column, forgot the start's
    assert np.allclose(bench.fit(rows, 1e4, start), start, atol=1e-2)


def test_nothing_to_learn_leaves_the_rates_tied_or_worse_than_the_start() -> None:
    bench = bench_script("bench_rl_ceiling")
    rows = _synthetic(60, signal=0.0, seed=1)  # nothing marks the gold
    curve = bench.cross_validate([rows] * 3, np.arange(60) % 3, (1e-3, 1e3), np.array([1.0, 0.0, 0.0]))
    assert all(0.0 <= rate <= 100.0 for rates in curve.values() for rate in rates)
    assert len(bench.hits(rows, np.zeros(3))) == 60
