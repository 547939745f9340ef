"""Which items an env runs on: the config's dataset file, or the package's sample data."""

from __future__ import annotations

from collections.abc import Sequence

from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._errors import DatasetError
from lateralgym.envs._samples import load_sample_items
from lateralgym.envs._schema import CreativityTask, Item, MCQPuzzle, SituationPuzzle

ITEM_TYPES: dict[str, type[Item]] = {
    "creativity": CreativityTask,
    "brainteaser": MCQPuzzle,
    "splat": SituationPuzzle,
}


def load_config_items(config: EpisodeConfig, path: str | None = None) -> Sequence[Item]:
    """Items for ``config``: from ``path`` / ``config.dataset`` when given, else the sample data.

    Raises:
        DatasetError: the file cannot be read, or holds items of another benchmark.
    """
    source = path or config.dataset
    if source is None:
        return load_sample_items(config.benchmark)
    from lateralgym.envs._loaders import load_items

    items = load_items(source)
    wanted = ITEM_TYPES[config.benchmark]
    if not items:
        raise DatasetError(source, "the file holds no items")
    if not all(isinstance(i, wanted) for i in items):
        found = type(items[0]).__name__
        raise DatasetError(
            source,
            f"holds {found} records but config {config.name!r} runs {wanted.__name__} items; "
            f"pick a config for this benchmark",
        )
    return [i for i in items if isinstance(i, CreativityTask | MCQPuzzle | SituationPuzzle)]
