"""Load any supported dataset file: every registered benchmark's official formats, and our own JSONL.

Format names belong to benchmarks (``Benchmark.data.formats``): ``load_items(path, benchmark=NAME)``
sniffs and resolves ``format=`` among that benchmark's formats only (and our JSONL of its records),
so two benchmarks may each have a format called ``json``. Without a benchmark every registered
format is tried (built-ins first), which is what ``lateralgym data stats FILE`` does. Our ``jsonl``
format holds any benchmark's items, one a line, or its other records (``Benchmark.data.records``);
a compact file defines repeated list items once (``lateralgym.envs.write_jsonl``). ``lateralgym
data stats --help`` lists the formats.

Every failure is a ``DatasetError`` naming the file, the record and the field.
"""

from __future__ import annotations

import codecs
import gzip
import json
import zipfile
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from lateralgym.envs._benchmark import Benchmark, DatasetFormat, all_benchmarks, get_benchmark
from lateralgym.envs._errors import DatasetError, DatasetTooLarge, UnknownDatasetFormat, did_you_mean
from lateralgym.envs._format_match import Shape, model_shape, no_match_message
from lateralgym.envs._jsonl import shared_lists
from lateralgym.envs._samples import (
    MAX_NESTING,
    deeper_than,
    iter_jsonl,
    json_lines,
    parse_json,
    read_jsonl,
    stream_lines,
)
from lateralgym.envs.records import DATA_SUFFIXES, existing_file, read_json

__all__ = ["detect_format", "formats", "iter_items", "jsonl_models", "load_items", "load_jsonl"]


def _units(benchmark: str | None) -> list[Benchmark[Any, Any]]:
    return [get_benchmark(benchmark)] if benchmark is not None else all_benchmarks()


def jsonl_models(benchmark: str | None = None) -> list[tuple[frozenset[str], type[BaseModel]]]:
    """(identifying keys, model) of every record kind our JSONL holds (of one benchmark's, when named),
    most specific first."""
    kinds = [
        kind
        for b in _units(benchmark)
        for kind in ([(b.data.jsonl_keys, b.item_type)] if b.data.jsonl_keys else []) + list(b.data.records)
    ]
    return sorted(kinds, key=lambda kind: len(kind[0]), reverse=True)


def _jsonl_model_of(record: object, benchmark: str | None = None) -> type[BaseModel] | None:
    """The model of a JSONL record: by its keys, or, for a one-key definition line of the compact form
    (``{"entity": {...}}``), the model whose records list such items."""
    if not isinstance(record, dict):
        return None
    models = jsonl_models(benchmark)
    if len(record) == 1:
        key = next(iter(record))
        defining = (model for _, model in models for shared in shared_lists(model) if shared.record == key)
        found = next(defining, None)
        if found is not None:
            return found
    return next((model for keys, model in models if keys <= record.keys()), None)


def formats(benchmark: str | None = None) -> dict[str, DatasetFormat]:
    """Every readable format by name: a benchmark's own (every registered one's when None; a name two
    benchmarks share goes to the first registered) plus our ``jsonl``."""
    found: dict[str, DatasetFormat] = {}
    for unit in _units(benchmark):
        for fmt in unit.data.formats:
            found.setdefault(fmt.name, fmt)
    found["jsonl"] = DatasetFormat(
        "jsonl",
        "LateralGym JSONL: one item (or other record of a benchmark) a line",
        lambda path, record: _jsonl_model_of(record, benchmark) is not None,
        lambda path: load_jsonl(path, benchmark=benchmark),
    )
    return found


def _first_record(path: Path) -> Any:
    """The first JSON value of a text file: its first JSONL line, or a JSON list's first element."""
    return _located_first_record(path)[1]


