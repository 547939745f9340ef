"""The rules of one AR-Bench situation puzzle: SPLAT's game, plus the key questions the player asks."""

from __future__ import annotations

from collections import Counter

import numpy as np

from lateralgym.envs._actions import Ask, Commit, Inspect
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import Handled
from lateralgym.envs._judging import Judge
from lateralgym.envs.benchmarks.arbench._judges import KeyQuestionHits, key_question_hits
from lateralgym.envs.benchmarks.arbench._schema import ARBenchPuzzle
from lateralgym.envs.benchmarks.splat import SituationScene, SplatOutcome

__all__ = ["ARBenchOutcome", "ARBenchScene", "word_f1"]


class ARBenchOutcome(SplatOutcome):
    """An AR-Bench episode's outcome: SPLAT's, plus the process metric's inputs and the answer's word F1."""

    key_questions: int
    """The puzzle's key questions."""
    key_questions_asked: list[int]
    """The key questions (indices) at least one of the player's questions asked, as the judge found."""
    answer_word_f1: float | None = None
    """AR-Bench's ``f1_score_word`` of the last explanation against the hidden story (whitespace tokens,
    case and punctuation kept; ``arbench/utils/utils_sp.py`` 23-42); None without an explanation."""

    def badge(self) -> str:
        asked = f"{len(self.key_questions_asked)}/{self.key_questions} key"
        return f"{'solved' if self.solved else 'wrong'}, {asked}"


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
        )
