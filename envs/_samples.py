"""Our own JSONL format and the sample datasets shipped with the package.

Each line of a LateralGym JSONL file is one record of a benchmark's item model (or of other data a
benchmark reads, ``Benchmark.data.records``); a compact file adds one definition line per item that
records share, which records list by id (``_jsonl``). The package ships each benchmark's sample
file, written for this project, so every mode runs offline.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import gzip
import itertools
import json
import re
import reprlib
import zlib
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from lateralgym.envs._errors import DatasetError, DatasetTooLarge, validation_message

if TYPE_CHECKING:
    from lateralgym.envs._jsonl import SharedItems

M = TypeVar("M", bound=BaseModel)


def sample_file_path(filename: str) -> Path:
    """Path of a file shipped in ``lateralgym/envs/data``."""
    return Path(str(resources.files("lateralgym.envs").joinpath("data", filename)))


def sample_files() -> dict[str, str]:
    """Every shipped sample file by dataset name (see ``sample_path``)."""
    from lateralgym.envs._benchmark import all_benchmarks

    files: dict[str, str] = {}
    for benchmark in all_benchmarks():
        files.update(benchmark.data.sample_data)
        if benchmark.data.sample_file:
            files[benchmark.name] = benchmark.data.sample_file
    return files


def sample_path(name: str) -> Path:
    """Path of a shipped sample file, by dataset name: a benchmark's name (its items) or a name in a
    benchmark's ``sample_data`` (other data it ships, such as a knowledge base)."""
    files = sample_files()
    if name not in files:
        raise DatasetError(name, f"no sample dataset named {name!r}; choose one of {sorted(files)}")
    return sample_file_path(files[name])


MAX_NESTING = 64
"""How deep lists and objects may nest in a dataset record; every format needs fewer than ten levels."""

_BRIEF = reprlib.Repr()
_BRIEF.maxstring = 60
_BRIEF.maxother = 60


def brief(value: object) -> str:
    """A short, one-line, safe rendering of any value for an error message (deep or huge values included)."""
    try:
        shown = _BRIEF.repr(value)
    except Exception:  # repr itself can refuse a hostile value (an int past 4300 digits, a broken object)
        return f"<unprintable {type(value).__name__}>"
    return re.sub(r"\s+", " ", shown)


def plain(name: object) -> str:
    """A record name (an id) as written when it is short printable text, else ``brief``'s rendering."""
    return name if isinstance(name, str) and name.isprintable() and 0 < len(name) <= 200 else brief(name)


MAX_GZIP_TEXT = 1 << 30
"""The most bytes a ``.gz`` dataset read line by line may expand to (1 GiB): a larger one is refused
while it is read, never held in memory."""
MAX_WHOLE_TEXT = 64 << 20
"""The most bytes of a dataset file read whole (a JSON file, not JSONL; ``.gz``: expanded) (64 MiB):
larger data goes in JSONL, which is read a line at a time."""
MAX_LINE_BYTES = 32 << 20
"""The longest line of a text dataset (32 MiB; a record is a few KB): a longer one is refused while
it is read, so a file with no line breaks (a ``.gz`` of spaces) never fills memory."""
MAX_BLANK_RUN = 1_000_000
"""The most blank lines in a row a dataset may hold (a ``.gz`` of line breaks is no dataset)."""
_CHUNK = 1 << 20
_BOM = b"\xef\xbb\xbf"


def _too_large(path: Path, what: str, limit: int, advice: str) -> DatasetTooLarge:
    return DatasetTooLarge(path, f"{what} past {limit >> 20} MiB, so it is refused; {advice}")


_WHOLE_ADVICE = "is it the right file? (larger data goes in JSONL, read a line at a time)"


