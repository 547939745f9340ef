"""MacGyver's rubric and its offline judge.

MacGyver's annotators judge a proposed solution on a gradient (the README: completely wrong, partially
correct, correct but less efficient, perfect), and whether it gets solvability right; its released
annotations use six labels (``VERDICTS``). The rubric wording and the per-model aggregation are not
released (undetermined), so the rubric here is ours, in three questions:

1. solvability: does the answer say the problem cannot be solved? Right when the problem is unsolvable
   (``correct_unsolvable``), wrong otherwise (``wrong_fail_solvability_status``); a plan for an
   unsolvable problem is wrong about solvability too;
2. feasibility: with only the objects the problem lists, would the steps work? ``infeasible`` ->
   ``wrong_entire_wrong_solution``, ``partially`` -> ``wrong_partial_correct``;
3. efficiency: a feasible plan is ``correct_efficient`` when it takes the simplest, safest route with
   no needless steps or waste, else ``correct_inefficient``.

The offline ``reference`` judge answers those questions by words: an answer saying "not possible" (or
"impossible", "cannot be done", ...) claims unsolvable; otherwise feasibility is the best overlap of
the answer's content words with a solution known to work (the row's own when labelled efficient or
inefficient, and people's): at least half of that solution's words is feasible, a quarter partially;
efficient when the closest solution is the row's labelled ``efficient``. It understands nothing: for
offline runs and tests, not measurement.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict

from lateralgym.envs._actions import Commit
from lateralgym.envs._judging import QA, JudgeReply
from lateralgym.envs._matching import content_stems
from lateralgym.envs.benchmarks.macgyver._schema import MacGyverProblem, Verdict

__all__ = ["MacGyverJudgement", "ReferenceMacGyverJudge", "claims_unsolvable", "verdict_of"]

_UNSOLVABLE = re.compile(
    r"\b(not\s+possible|impossible|cannot\s+be\s+(?:done|solved)|can't\s+be\s+(?:done|solved)|no\s+way\s+to|"
    r"unsolvable|not\s+solvable|there\s+is\s+no\s+solution)\b",
    re.IGNORECASE,
)

FEASIBLE_SHARE = 0.5
PARTIAL_SHARE = 0.25


class MacGyverJudgement(BaseModel):
    """The rubric's answers on one proposed solution (``JudgeReply.detail``)."""

    model_config = ConfigDict(frozen=True)

    claims_unsolvable: bool
    """The answer says the problem cannot be solved."""
    feasibility: str | None = None
    """``feasible``, ``partially`` or ``infeasible`` for a plan; None for an unsolvable claim."""
    efficient: bool | None = None
    """A feasible plan: the simplest, safest route; None otherwise."""
    reason: str = ""


def claims_unsolvable(text: str) -> bool:
    """Whether an answer says the problem cannot be solved (by its words)."""
    return bool(_UNSOLVABLE.search(text))


def verdict_of(problem: MacGyverProblem, judgement: MacGyverJudgement) -> Verdict:
    """The six-way verdict of the rubric's answers (see the module docstring)."""
    if judgement.claims_unsolvable:
        return "correct_unsolvable" if not problem.solvable else "wrong_fail_solvability_status"
    if not problem.solvable:
        return "wrong_fail_solvability_status"
    if judgement.feasibility == "feasible":
        return "correct_efficient" if judgement.efficient else "correct_inefficient"
    return "wrong_partial_correct" if judgement.feasibility == "partially" else "wrong_entire_wrong_solution"


class ReferenceMacGyverJudge:
    """MacGyver's offline judge by word overlap with solutions known to work (see the module docstring)."""

    name = "reference"
    limits = (
        "offline stand-in for MacGyver's human / LLM rubric by word overlap with the solutions known to work: it "
        "cannot tell whether a plan would work, so its numbers are for offline runs and tests; use an LLM judge "
        "(--judge openai/...) for measurement"
    )
    synchronous = True

    async def answer(self, item: Any, question: str, history: tuple[QA, ...]) -> JudgeReply:
        """MacGyver asks no questions: always ``irrelevant``."""
        return JudgeReply(label="irrelevant")

    async def grade(self, item: Any, commit: Commit, history: tuple[QA, ...]) -> JudgeReply:
        """The rubric by words, as ``JudgeReply.detail``; the label is the six-way verdict."""
        if not isinstance(item, MacGyverProblem):
            raise TypeError("the MacGyver reference judge grades MacGyver problems only")
        text = commit.answer or ""
        if claims_unsolvable(text):
            judgement = MacGyverJudgement(claims_unsolvable=True, reason="the answer says it cannot be done")
            return JudgeReply(label=verdict_of(item, judgement), detail=judgement)
        said = content_stems(text)
        best, efficient = 0.0, False
        for solution in item.reference_solutions():
            wanted = content_stems(solution)
            share = len(said & wanted) / len(wanted) if wanted else 0.0
            if share > best:
                best, efficient = share, solution == item.solution and item.label == "efficient"
        feasibility = "feasible" if best >= FEASIBLE_SHARE else "partially" if best >= PARTIAL_SHARE else "infeasible"
        judgement = MacGyverJudgement(
            claims_unsolvable=False,
            feasibility=feasibility,
            efficient=efficient if feasibility == "feasible" else None,
            reason=f"shares {best:.0%} of the closest working solution's words",
        )
        return JudgeReply(label=verdict_of(item, judgement), detail=judgement)
