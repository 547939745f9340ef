"""MacGyver's item: a problem to solve with the objects at hand, or to recognise as unsolvable."""

from __future__ import annotations

from typing import Literal

from lateralgym.envs._items import FrozenRecord, Text

Verdict = Literal[
    "correct_efficient",
    "correct_inefficient",
    "correct_unsolvable",
    "wrong_partial_correct",
    "wrong_entire_wrong_solution",
    "wrong_fail_solvability_status",
]
"""How a proposed solution is judged: MacGyver's annotation vocabulary (``benchmark_results.json``): correct
and efficient, correct but less efficient, rightly called unsolvable; partly correct, wholly wrong, or wrong
about whether the problem can be solved."""

VERDICTS: tuple[Verdict, ...] = (
    "correct_efficient",
    "correct_inefficient",
    "correct_unsolvable",
    "wrong_partial_correct",
    "wrong_entire_wrong_solution",
    "wrong_fail_solvability_status",
)
CORRECT: frozenset[str] = frozenset({"correct_efficient", "correct_inefficient", "correct_unsolvable"})


class MacGyverProblem(FrozenRecord):
    """A MacGyver problem (``problem_solution_pair.xlsx``, one row)."""

    id: Text
    """The release's ``ID`` (text; the release stores unsolvable rows' ids as numbers)."""
    problem: Text
    """The setting, the constraint and the objects available (distractors among them)."""
    solvable: bool
    """``Solvable?``: whether the problem can be solved with what is there."""
    unconventional: bool | None = None
    """``Unconventional?``: whether solving it needs an object used in an unusual way; None for unsolvable rows."""
    solution: str = ""
    """The release's ``Solution`` for the row: a proposed solution (often a model's), judged by ``label``."""
    label: str = ""
    """The release's ``Label`` of ``solution``: ``efficient``, ``inefficient``, ``infeasible`` or ``none`` on
    solvable rows, ``correct_right_reason``, ``correct_wrong_reason`` or ``wrong_solution`` on unsolvable ones."""
    human_solutions: tuple[Text, ...] = ()
    """People's solutions from ``additional_human_solutions.xlsx`` (those the person thought solvable)."""
    split: Literal["train", "test"] | None = None

    def reference_solutions(self) -> tuple[str, ...]:
        """The solutions known to work: the row's when labelled efficient or inefficient, and people's."""
        own = (self.solution,) if self.solution and self.label in ("efficient", "inefficient") else ()
        return (*own, *self.human_solutions)
