"""A SPLAT situation puzzle (LatEval's puzzles load into it too), and its rules: the scene both the
Gymnasium and the AEC env step."""

from __future__ import annotations

from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np
from gymnasium import spaces
from pydantic import BaseModel, ConfigDict, Field

from lateralgym.envs._actions import Ask, Commit, Inspect, explanation
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import Handled, Scene, usage_text
from lateralgym.envs._errors import ConfigError
from lateralgym.envs._items import Count, FrozenRecord, Text
from lateralgym.envs._judging import (
    ANSWER_LABELS,
    QA,
    UNCLEAR,
    Judge,
    JudgeReply,
    clean_hint,
    question_counts,
)
from lateralgym.envs._scoring import ExplorationOutcome

DifficultyBand = Literal["easy", "medium", "hard"]


class SituationPuzzle(FrozenRecord):
    """A SPLAT (or LatEval) situation puzzle."""

    id: Text
    """Unique id; SPLAT titles repeat, so ids come from the row."""
    title: str = ""
    story: Text
    """The incomplete story the player sees."""
    answer: Text
    """The hidden full explanation; only the judge sees it."""
    difficulty: Count | None = Field(default=None, ge=1, le=9)
    """SPLAT level 1..9; None when the source has none (LatEval)."""
    clues: tuple[Text, ...] = ()
    """Key facts of the answer (LatEval's clues); used by the reference judge."""

    @property
    def band(self) -> DifficultyBand | None:
        """easy 1-3, medium 4-6, hard 7-9; None without a difficulty."""
        if self.difficulty is None:
            return None
        return "easy" if self.difficulty <= 3 else "medium" if self.difficulty <= 6 else "hard"


SplatProtocol = Literal["commit", "paper"]


