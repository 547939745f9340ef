"""Inputs of a task build: the knowledge base (``Entity`` JSONL) and hand-written task seeds.

Every record is validated; errors are ``DatasetError``s naming the file, the line and the field.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from lateralgym.envs import DatasetError, read_jsonl, snake, spaced
from lateralgym.envs.benchmarks.creativity import AffordanceKB, Entity
from lateralgym.envs.benchmarks.creativity.databuild._tasks_models import TaskSeed

__all__ = ["jsonl_files", "leaked_name", "read_kb", "read_seeds"]


@dataclass(frozen=True)
class _Located:
    path: Path
    line: int
    record: BaseModel


def jsonl_files(source: Path, pattern: str) -> list[Path]:
    """``source`` itself when a file, else its files matching ``pattern``, sorted; none is an error."""
    if source.is_file():
        return [source]
    found = sorted(source.glob(pattern)) if source.is_dir() else []
    if not found:
        raise DatasetError(source, f"expected a JSONL file or a folder holding {pattern} files")
    return found


def _read_located(paths: Sequence[Path], model: type[BaseModel]) -> list[_Located]:
    located: list[_Located] = []
    for path in paths:
        records = read_jsonl(path, model)  # raises DatasetError naming the file, line and field
        numbers = [n for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1) if line.strip()]
        located += [_Located(path, n, r) for n, r in zip(numbers, records, strict=True)]
    return located


def _fail(item: _Located, message: str, field: str | None = None) -> DatasetError:
    return DatasetError(item.path, message, record=f"line {item.line}", field=field)


def read_kb(paths: Sequence[Path]) -> AffordanceKB:
    """Entities of ``paths``, sorted by id; ids must read ``<scene>/<name>/<variant>`` and be unique, every
    part must have an affordance and every affordance must name its kind of use (a snake_case category:
    the clusters, distractor tiers and the RL affordance head are built on it)."""
    seen: dict[str, _Located] = {}
    for item in _read_located(paths, Entity):
        entity = item.record
        assert isinstance(entity, Entity)
        scene, _, rest = entity.id.partition("/")
        if scene != entity.scene or rest.count("/") != 1:
            raise _fail(item, f"id {entity.id!r} must read '{entity.scene}/<snake_name>/<variant>'", "id")
        for i, part in enumerate(entity.parts):
            if not part.affordances:
                raise _fail(item, f"part {part.name!r} has no affordance", f"parts.{i}.affordances")
            for j, affordance in enumerate(part.affordances):
                where = f"parts.{i}.affordances.{j}.category"
                if not affordance.category:
                    use = affordance.action
                    message = f"part {part.name!r}'s use {use!r} names no kind of use: give it a category ('pry')"
                    raise _fail(item, message, where)
                if snake(affordance.category) != affordance.category:
                    raise _fail(item, f"category must be snake_case, got {affordance.category!r}", where)
        if entity.id in seen:
            first = seen[entity.id]
            raise _fail(item, f"duplicate id {entity.id!r} (also {first.path.name} line {first.line})", "id")
        seen[entity.id] = item
    entities = sorted((item.record for item in seen.values()), key=lambda e: e.id)  # type: ignore[attr-defined]
    return AffordanceKB(entities=tuple(entities))


def leaked_name(text: str, entity: Entity, part_name: str) -> str | None:
    """The gold entity's or part's name when ``text`` names it (whole words, any case), else None."""
    for phrase in (entity.name, spaced(part_name)):
        if re.search(rf"\b{re.escape(phrase.lower())}\b", text.lower()):
            return phrase
    return None


def read_seeds(paths: Sequence[Path], kb: AffordanceKB) -> list[TaskSeed]:
    """Task seeds of ``paths``: unique ids and golds, the gold exists in the seed's scene, the recipient is
    interactable, and the task text names neither the gold entity nor the gold part."""
    seen: dict[str, _Located] = {}
    golds: dict[str, _Located] = {}
    ids = {e.id for e in kb.entities}
    for item in _read_located(paths, TaskSeed):
        seed = item.record
        assert isinstance(seed, TaskSeed)
        for table, key, what in ((seen, seed.id, "id"), (golds, seed.gold.key, "gold")):
            if key in table:
                first = table[key]
                field = "id" if what == "id" else "gold_affordance_index"
                raise _fail(item, f"duplicate {what} {key!r} (also {first.path.name} line {first.line})", field)
            table[key] = item
        if seed.gold_entity_id not in ids:
            raise _fail(item, f"no entity {seed.gold_entity_id!r} in the KB", "gold_entity_id")
        entity = kb.by_id(seed.gold_entity_id)
        if entity.scene != seed.scene:
            raise _fail(item, f"the gold entity is in {entity.scene!r}, the seed in {seed.scene!r}", "scene")
        part = next((p for p in entity.parts if p.name == seed.gold_part), None)
        if part is None:
            parts = [p.name for p in entity.parts]
            raise _fail(item, f"{entity.id!r} has no part {seed.gold_part!r}; its parts: {parts}", "gold_part")
        if seed.gold_affordance_index >= len(part.affordances):
            raise _fail(item, f"part {part.name!r} has {len(part.affordances)} affordances", "gold_affordance_index")
        if not seed.recipient.interactable:
            raise _fail(item, "the recipient must be interactable", "recipient.interactable")
        leak = leaked_name(seed.task, entity, part.name)
        if leak is not None:
            raise _fail(item, f"the task text names the gold ({leak!r})", "task")
    return [item.record for item in seen.values()]  # type: ignore[misc]
