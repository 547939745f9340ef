"""Train / test splits of CreativityBench tasks by gold entity, so a policy cannot memorise the test golds."""

from __future__ import annotations

from collections.abc import Iterable

from lateralgym.envs._matching import snake
from lateralgym.envs._splits import Split, hashed_split
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask


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
        >>> from lateralgym.envs import load_sample_items
        >>> from lateralgym.envs.benchmarks.creativity import split_tasks
        >>> test = split_tasks(load_sample_items("creativity"), "test")
    """
    if which not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {which!r}")
    return [task for task in tasks if task_split(task) == which]