def _read_gzip(path: Path, limit: int = MAX_WHOLE_TEXT) -> bytes:
    """The expanded bytes of a gzip file, read in chunks and refused once past ``limit`` (never held whole)."""
    chunks: list[bytes] = []
    size = 0
    try:
        with gzip.open(path, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                size += len(chunk)
                if size > limit:
                    raise _too_large(path, "expands", limit, _WHOLE_ADVICE)
                chunks.append(chunk)
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise DatasetError(path, f"is not a readable gzip file ({exc or 'truncated'}); is it the right file?") from None
    return b"".join(chunks)


def _not_utf8(path: Path, data: bytes, start: int, offset: int = 0) -> DatasetError:
    return DatasetError(
        path,
        f"is not UTF-8 text (byte 0x{data[start : start + 1].hex()} at offset {offset + start}), so neither JSON "
        "nor JSONL; binary releases are read only as .npy or .xlsx; is it the right file?",
    )


def read_text(path: Path) -> str:
    """A whole UTF-8 text file (``.gz``: expanded first; a byte-order mark, as Windows tools write,
    is dropped), up to ``MAX_WHOLE_TEXT`` bytes; an unreadable, binary or larger file is a ``DatasetError``."""
    try:
        if path.suffix == ".gz":
            data = _read_gzip(path)
        else:
            if path.stat().st_size > MAX_WHOLE_TEXT:
                raise _too_large(path, "is", MAX_WHOLE_TEXT, _WHOLE_ADVICE)
            data = path.read_bytes()
    except OSError as exc:
        raise DatasetError(path, f"cannot read the file ({exc.strerror or exc}); check the path") from exc
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, data, exc.start + (3 if data.startswith(_BOM) else 0)) from exc


def read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file (see ``stream_lines``); an unreadable or binary file is a ``DatasetError``."""
    return list(stream_lines(path))


def stream_lines(path: Path) -> Iterator[str]:
    """The lines of a UTF-8 text file (``.gz``: expanded as it is read, up to ``MAX_GZIP_TEXT`` bytes),
    one at a time, so a large JSONL file is never held whole; lines end at ``\\n`` only (JSON text may
    hold a raw U+2028), a byte-order mark before the first is dropped. Each line is read with its
    length capped (``MAX_LINE_BYTES``), so memory stays bounded whatever the file holds. Errors as
    ``read_text``'s."""
    blank = 0
    for start, raw in raw_lines(path):
        line = decode_line(path, raw, start)
        blank = blank_run(path, line, blank)
        yield line


def raw_lines(path: Path) -> Iterator[tuple[int, bytes]]:
    """``stream_lines`` before decoding: each line's bytes (its line break kept; a leading byte-order
    mark dropped) and the offset where they start, with the same caps on a line's and a ``.gz``'s size.
    ``decode_line`` turns one into ``stream_lines``' text, ``blank_run`` counts the blank ones."""
    offset = 0
    gzipped = path.suffix == ".gz"
    try:
        with gzip.open(path, "rb") if gzipped else path.open("rb") as handle:
            while raw := handle.readline(MAX_LINE_BYTES + 1):
                if len(raw) > MAX_LINE_BYTES:
                    raise _too_large(
                        path,
                        f"has a line (from byte {offset}) running",
                        MAX_LINE_BYTES,
                        "a record is a few KB: is it the right file?",
                    )
                if offset == 0 and raw.startswith(_BOM):
                    raw, offset = raw[3:], 3
                start = offset
                offset += len(raw)
                if gzipped and offset > MAX_GZIP_TEXT:
                    decode_line(path, raw, start)  # a line that is no UTF-8 says so first
                    raise _too_large(path, "expands", MAX_GZIP_TEXT, "split the dataset into smaller files")
                yield start, raw
    except (gzip.BadGzipFile, EOFError, zlib.error) as exc:
        raise DatasetError(path, f"is not a readable gzip file ({exc or 'truncated'}); is it the right file?") from None
    except OSError as exc:
        raise DatasetError(path, f"cannot read the file ({exc.strerror or exc}); check the path") from exc


def decode_line(path: Path, raw: bytes, start: int) -> str:
    """One line of ``raw_lines`` as text, without its line break; bytes that are no UTF-8 are a
    ``DatasetError`` giving their offset in the file."""
    try:
        return raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise _not_utf8(path, raw, exc.start, start) from exc


def blank_run(path: Path, line: str, blank: int) -> int:
    """How many blank lines in a row end at ``line``, given how many came before it; past
    ``MAX_BLANK_RUN`` the file is refused."""
    blank = blank + 1 if not line.strip() else 0
    if blank > MAX_BLANK_RUN:
        raise DatasetTooLarge(path, f"holds more than {MAX_BLANK_RUN} blank lines in a row; is it the right file?")
    return blank


