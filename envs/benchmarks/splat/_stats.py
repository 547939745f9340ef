"""What ``lateralgym data stats`` counts of situation puzzles, and the release defects it flags."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from lateralgym.envs._benchmark import StatBlock
from lateralgym.envs.benchmarks.splat._scene import SituationPuzzle

BANDS = ("easy", "medium", "hard", "none")


def story_defect(puzzle: SituationPuzzle) -> str | None:
    """Why a situation puzzle gives its answer away up front, or None (SPLAT's release has two such
    rows, 172 and 565 of ``puzzles.xlsx``)."""
    answer, story = " ".join(puzzle.answer.lower().split()), " ".join(puzzle.story.lower().split())
    if answer == story:
        return f"{puzzle.id}: the hidden answer is the story itself"
    if answer in story:
        return f"{puzzle.id}: the hidden answer stands inside the story the player is shown"
    return None


def puzzle_stats(puzzles: Sequence[SituationPuzzle]) -> StatBlock:
    """Puzzles per band (``none`` without a difficulty) and per level, how many carry clues, and defects."""
    bands: Counter[str] = Counter(p.band or "none" for p in puzzles)
    levels = Counter(p.difficulty for p in puzzles if p.difficulty is not None)
    sections = {
        "band": {band: bands.get(band, 0) for band in BANDS},
        "difficulty level": {str(level): levels[level] for level in sorted(levels)},
    }
    clues = sum(bool(p.clues) for p in puzzles)
    if clues:
        sections["clues"] = {"puzzles with clues": clues}
    defects = [defect for p in puzzles if (defect := story_defect(p)) is not None]
    return StatBlock(kind="situation", sections=sections, defects=defects)
