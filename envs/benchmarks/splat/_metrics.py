"""SPLAT metrics, as the paper defines them (SPLAT §4.3; the official ``metrics.py``).

Per difficulty band (easy, medium, hard; ``none`` for puzzles without a level). The headline
``acc`` / ``rnd`` / ``oa`` are the paper's average: the mean over the bands present (puzzles
without a level are left out of it); the same pooled over every puzzle are ``*_all_puzzles``.
Without any graded band (LatEval) the headline is the pooled numbers.

* Acc: the solved rate;
* Rnd: the rounds used, the maximum when unsolved (an errored or cut-off episode counts as the
  run's ``max_turns`` rounds, read from the outcome; 15 when a log does not say);
* O/A: the mean over puzzles of ``1[solved] / Rnd``, times 100;
* unclear rate: judge replies that stayed unreadable after the re-asks, as a percentage of the
  moves the judge answered with a label (questions; every unsolved move under ``paper``), pooled
  over every episode of the band (``unclear_rate`` in each band row, overall in the headline and
  as ``unclear_ratio`` in the exploration); errored episodes count what they logged.

Best-of-R takes each puzzle's best repeat: solved in the fewest rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

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
        if graded:
            average: dict[str, Any] = {
                "band": "average",
                "puzzles": sum(r["puzzles"] for r in graded),
                "episodes": sum(r["episodes"] for r in graded),
            }
            for metric in ("acc", "rnd", "oa"):
                names = (metric,) if repeats == 1 else (f"{metric}_best_of_{repeats}", f"{metric}_mean_of_{repeats}")
                for name in names:
                    put_plain(average, name, mean(r[name] for r in graded if name in r))
            rows.append(average)
        overall = {k: v for k, v in self._row("all", list(self.items)).items() if isinstance(v, float)}
        if graded:
            # The paper's headline "average" is the mean of the three bands (SPLAT §4.3, Table 3);
            # the numbers pooled over every puzzle are kept beside it.
            headline = {k: v for k, v in rows[-1].items() if isinstance(v, float)}
            headline.update({f"{k}_all_puzzles": v for k, v in overall.items()})
        else:  # no difficulty levels (LatEval): there are no bands to average
            headline = overall
        put_plain(headline, "unclear_rate", unclear_rate(list(self.episodes())))
        finished = [a for a in self.episodes() if not a.errored]
        exploration = summarise_exploration([a.explore for a in finished if a.explore is not None])
        put_plain(exploration, "mean_commit_attempts", mean(a.attempts for a in finished))
        put_plain(exploration, "unclear_ratio", unclear_rate(finished))
        return Scored(headline=headline, breakdowns={"by_band": rows}, exploration=exploration)

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


def unclear_rate(attempts: list[SplatAttempt]) -> float | None:
    """Unclear judge replies as a percentage of judged moves, pooled; None when nothing was judged."""
    judged = sum(a.judged for a in attempts)
    return 100.0 * sum(a.unclear for a in attempts) / judged if judged else None
