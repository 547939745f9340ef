"""Readers for the official releases: BrainTeaser (.npy), SPLAT (.xlsx), LatEval and CreativityBench (.json).

Each reader turns a release file into schema records and fails with a one-line ``DatasetError`` that
names the file, the record and the field. The traps each format sets are documented where they are
handled. No data file runs code: BrainTeaser's pickled object arrays go through an unpickler that
admits plain data and NumPy's array rebuild only (``read_npy``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel, ValidationError

from lateralgym.envs._errors import DatasetError, validation_message
from lateralgym.envs._npy import read_npy
from lateralgym.envs._samples import brief, parse_json, plain, read_text
from lateralgym.envs._schema import MCQPuzzle, MultipleChoiceItem, PuzzleVariant, SituationPuzzle

M = TypeVar("M", bound=BaseModel)

_VARIANTS: dict[str, PuzzleVariant] = {"": "original", "_SR": "semantic", "_CR": "context"}
_BRAINTEASER_ID = re.compile(r"(SP|WP)-\d+")
_SPLAT_COLUMNS = ("title", "story", "answer", "level of difficulty")
_SPLAT_LEVEL = re.compile(r"^\s*(\d+)\s*(?:/\s*10\b.*)?$", re.IGNORECASE | re.DOTALL)
_CLUE_NUMBER = re.compile(r"^\s*\d+\s*[.)、:：]\s*")


def build(model: type[M], path: Path, record: object, data: Mapping[str, Any], prefix: str = "") -> M:
    """Validate ``data`` as ``model``; a failure becomes a DatasetError naming record and field."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        field, message = validation_message(exc)
        raise DatasetError(path, message, record=record, field=f"{prefix}{field}") from exc


def text(value: object, path: Path, where: object, field: str) -> str:
    """A JSON text field, stripped; missing (None) is ''. Anything but a string is a DatasetError."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise DatasetError(path, f"expected text, got {type(value).__name__} {brief(value)}", record=where, field=field)
    return value.strip()


def cell_text(value: object, path: Path, where: object, field: str) -> str:
    """A spreadsheet cell or an array value as stripped text.

    Releases hold numbers where text belongs (an option ``2000.0``, a numeric cell): they become
    their string. None and NaN become ''. A flag, a list or an object is a DatasetError.
    """
    if isinstance(value, (float, np.floating)) and math.isnan(value):
        return ""
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, (bool, np.bool_)):
        try:
            return str(value)
        except ValueError:  # an int past Python's 4300-digit limit
            raise DatasetError(path, "is a number too large to be text", record=where, field=field) from None
    return text(value, path, where, field)


def require(record: Mapping[str, Any], key: str, path: Path, where: object, prefix: str = "") -> Any:
    """``record[key]``, or a DatasetError naming the missing field."""
    if key not in record:
        keys = brief(sorted(str(k) for k in record))
        raise DatasetError(path, f"missing key {key!r} (keys present: {keys})", record=where, field=f"{prefix}{key}")
    return record[key]


def require_text(record: Mapping[str, Any], key: str, path: Path, where: object, prefix: str = "") -> str:
    """A required, non-empty text field."""
    value = text(require(record, key, path, where, prefix), path, where, f"{prefix}{key}")
    if not value:
        raise DatasetError(path, "is empty", record=where, field=f"{prefix}{key}")
    return value


def as_mapping(value: object, path: Path, where: object, field: str) -> Mapping[str, Any]:
    """``value`` if it is a JSON object, else a DatasetError naming the field."""
    if not isinstance(value, dict):
        raise DatasetError(path, f"expected an object, got {type(value).__name__}", record=where, field=field)
    return value


def as_list(value: object, path: Path, where: object, field: str) -> list[Any]:
    """``value`` if it is a JSON list, else a DatasetError naming the field."""
    if not isinstance(value, list):
        raise DatasetError(path, f"expected a list, got {type(value).__name__}", record=where, field=field)
    return value


def texts(value: object, path: Path, where: object, field: str) -> tuple[str, ...]:
    """The non-empty, non-``NA`` texts of a JSON list."""
    items = as_list(value, path, where, field)
    found = (text(v, path, where, f"{field}[{i}]") for i, v in enumerate(items))
    return tuple(t for t in found if t and t != "NA")


_DIGITS = re.compile(r"[0-9]{1,18}")


def whole_number(value: object, path: Path, where: object, field: str) -> int:
    """A non-negative whole number given as int or ASCII digits (no ``true``, no ``'²'``)."""
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and _DIGITS.fullmatch(value.strip()):
        return int(value.strip())
    raise DatasetError(path, f"expected a whole number, got {brief(value)}", record=where, field=field)


def unique_id(seen: dict[str, str], record_id: str, path: Path, where: object, at: str, field: str = "id") -> None:
    """Note ``record_id`` as seen ``at`` (``index 3``); a second record with it is a DatasetError naming both."""
    if record_id in seen:
        raise DatasetError(
            path, f"duplicate id {plain(record_id)} (also at {seen[record_id]})", record=where, field=field
        )
    seen[record_id] = at


def existing_file(path: str | Path) -> Path:
    """``path`` as a Path, or a DatasetError when it is not a readable file."""
    path = Path(path)
    if path.is_dir():
        raise DatasetError(path, "is a directory; give the path of one dataset file")
    if not path.is_file():
        raise DatasetError(path, "no such file; check the path")
    return path


def read_json(path: Path) -> Any:
    """Parse a whole JSON file; errors give the line and column."""
    try:
        return parse_json(read_text(path), path)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            path, f"not valid JSON ({exc.msg} at column {exc.colno})", record=f"line {exc.lineno}"
        ) from exc


def _json_list(path: Path, what: str) -> list[Mapping[str, Any]]:
    data = read_json(path)
    if not isinstance(data, list):
        raise DatasetError(path, f"expected a JSON list of {what}, got {type(data).__name__}")
    for index, record in enumerate(data):
        if not isinstance(record, dict):
            raise DatasetError(path, f"expected an object, got {type(record).__name__}", record=f"index {index}")
    return data


DATA_SUFFIXES = frozenset({".npy", ".npz", ".xlsx", ".xlsm", ".json", ".jsonl", ".txt", ".csv", ".tsv"})
"""Suffixes that say what a data file is; a file under one is never claimed by another format's magic bytes."""


