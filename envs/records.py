"""Helpers for reading release files into items, for every benchmark's loaders (yours too).

Each helper fails with a one-line ``DatasetError`` naming the file, the record and the field, so a
loader written with them reports bad data the way the built-in ones do. No data file runs code:
``read_npy`` admits plain data and NumPy's array rebuild only.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from pydantic import BaseModel, ValidationError

from lateralgym.envs._errors import DatasetError, validation_message
from lateralgym.envs._samples import brief, parse_json, plain, read_text
from lateralgym.envs.support import lazy_exports

if TYPE_CHECKING:
    from lateralgym.envs._npy import read_npy

__all__ = [
    "DATA_SUFFIXES",
    "as_list",
    "as_mapping",
    "brief",
    "build",
    "cell_text",
    "existing_file",
    "has_signature",
    "json_list",
    "parse_json",
    "plain",
    "read_json",
    "read_npy",
    "read_text",
    "require",
    "require_text",
    "text",
    "text_head",
    "texts",
    "unique_id",
    "whole_number",
]

_LAZY = {"read_npy": "lateralgym.envs._npy"}  # the .npy reader: only a release in NumPy's format needs it

if not TYPE_CHECKING:  # mypy reads the import above: no fallback types a misspelt name as Any
    __getattr__ = lazy_exports(__name__, _LAZY)

M = TypeVar("M", bound=BaseModel)


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


def json_list(path: Path, what: str) -> list[Mapping[str, Any]]:
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

    So ``puzzles.dat`` holding a workbook is the spreadsheet format's, but a ``.jsonl`` that starts with NumPy's
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


SNIFF_BYTES = 1 << 16
"""How much of a file a text format's sniff reads (64 KiB): a header row or a first record's keys."""


def text_head(path: Path, size: int = SNIFF_BYTES) -> str | None:
    """The start of a UTF-8 text file, at most ``size`` bytes of it, for a format's sniff: a file of any
    size is told by its start, never read whole to be told (its reader then applies its size caps). A
    byte-order mark is dropped and a character cut at the end left out. None for what is not a regular
    file (a device, a pipe), cannot be opened, or does not start as UTF-8: not a text format's."""
    if not path.is_file():
        return None
    try:
        with path.open("rb") as handle:
            head = handle.read(size)
        return codecs.getincrementaldecoder("utf-8-sig")().decode(head)  # not final: a cut character waits
    except (OSError, UnicodeDecodeError):
        return None
