"""SPLAT's agreement labels as judge cases (``lateralgym judges eval LABELS.csv --judge SPEC``).

A label file of ``lateralgym agreement`` (columns ``item_id``, ``question``, ``explanation``,
``human_answer``, ``human_verdict``; ``_agreement.py``) names puzzles by id: the cases are judged on
those puzzles, from a dataset given with ``--items`` (or the shipped sample puzzles). A question row
is asked with ``Judge.answer`` and compared on yes / no / irrelevant (SPLAT's R, three-way); a verdict
row, its explanation graded with ``Judge.grade`` and compared on correct / not yet (SPLAT's M). The
positive label is ``yes`` for questions and ``correct`` for verdicts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lateralgym.envs._benchmark import JudgeCase
from lateralgym.envs._errors import DatasetError
from lateralgym.envs.benchmarks.splat._scene import SituationPuzzle
from lateralgym.envs.records import text_head

__all__ = ["is_agreement_labels", "load_agreement_cases"]

VERDICTS = (("incorrect", "not_yet"), ("unclear", "not_yet"))
"""A judge's verdict labels as a person's ``correct`` / ``not_yet`` is compared with them."""


def is_agreement_labels(path: Path) -> bool:
    """A ``.csv`` / ``.jsonl`` label file whose first line names ``item_id`` and a human label column."""
    if path.suffix.lower() not in (".csv", ".jsonl", ".ndjson"):
        return False
    head = text_head(path)  # the file's start only: a first line without end is not read to its end
    first = "" if head is None else head.partition("\n")[0]
    return "item_id" in first and ("human_answer" in first or "human_verdict" in first)


def load_agreement_cases(path: Path, items: Sequence[Any] | None = None) -> list[JudgeCase]:
    """The label file's rows as judge cases on the puzzles they name (see the module docstring).

    Raises:
        DatasetError: a bad label file, a puzzle id the dataset lacks, or a verdict row without the
            explanation it judges.
    """
    from lateralgym.envs.benchmarks.splat._agreement import load_human_labels  # the judges' evaluation only

    if items is None:
        from lateralgym.envs._samples import read_sample

        items = read_sample("situation_puzzles.jsonl", SituationPuzzle)
    puzzles = {p.id: p for p in items if isinstance(p, SituationPuzzle)}
    cases: list[JudgeCase] = []
    for record in load_human_labels(path):
        puzzle = puzzles.get(record.item_id)
        if puzzle is None:
            raise DatasetError(
                path,
                f"names puzzle {record.item_id!r}, which the dataset lacks; give the run's dataset with --items PATH",
            )
        if record.answer is not None and record.question:
            cases.append(
                JudgeCase(
                    item=puzzle,
                    message=record.question,
                    expected=record.answer,
                    group=puzzle.id,
                    source=record.answer,
                )
            )
        if record.verdict is not None:
            if not record.explanation:
                raise DatasetError(
                    path,
                    f"a verdict on puzzle {record.item_id!r} without the explanation it judges; "
                    "fill the explanation column",
                )
            cases.append(
                JudgeCase(
                    item=puzzle,
                    message=record.explanation,
                    kind="verdict",
                    expected=record.verdict,
                    positive="correct",
                    group=puzzle.id,
                    source=record.verdict,
                    collapse=VERDICTS,
                )
            )
    return cases
