"""BrainTeaser's item: a multiple-choice puzzle with its group and variant."""

from __future__ import annotations

from typing import Literal

from lateralgym.envs._items import Text
from lateralgym.envs.benchmarks._mcq import MultipleChoiceItem

PuzzleKind = Literal["sentence", "word"]
PuzzleVariant = Literal["original", "semantic", "context"]

NONE_OF_ABOVE = "None of above."
"""BrainTeaser's literal fourth option (sic)."""


class MCQPuzzle(MultipleChoiceItem):
    """A BrainTeaser multiple-choice puzzle."""

    id: Text
    """E.g. ``SP-12``, ``SP-12_SR`` (semantic), ``SP-12_CR`` (context)."""
    group_id: Text
    """The original puzzle's id, shared by its reconstructions (``SP-12``)."""
    kind: PuzzleKind
    """``sentence`` or ``word`` puzzle."""
    variant: PuzzleVariant
    """``original``, ``semantic`` reconstruction or ``context`` reconstruction."""
