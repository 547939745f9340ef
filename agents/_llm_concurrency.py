"""The LLM client layer's request cap, which holds per event loop.

A run's players and judges share the runner's loop, so they share its cap; synchronous calls
(``complete_sync``, and ``LateralEnv.step`` with an LLM judge) all run on the one background loop
of ``lateralgym.envs._sync``, so they share that loop's cap. Two loops (two threads each running
``asyncio.run``) each get a cap of their own.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

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
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any] = weakref.WeakKeyDictionary()

    def __repr__(self) -> str:
        return f"ConcurrencyLimiter(limit={self.limit})"

    def _new_state(self) -> Any:
        """A loop's state, made at its first request (anything with an ``in_use`` count)."""
        return _LoopCap(asyncio.Semaphore(self.limit))

    def _state(self) -> Any:
        loop = asyncio.get_running_loop()
        with self._lock:
            state = self._loops.get(loop)
            if state is None:
                state = self._loops[loop] = self._new_state()
            return state

    def _cap(self) -> _LoopCap:
        cap: _LoopCap = self._state()
        return cap

    @property
    def in_use(self) -> int:
        """Slots held on the running event loop (0 outside one)."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return 0
        with self._lock:
            state = self._loops.get(loop)
        return int(state.in_use) if state is not None else 0

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

    def observe(self, latency_s: float, *, rate_limited: bool) -> None:
        """What one attempt met (its latency, whether the server said 429); a fixed cap ignores it."""


@dataclass
class _Waiting:
    """One loop's state under an adaptive cap (touched only on that loop)."""

    in_use: int = 0
    waiters: deque[asyncio.Future[None]] = field(default_factory=deque)


class AdaptiveLimiter(ConcurrencyLimiter):
    """A cap that finds the server's pace: backs off on 429 and grows while latency holds.

    Additive-increase / multiplicative-decrease, as TCP and inspect_ai's adaptive connections do:
    it starts at ``start`` requests in flight (20, or ``limit`` if lower); a 429 (rate limited)
    halves the allowance, at most once per ``cooldown_s`` (default: one average request latency,
    at least 50 ms — the requests already in flight when the server pushed back all report it,
    and count as one signal); after as many successes as the allowance, with the
    recent latency (an exponential moving average) within ``latency_tolerance`` times the best
    seen, it grows by a quarter (at least one), never above ``limit``. Latency that climbs means
    the server is queueing: the allowance then holds instead of growing. The allowance is shared
    by every loop; each loop counts its own requests in flight against it.

    Args:
        limit: The most requests ever in flight on one loop.
        start: The allowance to begin with (default ``min(20, limit)``).
        cooldown_s: The least time between two halvings (None: the average latency, at least 50 ms).
        latency_tolerance: How far above the best latency the average may be while growing.
    """

    def __init__(
        self,
        limit: int,
        *,
        start: int | None = None,
        cooldown_s: float | None = None,
        latency_tolerance: float = 2.0,
    ) -> None:
        super().__init__(limit)
        self.allowance = max(1, min(limit, start if start is not None else 20))
        """Requests allowed in flight now, per loop (between 1 and ``limit``)."""
        self.cooldown_s = cooldown_s
        self.latency_tolerance = latency_tolerance
        self.peak_allowance = self.allowance
        self.halvings = 0
        """How often a 429 made the allowance halve."""
        self._successes = 0
        self._average: float | None = None
        self._best: float | None = None
        self._last_halving = float("-inf")

    def __repr__(self) -> str:
        return f"AdaptiveLimiter(limit={self.limit}, allowance={self.allowance})"

    def _new_state(self) -> _Waiting:
        return _Waiting()

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold a slot while fewer than ``allowance`` are held on this loop; waiters go in arrival order."""
        state = self._state()
        if state.in_use < self.allowance and not state.waiters:
            state.in_use += 1
        else:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            state.waiters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():  # handed a slot as it was cancelled: pass it on
                    state.in_use -= 1
                    self._wake(state)
                else:
                    state.waiters.remove(waiter)
                raise
        try:
            yield
        finally:
            state.in_use -= 1
            self._wake(state)

    def _wake(self, state: _Waiting) -> None:
        while state.waiters and state.in_use < self.allowance:
            waiter = state.waiters.popleft()
            if not waiter.done():
                state.in_use += 1
                waiter.set_result(None)

    def observe(self, latency_s: float, *, rate_limited: bool) -> None:
        """Halve on a 429 (once per cooldown), grow after a window of successes at a steady latency."""
        if rate_limited:
            now = time.monotonic()
            cooldown = self.cooldown_s if self.cooldown_s is not None else max(0.05, self._average or 0.0)
            if now - self._last_halving >= cooldown:
                self._last_halving = now
                self.allowance = max(1, self.allowance // 2)
                self.halvings += 1
            self._successes = 0
            return
        self._average = latency_s if self._average is None else 0.8 * self._average + 0.2 * latency_s
        self._best = self._average if self._best is None else min(self._best, self._average)
        self._successes += 1
        if self._successes >= self.allowance and self._average <= self.latency_tolerance * self._best:
            self._successes = 0
            self.allowance = min(self.limit, self.allowance + max(1, self.allowance // 4))
            self.peak_allowance = max(self.peak_allowance, self.allowance)
            try:
                state = self._state()
            except RuntimeError:  # observed outside a loop: waiters wake at the next release
                return
            self._wake(state)


_default = ConcurrencyLimiter(DEFAULT_CONCURRENCY)


def set_default_concurrency(limit: int, *, adaptive: bool = False) -> None:
    """Change the per-loop cap of clients created without ``concurrency``.

    Every loop's next request waits under the new cap; requests already holding or waiting for a
    slot finish under the old one. Set it before a run starts. ``adaptive``: an ``AdaptiveLimiter``
    that starts at 20 (or ``limit``), backs off on 429 and grows up to ``limit`` while latency holds.
    """
    global _default
    _default = AdaptiveLimiter(limit) if adaptive else ConcurrencyLimiter(limit)


def default_concurrency() -> int:
    """The per-loop cap in force for clients created without ``concurrency``."""
    return _default.limit


def default_limiter() -> ConcurrencyLimiter:
    """The limiter in force for clients created without ``concurrency``."""
    return _default