def has_signature(path: Path, suffixes: Collection[str], magic: bytes) -> bool:
    """Whether a binary format claims ``path``: by one of its own ``suffixes``, or by its ``magic`` bytes
    when the suffix names no other kind of data file (``DATA_SUFFIXES``).

    So ``puzzles.dat`` holding a workbook is SPLAT's, but a ``.jsonl`` that starts with NumPy's
    magic is refused as broken JSONL instead of being read as an array.
    """
    suffix = path.suffix.lower()
    if suffix in suffixes:
        return True
    if suffix in DATA_SUFFIXES:
        return False
    try:
        with path.open("rb") as handle:
            return handle.read(len(magic)) == magic
    except OSError:
        return False


# ---------------------------------------------------------------- BrainTeaser


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
    import openpyxl  # deferred: only SPLAT needs it

    path = existing_file(path)
    try:
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises zip, key and XML errors for broken files
        raise DatasetError(path, f"cannot read as an .xlsx workbook ({type(exc).__name__}: {brief(str(exc))})") from exc
    try:
        rows = list(workbook.worksheets[0].iter_rows(values_only=True))
    except Exception as exc:
        raise DatasetError(path, f"cannot read the first sheet ({type(exc).__name__}: {brief(str(exc))})") from exc
    finally:
        workbook.close()
    if not rows:
        raise DatasetError(path, "the first sheet is empty; expected a header row", record="row 1")
    header = [
        cell_text(cell, path, "row 1 (header)", f"column {number}").lower()
        for number, cell in enumerate(rows[0], start=1)
    ]
    if not {"title", "story", "answer"} & set(header):
        raise DatasetError(
            path,
            "unsupported format: a spreadsheet, but not SPLAT's puzzles.xlsx (its header "
            f"{brief([h for h in header if h])} has none of SPLAT's columns {', '.join(_SPLAT_COLUMNS)}); "
            "other datasets (MacGyver, ...) can be "
            "converted to LateralGym JSONL (docs/adding-a-benchmark.md)",
            record="row 1 (header)",
        )
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
    for number, row in enumerate(rows[1:], start=2):
        if all(_blank(cell) for cell in row):
            continue
        where = f"row {number}"
        cells = {name: cell_text(row[i] if i < len(row) else None, path, where, name) for name, i in columns.items()}
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
                    "difficulty": _splat_level(row[columns["level of difficulty"]], path, where),
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
    for index, record in enumerate(_json_list(path, "LatEval puzzles")):
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
