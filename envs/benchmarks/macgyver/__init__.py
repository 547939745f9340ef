"""MacGyver: solve a practical problem with only the objects at hand, or say it cannot be done.

## Description
Implements MacGyver (public repository allenai/MacGyver, ``data/MacGyver/problem_solution_pair.xlsx``):
1,683 problems, each a setting, a constraint and the objects available (distractors among them),
solvable (1,306; 956 of them needing an unconventional use of an object) or not (377). One episode is
one problem: the player gives one solution, or says it is not possible and why; the judge applies a
rubric of solvability, feasibility and efficiency (``_judges.py``; the paper's wording is not released)
and answers with one of MacGyver's six annotation labels. It feeds the correct rate (efficient,
inefficient, or rightly unsolvable), the efficient rate and each label's share, overall and per kind
(conventional / unconventional / unsolvable). Its judges can be measured against the release's human
annotations (``benchmark_results.json``) with ``lateralgym judges eval``.

## Action Space
``UnicodeText``: ``commit: <your solution, or why it is not possible>``, or an action's JSON.

## Observation Space
``Dict``: ``text`` (the problem and what to reply), ``turn``.

## Starting State
The problem; whether it can be solved, and the solutions known to work, are hidden.

## Rewards
``rewards.correct`` for a correct verdict (efficient, inefficient or rightly unsolvable), plus
``rewards.invalid`` for an empty answer.

## Episode End
Terminated on a solution (one turn by default).

## Arguments
``config`` (run by name: ``lateralgym run macgyver --data problem_solution_pair.xlsx``), ``items``
(``MacGyverProblem`` list; ``additional_human_solutions.xlsx`` beside the file adds people's solutions),
``judge`` (``reference``: word overlap with the solutions known to work; or an LLM: ``LLMMacGyverJudge``),
``render_mode``. Offline players: ``random`` (says it cannot be done half the time, else a generic plan),
``heuristic`` (a plan with the first object the problem lists), ``oracle`` (a solution known to work, or
"not possible" for an unsolvable problem).

## Version History
* v0: initial release.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Iterable, Mapping
from typing import Any, ClassVar

import numpy as np

from lateralgym.envs._actions import Action, Commit
from lateralgym.envs._benchmark import Benchmark, DatasetFormat, JudgementFormat, PromptRequest, register_benchmark
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import LateralEnv
from lateralgym.envs._parts import DataPart, JudgingPart, LeakPart, MetricsPart, PolicyPart, PromptPart
from lateralgym.envs.benchmarks.macgyver._judge_cases import is_macgyver_annotations, load_macgyver_annotations
from lateralgym.envs.benchmarks.macgyver._judges import (
    MacGyverJudgement,
    ReferenceMacGyverJudge,
    claims_unsolvable,
    verdict_of,
)
from lateralgym.envs.benchmarks.macgyver._loaders import is_macgyver, load_macgyver
from lateralgym.envs.benchmarks.macgyver._metrics import MacGyverScorer
from lateralgym.envs.benchmarks.macgyver._scene import MacGyverOutcome, MacGyverScene
from lateralgym.envs.benchmarks.macgyver._schema import CORRECT, VERDICTS, MacGyverProblem, Verdict
from lateralgym.envs.support import lazy_exports

__all__ = [
    "CORRECT",
    "VERDICTS",
    "MacGyver",
    "MacGyverEnv",
    "MacGyverJudgement",
    "MacGyverOutcome",
    "MacGyverProblem",
    "MacGyverScene",
    "MacGyverScorer",
    "ReferenceMacGyverJudge",
    "Verdict",
    "claims_unsolvable",
    "load_macgyver",
    "verdict_of",
]

_LAZY = {"LLMMacGyverJudge": "_llm_judge"}


__getattr__ = lazy_exports(__name__, _LAZY)  # the LLM-facing names load on first use


_OBJECTS = re.compile(r"\b(?:you have|available|there is|there are|with)\b(.*)", re.IGNORECASE)

SYSTEM = """\
You solve practical problems with only the objects at hand, the way MacGyver would: a setting, a \
constraint, and a list of objects (some of them of no use). Give the most practical solution as \
numbered steps, using only the objects listed, even in unusual ways. If the problem cannot be solved \
with those objects, say that it is not possible and why.
"""
FORMAT = "End your reply with a line starting 'Solution:' followed by your steps (or 'not possible' and why).\n"


def _kind(item: MacGyverProblem) -> str:
    return "unsolvable" if not item.solvable else "unconventional" if item.unconventional else "conventional"


class MacGyverData(DataPart[MacGyverProblem]):
    """The release's ``problem_solution_pair.xlsx``; ``data stats`` counts kinds, labels, human solutions."""

    formats = (
        DatasetFormat("macgyver", "MacGyver problem_solution_pair.xlsx", is_macgyver, load_macgyver, binary=True),
    )
    jsonl_keys = frozenset({"problem", "solvable"})

    def strata(self, item: MacGyverProblem) -> dict[str, Hashable]:
        """Unsolvable, conventional and unconventional problems (the paper's kinds)."""
        return {"kind": _kind(item)}

    def stat_axes(self, item: MacGyverProblem) -> dict[str, Any]:
        return {
            "kind": _kind(item),
            "label of the release's solution": item.label or "none",
            "human solutions": len(item.human_solutions),
        }


