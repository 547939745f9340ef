"""Items written once in our JSONL: the compact form of records whose list items repeat, its reader and writer.

A model names the list fields whose items repeat across a file (``shared_lists``: a task's scene
``entities``, say). Our writer puts each distinct item on its own line, once, before the records, as a
one-key record (``{"entity": {...}}``), and each record lists the items' ids::

    {"entity": {"id": "kitchen/whisk/1", "name": "whisk", "scene": "kitchen", "parts": [...]}}
    {"entity": {"id": "garage/funnel/1", ...}}
    {"id": "kitchen-whisk-1-wires-0-similar-3", ..., "entities": ["garage/funnel/1", "kitchen/whisk/1"], ...}

The file stays self-contained and streamable: a reader validates each definition once and puts the
same frozen object in every record that lists its id. The older embedded form (each record carries
whole items) still reads; a whole item equal to one validated before (same JSON values) is that
object too, as are the items of ``repeated_lists`` (list fields whose items recur across records
without being written once). A record may mix ids and whole items.
"""

from __future__ import annotations

import gzip
import json
import marshal
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from pydantic import BaseModel, ValidationError

from lateralgym.envs._errors import DatasetError, validation_message
from lateralgym.envs._samples import plain

__all__ = ["SharedItems", "SharedList", "jsonl_lines", "repeated_lists", "shared_lists", "write_jsonl"]


class SharedList(NamedTuple):
    """A list field whose items repeat across a file's records and are written once (see ``read_jsonl``)."""

    field: str
    """The record's field holding the items (``"entities"``, say)."""
    record: str
    """The one key of the JSONL record that defines an item (``{"entity": {...}}``)."""
    model: type[BaseModel]
    """The items' model ; each has a unique ``id``."""


def shared_lists(model: type[BaseModel]) -> tuple[SharedList, ...]:
    """The ``SharedList``s of a record model (none for most)."""
    return tuple(getattr(model, "shared_lists", ()))


def repeated_lists(model: type[BaseModel]) -> tuple[str, ...]:
    """The list fields of a record model whose items often repeat unchanged (none for most)."""
    return tuple(getattr(model, "repeated_lists", ()))


class _Copies:
    """Validated items by their raw JSON: an item equal to one validated before, value for value and
    type for type, is that object (far cheaper than validating it again).

    The key is the item's ``marshal`` serialisation: C-speed, exact, and unlike ``==`` it tells ``true``
    from ``1`` and ``1.0``, so nothing a strict field would refuse is let through as an earlier copy.
    """

    LIMIT = 64 << 20
    """The most key bytes kept (64 MiB); past it, further items are validated, as they would be anyway."""
    TRIAL = 4096
    """Items looked up before the copies are judged worth keeping: when fewer than one in ``TRIAL_HITS``
    was a copy, the items of this list are distinct (real data's verdicts are), so keeping every one
    by its key would only cost memory (keys and items alive until the file is read) and time."""
    TRIAL_HITS = 8

    def __init__(self) -> None:
        self.known: dict[bytes, BaseModel] = {}
        self.size = 0
        self.looked = self.hits = 0
        self.off = False

    def find(self, entry: Any) -> tuple[bytes, BaseModel | None]:
        """``entry``'s key (empty for no JSON object, or once copies proved rare) and the object an equal
        item was validated to, or None."""
        if self.off or type(entry) is not dict:
            return b"", None
        key = marshal.dumps(entry, 2)  # version 2: no back-references, so equal values give equal bytes
        found = self.known.get(key)
        self.looked += 1
        self.hits += found is not None
        if self.looked == self.TRIAL and self.hits * self.TRIAL_HITS < self.looked:
            self.off = True
            self.known.clear()
        return key, found

    def add(self, key: bytes, value: BaseModel) -> None:
        """Keep ``value``, validated from the item whose key is ``key``."""
        if key and not self.off and self.size < self.LIMIT and self.known.setdefault(key, value) is value:
            self.size += len(key)


