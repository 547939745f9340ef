"""``IdentityCache``: what was computed once for a frozen object (a task, a puzzle), kept by the object's identity.

Items are frozen and live as long as their env, so text or lookups built from one can be reused
by every episode on it. The cache holds the object beside its value, so an id cannot be reused by
another object while its entry is kept, and a changed item under the same dataset id is a new object.
"""

from __future__ import annotations

from typing import Generic, TypeVar

__all__ = ["IdentityCache"]

K = TypeVar("K")
V = TypeVar("V")


class IdentityCache(Generic[K, V]):
    """The values of up to ``size`` objects, keyed by identity; when full, the oldest entry goes.

    A lookup is one dict probe (no recency bookkeeping: it runs on every reset).
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self._entries: dict[int, tuple[K, V]] = {}

    def get(self, key: K) -> V | None:
        hit = self._entries.get(id(key))
        return hit[1] if hit is not None and hit[0] is key else None

    def put(self, key: K, value: V) -> V:
        entries = self._entries
        entries.pop(id(key), None)
        entries[id(key)] = (key, value)
        if len(entries) > self.size:
            try:
                del entries[next(iter(entries))]
            except (RuntimeError, KeyError, StopIteration):
                pass  # another thread changed the cache meanwhile; the next ``put`` trims it
        return value
