"""Load any supported dataset file: the official releases, CreativityBench tasks, and our own JSONL.

``load_items(path)`` detects the format from the file's magic bytes, extension and first record:

===================  ==================================================================
format               files
===================  ==================================================================
``brainteaser``      BrainTeaser ``.npy`` (EMNLP, SemEval; test splits with ``*_answer.npy``)
``splat``            SPLAT ``puzzles.xlsx``
``lateval``          LatEval ``english.json``
``creativitybench``  CreativityBench task JSON (a list of tasks)
``jsonl``            ours: ``CreativityTask``, ``MCQPuzzle``, ``SituationPuzzle`` or ``Entity`` lines
===================  ==================================================================

The readers live in ``_loaders_official`` (BrainTeaser, SPLAT, LatEval), ``_loaders_creativity``
(CreativityBench) and ``_samples`` (our JSONL); this module detects the format and dispatches.
Every failure is a ``DatasetError`` naming the file, the record and the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from pydantic import BaseModel

from lateralgym.envs._errors import DatasetError
from lateralgym.envs._loaders_creativity import (
    GOLD_MARKER,
    SIMILARITY_TIERS,
    is_seed_entity,
    load_creativitybench,
    parse_parts,
    split_top_level,
)
from lateralgym.envs._loaders_official import existing_file, load_brainteaser, load_lateval, load_splat, read_json
from lateralgym.envs._samples import json_lines, read_jsonl, read_lines
from lateralgym.envs._schema import CreativityTask, Entity, MCQPuzzle, SituationPuzzle

__all__ = [
    "FORMATS",
    "GOLD_MARKER",
    "JSONL_MODELS",
    "LOADERS",
    "SIMILARITY_TIERS",
    "Records",
    "detect_format",
    "load_brainteaser",
    "load_creativitybench",
    "load_items",
    "load_jsonl",
    "load_lateval",
    "load_splat",
    "parse_parts",
    "split_top_level",
]

Records = list[CreativityTask] | list[MCQPuzzle] | list[SituationPuzzle] | list[Entity]
"""What a loader returns: records of one kind, in file order."""

FORMATS = ("brainteaser", "splat", "lateval", "creativitybench", "jsonl")
"""Format names ``load_items`` accepts."""

JSONL_MODELS: tuple[tuple[str, type[BaseModel]], ...] = (
    ("gold", CreativityTask),
    ("choices", MCQPuzzle),
    ("story", SituationPuzzle),
    ("parts", Entity),
)
"""Key that identifies each record kind in our JSONL format, checked in this order."""


def _format_of(record: object) -> str | None:
    if not isinstance(record, dict):
        return None
    if any(key in record for key, _ in JSONL_MODELS):
        return "jsonl"
    if "task_id" in record or "golds" in record or is_seed_entity(record):
        return "creativitybench"
    if "clue" in record or {"question", "answer"} <= record.keys():
        return "lateval"
    return None


def detect_format(path: str | Path) -> str:
    """The format of a dataset file, one of ``FORMATS``, from magic bytes, extension and first record."""
    path = existing_file(path)
    with path.open("rb") as handle:
        magic = handle.read(8)
    suffix = path.suffix.lower()
    if magic.startswith(b"\x93NUMPY") or suffix == ".npy":
        return "brainteaser"
    if magic.startswith(b"PK\x03\x04") or suffix in (".xlsx", ".xlsm"):
        return "splat"
    lines = [line for line in read_lines(path) if line.strip()]
    if not lines:
        raise DatasetError(path, "is empty")
    found = None
    try:
        data = json.loads(lines[0])  # a JSONL record, or a whole JSON file written on one line
    except json.JSONDecodeError:
        data = read_json(path)
    found = _format_of(data[0] if isinstance(data, list) and data else data)
    if found is None:
        raise DatasetError(
            path,
            f"cannot tell the dataset format from its first record; pass format= one of {list(FORMATS)}",
            record="line 1",
        )
    return found


def _jsonl_model(path: Path) -> type[BaseModel]:
    for number, record in json_lines(path, read_lines(path)):
        if isinstance(record, dict):
            for key, model in JSONL_MODELS:
                if key in record:
                    return model
        raise DatasetError(
            path,
            "cannot tell the record kind: expected a key 'gold' (CreativityTask), "
            "'choices' (MCQPuzzle), 'story' (SituationPuzzle) or 'parts' (Entity)",
            record=f"line {number}",
        )
    raise DatasetError(path, "is empty")


def load_jsonl(path: str | Path) -> Records:
    """Read a LateralGym JSONL file; the record kind comes from the first record's keys."""
    path = existing_file(path)
    return read_jsonl(path, _jsonl_model(path))  # type: ignore[return-value]


LOADERS: dict[str, Callable[[Path], Sequence[object]]] = {
    "brainteaser": load_brainteaser,
    "splat": load_splat,
    "lateval": load_lateval,
    "creativitybench": load_creativitybench,
    "jsonl": load_jsonl,
}


def load_items(path: str | Path, format: str | None = None) -> Records:
    """Load a dataset file in any supported format.

    Args:
        path: The file: an official release file or a LateralGym JSONL file.
        format: One of ``FORMATS``; detected from the file when None.

    Returns:
        The file's records, all of one kind, in file order.
    """
    if format is not None and format not in LOADERS:
        raise DatasetError(path, f"unknown format {format!r}; choose one of {list(FORMATS)}")
    chosen = format or detect_format(path)
    return LOADERS[chosen](Path(path))  # type: ignore[return-value]
