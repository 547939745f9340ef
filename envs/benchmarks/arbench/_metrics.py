"""AR-Bench's metrics: SPLAT's (Acc, Rnd, O/A pooled: AR-Bench has no difficulty bands), plus

* ``key_question_rate``: the process metric, the mean over episodes of the share of the puzzle's key
  questions the player's questions asked (judged; ``_judges.py``), in percent; under repeats its
  best-of-R takes each puzzle's best repeat;
* ``answer_word_f1``: AR-Bench's word F1 of the last explanation against the hidden story, times 100,
  over the episodes that gave one (the released evaluator logs it per puzzle; nothing aggregates it,
  so the mean is ours). Its character F1 is left out: counted over characters, spaces included, it is
  high for any English text.

Under ``reward: dense`` (``_options.py``) a run also reports, per episode, the key-question recall (the
share of the puzzle's key questions asked, from 0 to 1, the scale of the process reward) and the
process reward its questions earned: the ``by_episode`` table (episode, key questions, asked, recall,
process reward, near repeats penalised), and in the headline ``mean_key_question_recall`` and
``mean_process_reward``, plain means over every episode that started (repeats included). An errored
episode's recall counts 0, as the key-question rate counts it (so ``mean_key_question_recall`` is that
rate's mean-of-R over 100), and its process reward is what it was paid. A sparse run reports neither,
so its figures are what they were before the option.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from lateralgym.envs._scoring import Scored, ScoredEpisode, mean, put, put_plain
from lateralgym.envs.benchmarks.arbench._scene import ARBenchOutcome, ProcessTotals
from lateralgym.envs.benchmarks.splat import SplatAttempt, SplatScorer

__all__ = ["ARBenchAttempt", "ARBenchScorer"]


@dataclass(frozen=True, slots=True)
class ARBenchAttempt(SplatAttempt):
    """A SPLAT attempt plus the key-question share and the answer's word F1."""

    key_rate: float = 0.0
    """Key questions asked, in percent of the puzzle's."""
    answer_f1: float | None = None
    """Word F1 of the last explanation, times 100; None without one."""
    key_questions: int = 0
    """The puzzle's key questions (0 when the episode never started)."""
    asked: int = 0
    """Key questions asked (0 for an errored episode, as ``key_rate`` counts it)."""
    process: ProcessTotals | None = None
    """The episode's process reward under ``reward: dense``; None otherwise."""


class ARBenchScorer(SplatScorer):
    """Scores AR-Bench situation puzzles (see the module docstring)."""

    def summarise(self, end: ScoredEpisode) -> ARBenchAttempt:
        attempt = super().summarise(end)
        logged = end.outcome if isinstance(end.outcome, ARBenchOutcome) else None
        outcome = logged if end.ok else None
        key_rate = 0.0
        answer_f1 = None
        if outcome is not None and outcome.key_questions:
            key_rate = 100.0 * len(outcome.key_questions_asked) / outcome.key_questions
        if outcome is not None and outcome.answer_word_f1 is not None:
            answer_f1 = 100.0 * outcome.answer_word_f1
        base = {f.name: getattr(attempt, f.name) for f in fields(attempt)}
        return ARBenchAttempt(
            **base,
            key_rate=key_rate,
            answer_f1=answer_f1,
            key_questions=logged.key_questions if logged is not None else 0,
            asked=len(outcome.key_questions_asked) if outcome is not None else 0,
            process=logged.process if logged is not None else None,
        )

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
        rows = self._process_rows()
        if rows:
            put_plain(scored.headline, "mean_key_question_recall", mean(r["key_question_recall"] for r in rows))
            put_plain(scored.headline, "mean_process_reward", mean(r["process_reward"] for r in rows))
            scored.breakdowns["by_episode"] = rows
        return scored

    def _process_rows(self) -> list[dict[str, Any]]:
        """One row per episode of a ``reward: dense`` run (none for a sparse run)."""
        rows = []
        for item, repeats_of in self.items.items():
            for repeat, a in sorted(repeats_of.items()):
                if isinstance(a, ARBenchAttempt) and a.process is not None:
                    rows.append(
                        {
                            "episode": f"{item}#{repeat}",
                            "key_questions": a.key_questions,
                            "asked": a.asked,
                            "key_question_recall": a.asked / a.key_questions if a.key_questions else 0.0,
                            "process_reward": a.process.reward,
                            "near_repeats": a.process.repeats,
                        }
                    )
        return rows