def deeper_than(value: object, limit: int) -> bool:
    """Whether lists and objects nest more than ``limit`` levels in ``value`` (iteratively: no recursion)."""
    stack: list[tuple[dict[Any, Any] | list[Any], int]] = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


_BRACKET_STEP = {ord("{"): 1, ord("["): 1, ord("}"): -1, ord("]"): -1}
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"{}[]')


def text_depth(source: str | bytes) -> int:
    """How deep lists and objects nest in valid JSON text (or its UTF-8 bytes), or more (an upper bound),
    from its brackets outside strings: C-speed bytes operations, where walking the parsed value visits
    every node in Python."""
    if isinstance(source, str):
        if source.count("{") + source.count("[") <= MAX_NESTING:
            return MAX_NESTING
        data = source.encode("utf-8", "surrogatepass")
    elif source.count(b"{") + source.count(b"[") <= MAX_NESTING:
        return MAX_NESTING
    else:
        data = source
    if b"\\" in data:  # escaped backslashes, then escaped quotes: every '"' left opens or closes a string
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    # Quotes and brackets only; an empty string (or an empty gap between two) goes, merging its neighbours.
    structure = data.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    if b'"' in structure:  # brackets inside strings: keep what lies outside
        structure = b"".join(structure.split(b'"')[::2])
    if len(structure) <= 2 * MAX_NESTING:  # balanced: half are openings
        return len(structure) // 2
    return max(itertools.accumulate(map(_BRACKET_STEP.__getitem__, structure)), default=0)


def parse_json(source: str, path: Path, record: object = None) -> Any:
    """``json.loads`` that turns what would crash later code into a ``DatasetError``.

    Nesting deeper than Python can parse, or than ``MAX_NESTING`` (so nothing after the parse can hit
    the recursion limit), and numbers Python refuses (over 4300 digits) are refused here.
    ``json.JSONDecodeError`` propagates: the caller knows how to name the line.

    Args:
        source: The JSON text.
        path: The file, for the error.
        record: Where ``source`` sits (``line 3``); None for a whole file, whose errors then name the
            top-level list index.
    """
    try:
        value = json.loads(source)
    except json.JSONDecodeError:
        raise
    except RecursionError:
        raise DatasetError(
            path, f"nests lists and objects too deep to parse; records nest at most {MAX_NESTING} levels", record=record
        ) from None
    except ValueError as exc:  # e.g. an integer literal past Python's digit limit
        raise DatasetError(path, f"not valid JSON ({' '.join(str(exc).split())})", record=record) from exc
    if text_depth(source) <= MAX_NESTING:  # no record can nest deeper than the text: skip the walk
        return value
    whole_list = record is None and isinstance(value, list)
    parts: Iterable[tuple[object, object]] = (
        ((f"index {i}", item) for i, item in enumerate(value)) if whole_list else [(record, value)]
    )
    for where, item in parts:
        if deeper_than(item, MAX_NESTING):
            raise DatasetError(path, f"nests lists and objects more than {MAX_NESTING} levels deep", record=where)
    return value


