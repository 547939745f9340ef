"""MacGyver's human annotations as judge cases (``lateralgym judges eval benchmark_results.json --items
problem_solution_pair.xlsx --judge SPEC``).

``data/Benchmark_results/benchmark_results.json`` maps a problem's id to the solutions people and models
proposed, each annotated by people with one of the six labels (``VERDICTS``). Each becomes a case: the
judge grades the solution (``Judge.grade``) and its verdict is compared with the annotation as correct
(efficient, inefficient, or rightly unsolvable) or wrong, the positive label being ``correct``. The
problems come from ``--items`` (the problem file); an entry without an annotation is left out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lateralgym.envs._benchmark import JudgeCase
from lateralgym.envs._errors import DatasetError
from lateralgym.envs.benchmarks.macgyver._schema import CORRECT, VERDICTS, MacGyverProblem
from lateralgym.envs.records import read_json, text_head

__all__ = ["is_macgyver_annotations", "load_macgyver_annotations"]

BINARY = tuple((verdict, "correct" if verdict in CORRECT else "wrong") for verdict in VERDICTS)


def is_macgyver_annotations(path: Path) -> bool:
    """A JSON object of problem ids to lists of ``{model, annotation, solution}``."""
    if path.suffix.lower() != ".json":
        return False
    head = text_head(path)  # the file's start only: a file of any size is told without reading it whole
    return head is not None and head.lstrip().startswith("{") and '"annotation"' in head and '"solution"' in head


def load_macgyver_annotations(path: Path, items: Sequence[Any] | None = None) -> list[JudgeCase]:
    """The annotated solutions as judge cases (see the module docstring).

    Raises:
        DatasetError: no problems given, a problem id they lack, or an entry that is not an annotated solution.
    """
    if not items:
        raise DatasetError(path, "names MacGyver problems by id: give them with --items problem_solution_pair.xlsx")
    problems = {p.id: p for p in items if isinstance(p, MacGyverProblem)}
    data = read_json(path)  # capped as every JSON file read whole; bad JSON or UTF-8 is one line
    if not isinstance(data, dict):
        raise DatasetError(path, "expected a JSON object of problem ids to annotated solutions")
    cases: list[JudgeCase] = []
    for problem_id, entries in data.items():
        problem = problems.get(str(problem_id))
        if problem is None:
            raise DatasetError(path, f"names problem {problem_id!r}, which --items lacks", record=str(problem_id))
        if not isinstance(entries, list):
            raise DatasetError(path, "expected a list of solutions", record=str(problem_id))
        for number, entry in enumerate(entries):
            where = f"{problem_id}[{number}]"
            if not isinstance(entry, dict) or not isinstance(entry.get("solution"), str):
                raise DatasetError(path, "expected {model, annotation, solution}", record=where)
            annotation = entry.get("annotation")
            if not annotation:
                continue  # the release has one entry without an annotation
            if annotation not in VERDICTS:
                raise DatasetError(path, f"unknown annotation {annotation!r}", record=where, field="annotation")
            cases.append(
                JudgeCase(
                    item=problem,
                    message=entry["solution"],
                    kind="verdict",
                    expected="correct" if annotation in CORRECT else "wrong",
                    positive="correct",
                    group=problem.id,
                    source=annotation,
                    collapse=BINARY,
                )
            )
    return cases
