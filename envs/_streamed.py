"""Our JSONL read one record at a time straight from each line's bytes (``iter_jsonl``).

A pass that keeps no record (``lateralgym data stats``) spends most of its time turning each line
into Python objects (``json.loads``) that pydantic then walks again to build the record. Here
pydantic reads the line's bytes itself (``validate_json``: the same model, the same checks, one
walk), and a record's shared list (``_jsonl``'s compact form: ids of items defined earlier in the
file) takes its ids through the validation context.

Only lines that validate are read this way (and their ids checked for repeats). Every other line
(a definition line, a blank one, bad JSON or UTF-8, a bad field, an id no earlier line defines,
nesting deeper than ``MAX_NESTING``: counted only for a model whose schema does not bound it, see
``shallow``) goes the checked way, ``json.loads`` then the model, as every line of ``read_jsonl``
does: the same record, or the same one-line error naming the file, line and field. What this path
does not do is share equal items between records (``SharedItems``' copies): a stream keeps no record
to share with. ``tests/envs/test_streamed_jsonl.py`` holds the two ways to the same outcomes.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import SchemaValidator, core_schema

from lateralgym.envs._jsonl import SharedItems, SharedList, shared_lists
from lateralgym.envs._samples import (
    MAX_NESTING,
    blank_run,
    decode_line,
    json_line,
    json_record,
    raw_lines,
    text_depth,
    unique_id,
)

M = TypeVar("M", bound=BaseModel)


def stream_records(path: Path, model: type[M], shared: SharedItems) -> Iterator[M]:
    """The records of a JSONL file of ``model``, one at a time, checked as ``read_jsonl`` checks them.

    Args:
        path: The file.
        model: The records' model.
        shared: The file's shared items (empty: this reads the file from its start).

    Raises:
        DatasetError: as ``read_jsonl``, when the bad line is reached.
    """
    validator = json_validator(model)
    unmeasured = not shallow(model)  # else no line the model takes nests too deep: no need to count brackets
    definitions = tuple(f'{{"{s.record}"'.encode() for s in shared_lists(model))
    context = shared.defined if definitions else None
    seen: dict[str, int] = {}
    blank = 0
    for number, (start, raw) in enumerate(raw_lines(path), start=1):
        record: Any = None
        if validator is not None and not raw.startswith(definitions):
            try:
                record = validator.validate_json(raw, context=context)
            except ValidationError:
                pass  # the checked way says what is wrong, as it would have
            if record is not None and unmeasured and text_depth(raw) > MAX_NESTING:
                record = None  # maybe too deep: the checked way measures it
        if record is not None:
            blank = 0
            unique_id(path, record, seen, number)
            yield record
            continue
        line = decode_line(path, raw, start)
        blank = blank_run(path, line, blank)
        if line.strip():
            record = json_record(path, model, shared, seen, number, json_line(path, line, number))
            if record is not None:
                yield record


@functools.lru_cache(maxsize=32)
def json_validator(model: type[BaseModel]) -> SchemaValidator | None:
    """A validator of ``model``'s JSON whose shared lists also take ids: an id the validation context
    (``SharedItems.defined``) holds becomes its item. None when the model's schema is not laid out as
    this expects (then every line goes the checked way)."""
    lists = shared_lists(model)
    if not lists:
        validator = model.__pydantic_validator__
        return validator if isinstance(validator, SchemaValidator) else None
    try:
        schema: dict[str, Any] = dict(model.__pydantic_core_schema__)
    except AttributeError:  # a model pydantic has not finished building
        return None
    node = schema  # each schema on the way to the fields is copied: the model's own stays as it is
    while node.get("type") != "model" or node.get("cls") is not model:  # past the model's own validators
        inner = node.get("schema")
        if not isinstance(inner, dict):
            return None
        node["schema"] = dict(inner)
        node = node["schema"]
    inner = node.get("schema")
    if not isinstance(inner, dict) or inner.get("type") != "model-fields" or not isinstance(inner.get("fields"), dict):
        return None
    node["schema"] = dict(inner)
    fields = node["schema"]["fields"] = dict(inner["fields"])
    for shared in lists:
        if shared.field not in fields:
            return None
        field = fields[shared.field] = dict(fields[shared.field])
        field["schema"] = core_schema.with_info_before_validator_function(_ids_to_items(shared), field["schema"])
    return SchemaValidator(schema)


def _ids_to_items(shared: SharedList) -> core_schema.WithInfoValidatorFunction:
    """What a shared list's validator does first: each id defined so far becomes its item; anything else
    stays for the item's own validation (an unknown id fails it, and its line goes the checked way)."""

    def items(value: Any, info: core_schema.ValidationInfo) -> Any:
        defined = info.context.get(shared.field) if isinstance(info.context, dict) else None
        if not defined or type(value) is not list:
            return value
        return [defined[entry][2] if type(entry) is str and entry in defined else entry for entry in value]

    return items


@functools.lru_cache(maxsize=32)
def shallow(model: type[BaseModel]) -> bool:
    """Whether every JSON value ``model`` accepts nests at most ``MAX_NESTING`` levels: its schema
    bounds the depth (no field takes any JSON, unknown keys are refused, no recursion, no validator
    that sees the raw input first). It holds for ``json_validator(model)`` too: an id is a string."""
    try:
        depth = _json_depth(model.__pydantic_core_schema__, "ignore")
    except AttributeError:  # a model pydantic has not finished building
        return False
    return depth is not None and depth <= MAX_NESTING


_SCALARS = frozenset({"str", "int", "bool", "float", "literal", "none", "enum", "decimal", "date", "datetime", "time"})
"""Schema types that take a JSON scalar only."""
_WRAPPERS = frozenset({"default", "nullable", "function-after", "model-field"})
"""Schema types whose input is their inner schema's."""
_ARRAYS = frozenset({"list", "set", "frozenset"})


def _json_depth(schema: Any, extra: str) -> int | None:
    """How many levels of lists and objects the JSON a core schema accepts nests at most (a scalar: 0);
    None when unbounded or not known. ``extra``: what a model's unknown keys get (pydantic's default)."""
    kind = schema.get("type") if isinstance(schema, dict) else None
    inner: list[Any]
    if kind in _SCALARS:
        return 0
    if kind in _WRAPPERS:
        return _json_depth(schema["schema"], extra)
    if kind == "model":
        return _json_depth(schema["schema"], schema.get("config", {}).get("extra_fields_behavior", "ignore"))
    if kind == "model-fields":
        if schema.get("extra_behavior", extra) != "forbid":
            return None  # unknown keys are taken (and dropped) whatever they hold
        inner = list(schema["fields"].values())
    elif kind == "tuple":
        inner = list(schema["items_schema"])
    elif kind in _ARRAYS and "items_schema" in schema:
        inner = [schema["items_schema"]]
    elif kind == "union":
        return _deepest([c[0] if isinstance(c, tuple) else c for c in schema["choices"]], extra)
    else:
        return None
    depth = _deepest(inner, extra)
    return None if depth is None else depth + 1


def _deepest(schemas: list[Any], extra: str) -> int | None:
    depths = [_json_depth(s, extra) for s in schemas]
    return None if None in depths else max((d for d in depths if d is not None), default=0)
