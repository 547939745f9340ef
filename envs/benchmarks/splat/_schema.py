"""SPLAT's item: a situation puzzle (LatEval's puzzles load into it too)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from lateralgym.envs._items import Count, FrozenRecord, Text

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
