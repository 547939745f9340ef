"""Intervals over distinct task texts (issue 35): a text's distractor variants, repeats and seeds are drawn
together, and two policies' paired difference on the same tasks is drawn the same way."""

from __future__ import annotations

import numpy as np
import pytest

from lateralgym.envs import ConfigError, EpisodeConfig, load_sample_items
from lateralgym.envs.benchmarks.creativity.rl.evaluation import (
    Evaluation,
    evaluate_heuristic,
    evaluate_policy,
    paired_difference,
    random_policy,
    task_interval,
)


def _evaluation(texts: list[str], correct: list[bool], name: str = "p") -> Evaluation:
    return Evaluation(
        policy=name,
        episodes=len(correct),
        gold_correct_rate=float(np.mean(correct)),
        entity_correct_rate=0.0,
        gold_inspection_rate=0.0,
        mean_return=0.0,
        mean_turns=1.0,
        masked_actions=0,
        item_ids=[f"t{n}" for n in range(len(texts))],
        texts=texts,
        gold_correct=correct,
    )


def test_variants_of_one_text_are_drawn_together() -> None:
    # two problems, each written once and shown in five distractor variants: one always solved, one never
    texts = ["A"] * 5 + ["B"] * 5
    ev = _evaluation(texts, [True] * 5 + [False] * 5)
    interval = task_interval([ev], resamples=4000, seed=1)
    assert interval.mean == pytest.approx(50.0)
    # two clusters: a quarter of the draws hold only A, a quarter only B; an episode-level bootstrap over
    # ten episodes would claim far less uncertainty than two problems carry
    assert interval.low == pytest.approx(0.0) and interval.high == pytest.approx(100.0)


def test_seeds_pool_into_their_texts() -> None:
    first = _evaluation(["A", "B", "C"], [True, False, True])
    second = _evaluation(["A", "B", "C"], [True, True, False])
    interval = task_interval([first, second], resamples=500)
    assert interval.mean == pytest.approx(100 * 4 / 6) and 0.0 <= interval.low <= interval.mean <= interval.high


def test_a_paired_difference_cancels_what_both_policies_share() -> None:
    texts = [f"text {n}" for n in range(12)]
    base = _evaluation(texts, [n % 3 == 0 for n in range(12)], "base")
    same = paired_difference([base], [base], resamples=300)
    assert same.mean == same.low == same.high == 0.0
    better = _evaluation(texts, [n % 3 == 0 or n == 1 for n in range(12)], "better")
    diff = paired_difference([better], [base], resamples=2000, seed=2)
    assert diff.mean == pytest.approx(100 / 12) and diff.low >= 0.0 and diff.high > 0.0
    with pytest.raises(ConfigError, match="same tasks"):
        paired_difference([better], [_evaluation(texts[:6], [True] * 6)])


def test_evaluations_keep_each_episode_and_each_task_text() -> None:
    tasks = load_sample_items("creativity")[:6]
    config = EpisodeConfig.named("creativity-interactive")
    heuristic = evaluate_heuristic(config, tasks, repeats=2, seed=3)
    random = evaluate_policy(random_policy, config, tasks, name="random", repeats=2, seed=3)
    for ev in (heuristic, random):
        assert ev.texts == [t.task for t in tasks] and len(ev.gold_correct) == 12
        assert np.mean(ev.gold_correct) == pytest.approx(ev.gold_correct_rate)
    interval = task_interval([heuristic])
    assert interval.mean == pytest.approx(100 * heuristic.gold_correct_rate)
    diff = paired_difference([heuristic], [random])
    assert diff.mean == pytest.approx(100 * (heuristic.gold_correct_rate - random.gold_correct_rate))
    assert diff.low <= diff.mean <= diff.high
    with pytest.raises(ConfigError, match="kept no task texts"):
        task_interval([heuristic.model_copy(update={"texts": []})])