def json_lines(path: Path, lines: Iterable[str]) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank JSONL line, lazily; a bad line is a ``DatasetError`` naming it."""
    for number, line in enumerate(lines, start=1):
        if line.strip():
            yield number, json_line(path, line, number)


def json_line(path: Path, line: str, number: int) -> Any:
    """The value of the non-blank JSONL line ``number``; bad JSON is a ``DatasetError`` naming it."""
    try:
        return parse_json(line, path, record=f"line {number}")
    except json.JSONDecodeError as exc:
        raise DatasetError(path, f"not valid JSON ({exc.msg} at column {exc.colno})", record=f"line {number}") from exc


def read_jsonl(path: str | Path, model: type[M]) -> list[M]:
    """Read a JSONL file of ``model`` records; errors name the file, line and field. Ids must be unique.

    A model with ``shared_lists`` reads both forms: the compact one, whose items are
    defined once by ``{"entity": {...}}`` lines and listed by id, and the embedded one (see ``_jsonl``).
    """
    path = Path(path)
    with _collector_paused():
        return _read_jsonl(path, model, _shared_items(path, model))


def _shared_items(path: Path, model: type[BaseModel]) -> SharedItems | None:
    """What the records of a file share (``_jsonl``); None when ``model`` has no list whose items are written
    once or repeat (most models: their lines are read as they are, and ``_jsonl`` is not loaded)."""
    if not (getattr(model, "shared_lists", ()) or getattr(model, "repeated_lists", ())):
        return None
    from lateralgym.envs._jsonl import SharedItems, repeated_lists, shared_lists  # it uses this module's plain()

    return SharedItems(path, shared_lists(model), repeated_lists(model))


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a file is read (it runs again afterwards): the records make
    no cycles, and each collection would walk every record read so far (a third of a 14K-task load)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def iter_jsonl(path: str | Path, model: type[M]) -> Iterator[M]:
    """``read_jsonl`` one record at a time, keeping none: for a pass over a file larger than memory
    should hold (``lateralgym data stats``). The same checks, the same errors, raised when reached."""
    from lateralgym.envs._jsonl import SharedItems, repeated_lists, shared_lists  # it uses this module's plain()
    from lateralgym.envs._streamed import stream_records  # it uses this module's line readers

    path = Path(path)
    yield from stream_records(path, model, SharedItems(path, shared_lists(model), repeated_lists(model)))


def _read_jsonl(path: Path, model: type[M], shared: SharedItems | None) -> list[M]:
    return list(_records(path, model, shared))


def _records(path: Path, model: type[M], shared: SharedItems | None) -> Iterator[M]:
    seen: dict[str, int] = {}
    for number, data in json_lines(path, stream_lines(path)):
        record = json_record(path, model, shared, seen, number, data)
        if record is not None:
            yield record


def json_record(
    path: Path, model: type[M], shared: SharedItems | None, seen: dict[str, int], number: int, data: Any
) -> M | None:
    """The record a parsed JSONL line holds, validated; None for a line defining a shared item.

    Args:
        path: The file, for errors.
        model: The records' model.
        shared: The file's shared items so far (``_jsonl``; None: its model shares none).
        seen: The line of each record id so far; ``record``'s is added.
        number: The line's number.
        data: The line's JSON value; its shared lists are resolved in place.
    """
    if shared is not None and shared.define(data, number):
        return None
    raw = shared.resolve(data, number) if shared is not None else None
    try:
        record = model.model_validate(data)
    except ValidationError as exc:
        field, message = validation_message(exc)
        raise DatasetError(path, message, record=f"line {number}", field=field) from exc
    unique_id(path, record, seen, number)
    if shared is not None and raw:
        shared.remember(raw, record)
    return record


def unique_id(path: Path, record: BaseModel, seen: dict[str, int], number: int) -> None:
    """Note the id of the record on line ``number``; one seen before is a ``DatasetError``."""
    record_id = getattr(record, "id", None)
    if isinstance(record_id, str):
        if record_id in seen:
            raise DatasetError(
                path,
                f"duplicate id {plain(record_id)} (also on line {seen[record_id]})",
                record=f"line {number}",
                field="id",
            )
        seen[record_id] = number


@functools.lru_cache(maxsize=16)
def _read_sample(filename: str, model: type[BaseModel], stamp: tuple[int, int]) -> tuple[BaseModel, ...]:
    return tuple(read_jsonl(sample_file_path(filename), model))


def read_sample(filename: str, model: type[M]) -> list[M]:
    """The records of a shipped sample file, read once per process (they are frozen, so sharing is safe).

    The cache is keyed by the file's size and modification time, so a rebuilt file is read afresh.
    """
    stat = sample_file_path(filename).stat()
    return list(_read_sample(filename, model, (stat.st_size, stat.st_mtime_ns)))  # type: ignore[arg-type]


def load_sample_items(name: str) -> list[Any]:
    """The shipped items of one benchmark (by its registered name)."""
    from lateralgym.envs._benchmark import get_benchmark
    from lateralgym.envs._errors import ConfigError

    try:
        return get_benchmark(name).data.sample_items()
    except ConfigError as exc:
        raise DatasetError(name, f"no sample items named {name!r}: {exc}") from None
