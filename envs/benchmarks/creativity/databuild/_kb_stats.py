"""``kb_stats``: the paper's Table 2 counts of an affordance KB (``lateralgym kb stats``).

Entity variants share an id prefix (``kitchen/ladle/3`` is variant 3 of ``kitchen/ladle``): entities
count the prefixes, variants every record. A part variant is a distinct (entity, part, physical,
state) combination, and affordances are counted once per part variant (the same affordance repeated
in every entity variant that shares the part variant counts once); ``affordance_records`` counts them
as stored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict
from rich.table import Table

from lateralgym.envs._errors import DatasetError
from lateralgym.envs._samples import read_jsonl
from lateralgym.envs.benchmarks.creativity._schema import Entity
from lateralgym.envs.benchmarks.creativity.databuild._kb_build import KB_FILE

__all__ = ["KBStats", "SceneCounts", "base_entity_id", "kb_stats", "read_kb"]


def base_entity_id(entity_id: str) -> str:
    """The id shared by an entity's variants: ``scene/name/3`` -> ``scene/name`` (others unchanged)."""
    head, sep, tail = entity_id.rpartition("/")
    return head if sep and tail.isdigit() and head.count("/") >= 1 else entity_id


def read_kb(path: Path) -> list[Entity]:
    """The entities of a KB file, or of ``DIR/kb.jsonl`` for a build directory.

    Raises:
        DatasetError: No KB there, or a bad record (the message names the line and field).
    """
    file = path / KB_FILE if path.is_dir() else path
    if not file.is_file():
        raise DatasetError(file, "no KB file here; give a kb build directory or an Entity JSONL file")
    return read_jsonl(file, Entity)


class SceneCounts(BaseModel):
    """Counts of one scene (or of the whole KB)."""

    model_config = ConfigDict(frozen=True)

    entities: int = 0
    """Distinct entities (variants counted once)."""
    variants: int = 0
    """Entity variants (records)."""
    parts: int = 0
    """Distinct (entity, part) pairs."""
    part_variants: int = 0
    """Distinct (entity, part, physical, state) combinations."""
    affordances: int = 0
    """Affordances, once per part variant."""


class KBStats(BaseModel):
    """The Table 2 counts of a KB."""

    model_config = ConfigDict(frozen=True)

    scenes: int
    """Scenes with at least one entity."""
    total: SceneCounts
    """Counts over the whole KB."""
    affordance_records: int
    """Affordances as stored (repeated in every variant that shares a part variant)."""
    by_level: dict[int, int]
    """Affordances (once per part variant) per level: 0 normal, 1-5 emergency."""
    by_scene: dict[str, SceneCounts]
    """Counts per scene."""

    def table(self) -> Table:
        """The counts as rich tables: one per scene and total, then levels."""
        table = Table(title="Affordance KB (paper Table 2 counts)")
        table.add_column("scene")
        for name in SceneCounts.model_fields:
            table.add_column(name.replace("_", " "), justify="right")
        for scene, counts in self.by_scene.items():
            table.add_row(scene, *(str(getattr(counts, n)) for n in SceneCounts.model_fields))
        table.add_row(f"total ({self.scenes} scenes)", *(str(getattr(self.total, n)) for n in SceneCounts.model_fields))
        levels = ", ".join(f"level {level}: {count}" for level, count in sorted(self.by_level.items()))
        table.caption = f"affordances by level: {levels or 'none'}; as stored: {self.affordance_records}"
        return table


def _counts(entities: Sequence[Entity]) -> tuple[SceneCounts, Counter[int], int]:
    parts: set[tuple[str, str]] = set()
    part_variants: dict[tuple[str, str, str, str], tuple[int, ...]] = {}
    records = 0
    for entity in entities:
        base = base_entity_id(entity.id)
        for part in entity.parts:
            parts.add((base, part.name))
            key = (base, part.name, part.physical.model_dump_json(), part.state.model_dump_json())
            part_variants.setdefault(key, tuple(a.level for a in part.affordances))
            records += len(part.affordances)
    levels: Counter[int] = Counter(level for levels_ in part_variants.values() for level in levels_)
    counts = SceneCounts(
        entities=len({base_entity_id(e.id) for e in entities}),
        variants=len(entities),
        parts=len(parts),
        part_variants=len(part_variants),
        affordances=sum(levels.values()),
    )
    return counts, levels, records


def kb_stats(entities: Sequence[Entity]) -> KBStats:
    """The Table 2 counts of ``entities`` (scenes in first-seen order)."""
    scenes = list(dict.fromkeys(e.scene for e in entities))
    total, levels, records = _counts(entities)
    return KBStats(
        scenes=len(scenes),
        total=total,
        affordance_records=records,
        by_level={level: levels.get(level, 0) for level in range(6)},
        by_scene={scene: _counts([e for e in entities if e.scene == scene])[0] for scene in scenes},
    )
