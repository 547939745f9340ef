"""The rules of one AR-Bench situation puzzle: SPLAT's game, plus the key questions the player asks."""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, SerializerFunctionWrapHandler, model_serializer

from lateralgym.envs._actions import Ask, Commit, Inspect
from lateralgym.envs._benchmark import ViewSection
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import Handled
from lateralgym.envs._judging import Judge
from lateralgym.envs._process import QuestionRewards
from lateralgym.envs.benchmarks.arbench._judges import KeyQuestionHits, key_question_hits
from lateralgym.envs.benchmarks.arbench._options import ARBenchOptions
from lateralgym.envs.benchmarks.arbench._schema import ARBenchPuzzle
from lateralgym.envs.benchmarks.splat import SituationScene, SplatOutcome

__all__ = ["ARBenchOutcome", "ARBenchScene", "ProcessTotals", "word_f1"]


class ProcessTotals(BaseModel):
    """An episode's process reward under ``reward: dense`` (its questions' rewards, summed)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reward: float
    """The questions' process rewards, summed (already inside the episode's reward)."""
    repeats: int
    """Questions priced as near repeats of an earlier one."""


class ARBenchOutcome(SplatOutcome):
    """An AR-Bench episode's outcome: SPLAT's, plus the process metric's inputs and the answer's word F1."""

    key_questions: int
    """The puzzle's key questions."""
    key_questions_asked: list[int]
    """The key questions (indices) at least one of the player's questions asked, as the judge found."""
    answer_word_f1: float | None = None
    """AR-Bench's ``f1_score_word`` of the last explanation against the hidden story (whitespace tokens,
    case and punctuation kept; ``arbench/utils/utils_sp.py`` 23-42); None without an explanation."""

    process: ProcessTotals | None = None
    """The episode's process reward under ``reward: dense``; None (and absent from the log) otherwise."""

    @model_serializer(mode="wrap")
    def _without_sparse_process(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A sparse run's outcome is written as before the option existed: no ``process`` key.
        data: dict[str, Any] = handler(self)
        if self.process is None:
            data.pop("process", None)
        return data

    @property
    def key_question_recall(self) -> float:
        """The share of the puzzle's key questions asked (0 to 1; 0 for a puzzle without any)."""
        return len(self.key_questions_asked) / self.key_questions if self.key_questions else 0.0

    def badge(self) -> str:
        asked = f"{len(self.key_questions_asked)}/{self.key_questions} key"
        return f"{'solved' if self.solved else 'wrong'}, {asked}"

    def view_sections(self) -> list[ViewSection]:
        """Under ``reward: dense``: the key-question recall and the process reward."""
        if self.process is None:
            return []
        rows: list[tuple[str, Any]] = [
            (
                "key-question recall",
                f"{self.key_question_recall:.3f} ({len(self.key_questions_asked)} of {self.key_questions})",
            ),
            ("process reward", f"{self.process.reward:+.3f}"),
            ("near repeats penalised", self.process.repeats),
        ]
        return [ViewSection(title="process reward (reward: dense)", rows=rows)]


def word_f1(prediction: str, reference: str) -> float:
    """F1 over whitespace tokens as multisets (AR-Bench's word F1: case and punctuation kept)."""
    predicted, expected = prediction.split(), reference.split()
    shared = sum((Counter(predicted) & Counter(expected)).values())
    if not predicted or not expected or shared == 0:
        return 0.0
    precision, recall = shared / len(predicted), shared / len(expected)
    return 2 * precision * recall / (precision + recall)


class ARBenchScene(SituationScene):
    """SPLAT's rules (``SituationScene``) on an AR-Bench puzzle, keeping the key questions asked."""

    lateval_metrics = False

    def __init__(
        self, item: ARBenchPuzzle, config: EpisodeConfig, judge: Judge | None, rng: np.random.Generator
    ) -> None:
        super().__init__(item, config, judge, rng)
        self.asked: set[int] = set()
        dense = config.options_as(ARBenchOptions).reward == "dense"
        self.rewards = QuestionRewards(len(item.key_questions)) if dense else None
        """Prices each question under ``reward: dense``; None otherwise."""

    async def handle(self, action: Inspect | Ask | Commit) -> Handled:
        handled = await super().handle(action)
        if isinstance(action, Ask) and handled.valid:
            detail = handled.judge.detail if handled.judge is not None else None
            if isinstance(detail, KeyQuestionHits):
                found = detail.hits
            else:  # a judge that does not judge key questions: the offline rule
                assert isinstance(self.item, ARBenchPuzzle)
                found = key_question_hits(self.item, action.question)
            self.asked.update(i for i in found if 0 <= i < len(self.item_keys))
            if self.rewards is not None:
                process = self.rewards.price(self.turn, action.question, found)
                return handled.model_copy(update={"process": process})
        return handled

    @property
    def item_keys(self) -> tuple[str, ...]:
        assert isinstance(self.item, ARBenchPuzzle)
        return self.item.key_questions

    def outcome(self, turns: int, invalid_actions: int) -> ARBenchOutcome:
        base = super().outcome(turns, invalid_actions).model_dump()
        said = self.last_explanation or None
        return ARBenchOutcome(
            **base,
            key_questions=len(self.item_keys),
            key_questions_asked=sorted(self.asked),
            answer_word_f1=None if said is None else word_f1(said, self.item.answer),
            process=self._process_totals(),
        )

    def _process_totals(self) -> ProcessTotals | None:
        if self.rewards is None:
            return None
        return ProcessTotals(reward=self.rewards.total, repeats=self.rewards.repeats)
