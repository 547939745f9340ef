"""Readers of BrainTeaser's release files (EMNLP ``.npy``, SemEval ``.npy`` with ``*_answer.npy``).

No data file runs code: the pickled object arrays go through ``read_npy``, which admits plain data
and NumPy's array rebuild only. Every failure is a one-line ``DatasetError`` naming the file, the
record and the field.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lateralgym.envs._errors import DatasetError
from lateralgym.envs.benchmarks._mcq import MultipleChoiceItem
from lateralgym.envs.benchmarks.brainteaser._schema import MCQPuzzle, PuzzleVariant
from lateralgym.envs.records import (
    brief,
    build,
    cell_text,
    existing_file,
    plain,
    read_npy,
    require,
    require_text,
    unique_id,
)

_VARIANTS: dict[str, PuzzleVariant] = {"": "original", "_SR": "semantic", "_CR": "context"}
_BRAINTEASER_ID = re.compile(r"(SP|WP)-\d+")


def _label(value: object, path: Path, where: object) -> int:
    number = None
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        return int(value)
    if isinstance(value, (float, np.floating, str)):
        try:
            number = float(str(value).strip())
        except ValueError:
            number = None
    if number is None or not number.is_integer():
        raise DatasetError(path, f"bad label {brief(value)}; expected an integer 0..3", record=where, field="label")
    return int(number)


def _answer_rows(path: Path, count: int) -> list[tuple[str, str]]:
    array = read_npy(path)
    if array.ndim != 2 or array.shape[1] != 2:
        raise DatasetError(path, f"an answer file holds rows of [id, label]; got shape {array.shape}")
    if array.shape[0] != count:
        raise DatasetError(
            path, f"has {array.shape[0]} rows but the puzzle file has {count} records; they must be row-aligned"
        )
    return [
        (cell_text(row[0], path, f"row {i}", "id"), cell_text(row[1], path, f"row {i}", "label"))
        for i, row in enumerate(array)
    ]


def _choices(record: Mapping[str, Any], path: Path, where: object) -> tuple[str, ...]:
    """The options. ``choice_list`` is the truth; without it they are rebuilt from the answer pool."""
    if "choice_list" in record:
        raw = record["choice_list"]
        if isinstance(raw, str) or not isinstance(raw, (Sequence, np.ndarray)):
            raise DatasetError(
                path, f"expected a list of options, got {type(raw).__name__}", record=where, field="choice_list"
            )
        choices = tuple(cell_text(c, path, where, f"choice_list[{i}]") for i, c in enumerate(raw))
        for index, choice in enumerate(choices):
            if not choice:
                raise DatasetError(path, "option is empty", record=where, field=f"choice_list[{index}]")
        return choices
    # Rebuild from answer + distractors in choice_order (EMNLP spells the keys "distrator").
    pool = [cell_text(require(record, "answer", path, where), path, where, "answer")]
    for suffix in ("1", "2", "(unsure)"):
        key = next((k for k in (f"distractor{suffix}", f"distrator{suffix}") if k in record), None)
        if key is None:
            raise DatasetError(
                path, "no choice_list and no distractor to rebuild it from", record=where, field=f"distractor{suffix}"
            )
        pool.append(cell_text(record[key], path, where, key))
    return tuple(pool[i] for i in _choice_order(record, path, where))


def _choice_order(record: Mapping[str, Any], path: Path, where: object) -> list[int]:
    """``choice_order[i]`` is the pool index (0 = answer) shown at position i, so ``index(0)`` is the label."""
    order = require(record, "choice_order", path, where)
    numbers = []
    if isinstance(order, (list, tuple, np.ndarray)):
        numbers = [int(i) for i in order if isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_))]
    if len(numbers) != len(order) or sorted(numbers) != [0, 1, 2, 3]:
        raise DatasetError(
            path, f"expected a permutation of 0..3, got {brief(order)}", record=where, field="choice_order"
        )
    return numbers


def load_brainteaser(path: str | Path, answers: str | Path | None = None) -> list[MCQPuzzle]:
    """Read a BrainTeaser release file (EMNLP ``sentence_puzzle.npy``, SemEval ``SP-train.npy``, ...).

    SemEval test records carry no id or label: they come from the row-aligned answer file
    (``<stem>_answer.npy`` next to the file unless ``answers`` names it). ``choice_list[label]`` is
    the truth even where ``answer`` disagrees; numbers among the options become strings; the group is
    the ``SP-<n>``/``WP-<n>`` prefix, so shuffled files group correctly.

    Args:
        path: The ``.npy`` puzzle file (a numpy object array of dicts; see ``read_npy``: nothing in it runs).
        answers: The answer file for a test split, when it is not the sibling ``<stem>_answer.npy``.

    Returns:
        One ``MCQPuzzle`` per record, in file order.
    """
    path = existing_file(path)
    array = read_npy(path)
    if array.ndim == 2 and array.dtype.kind == "U":
        raise DatasetError(
            path, "is an answer file ([id, label] rows); load the puzzle file beside it, which finds this file itself"
        )
    if array.ndim != 1:
        raise DatasetError(path, f"expected a 1-d array of puzzle dicts, got shape {array.shape}")
    records: list[Mapping[str, Any]] = []
    for index, record in enumerate(array):
        if not isinstance(record, dict):
            raise DatasetError(path, f"expected a dict, got {type(record).__name__}", record=f"index {index}")
        records.append(record)
    # A record without a label still has one when choice_order says where the answer went.
    unlabelled = next(
        (i for i, r in enumerate(records) if "id" not in r or not {"label", "choice_order"} & r.keys()), None
    )
    if answers is None and unlabelled is not None:
        sibling = path.with_name(f"{path.stem}_answer.npy")
        if "Question" in records[unlabelled] or path.stem.lower().startswith("demonstration"):
            raise DatasetError(
                path,
                "is BrainTeaser's few-shot demonstration file (solved examples for prompting, not puzzles to run): "
                "give it to an LLM player, e.g. --player 'openai/gpt-4o-mini?few_shot=4&demos=demonstration.npy'",
            )
        if not sibling.is_file():
            missing = "id" if "id" not in records[unlabelled] else "label"
            raise DatasetError(
                path,
                f"records have no id/label (a SemEval test split?) and there is "
                f"no answer file {sibling.name} beside it; pass answers=PATH",
                record=f"index {unlabelled}",
                field=missing,
            )
        answers = sibling
    rows = _answer_rows(existing_file(answers), len(records)) if answers is not None else None

    puzzles: list[MCQPuzzle] = []
    seen: dict[str, str] = {}
    for index, record in enumerate(records):
        where = f"index {index}"
        puzzle_id = cell_text(record.get("id"), path, where, "id")
        if rows is not None:
            row_id = rows[index][0]
            if puzzle_id and puzzle_id != row_id:
                raise DatasetError(
                    path,
                    f"id {brief(puzzle_id)} differs from the answer file's {brief(row_id)}",
                    record=where,
                    field="id",
                )
            puzzle_id = row_id
        if not puzzle_id:
            raise DatasetError(path, "has no id", record=where, field="id")
        where = f"index {index} ({plain(puzzle_id)})"
        match = _BRAINTEASER_ID.match(puzzle_id)
        suffix = puzzle_id[match.end() :] if match else None
        if match is None or suffix not in _VARIANTS:
            raise DatasetError(
                path,
                f"bad id {brief(puzzle_id)}; expected SP-<n> or WP-<n>, optionally with _SR or _CR",
                record=where,
                field="id",
            )
        unique_id(seen, puzzle_id, path, where, at=f"index {index}")
        choices = _choices(record, path, where)
        if "label" in record:
            label = _label(record["label"], path, where)
        elif rows is not None:
            label = _label(rows[index][1], Path(str(answers)), f"row {index}")
        else:
            label = _choice_order(record, path, where).index(0)
        if not 0 <= label < len(choices):
            raise DatasetError(
                path, f"bad label {brief(label)}: there are {len(choices)} options", record=where, field="label"
            )
        puzzles.append(
            build(
                MCQPuzzle,
                path,
                where,
                {
                    "id": puzzle_id,
                    "group_id": match.group(0),
                    "kind": "sentence" if match.group(1) == "SP" else "word",
                    "variant": _VARIANTS[suffix],
                    "question": require_text(record, "question", path, where),
                    "choices": choices,
                    "label": label,
                },
            )
        )
    return puzzles


def load_brainteaser_demonstrations(path: str | Path) -> list[MultipleChoiceItem]:
    """Read BrainTeaser's few-shot demonstrations (the official ``Prompting/demonstration.npy``).

    The file is a numpy object array of eight solved puzzles written for prompting, none of them
    from the test data: four sentence puzzles, then four word puzzles. A record is a dict like the
    EMNLP release's, but the question key is ``Question`` (capital Q) and it has no ``id``:
    ``Question``, ``Answer`` (the intended text), ``Choice1-3`` (the distractors),
    ``choice_list`` (the four options as shown), ``choice_order`` and ``label`` (the intended
    option's index in ``choice_list``). ``question`` (lower case), as in the releases, is read too.

    Args:
        path: The ``.npy`` file (read by ``read_npy``: nothing in it runs).

    Returns:
        One item per record, in file order, with ids ``demonstration-<index>``.
    """
    path = existing_file(path)
    array = read_npy(path)
    if array.ndim != 1:
        raise DatasetError(path, f"expected a 1-d array of demonstration dicts, got shape {array.shape}")
    items: list[MultipleChoiceItem] = []
    for index, record in enumerate(array):
        where = f"index {index}"
        if not isinstance(record, dict):
            raise DatasetError(path, f"expected a dict, got {type(record).__name__}", record=where)
        key = "Question" if "Question" in record else "question"
        choices = _choices(record, path, where)
        if "label" in record:
            label = _label(record["label"], path, where)
        else:
            label = _choice_order(record, path, where).index(0)
        if not 0 <= label < len(choices):
            raise DatasetError(
                path, f"bad label {brief(label)}: there are {len(choices)} options", record=where, field="label"
            )
        data = {"id": f"demonstration-{index}", "question": require_text(record, key, path, where), "choices": choices}
        items.append(build(MultipleChoiceItem, path, where, {**data, "label": label}))
    return items


# ---------------------------------------------------------------- SPLAT and LatEval
