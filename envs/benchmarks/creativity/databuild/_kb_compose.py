"""Stages D and F of the KB pipeline (paper App. C): composing part variants into entity variants.

An entity with parts of 2-3 variants each has up to 3^8 combinations; the paper keeps at most 8
physical and 6 state combinations per physical one. ``compose`` picks them so that every variant of
every part appears at least once and as many pairs of variants (of two parts) as possible appear
together: coverage-oriented subsampling, deterministic for a given seed text.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Sequence

__all__ = ["compose", "seeded_rng"]

_POOL = 256  # candidates scored per pick: enough for near-greedy pair coverage at 8 parts x 3 variants


def seeded_rng(seed: str) -> random.Random:
    """A ``random.Random`` seeded from text, the same on every machine (no ``hash()`` salt)."""
    return random.Random(int.from_bytes(hashlib.blake2b(seed.encode("utf-8"), digest_size=8).digest(), "little"))


def _pairs(combo: Sequence[int]) -> set[tuple[int, int, int, int]]:
    return {(i, combo[i], j, combo[j]) for i, j in itertools.combinations(range(len(combo)), 2)}


def compose(counts: Sequence[int], limit: int, *, seed: str) -> list[tuple[int, ...]]:
    """At most ``limit`` combinations of per-part variant indices (one index per part).

    All combinations when there are no more than ``limit``; otherwise first ``max(counts)`` that
    cover every variant of every part (a seeded permutation per part), then, one at a time, the
    candidate (of a seeded pool) that covers the most pairs not yet covered.

    Example:
        >>> compose([2, 2], 8, seed="x")
        [(0, 0), (0, 1), (1, 0), (1, 1)]
        >>> len(compose([3] * 8, 8, seed="x"))
        8

    Args:
        counts: Variants of each part (each at least 1).
        limit: Most combinations to return (at least 1).
        seed: Seed text; equal seeds give equal results.
    """
    if not counts or limit < 1 or min(counts) < 1:
        raise ValueError(f"compose needs parts with at least one variant and a positive limit, got {counts}, {limit}")
    if math.prod(counts) <= limit:
        return list(itertools.product(*(range(k) for k in counts)))
    rng = seeded_rng(seed)
    permutations = [rng.sample(range(k), k) for k in counts]
    chosen: list[tuple[int, ...]] = []
    for j in range(min(max(counts), limit)):
        combo = tuple(perm[j % len(perm)] for perm in permutations)
        if combo not in chosen:
            chosen.append(combo)
    covered: set[tuple[int, int, int, int]] = set().union(*(_pairs(c) for c in chosen)) if chosen else set()
    while len(chosen) < limit:
        pool = [tuple(rng.randrange(k) for k in counts) for _ in range(_POOL)]
        fresh = [c for c in dict.fromkeys(pool) if c not in chosen]
        if not fresh:
            break
        best = max(fresh, key=lambda c: len(_pairs(c) - covered))  # first best wins ties: seeded order
        chosen.append(best)
        covered |= _pairs(best)
    return chosen
