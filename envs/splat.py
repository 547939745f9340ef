"""SPLAT situation puzzles: ask yes/no questions until you can explain the story.

## Description
Implements SPLAT's multi-turn protocol (situation puzzles for lateral thinking): the player sees
an incomplete story and, each round, asks one yes/no question (the judge, who knows the hidden
answer, replies yes / no / irrelevant) or proposes a full explanation (the judge says correct, or
not yet with a hint that never states the answer). It feeds Acc, Rnd (rounds used; the maximum
when unsolved), O/A = mean(1[solved]/Rnd) x 100 per difficulty band, and exploration counts.

## Action Space
``Text``: ``ask: <question>`` or ``commit: <explanation>``, or an action's JSON.

## Observation Space
``Dict``: ``text``, ``turn`` and ``last_reply`` (0 none, 1 yes, 2 no, 3 irrelevant,
4 not yet, 5 correct).

## Starting State
The title and story; the answer is known only to the judge.

## Rewards
``rewards.correct`` when the judge accepts an explanation, plus ``rewards.step`` per round and
``rewards.invalid`` per invalid action.

## Episode End
Terminated when solved; truncated after ``max_turns`` rounds (15 by default, as in SPLAT).

## Arguments
``config``, ``items`` (``SituationPuzzle`` list), ``judge`` (default ``reference``),
``render_mode``.

## Version History
* v0: initial release.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces

from lateralgym.envs._actions import Ask, Commit, Inspect, explanation
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import Handled, LateralEnv, Scene, usage_text
from lateralgym.envs._judging import Judge, clean_hint, question_counts
from lateralgym.envs._schema import SituationPuzzle

REPLY_CODES = {"yes": 1, "no": 2, "irrelevant": 3, "not_yet": 4, "incorrect": 4, "correct": 5}


class SituationScene(Scene[SituationPuzzle]):
    """The rules of one situation puzzle."""

    item_type = SituationPuzzle

    def __init__(
        self, item: SituationPuzzle, config: EpisodeConfig, judge: Judge | None, rng: np.random.Generator | None = None
    ) -> None:
        super().__init__(item, config, judge, rng)
        self.solved = False
        self.attempts = 0
        self.first_commit_turn: int | None = None
        self.last_reply = 0

    def brief(self) -> str:
        puzzle = self.item
        title = f"TITLE: {puzzle.title}\n" if puzzle.title else ""
        return (
            f"{title}STORY: {puzzle.story}\n"
            "Find out what really happened. Each round, ask one yes/no question (the judge answers yes, "
            f"no or irrelevant) or give your full explanation. You have {self.config.max_turns} rounds.\n"
            f"{usage_text(self.config)}"
        )

    def handle(self, action: Inspect | Ask | Commit) -> Handled:
        if isinstance(action, Ask):
            if not action.question.strip():
                return Handled(message="Ask a yes/no question.", valid=False)
            reply = self.ask_judge(action.question)
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
        reply = self.grade(Commit(answer=text))
        self.last_reply = REPLY_CODES.get(reply.label, 4)
        if reply.label == "correct":
            self.solved = True
            return Handled(
                message="Correct! That is what happened.",
                reward=self.config.rewards.correct,
                terminated=True,
                judge=reply,
            )
        hint = clean_hint(reply.hint, self.item)
        return Handled(message="Not yet." + (f" Hint: {hint}" if hint else ""), judge=reply)

    def outcome(self) -> dict[str, Any]:
        return {
            "solved": self.solved,
            **question_counts(self.history),
            "attempts": self.attempts,
            "first_commit_turn": self.first_commit_turn,
            "difficulty": self.item.difficulty,
            "band": self.item.band,
        }

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


class SplatEnv(LateralEnv[SituationScene]):
    """SPLAT situation-puzzle env with the judge inside; see the module docstring (the env card)."""

    scene_type = SituationScene
