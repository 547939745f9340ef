"""Which items an env runs on: the config's dataset file, or the benchmark's sample data."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lateralgym.envs._benchmark import get_benchmark
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._errors import DatasetError


def load_config_items(config: EpisodeConfig, path: str | None = None) -> Sequence[Any]:
    """Items for ``config``: from ``path`` / ``config.dataset`` when given, else the sample data.

    Raises:
        DatasetError: the file cannot be read, or holds items of another benchmark.
    """
    benchmark = get_benchmark(config.benchmark)
    source = path or config.dataset
    if source is None:
        return benchmark.sample_items()
    from lateralgym.envs._loaders import load_items

    items = load_items(source)
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
    return list(items)
