"""Exact-match judging: BrainTeaser choices and CreativityBench entity/part answers."""

from __future__ import annotations

from lateralgym.envs import Commit, CreativityTask, Item, MCQPuzzle, snake
from lateralgym.envs._judging import QA, JudgeReply
from lateralgym.envs._matching import match_name


def grade_creativity(task: CreativityTask, commit: Commit) -> JudgeReply:
    """CreativityBench's exact match: gold correct = entity and part; names match tolerantly.

    An entity that is not in the scene is a hallucination (counted separately by the metrics).
    """
    names = [e.name for e in task.entities]
    chosen = match_name(commit.entity or "", names)
    if chosen is None:
        return JudgeReply(label="incorrect", entity_correct=False, part_correct=False, hallucinated=True)
    entity_correct = snake(chosen) == snake(task.gold.entity)
    entity = task.entity(chosen)
    assert entity is not None
    part = match_name(commit.part or "", [p.name for p in entity.parts])
    part_correct = entity_correct and part is not None and snake(part) == snake(task.gold.part)
    return JudgeReply(
        label="correct" if part_correct else "incorrect", entity_correct=entity_correct, part_correct=part_correct
    )


def grade_choice(puzzle: MCQPuzzle, commit: Commit) -> JudgeReply:
    """BrainTeaser: correct when the chosen index is the label."""
    return JudgeReply(label="correct" if commit.choice == puzzle.label else "incorrect")


class ExactMatchJudge:
    """Grades by exact match; answers every question with ``irrelevant`` (it knows no facts)."""

    name = "exact"
    benchmarks: frozenset[str] = frozenset({"creativity", "brainteaser"})
    """Benchmarks this judge can grade; envs refuse it for others."""

    def answer(self, item: Item, question: str, history: tuple[QA, ...]) -> JudgeReply:
        """No knowledge to answer from: always ``irrelevant``."""
        return JudgeReply(label="irrelevant")

    def grade(self, item: Item, commit: Commit, history: tuple[QA, ...]) -> JudgeReply:
        """Exact match for CreativityBench and BrainTeaser items.

        Raises:
            TypeError: for situation puzzles, whose answers need the reference or an LLM judge.
        """
        if isinstance(item, CreativityTask):
            return grade_creativity(item, commit)
        if isinstance(item, MCQPuzzle):
            return grade_choice(item, commit)
        raise TypeError("the exact-match judge cannot grade situation puzzles; use judge 'reference' or an LLM")
