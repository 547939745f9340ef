"""Train / test splits of CreativityBench tasks by gold entity, so a policy cannot memorise the test golds."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Literal

from lateralgym.envs._schema import CreativityTask, snake

Split = Literal["train", "test"]

TEST_FRACTION = 0.25
"""Share of gold entities in the test split when a task carries no ``split`` of its own."""


def hashed_split(key: str, test_fraction: float = TEST_FRACTION) -> Split:
    """A stable split from the SHA-256 of a key: the same in every process and on every machine."""
    value = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") / 2**64
    return "test" if value < test_fraction else "train"


def task_split(task: CreativityTask) -> Split:
    """The task's own ``split``, else ``hashed_split`` of its gold entity's snake_case name: by name,
    not id, so variants of one entity (``watering_can/1`` and ``/2``) always land on the same side."""
    return task.split if task.split is not None else hashed_split(snake(task.gold.entity))


def split_tasks(tasks: Iterable[CreativityTask], which: Split) -> list[CreativityTask]:
    """The tasks of one split, in their order.

    Tasks that carry a ``split`` (the shipped sample does: about a quarter of its gold entities are
    test) keep it; the others fall back to a stable hash of the gold entity's name, so every task of a
    gold entity (any variant) lands in the same split and no gold entity is in both.

    Args:
        tasks: CreativityBench tasks, e.g. ``load_sample_items("creativity")``.
        which: ``"train"`` or ``"test"``.

    Returns:
        The tasks of that split.

    Raises:
        ValueError: ``which`` is neither ``train`` nor ``test``.

    Example:
        >>> from lateralgym.envs import load_sample_items, split_tasks
        >>> test = split_tasks(load_sample_items("creativity"), "test")
    """
    if which not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {which!r}")
    return [task for task in tasks if task_split(task) == which]