def _located_first_record(path: Path) -> tuple[str | None, Any]:
    """``(where, value)`` of a text file's first record: ``line N`` (its first non-blank JSONL line),
    ``index 0`` (a JSON list's first element) or None (a JSON file holding one value)."""
    first = next(((n, line) for n, line in enumerate(stream_lines(path), 1) if line.strip()), None)
    if first is None:
        raise DatasetError(path, "is empty")
    number, line = first
    try:
        data = parse_json(line, path, record=f"line {number}")  # a JSONL record, or a JSON file on one line
    except json.JSONDecodeError:
        found, element = _leading_element(path)
        if found:
            return "index 0", element
        data = read_json(path)  # not a list, or not valid JSON: the whole file, for its value or its error
        return ("index 0", data[0]) if isinstance(data, list) and data else (None, data)
    return ("index 0", data[0]) if isinstance(data, list) and data else (f"line {number}", data)


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


def detect_format(path: str | Path, benchmark: str | None = None) -> str:
    """The name of a dataset file's format (see ``formats()``), among one benchmark's formats when
    ``benchmark`` is given: binary formats by their suffix, or by their signature when the suffix
    names no other data file (so a ``.jsonl`` is never unpickled); text formats by their first record.

    Raises:
        UnknownDatasetFormat: no format claims the file; the message names the closest format and
            the keys its first record lacks or has too many.
        DatasetError: the file is another benchmark's (for a named benchmark: the message says
            whose), or unreadable (bad JSON: the line and column).
    """
    path = existing_file(path)
    if path.suffix.lower() == ".zip":
        raise _archive_error(path)
    try:
        return _detect(path, benchmark)
    except DatasetTooLarge:
        raise  # no format's question: the file is refused whatever it holds
    except DatasetError as own:
        if benchmark is None:
            raise
        try:
            other = _detect(path, None)
        except DatasetError:
            # None of any benchmark's either: the benchmark's own reason is the news (bad JSON's line and
            # column, the closest of its formats, a binary file).
            raise own from None
        owner = _owner_of_format(path, other)
        raise DatasetError(
            path,
            f"is a {owner} file ({other} format), not one of {benchmark}'s ({', '.join(sorted(formats(benchmark)))}); "
            "pick a config for this benchmark",
        ) from None


def _owner_of_format(path: Path, name: str) -> str:
    """The benchmark whose format ``name`` is (for our JSONL: whose records the file holds)."""
    for unit in all_benchmarks():
        if name == "jsonl":
            model = _jsonl_model_of(_first_record(path))
            if model is unit.item_type or any(model is m for _, m in unit.data.records):
                return unit.name
        elif any(f.name == name for f in unit.data.formats):
            return unit.name
    return "another benchmark's"


def _detect(path: Path, benchmark: str | None) -> str:
    known = formats(benchmark)
    binary = [f for f in known.values() if f.binary]
    for fmt in [*(f for f in binary if not f.fallback), *(f for f in binary if f.fallback)]:
        if fmt.sniff(path, None):
            return fmt.name
    if zipfile.is_zipfile(path):  # a zip no binary format claims (an .xlsx is a zip too): an archive
        raise _archive_error(path)
    where, record = _located_first_record(path)
    # Our JSONL first: its records are the item models themselves, official ones are not.
    ordered = [known["jsonl"], *(f for f in known.values() if not f.binary and f.name != "jsonl")]
    for fmt in ordered:
        if fmt.sniff(path, record):
            return fmt.name
    whose = f"{benchmark}'s formats" if benchmark is not None else "the dataset formats"
    raise UnknownDatasetFormat(
        path,
        f"{no_match_message(record, _shapes(benchmark), whose)}; "
        f"--format NAME reads it as one of {', '.join(sorted(known))} and names the field at fault",
        record=where,
    )


def _shapes(benchmark: str | None) -> list[Shape]:
    """The record shapes a text dataset may have: our JSONL's record kinds, then each text format
    that states its keys."""
    shapes = [model_shape(f"jsonl ({model.__name__})", model) for _, model in jsonl_models(benchmark)]
    shapes += [
        Shape(f.name, f.keys) for unit in _units(benchmark) for f in unit.data.formats if f.keys and not f.binary
    ]
    return shapes


