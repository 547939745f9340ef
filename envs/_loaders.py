"""Load any supported dataset file: every registered benchmark's official formats, and our own JSONL.

``load_items(path)`` detects the format and dispatches to the benchmark that reads it. The formats
are the benchmarks' own (``Benchmark.formats``); the built-in ones are:

===================  ==================================================================
format               files
===================  ==================================================================
``brainteaser``      BrainTeaser ``.npy`` (EMNLP, SemEval; test splits with ``*_answer.npy``)
``splat``            SPLAT ``puzzles.xlsx``
``lateval``          LatEval ``english.json`` / ``chinese.json``
``creativitybench``  CreativityBench task JSON (a list of tasks)
``riddlesense``      RiddleSense ``rs_train.jsonl`` / ``rs_dev.jsonl``
``jsonl``            ours: one item a line (any benchmark's item type), or ``Entity`` lines (a KB);
                     CreativityBench tasks list entity ids, each entity defined once by an
                     ``{"entity": {...}}`` line before them (``lateralgym.envs.write_jsonl``)
===================  ==================================================================

Every failure is a ``DatasetError`` naming the file, the record and the field.
"""

from __future__ import annotations

import codecs
import gzip
import json
import zipfile
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from lateralgym.envs._benchmark import DatasetFormat, all_benchmarks
from lateralgym.envs._errors import DatasetError
from lateralgym.envs._jsonl import shared_lists
from lateralgym.envs._loaders_official import (
    DATA_SUFFIXES,
    existing_file,
    load_brainteaser,
    load_lateval,
    load_splat,
    read_json,
)
from lateralgym.envs._samples import MAX_NESTING, deeper_than, json_lines, parse_json, read_jsonl, stream_lines
from lateralgym.envs._schema import Entity
from lateralgym.envs.benchmarks.creativity._loaders import (
    GOLD_MARKER,
    SIMILARITY_TIERS,
    load_creativitybench,
    parse_parts,
    split_top_level,
)

__all__ = [
    "GOLD_MARKER",
    "SIMILARITY_TIERS",
    "detect_format",
    "formats",
    "jsonl_models",
    "load_brainteaser",
    "load_creativitybench",
    "load_items",
    "load_jsonl",
    "load_lateval",
    "load_splat",
    "parse_parts",
    "split_top_level",
]

_DATA_RECORDS: tuple[tuple[frozenset[str], type[BaseModel]], ...] = ((frozenset({"parts"}), Entity),)
"""JSONL records that are data but no benchmark's items: knowledge-base entities."""


def jsonl_models() -> list[tuple[frozenset[str], type[BaseModel]]]:
    """(identifying keys, model) of every record kind our JSONL holds, most specific first."""
    kinds = [(b.jsonl_keys, b.item_type) for b in all_benchmarks() if b.jsonl_keys]
    return sorted([*kinds, *_DATA_RECORDS], key=lambda kind: len(kind[0]), reverse=True)


def _jsonl_model_of(record: object) -> type[BaseModel] | None:
    """The model of a JSONL record: by its keys, or, for a one-key definition line of the compact form
    (``{"entity": {...}}``), the model whose records list such items."""
    if not isinstance(record, dict):
        return None
    models = jsonl_models()
    if len(record) == 1:
        key = next(iter(record))
        defining = (model for _, model in models for shared in shared_lists(model) if shared.record == key)
        found = next(defining, None)
        if found is not None:
            return found
    return next((model for keys, model in models if keys <= record.keys()), None)


def formats() -> dict[str, DatasetFormat]:
    """Every readable format by name: the registered benchmarks' plus our ``jsonl``."""
    found = {f.name: f for b in all_benchmarks() for f in b.formats}
    found["jsonl"] = DatasetFormat(
        "jsonl",
        "LateralGym JSONL: one item (or KB entity) a line",
        lambda path, record: _jsonl_model_of(record) is not None,
        load_jsonl,
    )
    return found


def _first_record(path: Path) -> Any:
    """The first JSON value of a text file: its first JSONL line, or a JSON list's first element."""
    first = next((line for line in stream_lines(path) if line.strip()), None)
    if first is None:
        raise DatasetError(path, "is empty")
    try:
        data = parse_json(first, path, record="line 1")  # a JSONL record, or a JSON file on one line
    except json.JSONDecodeError:
        found, element = _leading_element(path)
        if found:
            return element
        data = read_json(path)  # not a list, or not valid JSON: the whole file, for its value or its error
    return data[0] if isinstance(data, list) and data else data