class SplatOptions(BaseModel):
    """SPLAT's own config settings (the ``options:`` block of its configs): which of its protocols an
    episode follows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    protocol: SplatProtocol = "commit"
    """``commit`` (questions and explicit explanations, the judge sees earlier questions); ``paper``
    as in the official game: the judge remembers no earlier questions and every player message may
    solve the puzzle (the judge decides). The leak guard applies in both."""


@runtime_checkable
class MessageJudge(Protocol):
    """A judge that can also reply to any player message at once (SPLAT's ``paper`` protocol).

    ``respond`` sees no earlier questions: it says ``correct`` when the message solves the puzzle,
    else ``yes`` / ``no`` / ``irrelevant`` (or ``unclear`` when its reply stayed unreadable).
    A judge without it is asked ``grade`` and then, unless correct, ``answer``, both with no history.
    """

    async def respond(self, item: Any, message: str) -> JudgeReply:
        """correct, or yes / no / irrelevant / unclear, to one player message."""
        ...


REPLY_CODES = {"yes": 1, "no": 2, "irrelevant": 3, "not_yet": 4, "incorrect": 4, "correct": 5, "unclear": 6}
"""``last_reply`` observation codes (0: no reply yet)."""

UNCLEAR_MESSAGE = "The judge could not answer that; ask differently."
"""What the player hears when the judge's reply stayed unreadable after the re-asks (a round is used)."""
SOLVED_MESSAGE = "Correct! That is what happened."


class SplatOutcome(ExplorationOutcome):
    """A situation puzzle episode's outcome (SPLAT §4: solved, rounds, questions)."""

    solved: bool
    """The judge accepted an explanation."""
    attempts: int
    """Explanations proposed (graded commits)."""
    difficulty: int | None
    """The puzzle's level 1..9; None when the source has none (LatEval)."""
    band: DifficultyBand | None
    """easy / medium / hard; None without a level."""
    unclear: int = 0
    """Judge replies that stayed unreadable after the re-asks (told to the player as such)."""
    judged_moves: int = 0
    """Moves the judge answered with a label or left unclear: the questions under ``commit``;
    every move it did not accept as the solution under ``paper``. The unclear rate's denominator."""
    protocol: Literal["commit", "paper"] = "commit"
    """``commit`` (questions answered, explanations graded) or ``paper`` (every message judged)."""
    clue_count: int = 0
    """The puzzle's key clues (LatEval's); 0 when it has none."""
    clues_covered: int = 0
    """LatEval's AC input: key clues the last explanation includes (``_lateval.py``)."""
    relevant_questions: int = 0
    """LatEval's QR input: questions relevant to some key clue."""
    question_divergence: float | None = None
    """LatEval's QD: one minus the mean pairwise Jaccard similarity of the questions (None under two)."""

    def succeeded(self) -> bool:
        return self.solved

    def badge(self) -> str:
        return "solved" if self.solved else "wrong"


_PAPER_RULE = "Any question or explanation that states what really happened solves the puzzle.\n"


def opening_text(puzzle: SituationPuzzle, config: EpisodeConfig) -> str:
    """The player's first observation: title, story, the rules and the action forms."""
    title = f"TITLE: {puzzle.title}\n" if puzzle.title else ""
    return (
        f"{title}STORY: {puzzle.story}\n"
        "Find out what really happened. Each round, ask one yes/no question (the judge answers yes, "
        f"no or irrelevant) or give your full explanation. You have {config.max_turns} rounds.\n"
        f"{_PAPER_RULE if config.options_as(SplatOptions).protocol == 'paper' else ''}{usage_text(config)}"
    )


class SituationScene(Scene[SituationPuzzle, SplatOutcome]):
    """The rules of one situation puzzle (the Gymnasium env and the PettingZoo AEC env share them)."""

    answer_labels = (*ANSWER_LABELS, UNCLEAR)
    lateval_metrics = True
    """Record LatEval's metric inputs on puzzles with key clues and no SPLAT level (``_lateval.py``)."""

    def __init__(
        self, item: SituationPuzzle, config: EpisodeConfig, judge: Judge | None, rng: np.random.Generator
    ) -> None:
        super().__init__(item, config, judge, rng)
        self.solved = False
        self.attempts = 0
        self.first_commit_turn: int | None = None
        self.last_reply = 0
        self.unclear = 0
        self.judged_moves = 0
        self.last_explanation = ""

    def brief(self) -> str:
        return opening_text(self.item, self.config)

    async def handle(self, action: Inspect | Ask | Commit) -> Handled:
        paper = self.config.options_as(SplatOptions).protocol == "paper"
        if isinstance(action, Ask):
            if not action.question.strip():
                return Handled(message="Ask a yes/no question.", valid=False)
            if paper:
                return await self._message(action.question, question=True)
            reply = await self.ask_judge(action.question)
            return self._labelled(self.history[-1].label, reply)
        assert isinstance(action, Commit)
        text = explanation(action)
        if not text.strip():
            return Handled(message="Give your explanation: commit: <what really happened>.", valid=False)
        self.attempts += 1
        self.last_explanation = text
        if self.first_commit_turn is None:
            self.first_commit_turn = self.turn
        if paper:
            return await self._message(text, question=False)
        reply = await self.grade(Commit(answer=text))
        self.last_reply = REPLY_CODES.get(reply.label, 4)
        if reply.label == "correct":
            return self._solved(reply)
        hint = clean_hint(reply.hint, self.item, self.config.hints)
        return Handled(message="Not yet." + (f" Hint: {hint}" if hint else ""), judge=reply)

    def _solved(self, reply: JudgeReply) -> Handled:
        self.solved = True
        self.last_reply = REPLY_CODES["correct"]
        return Handled(message=SOLVED_MESSAGE, reward=self.config.rewards.correct, terminated=True, judge=reply)

    def _labelled(self, label: str, reply: JudgeReply) -> Handled:
        """The player hears only the label (or the neutral unclear message); counts the move."""
        self.judged_moves += 1
        self.unclear += label == UNCLEAR
        self.last_reply = REPLY_CODES[label]
        message = UNCLEAR_MESSAGE if label == UNCLEAR else f"{label.capitalize()}."
        return Handled(message=message, judge=reply)

    async def _message(self, text: str, *, question: bool) -> Handled:
        """``paper``: the judge, remembering no earlier question, says whether ``text`` solves the
        puzzle, else answers it; a question is kept in the history with its label."""
        reply = await self.respond(text)
        if reply.label == "correct":
            return self._solved(reply)
        label = reply.label if reply.label in self.answer_labels else "irrelevant"
        if reply.label != label:
            reply = reply.model_copy(update={"label": label})
        if question:
            self.history.append(QA.model_validate({"question": text, "label": label}))
        return self._labelled(label, reply)

    async def respond(self, text: str) -> JudgeReply:
        """The judge's reply to one message with no history: its ``respond`` when it has one, else
        ``grade`` and, unless correct, ``answer``."""
        if self.judge is None:
            raise ConfigError(f"config {self.config.name!r} needs a judge to answer messages")
        if isinstance(self.judge, MessageJudge):
            return await self.judge.respond(self.item, text)
        graded = await self.judge.grade(self.item, Commit(answer=text), ())
        if graded.label == "correct":
            return graded
        answered = await self.judge.answer(self.item, text, ())
        return answered.model_copy(update={"calls": (*graded.calls, *answered.calls)})

    def outcome(self, turns: int, invalid_actions: int) -> SplatOutcome:
        lateval: dict[str, Any] = {}
        if self.lateval_metrics and self.item.clues and self.item.difficulty is None:  # LatEval's puzzles
            from lateralgym.envs.benchmarks.splat._lateval import clues_covered, question_divergence, relevant_questions

            questions = [qa.question for qa in self.history]
            lateval = {
                "clue_count": len(self.item.clues),
                "clues_covered": clues_covered(self.item, self.last_explanation),
                "relevant_questions": relevant_questions(self.item, questions),
                "question_divergence": question_divergence(questions),
            }
        return SplatOutcome(
            **lateval,
            **self.common(turns, invalid_actions, committed=self.attempts > 0),
            **question_counts(self.history),
            first_commit_turn=self.first_commit_turn,
            solved=self.solved,
            attempts=self.attempts,
            difficulty=self.item.difficulty,
            band=self.item.band,
            unclear=self.unclear,
            judged_moves=self.judged_moves,
            protocol=self.config.options_as(SplatOptions).protocol,
        )

    def public(self) -> dict[str, Any]:
        """The title, the story and the questions asked so far with their answers."""
        return {
            "title": self.item.title,
            "story": self.item.story,
            "history": [[qa.question, qa.label] for qa in self.history],
        }

    def fields(self) -> dict[str, Any]:
        return {"last_reply": np.int64(self.last_reply)}

    @classmethod
    def extra_spaces(cls, config: EpisodeConfig) -> dict[str, spaces.Space[Any]]:
        return {"last_reply": spaces.Discrete(7)}
