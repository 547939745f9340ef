"""Train / test splits of any benchmark's items, stable across processes and machines.

A benchmark says which side an item is on (``Benchmark.data.split_of``): by default the item's own
``split`` field when it has one, else a hash of its id. A benchmark whose items share an answer
(tasks built around one gold entity) splits by that answer instead, so a policy cannot memorise the
test answers in training.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any, Literal

Split = Literal["train", "test"]

TEST_FRACTION = 0.25
"""Share of keys in the test split when an item carries no ``split`` of its own."""


def hashed_split(key: str, test_fraction: float = TEST_FRACTION) -> Split:
    """A stable split from the SHA-256 of a key: the same in every process and on every machine."""
    value = int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") / 2**64
    return "test" if value < test_fraction else "train"


def split_items(items: Iterable[Any], which: Split) -> list[Any]:
    """The items of one split, in their order (each item's benchmark decides its side).

    Raises:
        ValueError: ``which`` is neither ``train`` nor ``test``.

    Example:
        >>> from lateralgym.envs import load_sample_items, split_items
        >>> test = split_items(load_sample_items(name), "test")  # name: a registered benchmark
    """
    from lateralgym.envs._benchmark import benchmark_of

    if which not in ("train", "test"):
        raise ValueError(f"split must be 'train' or 'test', got {which!r}")
    chosen: list[Any] = []
    unit = None
    for item in items:
        if unit is None or not isinstance(item, unit.item_type):
            unit = benchmark_of(item)
        if unit.data.split_of(item) == which:
            chosen.append(item)
    return chosen
