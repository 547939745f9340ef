"""BrainTeaser's headline on many bootstrap resamples at once (``Scorer.headline_resampled``).

Each variant's accuracy is a ratio of sums over the drawn items. A group counts on a resample when
every variant it needs has a member drawn, and is solved when none of its drawn members was answered
wrong (best of R: no repeat right; mean of R: repeat by repeat), so both are read from which of a
group's members the resample drew (``any_drawn``), as the scorer does on the resample itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lateralgym.envs._resampled import any_drawn, mean_across, ratio

if TYPE_CHECKING:
    from lateralgym.envs.benchmarks.brainteaser import BrainTeaserScorer

__all__ = ["resampled_headline"]

GROUP_METRICS = (("ori_sem", ("original", "semantic")), ("ori_sem_con", ("original", "semantic", "context")))
"""Each group accuracy and the variants a group needs for it (the scorer's, in its order)."""


def resampled_headline(
    scorer: BrainTeaserScorer, counts: np.ndarray, variants: tuple[str, ...]
) -> dict[str, np.ndarray] | None:
    """The headline of ``scorer.score()`` on each resample of ``counts``; None when the headline's
    names would depend on the draw (items with different numbers of repeats)."""
    keys = list(scorer.items)
    outcomes = [scorer.items[k] for k in keys]
    if len({len(o) for o in outcomes}) != 1:
        return None
    repeats = scorer.repeats
    variant = np.array([scorer.info[k].variant for k in keys])
    correct = np.array([sum(o.values()) for o in outcomes], dtype=float)
    episodes = np.array([len(o) for o in outcomes], dtype=float)
    best = np.array([any(o.values()) for o in outcomes], dtype=float)
    values: dict[str, np.ndarray] = {}
    bests, plains = [], []
    for name in variants:
        member = (variant == name).astype(float)
        variant_best = ratio(counts, best * member, member, 100.0)
        variant_plain = ratio(counts, correct * member, episodes * member, 100.0)
        _put(values, f"{name}_acc", variant_best, variant_plain, repeats)
        bests.append(variant_best)
        plains.append(variant_plain)
    _put(values, "overall_acc", mean_across(bests), mean_across(plains), repeats)
    group_names = sorted({scorer.info[k].group_id for k in keys})
    index = {g: n for n, g in enumerate(group_names)}
    groups = np.array([index[scorer.info[k].group_id] for k in keys])
    for metric, needed in GROUP_METRICS:
        complete = np.ones((len(counts), len(group_names)), dtype=bool)
        for name in needed:
            complete &= any_drawn(counts, groups, len(group_names), variant == name)
        in_metric = np.isin(variant, needed)
        counted = complete.sum(axis=1).astype(float)
        wrong = any_drawn(counts, groups, len(group_names), in_metric & (best == 0))
        solved = (complete & ~wrong).sum(axis=1)
        name = f"group_{metric}_acc" + (f"_best_of_{repeats}" if repeats > 1 else "")
        values[name] = _share(solved, counted)
        if repeats > 1:
            per_repeat = np.zeros(len(counts))
            for r in range(repeats):
                wrong_r = np.array([not outcomes[n].get(r, False) for n in range(len(keys))])
                per_repeat += (complete & ~any_drawn(counts, groups, len(group_names), in_metric & wrong_r)).sum(axis=1)
            values[f"group_{metric}_acc_mean_of_{repeats}"] = _share(per_repeat, counted * repeats)
    return values


def _put(values: dict[str, np.ndarray], name: str, best: np.ndarray, plain: np.ndarray, repeats: int) -> None:
    """``put`` for arrays: both variants of the name with repeats, else the plain value."""
    if repeats > 1:
        values[f"{name}_best_of_{repeats}"], values[f"{name}_mean_of_{repeats}"] = best, plain
    else:
        values[name] = plain


def _share(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    out = np.full(len(numerator), np.nan)
    np.divide(100.0 * numerator, denominator, out=out, where=denominator != 0)
    return out
