"""The items an env draws episodes from: the record base and field types every benchmark's item models
share, the table that type-checks and indexes them by id once, then shares them, and which items a
config runs on (``load_config_items``: its dataset file, or the benchmark's sample data).

Records are pydantic v2 and frozen (``FrozenRecord``); text a scene needs is ``Text`` (stripped,
never empty), numbers and flags are strict (``Count``, ``Flag``: ``true`` is no count, ``"3"`` no
label).

Building a ``LateralEnv`` used to check, copy and index every item, so each new env (one per
episode in flight, one per chat rollout) cost time in proportion to the dataset: ~28 ms at 14,000
tasks of the largest built-in dataset. An ``ItemTable`` does that work once; an env given one (``env.items`` of
another env, or what ``load_config_items`` returns) takes it as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Strict, StringConstraints

from lateralgym.envs._errors import ConfigError, DatasetError

if TYPE_CHECKING:
    from lateralgym.envs._benchmark import Benchmark
    from lateralgym.envs._config import EpisodeConfig

__all__ = ["Count", "Flag", "FrozenRecord", "ItemTable", "Text", "duplicate_ids", "item_table", "load_config_items"]

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
"""Text that must say something: stripped, then at least one character."""

Count = Annotated[int, Strict()]
"""A whole number given as one: no ``true``, ``1.0`` or ``"1"``."""

Flag = Annotated[bool, Strict()]
"""A JSON ``true`` / ``false``, nothing else."""


class FrozenRecord(BaseModel):
    """Base of dataset records: frozen, unknown keys refused, text stripped."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)


def duplicate_ids(ids: Iterable[str]) -> list[str]:
    """Ids that occur more than once, sorted."""
    seen: set[str] = set()
    repeated: set[str] = set()
    for key in ids:
        (repeated if key in seen else seen).add(key)
    return sorted(repeated)


class ItemTable(tuple[Any, ...]):
    """One benchmark's items, in order, all of its item type, with unique ids; ``positions`` maps an id to
    its position. Immutable (a tuple of frozen items), so any number of envs can share it."""

    benchmark: str
    """The benchmark whose items these are (its ``item_id`` made the index)."""
    positions: dict[str, int]
    """Item id -> position."""

    def __new__(cls, benchmark: Benchmark[Any, Any], items: Iterable[Any], *, label: str = "") -> ItemTable:
        """Check and index ``items``.

        Args:
            benchmark: The benchmark the items are for.
            items: The items.
            label: Names the user of the items in errors (``config 'my-benchmark'``).

        Raises:
            ConfigError: no items, an item of another type, or a repeated id.
        """
        table = super().__new__(cls, items)
        label = label or f"benchmark {benchmark.name!r}"
        wanted = benchmark.item_type
        bad = next((type(i) for i in table if not isinstance(i, wanted)), None)
        if bad is not None and bad.__qualname__ == wanted.__qualname__:
            raise ConfigError(
                f"{label} needs items of its own {wanted.__name__} (module {wanted.__module__}); these are of "
                f"another copy of that class (module {bad.__module__}): the benchmark's file was imported twice. "
                f"Build items with get_benchmark({benchmark.name!r}).item_type, or load them with load_items"
            )
        if bad is not None or not table:
            raise ConfigError(
                f"{label} needs {wanted.__name__} items; got {len(table)} items"
                + (f" including {bad.__name__}" if bad is not None else "")
            )
        ids = [benchmark.item_id(i) for i in table]
        index = {key: n for n, key in enumerate(ids)}
        if len(index) != len(table):
            raise ConfigError(f"item ids must be unique; repeated: {duplicate_ids(ids)[:5]}")
        table.benchmark = benchmark.name
        table.positions = index
        return table

    def __reduce__(self) -> tuple[Any, ...]:
        # Pickled (to Ray workers, subprocesses) with its index: tuple's own pickling would call __new__ bare.
        return (_restore, (self.benchmark, tuple(self), self.positions))


def _restore(benchmark: str, items: tuple[Any, ...], positions: dict[str, int]) -> ItemTable:
    table = tuple.__new__(ItemTable, items)
    table.benchmark = benchmark
    table.positions = positions
    return table


def item_table(benchmark: Benchmark[Any, Any], items: Iterable[Any], *, label: str = "") -> ItemTable:
    """``items`` as an ``ItemTable`` of ``benchmark``: a table of that benchmark as it is (no work),
    anything else checked and indexed (see ``ItemTable``)."""
    if isinstance(items, ItemTable) and items.benchmark == benchmark.name:
        return items
    return ItemTable(benchmark, items, label=label)


def load_config_items(config: EpisodeConfig, path: str | None = None) -> ItemTable:
    """Items for ``config``: from ``path`` / ``config.dataset`` when given (a file, or the name of a dataset
    the benchmark ships, a first sample kept by name), else the sample data.

    Returns:
        The items, checked and indexed once (``ItemTable``): every env built on them shares the table.

    Raises:
        DatasetError: the file cannot be read, or holds items of another benchmark.
    """
    from lateralgym.envs._benchmark import get_benchmark  # the registry sits above the table

    benchmark = get_benchmark(config.benchmark)
    source = path or config.dataset
    label = f"config {config.name!r}"
    if source is None:
        return item_table(benchmark, benchmark.data.sample_items(), label=label)
    from pathlib import Path

    from lateralgym.envs._loaders import load_items

    if not Path(source).exists() and source in benchmark.data.sample_data:  # a shipped dataset by name
        from lateralgym.envs._samples import sample_path

        source = str(sample_path(source))
    items = load_items(source, format=config.dataset_format if path is None else None, benchmark=benchmark.name)
    wanted = benchmark.item_type
    if not items:
        raise DatasetError(source, "the file holds no items")
    if not all(isinstance(i, wanted) for i in items):
        found = type(items[0]).__name__
        raise DatasetError(
            source,
            f"holds {found} records but config {config.name!r} runs {wanted.__name__} items; "
            f"pick a config for this benchmark",
        )
    return item_table(benchmark, items, label=label)
