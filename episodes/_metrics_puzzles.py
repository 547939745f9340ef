"""BrainTeaser and SPLAT metrics, as their papers define them.

BrainTeaser (rates in percent), per kind (sentence, word) and over both:

* instance accuracy on the original, semantic and context variants;
* group accuracy ``ori&sem`` over groups that have both an original and a semantic puzzle (the
  group counts when both are answered correctly), and ``ori&sem&con`` over groups that have all
  three; under repeats a puzzle counts as correct when any of its repeats is (best-of-R);
* overall: the mean of the instance accuracies (of the variants present).

SPLAT, per difficulty band (easy, medium, hard; ``none`` for puzzles without a level) and
averaged over the bands present:

* Acc: the solved rate;
* Rnd: the rounds used, the maximum when unsolved (an errored or cut-off episode counts as the
  run's ``max_turns`` rounds, read from the outcome; 15 when a log does not say);
* O/A: the mean over puzzles of ``1[solved] / Rnd``, times 100.

Best-of-R for SPLAT takes each puzzle's best repeat: solved in the fewest rounds.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from lateralgym.episodes._log import EpisodeEnd
from lateralgym.episodes._metrics_base import (
    Exploration,
    Scored,
    Scorer,
    count,
    exploration_of,
    lookup,
    mean,
    put,
    put_plain,
    success_rates,
    summarise_exploration,
)

VARIANTS = ("original", "semantic", "context")
KINDS = ("sentence", "word")
BANDS = ("easy", "medium", "hard", "none")
"""SPLAT's difficulty bands, plus ``none`` for puzzles without a level (LatEval)."""

_BRAINTEASER_ID = re.compile(r"^(?P<group>(?P<kind>SP|WP)-\d+)(?P<suffix>_SR|_CR)?$")
_SUFFIX_VARIANT = {None: "original", "_SR": "semantic", "_CR": "context"}


@dataclass(frozen=True, slots=True)
class PuzzleInfo:
    """Where a BrainTeaser puzzle belongs."""

    group_id: str
    kind: str
    variant: str


class BrainTeaserScorer(Scorer[bool, PuzzleInfo]):
    """Scores BrainTeaser; an episode's summary is whether its choice was correct."""

    def summarise(self, end: EpisodeEnd) -> bool:
        return end.error is None and bool(end.outcome.get("correct", False))

    def describe(self, end: EpisodeEnd) -> PuzzleInfo:
        # An errored end may carry no outcome: fall back on metadata, then on the official id scheme.
        parsed = _BRAINTEASER_ID.match(end.item_id)
        group = lookup(end, "group_id") or (parsed.group("group") if parsed else end.item_id)
        kind = lookup(end, "kind") or ({"SP": "sentence", "WP": "word"}[parsed.group("kind")] if parsed else "unknown")
        variant = lookup(end, "variant") or (_SUFFIX_VARIANT[parsed.group("suffix")] if parsed else "original")
        return PuzzleInfo(group_id=str(group), kind=str(kind), variant=str(variant))

    def score(self) -> Scored:
        kinds = sorted({info.kind for info in self.info.values()}, key=_kind_order)
        rows = [self._row(kind) for kind in (*kinds, "all")]
        headline = {k: v for k, v in rows[-1].items() if isinstance(v, float)}
        return Scored(headline=headline, breakdowns={"by_kind": rows})

    def _row(self, kind: str) -> dict[str, Any]:
        repeats = self.repeats
        items = [i for i, info in self.info.items() if kind in ("all", info.kind)]
        row: dict[str, Any] = {"kind": kind, "puzzles": len(items), "episodes": sum(len(self.items[i]) for i in items)}
        bests: list[float] = []
        plains: list[float] = []
        for variant in VARIANTS:
            chosen = [i for i in items if self.info[i].variant == variant]
            best, plain = success_rates(self.per_item(lambda correct: correct, chosen))
            put(row, f"{variant}_acc", best, plain, repeats)
            if best is not None and plain is not None:
                bests.append(best)
                plains.append(plain)
        put(row, "overall_acc", mean(bests), mean(plains), repeats)
        groups: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for i in items:
            groups[self.info[i].group_id][self.info[i].variant].append(i)
        for name, needed in (("ori_sem", VARIANTS[:2]), ("ori_sem_con", VARIANTS)):
            complete = [g for g in groups.values() if all(g.get(v) for v in needed)]
            solved = sum(all(self._best(i) for v in needed for i in g[v]) for g in complete)
            row[f"{name}_groups"] = len(complete)
            metric = f"group_{name}_acc" + (f"_best_of_{repeats}" if repeats > 1 else "")
            if complete:
                row[metric] = 100.0 * solved / len(complete)
        return row

    def _best(self, item_id: str) -> bool:
        return any(self.items[item_id].values())


def _kind_order(kind: str) -> tuple[int, str]:
    return (KINDS.index(kind) if kind in KINDS else len(KINDS), kind)


@dataclass(frozen=True, slots=True)
class SplatAttempt:
    """The compact outcome of one SPLAT episode."""

    errored: bool
    solved: bool
    rounds: int
    """Rnd: rounds used, the maximum when unsolved."""
    attempts: int
    explore: Exploration

    @property
    def score(self) -> float:
        """``1[solved] / Rnd``, the O/A term (before the x 100)."""
        return 1.0 / self.rounds if self.solved and self.rounds > 0 else 0.0


class SplatScorer(Scorer[SplatAttempt, str]):
    """Scores SPLAT situation puzzles; the item info is the difficulty band."""

    def summarise(self, end: EpisodeEnd) -> SplatAttempt:
        ok = end.error is None
        solved = ok and bool(end.outcome.get("solved", False))
        turns = end.turns or count(end, "turns")
        if solved or (ok and end.truncated):
            rounds = turns  # a truncated episode already used every round of its config
        else:  # errored: the run's own limit (logged in the outcome), else SPLAT's 15
            rounds = max(turns, count(end, "max_turns") or self.max_turns)
        return SplatAttempt(
            errored=not ok,
            solved=solved,
            rounds=rounds,
            attempts=count(end, "attempts"),
            explore=exploration_of(end, solved),
        )

    def describe(self, end: EpisodeEnd) -> str:
        band = lookup(end, "band")
        if band is None:
            difficulty = lookup(end, "difficulty")
            if isinstance(difficulty, int):
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
        overall = self._row("all", list(self.items))
        headline = {k: v for k, v in overall.items() if isinstance(v, float)}
        if graded:
            headline.update({f"band_avg_{k}": v for k, v in rows[-1].items() if isinstance(v, float)})
        finished = [a for a in self.episodes() if not a.errored]
        exploration = summarise_exploration([a.explore for a in finished])
        put_plain(exploration, "mean_commit_attempts", mean(a.attempts for a in finished))
        return Scored(headline=headline, breakdowns={"by_band": rows}, exploration=exploration)

    def _row(self, band: str, items: list[str]) -> dict[str, Any]:
        repeats = self.repeats
        best = [max(self.items[i].values(), key=lambda a: (a.score, -a.rounds)) for i in items]
        every = [a for i in items for a in self.items[i].values()]
        row: dict[str, Any] = {"band": band, "puzzles": len(items), "episodes": len(every)}
        put(row, "acc", mean(100.0 * a.solved for a in best), mean(100.0 * a.solved for a in every), repeats)
        put(row, "rnd", mean(float(a.rounds) for a in best), mean(float(a.rounds) for a in every), repeats)
        put(row, "oa", mean(100.0 * a.score for a in best), mean(100.0 * a.score for a in every), repeats)
        return row
