"""A run's plan: which episodes it plays (items in dataset order, each ``repeats`` times) and the
seed each one gets from (run seed, item id, repeat)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from lateralgym.envs import ConfigError, benchmark_of
from lateralgym.envs.support import MAX_SEED

__all__ = ["EpisodeSpec", "episode_seed", "plan_episodes"]


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


def plan_episodes(items: Sequence[Any], seed: int, limit: int | None = None, repeats: int = 1) -> list[EpisodeSpec]:
    """The first ``limit`` items (all when None) in dataset order, each ``repeats`` times, each
    episode with its own seed (``episode_seed``). The items' benchmark says what the first
    ``limit`` are (``Benchmark.data.first_items``: a benchmark scored by groups completes every group it touches).

    Raises:
        ConfigError: ``limit`` is negative or ``repeats`` is below 1.
    """
    if limit is not None and limit < 0:
        raise ConfigError(f"--limit must be 0 or more, got {limit}")
    if repeats < 1:
        raise ConfigError(f"--repeats must be at least 1, got {repeats}")
    chosen = list(items)
    if limit is not None and chosen:
        try:
            chosen = benchmark_of(chosen[0]).data.first_items(chosen, limit)
        except ConfigError:  # items of no registered benchmark: the plain cut
            chosen = chosen[:limit]
    plan: list[EpisodeSpec] = []
    for item in chosen:
        item_id = str(item.id)
        for r in range(repeats):
            plan.append(
                EpisodeSpec(episode_id=f"{item_id}#{r}", item_id=item_id, repeat=r, seed=episode_seed(seed, item_id, r))
            )
    return plan
