"""A run's items chosen so that a few stand for the set: a stratified sample, and a check of a cut.

``stratified_sample`` draws ``size`` items spread over a benchmark's groups (``DataPart.strata``:
coarsest first, e.g. a scene, then a gold entity within it), keeping the items a run plays together
(``DataPart.group_of``) whole. It orders the groups so that every prefix of the order is spread:

* at each level the strata are taken in proportion to their items, the one furthest below its share
  first (so every stratum is reached once before any is reached twice, and a larger stratum comes
  round again sooner), ties broken by a shuffle;
* within the finest stratum the groups are shuffled.

The sample is the shortest prefix holding ``size`` items, returned in dataset order. It depends on
the items, ``size`` and ``seed`` alone (not on the file's order: strata and groups are sorted before
they are shuffled), and a larger sample with the same seed holds every item of a smaller one.

``narrow_cut`` says when the first items of a file (``--limit``) all fall in one stratum of a level
where the file has several.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any, TypeVar

import numpy as np

from lateralgym.envs._errors import ConfigError

__all__ = ["narrow_cut", "stratified_sample"]

T = TypeVar("T")

_SAMPLE_STREAM = 0x5A4D50
"""Mixed into the run seed, so the sample's draw is not the stream an episode seed could come from."""


def _key(value: object) -> str:
    return "none" if value is None else str(value)


class _Group:
    """Items played together: their positions in the dataset and the strata of the first of them."""

    def __init__(self, name: str, strata: tuple[str, ...]) -> None:
        self.name = name
        self.strata = strata
        self.positions: list[int] = []


def stratified_sample(
    items: Sequence[T],
    size: int,
    seed: int,
    *,
    strata: Callable[[T], Mapping[str, Hashable]],
    group_of: Callable[[T], str],
) -> list[T]:
    """About ``size`` items spread over ``strata`` (see the module docstring), in dataset order.

    Args:
        items: the dataset's items.
        size: how many items to draw (at least 1); whole groups are drawn, so the sample may hold
            a few more (the rest of the last group), and all items when ``size`` reaches their number.
        seed: the run seed (an integer in ``[0, 2**64)``).
        strata: an item's strata, coarsest first.
        group_of: what the items a run plays together share.

    Raises:
        ConfigError: ``size`` is below 1.
    """
    if size < 1:
        raise ConfigError(f"--sample must be at least 1, got {size}")
    if size >= len(items):
        return list(items)
    groups: dict[str, _Group] = {}
    for position, item in enumerate(items):
        name = group_of(item)
        group = groups.get(name)
        if group is None:
            group = groups[name] = _Group(name, tuple(_key(v) for v in strata(item).values()))
        group.positions.append(position)
    rng = np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFF, seed >> 32, _SAMPLE_STREAM]))
    chosen: list[int] = []
    for group in _spread(sorted(groups.values(), key=lambda g: (g.strata, g.name)), 0, rng):
        chosen += group.positions
        if len(chosen) >= size:
            break
    return [items[p] for p in sorted(chosen)]


def _spread(groups: list[_Group], level: int, rng: np.random.Generator) -> Iterator[_Group]:
    """``groups`` (sorted) in an order whose every prefix is spread over their strata from ``level`` down."""
    if not groups or level >= max(len(g.strata) for g in groups):
        order = rng.permutation(len(groups))
        yield from (groups[n] for n in order)
        return
    strata: dict[str, list[_Group]] = {}
    for group in groups:
        strata.setdefault(group.strata[level] if level < len(group.strata) else "", []).append(group)
    names = sorted(strata)
    ranks = rng.permutation(len(names))  # the tie-break: which untouched stratum comes first
    sizes = [sum(len(g.positions) for g in strata[name]) for name in names]
    streams = [_spread(strata[name], level + 1, rng) for name in names]
    # (items taken / items in the stratum, tie-break rank, stratum): the one furthest below its share next
    queue = [(Fraction(0), int(ranks[n]), n) for n in range(len(names))]
    heapq.heapify(queue)
    taken = [0] * len(names)
    while queue:
        _, rank, n = heapq.heappop(queue)
        drawn = next(streams[n], None)
        if drawn is None:
            continue
        yield drawn
        taken[n] += len(drawn.positions)
        if taken[n] < sizes[n]:
            heapq.heappush(queue, (Fraction(taken[n], sizes[n]), rank, n))


def narrow_cut(
    chosen: Sequence[Any], items: Sequence[Any], strata: Callable[[Any], Mapping[str, Hashable]]
) -> tuple[str, str, int] | None:
    """``(level, stratum, strata at that level)`` when every chosen item falls in one stratum of a level
    where ``items`` has several (the coarsest such level), else None."""
    if len(chosen) < 2:
        return None
    chosen_strata = [strata(item) for item in chosen]
    levels = list(chosen_strata[0])
    for level in levels:
        values = {_key(s.get(level)) for s in chosen_strata}
        if len(values) == 1:
            every = {_key(strata(item).get(level)) for item in items}
            if len(every) > 1:
                return level, values.pop(), len(every)
    return None
