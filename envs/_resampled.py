"""A scorer's headline on many bootstrap resamples at once, from how often each item was drawn.

A resample draws items with replacement; ``counts`` holds, for a batch of resamples, how many
times each item was drawn (resamples x items, the items in ``Scorer.items`` order). A metric that
is a mean over the drawn items' episodes is then a ratio of two matrix products, and a metric over
groups of items (a group solved when every member drawn was) reads each group's drawn members from
the same counts. Each function returns one value per resample, NaN where the scorer would leave the
metric out of that resample (nothing drawn to average over).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["any_drawn", "mean_across", "ratio", "sum_across"]


def ratio(
    counts: np.ndarray, numerator: Sequence[float], denominator: Sequence[float], scale: float = 1.0
) -> np.ndarray:
    """``scale * sum(numerator) / sum(denominator)`` over each resample's drawn items (an item drawn
    twice counts twice); NaN where the denominator sums to 0."""
    top = counts @ np.asarray(numerator, dtype=float)
    bottom = counts @ np.asarray(denominator, dtype=float)
    out = np.full(len(counts), np.nan)
    np.divide(scale * top, bottom, out=out, where=bottom != 0)
    return out


def mean_across(values: Sequence[np.ndarray]) -> np.ndarray:
    """Per resample, the mean of the values defined (not NaN); NaN where none is."""
    stacked = np.stack(values)
    defined = ~np.isnan(stacked)
    found = defined.sum(axis=0)
    out = np.full(stacked.shape[1], np.nan)
    np.divide(np.where(defined, stacked, 0.0).sum(axis=0), found, out=out, where=found != 0)
    return out


def sum_across(values: Sequence[np.ndarray], divisor: float) -> np.ndarray:
    """Per resample, the sum of the values defined divided by ``divisor`` (an average over a fixed
    number of parts, a missing part counting 0); NaN where none is defined."""
    stacked = np.stack(values)
    defined = ~np.isnan(stacked)
    out: np.ndarray = np.where(defined, stacked, 0.0).sum(axis=0) / divisor
    out[~defined.any(axis=0)] = np.nan
    return out


def any_drawn(counts: np.ndarray, groups: np.ndarray, n_groups: int, members: np.ndarray) -> np.ndarray:
    """Per resample and group, whether any of the group's items picked by ``members`` (a bool per
    item) was drawn: resamples x groups. ``groups`` gives each item's group (0 .. n_groups - 1)."""
    picked = np.flatnonzero(members)
    out = np.zeros((len(counts), n_groups), dtype=bool)
    if len(picked) == 0:
        return out
    order = picked[np.argsort(groups[picked], kind="stable")]
    ordered_groups = groups[order]
    starts = np.flatnonzero(np.r_[True, ordered_groups[1:] != ordered_groups[:-1]])
    sums = np.add.reduceat(counts[:, order], starts, axis=1)
    out[:, ordered_groups[starts]] = sums > 0
    return out
