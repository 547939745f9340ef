"""BrainTeaser: multiple-choice lateral-thinking puzzles.

## Description
Implements BrainTeaser (EMNLP 2023; SemEval-2024 Task 9): sentence and word puzzles, each with a
semantic and a context reconstruction, four choices including "None of above.". One episode is
one puzzle. It feeds instance accuracy per variant (original, semantic, context), group accuracy
(ori&sem, ori&sem&con) and the overall mean, per puzzle kind.

## Action Space
``Text``: ``commit: <A-D or 0-3>``; the choice's text is accepted too. Anything else is answered
as invalid and counts as the one turn.

## Observation Space
``Dict``: ``text`` (question and lettered choices), ``turn``.

## Starting State
The question and its choices; the label is hidden.

## Rewards
``rewards.correct`` for the right choice, else 0 (plus ``rewards.invalid`` for an invalid action).

## Episode End
Terminated on a valid commit, or when the single turn (``max_turns`` 1, the default) is spent
on an invalid one; truncated after ``max_turns`` turns when more are allowed.

## Arguments
``config``, ``items`` (``MCQPuzzle`` list; default the sample data), ``judge`` (default ``exact``),
``render_mode``.

## Version History
* v0: initial release.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lateralgym.envs._actions import Ask, Commit, Inspect, parse_choice
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import Handled, LateralEnv, Scene, usage_text
from lateralgym.envs._judging import Judge
from lateralgym.envs._matching import match_name
from lateralgym.envs._schema import MCQPuzzle

LETTERS = "ABCDEFGH"


class BrainTeaserScene(Scene[MCQPuzzle]):
    """The rules of one BrainTeaser puzzle."""

    item_type = MCQPuzzle

    def __init__(
        self, item: MCQPuzzle, config: EpisodeConfig, judge: Judge | None, rng: np.random.Generator | None = None
    ) -> None:
        super().__init__(item, config, judge, rng)
        self.choice: int | None = None
        self.correct = False

    def brief(self) -> str:
        puzzle = self.item
        options = "\n".join(f"{LETTERS[n]}. {text}" for n, text in enumerate(puzzle.choices))
        return f"QUESTION: {puzzle.question}\nCHOICES:\n{options}\n{usage_text(self.config)}"

    def handle(self, action: Inspect | Ask | Commit) -> Handled:
        assert isinstance(action, Commit)
        choice = self._choice(action)
        n = len(self.item.choices)
        if choice is None or not 0 <= choice < n:
            return Handled(message=f"Choose one of the options A-{LETTERS[n - 1]} (or 0-{n - 1}).", valid=False)
        commit = Commit(choice=choice)
        reply = self.grade(commit)
        self.choice = choice
        self.correct = reply.label == "correct"
        reward = self.config.rewards.correct if self.correct else 0.0
        result = "correct" if self.correct else "incorrect"
        return Handled(
            message=f"Answer {LETTERS[choice]} recorded: {result}.", reward=reward, terminated=True, judge=reply
        )

    def _choice(self, action: Commit) -> int | None:
        if action.choice is not None:
            return action.choice
        text = action.answer or action.entity or ""
        parsed = parse_choice(text)
        if parsed is not None:
            return parsed
        matched = match_name(text, list(self.item.choices))
        return self.item.choices.index(matched) if matched else None

    def public(self) -> dict[str, Any]:
        """The question and its choices."""
        return {"question": self.item.question, "choices": list(self.item.choices)}

    def outcome(self) -> dict[str, Any]:
        puzzle = self.item
        return {
            "committed": self.choice is not None,
            "choice": self.choice,
            "correct": self.correct,
            "group_id": puzzle.group_id,
            "kind": puzzle.kind,
            "variant": puzzle.variant,
        }


class BrainTeaserEnv(LateralEnv[BrainTeaserScene]):
    """BrainTeaser multiple-choice env; see the module docstring (the env card)."""

    scene_type = BrainTeaserScene
