"""Held-out figures of greedy episodes, with intervals over problems.

``held_out`` sums up one model's episodes (rates with Wilson intervals over episodes, as before, and the
reward and valid-move share with a bootstrap interval over the *problems* the items pose:
``DataPart.problem_of``, so a task's distractor variants are drawn together and an interval says how few
distinct problems were played). ``paired_difference`` is one model minus another on the same items, both
drawn by the same resamples, so the item-to-item variation they share cancels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from lateralgym.envs.support import ratio
from lateralgym.integrations.grpo._settings import (
    EpisodeFigures,
    GRPOError,
    HeldOut,
    ProblemInterval,
    mean_interval,
    wilson,
)

__all__ = ["Measure", "held_out", "paired_difference", "problem_interval"]

Measure = Literal["reward", "valid"]
"""``reward``: the mean episode reward; ``valid``: the share of moves the env accepted."""

RESAMPLES = 2000


def held_out(records: Sequence[EpisodeFigures]) -> HeldOut:
    """The held-out figures of greedy episodes."""
    if not records:
        raise GRPOError("no held-out episode to evaluate")
    n = len(records)
    rewards = [r.reward for r in records]
    moves = sum(r.moves for r in records)
    valid = sum(r.valid_moves for r in records)
    success = sum(r.success for r in records)
    flags = sorted({name for r in records for name in r.outcome_flags})
    return HeldOut(
        n=n,
        reward_mean=sum(rewards) / n,
        reward_interval=mean_interval(rewards),
        reward_over_problems=problem_interval(records, "reward"),
        valid_rate=valid / max(1, moves),
        valid_interval=wilson(valid, max(1, moves)),
        valid_over_problems=problem_interval(records, "valid"),
        success_rate=success / n,
        success_interval=wilson(success, n),
        questions_per_episode=sum(r.questions for r in records) / n,
        invalid_rate=1 - valid / max(1, moves),
        mean_turns=moves / n,
        outcome_rates={name: sum(r.outcome_flags.get(name, False) for r in records) / n for name in flags},
    )


def _terms(records: Sequence[EpisodeFigures], measure: Measure) -> tuple[np.ndarray, np.ndarray]:
    """Each episode's numerator and denominator of ``measure``."""
    if measure == "reward":
        return np.array([r.reward for r in records], dtype=float), np.ones(len(records))
    return np.array([r.valid_moves for r in records], dtype=float), np.array([r.moves for r in records], dtype=float)


class _Draws:
    """Resamples of the problems ``records`` pose: how often each is drawn in each resample."""

    def __init__(self, records: Sequence[EpisodeFigures], resamples: int, seed: int) -> None:
        problems = [r.problem or r.item_id for r in records]
        position = {name: k for k, name in enumerate(sorted(set(problems)))}
        self.size = len(position)
        self.index = np.array([position[p] for p in problems])
        picks = np.random.default_rng(seed).integers(0, self.size, size=(resamples, self.size))
        self.counts = np.zeros((resamples, self.size))
        np.add.at(self.counts, (np.repeat(np.arange(resamples), self.size), picks.ravel()), 1)

    def rates(self, records: Sequence[EpisodeFigures], measure: Measure) -> np.ndarray:
        """``measure`` of ``records`` (in the drawn order) on each resample."""
        top, bottom = _terms(records, measure)
        numerator = np.bincount(self.index, weights=top, minlength=self.size).tolist()
        denominator = np.bincount(self.index, weights=bottom, minlength=self.size).tolist()
        return ratio(self.counts, numerator, denominator)


def _mean(records: Sequence[EpisodeFigures], measure: Measure) -> float:
    top, bottom = _terms(records, measure)
    return float(top.sum() / max(bottom.sum(), 1.0))


def _interval(samples: np.ndarray, mean: float, draws: _Draws, items: int) -> ProblemInterval:
    low, high = np.nanpercentile(samples, [2.5, 97.5])
    return ProblemInterval(mean=mean, low=float(low), high=float(high), problems=draws.size, items=items)


def problem_interval(
    records: Sequence[EpisodeFigures], measure: Measure = "reward", *, resamples: int = RESAMPLES, seed: int = 0
) -> ProblemInterval:
    """One model's held-out ``measure`` with a 95 % bootstrap interval over problems.

    Raises:
        GRPOError: no episode.
    """
    if not records:
        raise GRPOError("no held-out episode to put an interval on")
    draws = _Draws(records, resamples, seed)
    return _interval(draws.rates(records, measure), _mean(records, measure), draws, len(records))


def paired_difference(
    after: Sequence[EpisodeFigures],
    before: Sequence[EpisodeFigures],
    measure: Measure = "reward",
    *,
    resamples: int = RESAMPLES,
    seed: int = 0,
) -> ProblemInterval:
    """``after`` minus ``before`` on the same held-out items, with a 95 % interval from one bootstrap over
    problems that draws both models' episodes of a problem together.

    Raises:
        GRPOError: the two did not play the same items, one episode each.
    """
    first = {r.item_id: r for r in after}
    second = {r.item_id: r for r in before}
    if not first or set(first) != set(second) or len(first) != len(after) or len(second) != len(before):
        raise GRPOError("a paired difference needs both models' episodes on the same held-out items, one each")
    keys = sorted(first)
    a, b = [first[k] for k in keys], [second[k] for k in keys]
    draws = _Draws(a, resamples, seed)
    samples = draws.rates(a, measure) - draws.rates(b, measure)
    return _interval(samples, _mean(a, measure) - _mean(b, measure), draws, len(keys))
