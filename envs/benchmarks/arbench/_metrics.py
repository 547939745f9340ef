"""AR-Bench's metrics: SPLAT's (Acc, Rnd, O/A pooled: AR-Bench has no difficulty bands), plus

* ``key_question_rate``: the process metric, the mean over episodes of the share of the puzzle's key
  questions the player's questions asked (judged; ``_judges.py``), in percent; under repeats its
  best-of-R takes each puzzle's best repeat;
* ``answer_word_f1``: AR-Bench's word F1 of the last explanation against the hidden story, times 100,
  over the episodes that gave one (the released evaluator logs it per puzzle; nothing aggregates it,
  so the mean is ours). Its character F1 is left out: counted over characters, spaces included, it is
  high for any English text.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from lateralgym.envs._scoring import Scored, ScoredEpisode, mean, put, put_plain
from lateralgym.envs.benchmarks.arbench._scene import ARBenchOutcome
from lateralgym.envs.benchmarks.splat import SplatAttempt, SplatScorer

__all__ = ["ARBenchAttempt", "ARBenchScorer"]


@dataclass(frozen=True, slots=True)
class ARBenchAttempt(SplatAttempt):
    """A SPLAT attempt plus the key-question share and the answer's word F1."""

    key_rate: float = 0.0
    """Key questions asked, in percent of the puzzle's."""
    answer_f1: float | None = None
    """Word F1 of the last explanation, times 100; None without one."""


class ARBenchScorer(SplatScorer):
    """Scores AR-Bench situation puzzles (see the module docstring)."""

    def summarise(self, end: ScoredEpisode) -> ARBenchAttempt:
        attempt = super().summarise(end)
        outcome = end.outcome if isinstance(end.outcome, ARBenchOutcome) and end.ok else None
        key_rate = 0.0
        answer_f1 = None
        if outcome is not None and outcome.key_questions:
            key_rate = 100.0 * len(outcome.key_questions_asked) / outcome.key_questions
        if outcome is not None and outcome.answer_word_f1 is not None:
            answer_f1 = 100.0 * outcome.answer_word_f1
        base = {f.name: getattr(attempt, f.name) for f in fields(attempt)}
        return ARBenchAttempt(**base, key_rate=key_rate, answer_f1=answer_f1)

    def score(self) -> Scored:
        scored = super().score()
        repeats = self.repeats
        rates = [
            [a.key_rate for a in repeats_of.values() if isinstance(a, ARBenchAttempt)]
            for repeats_of in self.items.values()
        ]
        best = mean(max(r) for r in rates if r)
        every = mean(value for r in rates for value in r)
        put(scored.headline, "key_question_rate", best, every, repeats)
        put_plain(
            scored.headline,
            "answer_word_f1",
            mean(a.answer_f1 for a in self.episodes() if isinstance(a, ARBenchAttempt) and a.answer_f1 is not None),
        )
        return scored
