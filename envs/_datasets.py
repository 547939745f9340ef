"""Which items an env runs on: the config's dataset file, or the benchmark's sample data."""

from __future__ import annotations

from lateralgym.envs._benchmark import get_benchmark
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._errors import DatasetError
from lateralgym.envs._items import ItemTable, item_table


def load_config_items(config: EpisodeConfig, path: str | None = None) -> ItemTable:
    """Items for ``config``: from ``path`` / ``config.dataset`` when given (a file, or the name of a dataset
    the benchmark ships, a first sample kept by name), else the sample data.

    Returns:
        The items, checked and indexed once (``ItemTable``): every env built on them shares the table.

    Raises:
        DatasetError: the file cannot be read, or holds items of another benchmark.
    """
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
