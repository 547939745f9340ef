"""Read MacGyver's ``problem_solution_pair.xlsx`` (public repository allenai/MacGyver, commit 5e3ecc9,
``data/MacGyver/``).

One sheet with the columns ``ID``, ``Problem``, ``Solvable?`` (``Yes`` / ``No``), ``Unconventional?``
(``unconventional`` / ``conventional``; ``N/A`` on unsolvable rows), ``Solution`` (steps as
``Step1: ...`` separated by ``<br>`` and a newline, or a sentence saying why it cannot be done) and
``Label``. Traps: the release stores the ids of solvable rows as text and of unsolvable rows as numbers
(both become text here); ``<br>`` marks become newlines. When ``additional_human_solutions.xlsx`` sits
in the same folder (``ID``, ``Problem``, ``Solvable?``, ``Solution``), each problem also gets the
solutions of the people who thought it solvable.
"""

from __future__ import annotations

import re
from contextlib import closing
from pathlib import Path
from typing import Any

from lateralgym.envs._errors import DatasetError, DatasetTooLarge
from lateralgym.envs._xlsx import sheet_rows
from lateralgym.envs._xlsx_header import header_texts
from lateralgym.envs.benchmarks.macgyver._schema import MacGyverProblem
from lateralgym.envs.records import brief, build, cell_text, existing_file, has_signature, unique_id

__all__ = ["HUMAN_SOLUTIONS", "is_macgyver", "load_macgyver"]

HUMAN_SOLUTIONS = "additional_human_solutions.xlsx"
"""The release's file of people's solutions, read when it is next to the problem file."""

_COLUMNS = ("id", "problem", "solvable?", "solution")
_ADVICE = "is it MacGyver's problem_solution_pair.xlsx?"
_BREAK = re.compile(r"\s*<br\s*/?>\s*", re.IGNORECASE)


def _rows(path: Path) -> list[tuple[Any, ...]]:
    return list(sheet_rows(path, _ADVICE))


def _header(path: Path, rows: list[tuple[Any, ...]]) -> list[str]:
    if not rows:
        raise DatasetError(path, "the first sheet is empty; expected a header row", record="row 1")
    return [cell_text(cell, path, "row 1 (header)", f"column {n}").strip().lower() for n, cell in enumerate(rows[0], 1)]


def is_macgyver(path: Path, first_record: Any) -> bool:
    """An ``.xlsx`` whose first row has MacGyver's columns (``ID``, ``Problem``, ``Solvable?``, ``Solution``)."""
    if not has_signature(path, (".xlsx", ".xlsm"), b"PK\x03\x04"):
        return False
    header = header_texts(path)  # streamed, so a large sheet is not read to tell its format
    if header is None:  # laid out otherwise: the guarded reader's first row
        try:
            with closing(sheet_rows(path, _ADVICE)) as rows:
                first = next(rows, ())
        except DatasetTooLarge:
            raise  # refused as it is, never as "unknown format"
        except DatasetError:  # not a workbook: another format's, or broken (its own reader says so)
            return False
        header = [str(cell).strip().lower() for cell in first if cell is not None]
    return set(_COLUMNS) <= set(header)


def _text(value: Any) -> str:
    """A cell as text: numbers without a trailing ``.0``, ``<br>`` marks as newlines."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return _BREAK.sub("\n", str(value)).strip() if value is not None else ""


def _yes(value: Any, path: Path, where: str, field: str) -> bool:
    word = _text(value).lower()
    if word not in ("yes", "no"):
        raise DatasetError(path, f"expected Yes or No, got {brief(value)}", record=where, field=field)
    return word == "yes"


def _human_solutions(path: Path) -> dict[str, list[str]]:
    """People's solutions by problem id, from the release's second file beside ``path`` (those saying solvable)."""
    extra = path.with_name(HUMAN_SOLUTIONS)
    if extra == path or not extra.is_file():
        return {}
    rows = _rows(extra)
    header = _header(extra, rows)
    missing = [c for c in _COLUMNS if c not in header]
    if missing:
        raise DatasetError(extra, f"missing column {missing[0]!r}; header is {brief(header)}", record="row 1 (header)")
    column = {name: header.index(name) for name in _COLUMNS}
    found: dict[str, list[str]] = {}
    for number, row in enumerate(rows[1:], start=2):
        cells = {name: row[i] if i < len(row) else None for name, i in column.items()}
        if not _text(cells["id"]):
            continue
        if _yes(cells["solvable?"], extra, f"row {number}", "Solvable?") and _text(cells["solution"]):
            found.setdefault(_text(cells["id"]), []).append(_text(cells["solution"]))
    return found


def load_macgyver(path: str | Path) -> list[MacGyverProblem]:
    """Read ``problem_solution_pair.xlsx`` (and the human solutions file beside it); see the module docstring.

    Raises:
        DatasetError: a missing column, an id used twice, an empty problem, or a ``Solvable?`` that is not
            Yes / No (naming the file, the row and the column).
    """
    path = existing_file(path)
    rows = _rows(path)
    header = _header(path, rows)
    missing = [c for c in _COLUMNS if c not in header]
    if missing:
        raise DatasetError(path, f"missing column {missing[0]!r}; header is {brief(header)}", record="row 1 (header)")
    column = {name: header.index(name) for name in header if name}
    people = _human_solutions(path)
    problems: list[MacGyverProblem] = []
    seen: dict[str, str] = {}
    for number, row in enumerate(rows[1:], start=2):
        cells = {name: row[i] if i < len(row) else None for name, i in column.items()}
        if all(cell is None or not str(cell).strip() for cell in cells.values()):
            continue
        where = f"row {number}"
        problem_id = _text(cells.get("id"))
        if not problem_id:
            raise DatasetError(path, "is empty", record=where, field="ID")
        unique_id(seen, problem_id, path, where, at=where, field="ID")
        unconventional = _text(cells.get("unconventional?")).lower()
        problems.append(
            build(
                MacGyverProblem,
                path,
                where,
                {
                    "id": problem_id,
                    "problem": _text(cells.get("problem")),
                    "solvable": _yes(cells.get("solvable?"), path, where, "Solvable?"),
                    "unconventional": None
                    if unconventional not in ("unconventional", "conventional")
                    else unconventional == "unconventional",
                    "solution": _text(cells.get("solution")),
                    "label": _text(cells.get("label")),
                    "human_solutions": tuple(people.get(problem_id, ())),
                },
            )
        )
    return problems
