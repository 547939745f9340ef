"""SPLAT metrics, as the paper defines them (SPLAT §4.3; the official ``metrics.py``).

Per difficulty band (easy, medium, hard; ``none`` for puzzles without a level). The headline
``acc`` / ``rnd`` / ``oa`` are the paper's average over the bands (puzzles without a level are left
out of it); the same pooled over every puzzle are ``*_all_puzzles``. Without any graded band
(LatEval) the headline is the pooled numbers. Over a subset missing a band the two protocols differ:

* ``paper`` (config ``splat-paper``), as the official ``metrics.py`` (SPLAT §4.3; lines 55-60, 66,
  72-83, 89): Acc and O/A sum the three bands and divide by 3, a band without puzzles counting 0;
  Rnd averages the bands present. A warning names the empty band;
* ``commit`` (ours): the mean over the bands present, for all three.

* Acc: the solved rate;
* Rnd: the rounds used, the maximum when unsolved (an errored or cut-off episode counts as the
  run's ``max_turns`` rounds, read from the outcome; 15 when a log does not say);
* O/A: the mean over puzzles of ``1[solved] / Rnd``, times 100;
* unclear rate: judge replies that stayed unreadable after the re-asks, as a percentage of the
  moves the judge answered with a label (questions; every unsolved move under ``paper``), pooled
  over every episode of the band (``unclear_rate`` in each band row, overall in the headline and
  as ``unclear_ratio`` in the exploration); errored episodes count what they logged.

Best-of-R takes each puzzle's best repeat: solved in the fewest rounds.

Puzzles with key clues (LatEval's) add LatEval's own metrics, ``lateval_ac``, ``lateval_qr``,
``lateval_qd`` and ``lateval_at``, as ``_lateval.py`` defines them, over the episodes that finished.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from lateralgym.envs._scoring import (
    Exploration,
    Scored,
    ScoredEpisode,
    Scorer,
    exploration_of,
    mean,
    put,
    put_plain,
    summarise_exploration,
)
from lateralgym.envs.benchmarks.splat._scene import SplatOutcome

if TYPE_CHECKING:
    import numpy as np

BANDS = ("easy", "medium", "hard", "none")
"""SPLAT's difficulty bands, plus ``none`` for puzzles without a level (LatEval)."""


@dataclass(frozen=True, slots=True)
class SplatAttempt:
    """The compact outcome of one SPLAT episode."""

    errored: bool
    solved: bool
    rounds: int
    """Rnd: rounds used, the maximum when unsolved."""
    attempts: int
    explore: Exploration | None
    """None when the episode never started."""
    unclear: int = 0
    """Judge replies left unclear."""
    judged: int = 0
    """Moves the judge answered with a label or left unclear."""
    paper: bool = False
    """Played under the ``paper`` protocol (its band average is the official script's)."""
    lateval: tuple[float | None, float | None, float | None, float] | None = None
    """LatEval's AC, QR, QD (percent) and AT (rounds) of a finished episode on a puzzle with key clues."""

    @property
    def score(self) -> float:
        """``1[solved] / Rnd``, the O/A term (before the x 100)."""
        return 1.0 / self.rounds if self.solved and self.rounds > 0 else 0.0


