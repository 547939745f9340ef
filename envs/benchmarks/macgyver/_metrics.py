"""MacGyver's metrics, over the six annotation labels (``VERDICTS``).

The paper's aggregation per model is not released (undetermined); these are ours, on its labels:
``correct_rate`` (correct and efficient, correct but inefficient, or rightly unsolvable), ``efficient_rate``
(correct and efficient), and each label's share; the same per problem kind (solvable / unsolvable,
conventional / unconventional) in ``by_kind``. Under repeats, best-of-R and mean-of-R.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from lateralgym.envs._scoring import Scored, ScoredEpisode, Scorer, pct, put, success_rates
from lateralgym.envs.benchmarks.macgyver._scene import MacGyverOutcome
from lateralgym.envs.benchmarks.macgyver._schema import CORRECT, VERDICTS

__all__ = ["MacGyverScorer"]


@dataclass(frozen=True, slots=True)
class Judged:
    verdict: str | None


def _kind(outcome: MacGyverOutcome | None, meta: dict[str, Any]) -> str:
    solvable = outcome.solvable if outcome is not None else meta.get("solvable")
    unconventional = outcome.unconventional if outcome is not None else meta.get("unconventional")
    if solvable is False:
        return "unsolvable"
    return "unconventional" if unconventional else "conventional"


class MacGyverScorer(Scorer[Judged, str]):
    """Scores MacGyver problems (see the module docstring)."""

    def summarise(self, end: ScoredEpisode) -> Judged:
        outcome = end.outcome if isinstance(end.outcome, MacGyverOutcome) and end.ok else None
        return Judged(verdict=outcome.verdict if outcome is not None else None)

    def describe(self, end: ScoredEpisode) -> str:
        outcome = end.outcome if isinstance(end.outcome, MacGyverOutcome) else None
        return _kind(outcome, dict(end.meta))

    def _rates(self, items: list[str]) -> dict[str, Any]:
        repeats = self.repeats
        row: dict[str, Any] = {"problems": len(items), "episodes": sum(len(self.items[i]) for i in items)}
        put(row, "correct_rate", *success_rates(self.per_item(lambda j: j.verdict in CORRECT, items)), repeats)
        put(
            row,
            "efficient_rate",
            *success_rates(self.per_item(lambda j: j.verdict == "correct_efficient", items)),
            repeats,
        )
        every = [j for i in items for j in self.items[i].values()]
        for verdict in VERDICTS:
            row[f"{verdict}_share"] = pct(sum(j.verdict == verdict for j in every), len(every))
        row["unanswered_share"] = pct(sum(j.verdict is None for j in every), len(every))
        return row

    def score(self) -> Scored:
        items = list(self.items)
        headline = {k: v for k, v in self._rates(items).items() if isinstance(v, float)}
        rows = []
        for kind in ("conventional", "unconventional", "unsolvable"):
            chosen = [i for i in items if self.info.get(i) == kind]
            if chosen:
                rows.append({"kind": kind, **self._rates(chosen)})
        return Scored(headline=headline, breakdowns={"by_kind": rows})
