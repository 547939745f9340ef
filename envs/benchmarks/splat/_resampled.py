"""SPLAT's headline on many bootstrap resamples at once (``Scorer.headline_resampled``).

Every SPLAT metric is a mean over the drawn items' episodes (or their best repeats) within a band
or over all puzzles, so each is a ratio of sums over the draw counts; the headline average over
the bands is then the mean of the bands drawn (or, under the ``paper`` protocol, Acc and O/A summed
over the bands and divided by 3), as ``SplatScorer.score`` does on each resample.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lateralgym.envs._resampled import mean_across, ratio, sum_across

if TYPE_CHECKING:
    from lateralgym.envs.benchmarks.splat._metrics import SplatAttempt, SplatScorer

__all__ = ["resampled_headline"]

METRICS = ("acc", "rnd", "oa")
LATEVAL = ("lateval_ac", "lateval_qr", "lateval_qd", "lateval_at")


def resampled_headline(
    scorer: SplatScorer, counts: np.ndarray, graded_bands: tuple[str, ...]
) -> dict[str, np.ndarray] | None:
    """The headline of ``scorer.score()`` on each resample of ``counts``; None when its names or its
    averaging would depend on the draw (items with different numbers of repeats, graded puzzles
    beside ungraded ones, both protocols in one run)."""
    keys = list(scorer.items)
    attempts = [list(scorer.items[k].values()) for k in keys]
    bands = np.array([scorer.info[k] for k in keys])
    graded = np.isin(bands, graded_bands)
    papers = {a.paper for every in attempts for a in every}
    if len({len(a) for a in attempts}) != 1 or len(papers) != 1 or 0 < graded.sum() < len(keys):
        return None
    repeats = scorer.repeats
    official = papers == {True}
    best = [max(every, key=lambda a: (a.score, -a.rounds)) for every in attempts]
    ones = np.ones(len(keys))
    episodes = np.array([len(every) for every in attempts], dtype=float)
    per_item = {
        "acc": (
            np.array([100.0 * b.solved for b in best]),
            np.array([sum(100.0 * a.solved for a in e) for e in attempts]),
        ),
        "rnd": (
            np.array([float(b.rounds) for b in best]),
            np.array([float(sum(a.rounds for a in e)) for e in attempts]),
        ),
        "oa": (
            np.array([100.0 * b.score for b in best]),
            np.array([sum(100.0 * a.score for a in e) for e in attempts]),
        ),
    }

    def row(member: np.ndarray) -> dict[str, np.ndarray]:
        """A band's (or all puzzles') metrics under their names, as ``SplatScorer._row``."""
        out: dict[str, np.ndarray] = {}
        for metric, (best_sum, every_sum) in per_item.items():
            plain = ratio(counts, every_sum * member, episodes * member)
            if repeats > 1:
                out[f"{metric}_best_of_{repeats}"] = ratio(counts, best_sum * member, ones * member)
                out[f"{metric}_mean_of_{repeats}"] = plain
            else:
                out[metric] = plain
        return out

    unclear = _unclear(counts, attempts)
    headline: dict[str, np.ndarray] = {}
    if graded.all():
        rows = [row((bands == band).astype(float)) for band in graded_bands]
        for name in rows[0]:
            values = [r[name] for r in rows]
            summed = official and not name.startswith("rnd")
            headline[name] = sum_across(values, 3) if summed else mean_across(values)
        overall = row(ones)
        headline.update({f"{name}_all_puzzles": value for name, value in overall.items()})
        headline["unclear_rate_all_puzzles"] = unclear
    else:  # no difficulty levels (LatEval): the pooled numbers
        headline.update(row(ones))
    headline["unclear_rate"] = unclear
    for n, name in enumerate(LATEVAL):
        measured = [[v for a in e if a.lateval is not None and (v := a.lateval[n]) is not None] for e in attempts]
        headline[name] = ratio(counts, [float(sum(v)) for v in measured], [float(len(v)) for v in measured])
    return headline


def _unclear(counts: np.ndarray, attempts: list[list[SplatAttempt]]) -> np.ndarray:
    """The unclear rate pooled over the drawn episodes (``unclear_rate``)."""
    unclear = [float(sum(a.unclear for a in e)) for e in attempts]
    judged = [float(sum(a.judged for a in e)) for e in attempts]
    return ratio(counts, unclear, judged, 100.0)
