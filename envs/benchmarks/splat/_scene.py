"""The rules of one SPLAT situation puzzle: the scene both the Gymnasium and the AEC env step."""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from lateralgym.envs._actions import Ask, Commit, Inspect, explanation
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import Handled, Scene, usage_text
from lateralgym.envs._judging import Judge, clean_hint, question_counts
from lateralgym.envs._schema import DifficultyBand, SituationPuzzle
from lateralgym.envs._scoring import ExplorationOutcome

REPLY_CODES = {"yes": 1, "no": 2, "irrelevant": 3, "not_yet": 4, "incorrect": 4, "correct": 5}
"""``last_reply`` observation codes (0: no reply yet)."""


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

    def succeeded(self) -> bool:
        return self.solved

    def badge(self) -> str:
        return "solved" if self.solved else "wrong"


def opening_text(puzzle: SituationPuzzle, config: EpisodeConfig) -> str:
    """The player's first observation: title, story, the rules and the action forms."""
    title = f"TITLE: {puzzle.title}\n" if puzzle.title else ""
    return (
        f"{title}STORY: {puzzle.story}\n"
        "Find out what really happened. Each round, ask one yes/no question (the judge answers yes, "
        f"no or irrelevant) or give your full explanation. You have {config.max_turns} rounds.\n"
        f"{usage_text(config)}"
    )


class SituationScene(Scene[SituationPuzzle, SplatOutcome]):
    """The rules of one situation puzzle (the Gymnasium env and the PettingZoo AEC env share them)."""

    def __init__(
        self, item: SituationPuzzle, config: EpisodeConfig, judge: Judge | None, rng: np.random.Generator
    ) -> None:
        super().__init__(item, config, judge, rng)
        self.solved = False
        self.attempts = 0
        self.first_commit_turn: int | None = None
        self.last_reply = 0

    def brief(self) -> str:
        return opening_text(self.item, self.config)

    async def handle(self, action: Inspect | Ask | Commit) -> Handled:
        if isinstance(action, Ask):
            if not action.question.strip():
                return Handled(message="Ask a yes/no question.", valid=False)
            reply = await self.ask_judge(action.question)
            label = self.history[-1].label
            self.last_reply = REPLY_CODES[label]
            return Handled(message=f"{label.capitalize()}.", judge=reply)
        assert isinstance(action, Commit)
        text = explanation(action)
        if not text.strip():
            return Handled(message="Give your explanation: commit: <what really happened>.", valid=False)
        self.attempts += 1
        if self.first_commit_turn is None:
            self.first_commit_turn = self.turn
        reply = await self.grade(Commit(answer=text))
        self.last_reply = REPLY_CODES.get(reply.label, 4)
        if reply.label == "correct":
            self.solved = True
            return Handled(
                message="Correct! That is what happened.",
                reward=self.config.rewards.correct,
                terminated=True,
                judge=reply,
            )
        hint = clean_hint(reply.hint, self.item, self.config.hints)
        return Handled(message="Not yet." + (f" Hint: {hint}" if hint else ""), judge=reply)

    def outcome(self, turns: int, invalid_actions: int) -> SplatOutcome:
        return SplatOutcome(
            **self.common(turns, invalid_actions, committed=self.attempts > 0),
            **question_counts(self.history),
            first_commit_turn=self.first_commit_turn,
            solved=self.solved,
            attempts=self.attempts,
            difficulty=self.item.difficulty,
            band=self.item.band,
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
        return {"last_reply": spaces.Discrete(6)}
