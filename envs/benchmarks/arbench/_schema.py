"""AR-Bench's situation puzzle (``data/sp/{train,test}.json``): SPLAT's item plus its story tree's facts and
key questions."""

from __future__ import annotations

from typing import Literal

from lateralgym.envs._items import Count, Text
from lateralgym.envs.benchmarks.splat import SituationPuzzle


class ARBenchPuzzle(SituationPuzzle):
    """An AR-Bench situation puzzle: ``story`` is the release's ``surface``, ``answer`` its ``bottom``,
    ``clues`` the facts of its story tree's nodes (what the offline judge checks an explanation against)."""

    key_questions: tuple[Text, ...]
    """The yes/no questions whose answers uncover the hidden story, one per node of the story tree, in
    the tree's order (the release's ``key_question`` list holds them in arbitrary order)."""
    core_sentence: str = ""
    """The one-sentence gist of the hidden story (the tree's root)."""
    supernatural: bool = False
    """The release's flag: the story has a supernatural element."""
    someone_dies: bool = False
    """The release's flag: someone dies in the story."""
    index: Count | None = None
    """The release's ``index`` (not unique: the test file uses 98 twice); ids come from the position."""
    split: Literal["train", "test"] | None = None
    """The release file the puzzle comes from (``train.json`` / ``test.json``); RL trains on ``train``."""