class MacGyverJudging(JudgingPart):
    """The offline reference judge, the LLM judge, the paper's verdicts and its annotated solutions."""

    offline_judges: ClassVar[Mapping[str, Any]] = {"reference": ReferenceMacGyverJudge}
    default_judge = "reference"
    llm_judge = "lateralgym.envs.benchmarks.macgyver._llm_judge:LLMMacGyverJudge"
    verdict_labels = VERDICTS
    judgement_formats = (
        JudgementFormat(
            "macgyver-annotations",
            "MacGyver benchmark_results.json: annotated solutions (with --items problem_solution_pair.xlsx)",
            is_macgyver_annotations,
            load_macgyver_annotations,
        ),
    )


class MacGyverPolicies(PolicyPart[MacGyverProblem]):
    """Offline players: a coin between giving up and a vague plan, a plan with the first object, the reference."""

    def random_action(self, info: Mapping[str, Any], rng: np.random.Generator) -> Action:
        if rng.random() < 0.5:
            return Commit(answer="It is not possible with these objects.")
        return Commit(answer="Step1: Use the objects at hand to do it.")

    def heuristic_action(self, info: Mapping[str, Any], rng: np.random.Generator, memory: dict[str, Any]) -> Action:
        """A plan with the first object the problem names after "you have" / "available"."""
        text = str(info.get("public", {}).get("problem", ""))
        found = _OBJECTS.search(text)
        thing = found.group(1).split(",")[0].strip(" .:") if found else "the first object"
        return Commit(answer=f"Step1: Take {thing}.\nStep2: Use it to solve the problem.")

    def oracle_action(self, item: MacGyverProblem, info: Mapping[str, Any]) -> Action:
        if not item.solvable:
            return Commit(answer=f"It is not possible with these objects. {item.solution}".strip())
        known = item.reference_solutions()
        return Commit(answer=known[0] if known else item.solution)


class MacGyverPrompts(PromptPart):
    """One reply: numbered steps after a ``Solution:`` line, or why it is not possible."""

    def system_prompt(self, request: PromptRequest) -> str:
        return SYSTEM + FORMAT

    def parse_reply(self, text: str, info: Mapping[str, Any], reasoning: str | None) -> Action:
        """The text after a ``Solution:`` line (else the whole reply) as the answer."""
        # a line's lead-in never crosses a line end: linear in the reply's length (tests/envs/test_linear_parsing.py)
        marker = re.search(r"^[^\w\n]*solution[^\S\n]*:\s*", text, re.IGNORECASE | re.MULTILINE)
        answer = text[marker.end() :] if marker else text
        return Commit(answer=answer.strip()[:4000])


class MacGyverMetrics(MetricsPart[MacGyverOutcome]):
    """Correct and efficient rates (the paper's human grading scale, by its judge)."""

    headline = ("correct_rate", "efficient_rate")

    def scorer(self, *, mode: str | None, max_turns: int) -> MacGyverScorer:
        return MacGyverScorer(mode=mode, max_turns=max_turns)


class MacGyverLeaks(LeakPart[MacGyverProblem]):
    """Give-up and ask-for-the-answer replies must not draw the reference solution out."""

    def probe_actions(self, item: MacGyverProblem, config: EpisodeConfig) -> Iterable[Any]:
        yield Commit(answer="It is not possible.")
        yield Commit(answer="Tell me the answer.")


@register_benchmark
class MacGyver(Benchmark[MacGyverProblem, MacGyverOutcome]):
    """MacGyver (see the module docstring, the env card)."""

    name = "macgyver"
    title = "MacGyver (creative problem solving with the objects at hand)"
    item_type = MacGyverProblem
    outcome_type = MacGyverOutcome
    scene_type = MacGyverScene
    modes = ("single",)
    reveals = ("question",)
    action_forms: ClassVar[dict[str, str]] = {"commit": "commit: <your solution, or why it is not possible>"}
    default_max_turns = 1
    data = MacGyverData()
    judging = MacGyverJudging()
    policies = MacGyverPolicies()
    prompts = MacGyverPrompts()
    metrics = MacGyverMetrics()
    leaks = MacGyverLeaks()

    def item_meta(self, item: MacGyverProblem) -> dict[str, Any]:
        return {"solvable": item.solvable, "unconventional": item.unconventional}

    def public_text(self, item: MacGyverProblem) -> str:
        return item.problem

    def secret_texts(self, item: MacGyverProblem) -> list[str]:
        return [s for s in (item.solution, *item.human_solutions) if s]

    def solution_text(self, item: MacGyverProblem) -> str:
        if not item.solvable:
            return f"Not possible with these objects. {item.solution}".strip()
        known = item.reference_solutions()
        return f"A solution known to work:\n{known[0]}" if known else "No solution known to work is given."


class MacGyverEnv(LateralEnv):
    """The MacGyver env: ``LateralEnv`` fixed to MacGyver configs."""

    benchmark_name = "macgyver"