class SplatScorer(Scorer[SplatAttempt, str]):
    """Scores SPLAT situation puzzles; the item info is the difficulty band."""

    def summarise(self, end: ScoredEpisode) -> SplatAttempt:
        outcome = end.outcome if isinstance(end.outcome, SplatOutcome) else None
        ok = end.ok and outcome is not None
        solved = ok and outcome is not None and outcome.solved
        turns = end.turns
        if solved or (ok and end.truncated):
            rounds = turns  # a truncated episode already used every round of its config
        else:  # errored: the run's own limit (logged in the outcome), else SPLAT's 15
            rounds = max(turns, outcome.max_turns if outcome is not None else self.max_turns)
        return SplatAttempt(
            errored=not ok,
            solved=solved,
            rounds=rounds,
            attempts=outcome.attempts if outcome is not None else 0,
            explore=exploration_of(outcome) if outcome is not None else None,
            unclear=outcome.unclear if outcome is not None else 0,
            judged=outcome.judged_moves if outcome is not None else 0,
            paper=outcome is not None and outcome.protocol == "paper",
            lateval=_lateval(outcome) if ok and outcome is not None and outcome.clue_count else None,
        )

    def describe(self, end: ScoredEpisode) -> str:
        if isinstance(end.outcome, SplatOutcome):
            band: Any = end.outcome.band
        else:
            band = end.meta.get("band")
            difficulty = end.meta.get("difficulty")
            if band is None and isinstance(difficulty, int):
                band = "easy" if difficulty <= 3 else "medium" if difficulty <= 6 else "hard"
        return str(band) if band else "none"

    def score(self) -> Scored:
        repeats = self.repeats
        rows = []
        for band in sorted(set(self.info.values()), key=lambda b: (BANDS.index(b) if b in BANDS else len(BANDS), b)):
            rows.append(self._row(band, [i for i, b in self.info.items() if b == band]))
        graded = [r for r in rows if r["band"] in BANDS[:3]]
        warnings: list[str] = []
        if graded:
            average: dict[str, Any] = {
                "band": "average",
                "puzzles": sum(r["puzzles"] for r in graded),
                "episodes": sum(r["episodes"] for r in graded),
            }
            official = any(a.paper for a in self.episodes())
            missing = [b for b in BANDS[:3] if b not in {r["band"] for r in graded}]
            for metric in ("acc", "rnd", "oa"):
                names = (metric,) if repeats == 1 else (f"{metric}_best_of_{repeats}", f"{metric}_mean_of_{repeats}")
                for name in names:
                    values = [r[name] for r in graded if name in r]
                    if official and metric != "rnd" and values:
                        # SPLAT's metrics.py: a band without puzzles counts 0 and the sum is divided by 3
                        put_plain(average, name, sum(values) / 3)
                    else:
                        put_plain(average, name, mean(values))
            rows.append(average)
            if official and missing:
                warnings.append(
                    f"no {' or '.join(missing)} puzzle in this run: Acc and O/A are averaged over the three bands "
                    f"as SPLAT's official metrics.py does, the empty band{'s' if len(missing) > 1 else ''} counting "
                    "0 (Rnd over the bands present); the *_all_puzzles numbers pool the puzzles run"
                )
        overall = {k: v for k, v in self._row("all", list(self.items)).items() if isinstance(v, float)}
        if graded:
            # The paper's headline "average" is the mean of the three bands (SPLAT §4.3, Table 3);
            # the numbers pooled over every puzzle are kept beside it.
            headline = {k: v for k, v in rows[-1].items() if isinstance(v, float)}
            headline.update({f"{k}_all_puzzles": v for k, v in overall.items()})
        else:  # no difficulty levels (LatEval): there are no bands to average
            headline = overall
        put_plain(headline, "unclear_rate", unclear_rate(list(self.episodes())))
        measured = [a.lateval for a in self.episodes() if a.lateval is not None]
        for n, name in enumerate(("lateval_ac", "lateval_qr", "lateval_qd", "lateval_at")):
            put_plain(headline, name, mean(v for m in measured if (v := m[n]) is not None))
        finished = [a for a in self.episodes() if not a.errored]
        exploration = summarise_exploration([a.explore for a in finished if a.explore is not None])
        put_plain(exploration, "mean_commit_attempts", mean(a.attempts for a in finished))
        put_plain(exploration, "unclear_ratio", unclear_rate(finished))
        return Scored(headline=headline, breakdowns={"by_band": rows}, exploration=exploration, warnings=warnings)

    def headline_resampled(self, counts: np.ndarray) -> dict[str, np.ndarray] | None:
        """Every resample of ``counts`` scored at once (``_resampled.py``): each band's means and the
        pooled ones as ratios of sums, the average over the bands from them."""
        from lateralgym.envs.benchmarks.splat._resampled import resampled_headline

        return resampled_headline(self, counts, BANDS[:3])

    def _row(self, band: str, items: list[str]) -> dict[str, Any]:
        repeats = self.repeats
        best = [max(self.items[i].values(), key=lambda a: (a.score, -a.rounds)) for i in items]
        every = [a for i in items for a in self.items[i].values()]
        row: dict[str, Any] = {"band": band, "puzzles": len(items), "episodes": len(every)}
        put(row, "acc", mean(100.0 * a.solved for a in best), mean(100.0 * a.solved for a in every), repeats)
        put(row, "rnd", mean(float(a.rounds) for a in best), mean(float(a.rounds) for a in every), repeats)
        put(row, "oa", mean(100.0 * a.score for a in best), mean(100.0 * a.score for a in every), repeats)
        put_plain(row, "unclear_rate", unclear_rate(every))
        return row


def _lateval(outcome: SplatOutcome) -> tuple[float | None, float | None, float | None, float]:
    """AC, QR, QD in percent and AT in rounds of one episode (``_lateval.py``)."""
    ac = 100.0 * outcome.clues_covered / outcome.clue_count if outcome.clue_count else None
    qr = 100.0 * outcome.relevant_questions / outcome.questions if outcome.questions else None
    qd = 100.0 * outcome.question_divergence if outcome.question_divergence is not None else None
    at = float(outcome.first_commit_turn - 1 if outcome.first_commit_turn is not None else outcome.turns)
    return ac, qr, qd, at


def unclear_rate(attempts: list[SplatAttempt]) -> float | None:
    """Unclear judge replies as a percentage of judged moves, pooled; None when nothing was judged."""
    judged = sum(a.judged for a in attempts)
    return 100.0 * sum(a.unclear for a in attempts) / judged if judged else None
