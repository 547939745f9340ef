"""Counts that describe a loaded dataset: what ``lateralgym data stats PATH`` prints.

``dataset_stats(records)`` hands each benchmark its own records (items, or other data it reads such
as a knowledge base's entities: ``Benchmark.data.records``) and shows the sections it counts
(``Benchmark.data.stats``: the axes its metrics break down by), so a user sees at a glance
whether a file covers every variant, band and tier the metrics need.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lateralgym.envs._benchmark import StatBlock, get_benchmark, owner_of

DatasetKind = str
"""What the records are (``StatBlock.kind``), ``mixed`` when several kinds were counted together, or ``empty``."""


class DatasetStats(BaseModel):
    """Counts over one dataset, by section."""

    model_config = ConfigDict(frozen=True)

    path: str | None = None
    """The file the records came from, when known."""
    kind: DatasetKind
    """What the records are; ``mixed`` when several kinds were counted together."""
    items: int
    """Number of records."""
    sections: dict[str, dict[str, int]] = Field(default_factory=dict)
    """Counts by section, then key, in display order (``{"band": {"easy": 3, ...}}``)."""
    defects: list[str] = Field(default_factory=list)
    """Release defects found in the records, one line each naming the record."""

    def section(self, name: str) -> dict[str, int]:
        """The counts of one section (empty when the records have none)."""
        return self.sections.get(name, {})

    def count(self, section: str, key: str) -> int:
        """One count (0 when absent)."""
        return self.section(section).get(key, 0)

    def rows(self) -> list[tuple[str, str, int]]:
        """``(section, key, count)`` rows in display order; empty sections are left out."""
        rows: list[tuple[str, str, int]] = [("dataset", "items", self.items)]
        for section, counts in self.sections.items():
            rows += [(section, key, count) for key, count in counts.items()]
        return rows

    def render(self) -> str:
        """A plain-text table of every count, ready to print."""
        title = f"Dataset stats: {self.path}" if self.path else "Dataset stats"
        header = ("section", "key", "count")
        body = [(section, key, str(count)) for section, key, count in self.rows()]
        widths = [max(len(row[i]) for row in [header, *body]) for i in range(3)]

        def line(row: tuple[str, str, str]) -> str:
            return f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:>{widths[2]}}"

        rule = "  ".join("-" * w for w in widths)
        text = "\n".join([title, f"kind: {self.kind}", "", line(header), rule, *map(line, body)]) + "\n"
        if self.defects:
            text += f"\n{len(self.defects)} release defect(s) found:\n" + "".join(f"  - {d}\n" for d in self.defects)
        return text


def dataset_stats(items: Iterable[Any], path: str | Path | None = None) -> DatasetStats:
    """Count a dataset's records along every axis its benchmark's metrics break down by.

    The records are read once: those of the first record's kind go to its benchmark as a stream
    (``Benchmark.data.stream_stats``), so a file streamed in (``iter_items``) is never held whole when
    that benchmark counts one record at a time; records of other kinds are kept and counted after.

    Args:
        items: Records as ``load_items`` or ``iter_items`` gives them (a benchmark's items or its other
            data, such as a knowledge base's entities); several kinds are counted each by its own benchmark.
        path: The file they came from, shown in the report.

    Returns:
        The counts; ``render()`` turns them into a table.
    """
    records = iter(items)
    first = next(records, None)
    groups: dict[tuple[str, type], list[Any]] = {}
    blocks: list[StatBlock] = []
    count = 0
    kind_by_type: dict[type, tuple[str, type]] = {}

    def kind_of(record: Any) -> tuple[str, type]:
        """``_kind``, asked once per record type (a file holds one or two): it follows from the type alone."""
        known = kind_by_type.get(type(record))
        if known is None:
            known = kind_by_type[type(record)] = _kind(record)
        return known

    if first is not None:
        kind = kind_of(first)

        def of_first_kind() -> Iterator[Any]:
            nonlocal count
            for record in itertools.chain([first], records):
                count += 1
                other = kind_of(record)
                if other == kind:
                    yield record
                else:
                    groups.setdefault(other, []).append(record)

        blocks.append(get_benchmark(kind[0]).data.stream_stats(of_first_kind()))
        for record in records:  # what the benchmark left unread
            count += 1
            groups.setdefault(kind_of(record), []).append(record)
    blocks += [get_benchmark(name).data.stats(group) for (name, _), group in groups.items()]
    kinds: list[str] = []
    sections: dict[str, dict[str, int]] = {}
    defects: list[str] = []
    for block in blocks:
        kinds.append(block.kind)
        for section, counts in block.sections.items():
            merged = sections.setdefault(section, {})
            for key, number in counts.items():
                merged[key] = merged.get(key, 0) + number
        defects += block.defects
    return DatasetStats(
        path=str(path) if path is not None else None,
        kind="empty" if not kinds else kinds[0] if len(kinds) == 1 else "mixed",
        items=count,
        sections=sections,
        defects=defects,
    )


def _kind(record: Any) -> tuple[str, type]:
    """(benchmark, model) of a record: its benchmark's item type, or one of its ``data_records``."""
    owner = owner_of(record)
    model = type(record) if any(isinstance(record, m) for _, m in owner.data.records) else owner.item_type
    return owner.name, model
