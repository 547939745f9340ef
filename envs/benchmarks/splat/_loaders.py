"""Readers of SPLAT's ``puzzles.xlsx`` and LatEval's ``english.json`` / ``chinese.json``.

Every failure is a one-line ``DatasetError`` naming the file, the record and the field. The traps
each format sets are documented where they are handled.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

from lateralgym.envs._errors import DatasetError
from lateralgym.envs._xlsx import sheet_rows
from lateralgym.envs.benchmarks.splat._scene import SituationPuzzle
from lateralgym.envs.records import (
    brief,
    build,
    cell_text,
    existing_file,
    json_list,
    plain,
    require,
    require_text,
    text,
    unique_id,
)

_SPLAT_COLUMNS = ("title", "story", "answer", "level of difficulty")
_SPLAT_NAMES = frozenset({"title", "story", "answer"})
"""A header naming none of these is another spreadsheet, refused as a whole (one missing is named)."""
_SPLAT_LEVEL = re.compile(r"^\s*(\d+)\s*(?:/\s*10\b.*)?$", re.IGNORECASE | re.DOTALL)
_CLUE_NUMBER = re.compile(r"^\s*\d+\s*[.)、:：]\s*")


def _splat_level(value: object, path: Path, where: object) -> int:
    match = _SPLAT_LEVEL.match(cell_text(value, path, where, "level of difficulty"))
    if match is None:
        raise DatasetError(
            path,
            f"cannot parse difficulty {brief(value)}; expected like '5/10 MEDIUM'",
            record=where,
            field="level of difficulty",
        )
    level = int(match.group(1))
    if not 1 <= level <= 9:
        raise DatasetError(path, f"difficulty level {level} is outside 1..9", record=where, field="level of difficulty")
    return level


def _cell(row: tuple[object, ...], index: int) -> object:
    """A row's cell at ``index``; a row ends at its last cell, so those past it are empty (None)."""
    return row[index] if index < len(row) else None


def _blank(cell: object) -> bool:
    """Whether a spreadsheet cell is empty (None, blank text or NaN); cells of unused columns are not read."""
    if isinstance(cell, str):
        return not cell.strip()
    return cell is None or (isinstance(cell, float) and math.isnan(cell))


def load_splat(path: str | Path) -> list[SituationPuzzle]:
    """Read SPLAT's ``puzzles.xlsx``: columns ``title, story, answer, level of difficulty``.

    Titles repeat in the release, so ids come from the spreadsheet row (``splat-row-2`` is the
    first puzzle under the header). Fully empty rows are skipped; stories keep their inner newlines.
    A cell may hold text or a number; a flag or a date where text belongs is refused.
    """
    from lateralgym.envs._xlsx_header import header_texts

    path = existing_file(path)
    header = header_texts(path)  # streamed: a sheet that is not SPLAT's is refused before openpyxl reads it
    if header is not None and not _SPLAT_NAMES & set(header):
        raise _not_splat(path, header)
    with closing(sheet_rows(path, "is it SPLAT's puzzles.xlsx?")) as rows:
        return _splat_rows(path, rows)


def _not_splat(path: Path, header: list[str]) -> DatasetError:
    return DatasetError(
        path,
        "unsupported format: a spreadsheet, but not SPLAT's puzzles.xlsx (its header "
        f"{brief([h for h in header if h])} has none of SPLAT's columns {', '.join(_SPLAT_COLUMNS)}); "
        "other datasets (MacGyver, ...) can be "
        "converted to LateralGym JSONL (docs/adding-a-benchmark.md)",
        record="row 1 (header)",
    )


def _splat_rows(path: Path, rows: Iterator[tuple[object, ...]]) -> list[SituationPuzzle]:
    """The puzzles of a sheet's rows, read one at a time: the header is checked before any other row."""
    first = next(rows, None)
    if first is None:
        raise DatasetError(path, "the first sheet is empty; expected a header row", record="row 1")
    header = [
        cell_text(cell, path, "row 1 (header)", f"column {number}").lower()
        for number, cell in enumerate(first, start=1)
    ]
    if not _SPLAT_NAMES & set(header):
        raise _not_splat(path, header)
    columns: dict[str, int] = {}
    for name in _SPLAT_COLUMNS:
        if name not in header:
            raise DatasetError(
                path,
                f"missing column {name!r}; header is {brief([h for h in header if h])}",
                record="row 1 (header)",
                field=name,
            )
        columns[name] = header.index(name)

    puzzles: list[SituationPuzzle] = []
    for number, row in enumerate(rows, start=2):
        if all(_blank(cell) for cell in row):
            continue
        where = f"row {number}"
        cells = {name: cell_text(_cell(row, i), path, where, name) for name, i in columns.items()}
        for field in ("story", "answer"):
            if not cells[field]:
                raise DatasetError(path, "is empty", record=where, field=field)
        puzzles.append(
            build(
                SituationPuzzle,
                path,
                where,
                {
                    "id": f"splat-row-{number}",
                    "title": cells["title"],
                    "story": cells["story"],
                    "answer": cells["answer"],
                    "difficulty": _splat_level(_cell(row, columns["level of difficulty"]), path, where),
                },
            )
        )
    return puzzles


def parse_clues(clue: str) -> tuple[str, ...]:
    """LatEval's ``clue``: a triple-backtick block of numbered lines -> the clues without their numbers."""
    lines = clue.strip().removeprefix("```").removesuffix("```").splitlines()
    if len(lines) > 1 and lines[0].strip().isalpha():
        lines = lines[1:]  # a language tag after the opening fence
    return tuple(line for line in (_CLUE_NUMBER.sub("", raw).strip() for raw in lines) if line)


def load_lateval(path: str | Path) -> list[SituationPuzzle]:
    """Read LatEval's ``english.json`` (a JSON list of ``{id, question, answer, clue}``); no difficulty.

    Ids are integers or text, unique within the file; question, answer and clue are text.
    """
    path = existing_file(path)
    puzzles: list[SituationPuzzle] = []
    seen: dict[str, str] = {}
    for index, record in enumerate(json_list(path, "LatEval puzzles")):
        where = f"index {index}"
        raw_id = require(record, "id", path, where)
        if isinstance(raw_id, bool) or not isinstance(raw_id, (str, int)):
            raise DatasetError(
                path,
                f"expected an integer or text id, got {type(raw_id).__name__} {brief(raw_id)}",
                record=where,
                field="id",
            )
        puzzle_id = str(raw_id).strip()
        if not puzzle_id:
            raise DatasetError(path, "is empty", record=where, field="id")
        where = f"index {index} (id {plain(puzzle_id)})"
        unique_id(seen, puzzle_id, path, where, at=f"index {index}")
        puzzles.append(
            build(
                SituationPuzzle,
                path,
                where,
                {
                    "id": f"lateval-{puzzle_id}",
                    "story": require_text(record, "question", path, where),
                    "answer": require_text(record, "answer", path, where),
                    "clues": parse_clues(text(record.get("clue"), path, where, "clue")),
                },
            )
        )
    return puzzles
