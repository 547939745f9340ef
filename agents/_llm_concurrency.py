"""The LLM client layer's request cap, which holds per event loop.

A run's players and judges share the runner's loop, so they share its cap; synchronous calls
(``complete_sync``, and ``LateralEnv.step`` with an LLM judge) all run on the one background loop
of ``lateralgym.envs._sync``, so they share that loop's cap. Two loops (two threads each running
``asyncio.run``) each get a cap of their own.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

DEFAULT_CONCURRENCY = 8
"""Requests in flight at once, per event loop, for clients that share the default limiter."""


@dataclass
class _LoopCap:
    """One loop's slots: the semaphore, and how many are held (touched only on that loop)."""

    semaphore: asyncio.Semaphore
    in_use: int = 0


class ConcurrencyLimiter:
    """Caps the requests in flight on each event loop; share one to cap several clients together.

    Each running loop gets its own ``asyncio.Semaphore`` of ``limit`` slots, made at its first
    request and dropped with the loop. Waiters get slots in arrival order, and a waiter cancelled
    before or just after it was handed a slot passes it on (``asyncio.Semaphore`` semantics).

    Args:
        limit: Requests allowed in flight at once on one loop.
    """

    def __init__(self, limit: int = DEFAULT_CONCURRENCY) -> None:
        if limit < 1:
            raise ValueError(f"concurrency limit must be at least 1, got {limit}")
        self.limit = limit
        self._lock = threading.Lock()  # loops in several threads may share this limiter
        self._caps: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopCap] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        return f"ConcurrencyLimiter(limit={self.limit})"

    def _cap(self) -> _LoopCap:
        loop = asyncio.get_running_loop()
        with self._lock:
            cap = self._caps.get(loop)
            if cap is None:
                cap = self._caps[loop] = _LoopCap(asyncio.Semaphore(self.limit))
            return cap

    @property
    def in_use(self) -> int:
        """Slots held on the running event loop (0 outside one)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return 0
        with self._lock:
            cap = self._caps.get(loop)
        return cap.in_use if cap is not None else 0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the running loop's ``limit`` slots for the duration of the block."""
        cap = self._cap()
        async with cap.semaphore:
            cap.in_use += 1
            try:
                yield
            finally:
                cap.in_use -= 1


_default = ConcurrencyLimiter(DEFAULT_CONCURRENCY)


def set_default_concurrency(limit: int) -> None:
    """Change the per-loop cap of clients created without ``concurrency``.

    Every loop's next request waits under the new cap; requests already holding or waiting for a
    slot finish under the old one. Set it before a run starts.
    """
    global _default
    _default = ConcurrencyLimiter(limit)


def default_concurrency() -> int:
    """The per-loop cap in force for clients created without ``concurrency``."""
    return _default.limit


def default_limiter() -> ConcurrencyLimiter:
    """The limiter in force for clients created without ``concurrency``."""
    return _default
