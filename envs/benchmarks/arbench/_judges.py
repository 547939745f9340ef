"""AR-Bench's process metric, judged: which of a puzzle's key questions the player has asked.

AR-Bench's situation puzzles come with a key question per fact of the hidden story; its paper scores
the reasoning process by the key questions a player's questions hit, judged by a model (a secondary
account of the paper; the released SP evaluator computes no such score, and its exact formula is
undetermined: ``docs`` say so). LateralGym counts, per episode, the share of the puzzle's key
questions that at least one of the player's questions asks, each question judged as it is asked:

* offline (``reference``): a key question is asked when a question covers at least 60 % of its content
  words (stems) and at least half of the question's own content words are the key question's (word
  salad covers everything, so it must also be about it); an approximation, like the reference judge;
* an LLM judge (``LLMARBenchJudge``) asks the model which key questions the player's question asks.

The judge returns the indices in ``JudgeReply.detail`` (``KeyQuestionHits``); the scene keeps them.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from lateralgym.envs._judging import QA, JudgeReply
from lateralgym.envs._matching import content_stems
from lateralgym.envs.benchmarks.arbench._schema import ARBenchPuzzle
from lateralgym.envs.benchmarks.splat import ReferenceJudge

__all__ = ["ARBenchReferenceJudge", "KeyQuestionHits", "key_question_hits"]

COVERAGE = 0.6
"""Share of a key question's content words a question must name to ask it (offline rule)."""
PRECISION = 0.5
"""Share of the question's own content words that must be the key question's (offline rule)."""


class KeyQuestionHits(BaseModel):
    """The key questions one player question asks (``JudgeReply.detail`` of an AR-Bench judge's answer)."""

    model_config = ConfigDict(frozen=True)

    hits: tuple[int, ...] = ()
    """Indices into the puzzle's ``key_questions``."""


def key_question_hits(puzzle: ARBenchPuzzle, question: str) -> tuple[int, ...]:
    """The key questions ``question`` asks, by the offline word rule (see the module docstring)."""
    asked = content_stems(question)
    if not asked:
        return ()
    found = []
    for index, key in enumerate(puzzle.key_questions):
        wanted = content_stems(key)
        shared = len(asked & wanted)
        if wanted and shared / len(wanted) >= COVERAGE and shared / len(asked) >= PRECISION:
            found.append(index)
    return tuple(found)


class ARBenchReferenceJudge(ReferenceJudge):
    """SPLAT's word-overlap judge (its facts: the story tree's nodes), plus the key questions a question asks."""

    name = "reference"
    limits = (
        "offline stand-in for AR-Bench's LLM referee by word overlap with the hidden story and its key questions: "
        "no negation or paraphrase, so its numbers (the key-question rate too) are for offline runs, tests and RL "
        "warm-up; use an LLM judge (--judge openai/...) for measurement"
    )

    async def answer(self, item: Any, question: str, history: tuple[QA, ...]) -> JudgeReply:
        """yes / no / irrelevant as SPLAT's reference judge, with the key questions asked in ``detail``."""
        reply = await super().answer(item, question, history)
        if not isinstance(item, ARBenchPuzzle):
            return reply
        return reply.model_copy(update={"detail": KeyQuestionHits(hits=key_question_hits(item, question))})