class SharedItems:
    """While reading one file: the items its definition lines define, and the items already validated.

    Args:
        path: The file, for errors.
        lists: The record model's shared lists.
        repeated: The record model's list fields whose items often repeat unchanged.
    """

    def __init__(self, path: Path, lists: tuple[SharedList, ...], repeated: tuple[str, ...] = ()) -> None:
        self.path = path
        self.lists = {shared.field: shared for shared in lists}
        self.by_record = {shared.record: shared for shared in lists}
        self.defined: dict[str, dict[str, tuple[int, Any, BaseModel]]] = {s.field: {} for s in lists}
        """field -> id -> (line, raw JSON, validated item) of each definition line."""
        self.copies = {field: _Copies() for field in [*self.lists, *repeated]}
        """field -> the items of that list validated so far (whole items, not ids)."""

    def define(self, data: Any, number: int) -> bool:
        """Validate and keep a definition line (``{"entity": {...}}``); False when ``data`` is a record.

        Raises:
            DatasetError: the item is invalid, or its id was defined before with other content.
        """
        if not (isinstance(data, dict) and len(data) == 1):
            return False
        key = next(iter(data))
        shared = self.by_record.get(key)
        if shared is None:
            return False
        raw = data[key]
        try:
            item = shared.model.model_validate(raw)
        except ValidationError as exc:
            field, message = validation_message(exc)
            raise DatasetError(self.path, message, record=f"line {number}", field=f"{key}.{field}") from exc
        item_id = str(getattr(item, "id"))  # noqa: B009 - every shared model has an id
        known = self.defined[shared.field].get(item_id)
        if known is None:
            self.defined[shared.field][item_id] = (number, raw, item)
        elif known[1] != raw:
            raise DatasetError(
                self.path,
                f"{key} id {plain(item_id)} is defined twice with different content (also on line {known[0]}); "
                "give one of them another id",
                record=f"line {number}",
                field=f"{key}.id",
            )
        return True

    def resolve(self, data: Any, number: int) -> dict[str, tuple[list[bytes], list[Any]]]:
        """Put validated items in ``data``'s lists in place of ids and of items validated before.

        Returns:
            Per field of whole entries, their keys and what ``data`` now holds, for ``remember``.

        Raises:
            DatasetError: an id no earlier line defines.
        """
        lists: dict[str, tuple[list[bytes], list[Any]]] = {}
        if not isinstance(data, dict):
            return lists
        for field, copies in self.copies.items():
            entries = data.get(field)
            if not (isinstance(entries, list) and entries):
                continue
            shared = self.lists.get(field)
            defined = self._ids(shared, entries) if shared is not None else []
            if defined:
                data[field] = defined
                continue
            keys: list[bytes] = []
            resolved: list[Any] = []
            for entry in entries:
                found: BaseModel | None
                if shared is not None and isinstance(entry, str):
                    key, found = b"", self._defined(shared, entry, data, number)
                else:
                    key, found = copies.find(entry)
                keys.append(key)
                resolved.append(entry if found is None else found)
            data[field] = resolved
            lists[field] = (keys, resolved)
        return lists

    def _ids(self, shared: SharedList, entries: list[Any]) -> list[BaseModel]:
        """The defined items of a list of ids (the compact form); empty when an entry is no defined id."""
        defined = self.defined[shared.field]
        try:
            return [defined[entry][2] for entry in entries]
        except (KeyError, TypeError):  # an id no line defines, or a whole item: entry by entry
            return []

    def _defined(self, shared: SharedList, entry: str, data: dict[str, Any], number: int) -> BaseModel:
        hit = self.defined[shared.field].get(entry)
        if hit is None:
            raise DatasetError(
                self.path,
                f"record {plain(data.get('id'))} lists {shared.record} id {plain(entry)}, which no earlier "
                f'{{"{shared.record}": ...}} line defines; add that line before the record',
                record=f"line {number}",
                field=f"{shared.field}[{data[shared.field].index(entry)}]",
            )
        return hit[2]

    def remember(self, lists: dict[str, tuple[list[bytes], list[Any]]], record: BaseModel) -> None:
        """Keep the items ``record`` validated from whole entries (not ids, not reused ones)."""
        for field, (keys, resolved) in lists.items():
            copies = self.copies[field]
            for key, given, value in zip(keys, resolved, getattr(record, field), strict=False):
                if key and given is not value:
                    copies.add(key, value)


def _dumps(value: Any) -> str:
    """JSON as pydantic writes it: compact, UTF-8 text unescaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def jsonl_lines(records: Sequence[BaseModel], where: object = "records") -> Iterator[str]:
    """The lines (each ending in a newline) of our JSONL for ``records``, all of one model.

    A model with ``shared_lists`` gets the compact form: every distinct shared item once, sorted by
    id, as a ``{"<record>": {...}}`` line, then the records listing ids. Others: one record a line.

    Args:
        records: The records to write.
        where: Names the records in an error (a path).

    Raises:
        DatasetError: two different items share an id (records cannot list them apart).
    """
    lists = shared_lists(type(records[0])) if records else ()
    if not lists:
        yield from (r.model_dump_json() + "\n" for r in records)
        return
    for shared in lists:
        items: dict[str, tuple[BaseModel, str]] = {}
        for record in records:
            for item in getattr(record, shared.field):
                item_id = str(item.id)
                known = items.setdefault(item_id, (item, str(getattr(record, "id", "?"))))
                if known[0] is not item and known[0] != item:
                    raise DatasetError(
                        where,
                        f"two different {shared.record} records share the id {plain(item_id)} (in "
                        f"{plain(known[1])} and {plain(getattr(record, 'id', '?'))}); give one of them another id",
                    )
        for item_id in sorted(items):
            yield f'{{"{shared.record}":{items[item_id][0].model_dump_json()}}}\n'
    fields = {shared.field for shared in lists}
    for record in records:
        dumped = record.model_dump(mode="json", exclude=fields)
        out = {
            name: [item.id for item in getattr(record, name)] if name in fields else dumped[name]
            for name in type(record).model_fields
            if name in fields or name in dumped
        }
        yield _dumps(out) + "\n"


def write_jsonl(records: Sequence[BaseModel], path: str | Path) -> Path:
    """Write ``records`` as our JSONL (see ``jsonl_lines``) atomically; ``.gz``: gzip-compressed with no
    timestamp, so equal records give equal bytes. Returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    data = "".join(jsonl_lines(records, where=path)).encode("utf-8")
    partial.write_bytes(gzip.compress(data, compresslevel=9, mtime=0) if path.suffix == ".gz" else data)
    os.replace(partial, path)
    return path
