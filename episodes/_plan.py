"""A run's plan: which episodes it plays (all items, the first ``--limit`` or a ``--sample``, in dataset
order, each ``repeats`` times) and the seed each one gets from (run seed, item id, repeat)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from lateralgym.envs import ConfigError, benchmark_of
from lateralgym.envs.support import MAX_SEED

if TYPE_CHECKING:
    from lateralgym.envs import DataPart

__all__ = ["EpisodeSpec", "episode_seed", "limit_note", "plan_episodes"]


class EpisodeSpec(BaseModel):
    """One planned episode."""

    model_config = ConfigDict(frozen=True)

    episode_id: str
    """``<item id>#<repeat>``."""
    item_id: str
    repeat: int
    seed: int
    """Derived from (run seed, item id, repeat): see ``episode_seed``."""


def episode_seed(run_seed: int, item_id: str, repeat: int) -> int:
    """An episode's seed from (run seed, item id, repeat), through ``numpy.random.SeedSequence``.

    Runs with different seeds draw unrelated streams (not the same stream shifted by one item),
    and an item keeps its seed whatever ``--limit`` or the dataset's order is.

    Raises:
        ConfigError: ``run_seed`` is outside ``[0, 2**64)``.
    """
    if not 0 <= run_seed < MAX_SEED:
        raise ConfigError(f"the run seed must be an integer from 0 to 2**64 - 1, got {run_seed}")
    digest = hashlib.sha256(item_id.encode("utf-8")).digest()
    entropy = [run_seed & 0xFFFFFFFF, run_seed >> 32 & 0xFFFFFFFF, *np.frombuffer(digest[:16], dtype=np.uint32)]
    state = np.random.SeedSequence([int(x) for x in entropy], spawn_key=(repeat,)).generate_state(1, np.uint32)
    return int(state[0])


def plan_episodes(
    items: Sequence[Any], seed: int, limit: int | None = None, repeats: int = 1, *, sample: int | None = None
) -> list[EpisodeSpec]:
    """The items a run plays, in dataset order, each ``repeats`` times, each episode with its own seed
    (``episode_seed``): all of them, the first ``limit`` (``Benchmark.data.first_items``: a benchmark
    scored by groups completes every group it touches) or a sample of ``sample`` drawn with ``seed``
    and spread over the benchmark's strata (``Benchmark.data.sampled_items``).

    Raises:
        ConfigError: ``limit`` is negative, ``sample`` below 1, both are given, or ``repeats`` is below 1.
    """
    if limit is not None and limit < 0:
        raise ConfigError(f"--limit must be 0 or more, got {limit}")
    if sample is not None and sample < 1:
        raise ConfigError(f"--sample must be at least 1, got {sample}")
    if limit is not None and sample is not None:
        raise ConfigError("--limit and --sample both choose the items: give one of them")
    if repeats < 1:
        raise ConfigError(f"--repeats must be at least 1, got {repeats}")
    chosen = list(items)
    data = _data_of(chosen)
    if limit is not None:
        chosen = data.first_items(chosen, limit) if data is not None else chosen[:limit]
    elif sample is not None:
        if data is None:
            raise ConfigError("--sample draws from a registered benchmark's items; these belong to none")
        chosen = data.sampled_items(chosen, sample, seed)
    plan: list[EpisodeSpec] = []
    for item in chosen:
        item_id = str(item.id)
        for r in range(repeats):
            plan.append(
                EpisodeSpec(episode_id=f"{item_id}#{r}", item_id=item_id, repeat=r, seed=episode_seed(seed, item_id, r))
            )
    return plan


def limit_note(items: Sequence[Any], limit: int | None) -> str | None:
    """One line when the items ``--limit limit`` plays all fall in one of the benchmark's strata (one
    scene, one difficulty band) where the data has several, naming ``--sample``; else None."""
    if limit is None or limit < 2 or not items:
        return None
    data = _data_of(items)
    return None if data is None else data.cut_note(items, limit)


def _data_of(items: Sequence[Any]) -> DataPart[Any] | None:
    """The data part of the items' benchmark (None for no items, or items of no registered benchmark)."""
    if not items:
        return None
    try:
        return benchmark_of(items[0]).data
    except ConfigError:
        return None