def _jsonl_model(path: Path, benchmark: str | None = None) -> type[BaseModel]:
    for number, record in json_lines(path, stream_lines(path)):
        model = _jsonl_model_of(record, benchmark)
        if model is not None:
            return model
        kinds = [model_shape(model.__name__, model) for _, model in jsonl_models(benchmark)]
        raise DatasetError(
            path,
            f"cannot tell the record kind: it {no_match_message(record, kinds, 'the record kinds of our JSONL')}",
            record=f"line {number}",
        )
    raise DatasetError(path, "is empty")


def load_jsonl(path: str | Path, benchmark: str | None = None) -> list[Any]:
    """Read a LateralGym JSONL file; the record kind comes from the first record's keys (among one
    benchmark's record kinds when ``benchmark`` is given)."""
    path = existing_file(path)
    return read_jsonl(path, _jsonl_model(path, benchmark))


_TABLE_SUFFIXES = {".csv": "CSV", ".tsv": "TSV"}
"""Comma- and tab-separated files: a format of none of the shipped benchmarks, refused by their kind."""


def _table_error(path: Path, benchmark: str | None, known: dict[str, DatasetFormat]) -> DatasetError:
    """The one-line error for a CSV / TSV file no format of the benchmark reads."""
    kind = _TABLE_SUFFIXES[path.suffix.lower()]
    whose = f"a {get_benchmark(benchmark).title or benchmark}" if benchmark is not None else "a LateralGym"
    uses = "; ".join(f"{f.description} (--format {f.name})" for f in known.values())
    return DatasetError(path, f"{kind} is not {whose} format; use one of: {uses}")


def load_items(path: str | Path, format: str | None = None, benchmark: str | None = None) -> Sequence[Any]:
    """Load a dataset file in any supported format.

    Args:
        path: The file: an official release file or a LateralGym JSONL file.
        format: One of ``formats(benchmark)``'s names; detected from the file when None.
        benchmark: The benchmark whose formats to look among (all registered ones when None).

    Returns:
        The file's records, all of one kind, in file order; a file without any is a ``DatasetError``.
    """
    known = formats(benchmark)
    if format is not None and format not in known:
        whose = f"{benchmark}'s formats" if benchmark is not None else "formats"
        guess = did_you_mean(format, known)
        raise DatasetError(path, f"unknown format {format!r}{guess}; choose one of the {whose}: {sorted(known)}")
    path = existing_file(path)
    try:
        chosen = format or detect_format(path, benchmark)
        items = known[chosen].load(path)
    except DatasetTooLarge:
        raise
    except DatasetError as exc:
        if path.suffix.lower() in _TABLE_SUFFIXES:  # not a JSON error on line 1: the file's kind is the news
            raise _table_error(path, benchmark, known) from exc
        raise
    if not items:
        raise DatasetError(path, f"holds no records ({known[chosen].description}); is it the right file?")
    return items


def iter_items(path: str | Path, format: str | None = None, benchmark: str | None = None) -> Iterator[Any]:
    """``load_items``, one record at a time: our JSONL is read as a stream, keeping no record (a pass
    over a file of any size in the memory of one record); other formats are loaded whole first.

    Raises:
        DatasetError: as ``load_items``, when the bad record is reached.
    """
    known = formats(benchmark)
    chosen = format if format is not None and format in known else None
    found = existing_file(path)
    if chosen is None and format is None:
        try:
            chosen = detect_format(found, benchmark)
        except DatasetTooLarge:
            raise
        except DatasetError as exc:
            if found.suffix.lower() in _TABLE_SUFFIXES:  # as load_items: the file's kind is the news
                raise _table_error(found, benchmark, known) from exc
            raise
    if chosen != "jsonl":
        yield from load_items(path, format=format, benchmark=benchmark)
        return
    empty = True
    try:
        for record in iter_jsonl(found, _jsonl_model(found, benchmark)):
            empty = False
            yield record
    except DatasetTooLarge:
        raise
    except DatasetError as exc:
        if empty and found.suffix.lower() in _TABLE_SUFFIXES:  # as load_items: the file's kind is the news
            raise _table_error(found, benchmark, known) from exc
        raise
    if empty:
        raise DatasetError(path, f"holds no records ({known['jsonl'].description}); is it the right file?")
