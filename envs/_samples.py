"""Our own JSONL format and the sample datasets shipped with the package.

Each line of a LateralGym JSONL file is one record of a schema model: ``Entity`` (an affordance KB),
``CreativityTask``, ``MCQPuzzle`` or ``SituationPuzzle``. The package ships one file of each, written
for this project, so every mode runs offline.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from lateralgym.envs._errors import DatasetError
from lateralgym.envs._schema import AffordanceKB, Entity

SAMPLE_FILES: dict[str, str] = {"kb": "affordance_kb.jsonl"}
"""Shipped data that is no benchmark's items (the benchmarks name theirs as ``sample_file``)."""

M = TypeVar("M", bound=BaseModel)


def sample_file_path(filename: str) -> Path:
    """Path of a file shipped in ``lateralgym/envs/data``."""
    return Path(str(resources.files("lateralgym.envs").joinpath("data", filename)))


def sample_path(name: str) -> Path:
    """Path of a shipped sample file, by dataset name (``kb`` or a benchmark's name)."""
    from lateralgym.envs._benchmark import all_benchmarks

    files = {**SAMPLE_FILES, **{b.name: b.sample_file for b in all_benchmarks() if b.sample_file}}
    if name not in files:
        raise DatasetError(name, f"no sample dataset named {name!r}; choose one of {sorted(files)}")
    return sample_file_path(files[name])


def validation_message(exc: ValidationError) -> tuple[str, str]:
    """(field path, message) of a pydantic error's first problem."""
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or "record"
    return field, first["msg"]


def read_lines(path: Path) -> list[str]:
    """The lines of a UTF-8 text file; an unreadable or binary file is a ``DatasetError``."""
    try:
        return path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise DatasetError(path, f"cannot read the file ({exc.strerror or exc}); check the path") from exc
    except UnicodeDecodeError as exc:
        raise DatasetError(path, "is neither a .npy, an .xlsx nor UTF-8 JSON; is it the right file?") from exc


def json_lines(path: Path, lines: Iterable[str]) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank JSONL line, lazily; a bad line is a ``DatasetError`` naming it."""
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                path, f"not valid JSON ({exc.msg} at column {exc.colno})", record=f"line {number}"
            ) from exc
        yield number, value


def read_jsonl(path: str | Path, model: type[M]) -> list[M]:
    """Read a JSONL file of ``model`` records; errors name the file, line and field."""
    path = Path(path)
    records: list[M] = []
    for number, data in json_lines(path, read_lines(path)):
        try:
            records.append(model.model_validate(data))
        except ValidationError as exc:
            field, message = validation_message(exc)
            raise DatasetError(path, message, record=f"line {number}", field=field) from exc
    return records


def load_sample_kb() -> AffordanceKB:
    """The shipped affordance knowledge base."""
    path = sample_path("kb")
    entities = read_jsonl(path, Entity)
    try:
        return AffordanceKB(entities=tuple(entities))
    except ValidationError as exc:
        raise DatasetError(path, validation_message(exc)[1]) from exc


def load_sample_items(name: str) -> list[Any]:
    """The shipped items of one benchmark (by its registered name)."""
    from lateralgym.envs._benchmark import get_benchmark
    from lateralgym.envs._errors import ConfigError

    try:
        return get_benchmark(name).sample_items()
    except ConfigError as exc:
        raise DatasetError(name, f"no sample items named {name!r}: {exc}") from None
