"""A curriculum for ``train_grpo``: which prompts each generation batch holds, and what their rewards say.

``uniform`` (the default) leaves TRL's own shuffled draw as it is and only records each step's levels;
``adaptive`` replaces TRL's sampler with ``CurriculumSampler``, which asks a ``lateralgym.envs.Curriculum``
for each prompt of a batch (repeated ``num_generations`` times, as TRL's ``RepeatSampler`` does, so a
prompt's group stays whole). ``observed_reward`` wraps the first reward function: each prompt's mean
env reward (clipped to ``[0, 1]``) is reported to the curriculum, and the step's levels are counted
for ``train_curve.jsonl``. Neither needs torch.
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from lateralgym.envs import Curriculum

__all__ = ["CurriculumSampler", "observed_reward", "row_items"]


def row_items(rows: Sequence[dict[str, Any]], items: Sequence[Any]) -> list[int]:
    """The position in ``items`` of each training row's item (rows name it in their ``info``)."""
    where = {str(getattr(item, "id", "")): n for n, item in enumerate(items)}
    return [where[str(json.loads(row["info"])["item_id"])] for row in rows]


class CurriculumSampler:
    """Row indices for TRL's train dataloader, drawn by a curriculum (lazily: a batch's draws see the
    rewards of the batches before it).

    Args:
        curriculum: over the train items.
        item_rows: each item's row in the dataset (by item position).
        prompts: prompts per generation batch.
        generations: completions per prompt (each index is repeated this many times in a row).
        reuse: how many times TRL reads a generation batch (``num_iterations * steps_per_generation``).
        length: how many prompts one pass yields (TRL's epoch; the run stops at its ``max_steps``).
    """

    def __init__(
        self, curriculum: Curriculum, item_rows: Sequence[int], prompts: int, generations: int, reuse: int, length: int
    ) -> None:
        self.curriculum, self.item_rows = curriculum, list(item_rows)
        self.prompts, self.generations, self.reuse, self.length = prompts, generations, reuse, max(length, prompts)

    def __len__(self) -> int:
        return (self.length // self.prompts) * self.prompts * self.generations * self.reuse

    def __iter__(self) -> Iterator[int]:
        for _ in range(self.length // self.prompts):
            batch = [self.item_rows[self.curriculum.next()] for _ in range(self.prompts)]
            for _ in range(self.reuse):
                for row in batch:
                    yield from [row] * self.generations


def observed_reward(
    func: Callable[..., list[float]],
    curriculum: Curriculum,
    row_item: dict[str, int],
    step_levels: Counter[str],
) -> Callable[..., list[float]]:
    """``func`` (a TRL reward function over rows with an ``info`` column), also reporting each prompt's
    mean reward to ``curriculum`` and counting its completions' levels in ``step_levels``.

    ``row_item`` maps a row's ``info`` to its item's position. Under ``uniform`` the curriculum did not
    draw the prompt (TRL did): it is recorded as drawn first.
    """

    @functools.wraps(func)
    def reward(*args: Any, **kwargs: Any) -> list[float]:
        values = func(*args, **kwargs)
        infos = kwargs.get("info")
        if not infos:
            return values
        groups: dict[str, list[float]] = {}
        for info, value in zip(infos, values, strict=True):
            groups.setdefault(str(info), []).append(value)
        for info, group in groups.items():
            index = row_item.get(info)
            if index is None:
                continue
            if curriculum.mode == "uniform":
                curriculum.drawn(index)
            curriculum.update(index, sum(group) / len(group))
            step_levels[curriculum.item_levels[index]] += len(group)
        return values

    return reward