_LEADING_LIMIT = 1 << 24
"""How much of a JSON file format detection reads looking for its list's first element (16 MiB)."""


def _leading_element(path: Path) -> tuple[bool, Any]:
    """``(True, first element)`` of a file holding a JSON list, read from the file's start only (so
    detection does not read a large file the loader reads again); ``(False, None)`` when the start does
    not tell (another value, an empty list, bad JSON: the caller reads the whole file for its error)."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    text, size = "", 1 << 16
    try:
        with gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb") as handle:
            while len(text) <= _LEADING_LIMIT:
                chunk = handle.read(size)
                text += decoder.decode(chunk, final=not chunk)
                opening = len(text) - len(text.lstrip("\ufeff \t\r\n"))
                if text[opening : opening + 1] != "[":
                    return False, None
                start = opening + 1 + len(text[opening + 1 :]) - len(text[opening + 1 :].lstrip())
                try:
                    element = json.JSONDecoder().raw_decode(text, start)[0]
                except json.JSONDecodeError:
                    if not chunk:
                        return False, None
                    size *= 2
                    continue
                return (False, None) if deeper_than(element, MAX_NESTING) else (True, element)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError, RecursionError, ValueError):
        pass  # the whole-file read says what is wrong
    return False, None


def _archive_error(path: Path) -> DatasetError:
    """The error for an archive given as a dataset: unpack it, and here are the data files inside."""
    try:
        with zipfile.ZipFile(path) as archive:
            inside = [n for n in archive.namelist() if Path(n).suffix.lower() in DATA_SUFFIXES]
    except (zipfile.BadZipFile, OSError):
        inside = []
    listed = f"; data files inside: {', '.join(inside[:8])}{', ...' if len(inside) > 8 else ''}" if inside else ""
    return DatasetError(
        path, f"is a .zip archive, not a dataset file: unpack it and pass one of the files inside{listed}"
    )


def detect_format(path: str | Path) -> str:
    """The name of a dataset file's format (see ``formats()``): binary formats by their suffix, or by
    their signature when the suffix names no other data file (so a ``.jsonl`` is never unpickled);
    text formats by their first record."""
    path = existing_file(path)
    if path.suffix.lower() == ".zip":
        raise _archive_error(path)
    known = formats()
    for fmt in known.values():
        if fmt.binary and fmt.sniff(path, None):
            return fmt.name
    if zipfile.is_zipfile(path):  # a zip no binary format claims (an .xlsx is a zip too): an archive
        raise _archive_error(path)
    record = _first_record(path)
    # Our JSONL first: its records are the item models themselves, official ones are not.
    ordered = [known["jsonl"], *(f for f in known.values() if not f.binary and f.name != "jsonl")]
    for fmt in ordered:
        if fmt.sniff(path, record):
            return fmt.name
    raise DatasetError(
        path,
        f"cannot tell the dataset format from its first record; pass format= one of {sorted(known)}",
        record="line 1",
    )


def _jsonl_model(path: Path) -> type[BaseModel]:
    for number, record in json_lines(path, stream_lines(path)):
        model = _jsonl_model_of(record)
        if model is not None:
            return model
        kinds = ", ".join(f"{'/'.join(sorted(keys))} ({model.__name__})" for keys, model in jsonl_models())
        raise DatasetError(
            path, f"cannot tell the record kind: expected the keys of one of {kinds}", record=f"line {number}"
        )
    raise DatasetError(path, "is empty")


def load_jsonl(path: str | Path) -> list[Any]:
    """Read a LateralGym JSONL file; the record kind comes from the first record's keys."""
    path = existing_file(path)
    return read_jsonl(path, _jsonl_model(path))


def load_items(path: str | Path, format: str | None = None) -> Sequence[Any]:
    """Load a dataset file in any supported format.

    Args:
        path: The file: an official release file or a LateralGym JSONL file.
        format: One of ``formats()``'s names; detected from the file when None.

    Returns:
        The file's records, all of one kind, in file order; a file without any is a ``DatasetError``.
    """
    known = formats()
    if format is not None and format not in known:
        raise DatasetError(path, f"unknown format {format!r}; choose one of {sorted(known)}")
    chosen = format or detect_format(path)
    items = known[chosen].load(existing_file(path))
    if not items:
        raise DatasetError(path, f"holds no records ({known[chosen].description}); is it the right file?")
    return items
