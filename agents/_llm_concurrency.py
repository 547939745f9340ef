"""Concurrency for the LLM client layer: the request cap and the loop behind ``complete_sync``."""

from __future__ import annotations

import asyncio
import contextvars
import threading
from collections import deque
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_CONCURRENCY = 8
"""Requests in flight at once, in the whole process, for clients that share the default limiter."""

_Waiter = tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]

_blocking_a_loop = contextvars.ContextVar("lateralgym_llm_blocking_a_loop", default=False)
"""Set for a ``complete_sync`` call made from a thread whose own event loop it blocks."""


class ConcurrencyLimiter:
    """Caps requests in flight across every event loop and thread; share one to cap clients together.

    A player awaiting ``complete`` on the runner's loop and a judge calling ``complete_sync`` (on
    the background loop) count against the same ``limit``. Slots are handed to waiters in arrival
    order, whichever loop they wait on; a waiter cancelled before or just after it was handed a
    slot passes it on, so cancellation never leaks one.

    One exception: ``complete_sync`` called from inside a running event loop (which blocks that
    loop; ``await complete`` is the way there) does not wait for a slot, since the blocked loop's
    own requests could never give theirs back. Such a call can exceed the cap by one per blocked
    loop.

    Args:
        limit: Requests allowed in flight at once.
    """

    def __init__(self, limit: int = DEFAULT_CONCURRENCY) -> None:
        if limit < 1:
            raise ValueError(f"concurrency limit must be at least 1, got {limit}")
        self.limit = limit
        self._lock = threading.Lock()
        self._in_use = 0
        self._waiters: deque[_Waiter] = deque()

    def __repr__(self) -> str:
        return f"ConcurrencyLimiter(limit={self.limit}, in_use={self.in_use})"

    @property
    def in_use(self) -> int:
        """Slots held right now."""
        with self._lock:
            return self._in_use

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the ``limit`` slots for the duration of the block."""
        if _blocking_a_loop.get():
            yield
            return
        await self._acquire()
        try:
            yield
        finally:
            self._release()

    async def _acquire(self) -> None:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self._in_use < self.limit and not self._waiters:
                self._in_use += 1
                return
            waiter: _Waiter = (loop, loop.create_future())
            self._waiters.append(waiter)
        try:
            await waiter[1]
        except BaseException:
            with self._lock:
                granted = waiter not in self._waiters
                if not granted:
                    self._waiters.remove(waiter)
            if granted:  # handed a slot on the way out: pass it on
                self._release()
            raise

    def _release(self) -> None:
        with self._lock:
            while self._waiters:
                loop, future = self._waiters.popleft()
                try:
                    loop.call_soon_threadsafe(_wake, future)
                except RuntimeError:  # the waiter's loop is closed: it will never take the slot
                    continue
                return  # the slot goes straight to the waiter; in_use is unchanged
            self._in_use -= 1


def _wake(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


_default = ConcurrencyLimiter(DEFAULT_CONCURRENCY)


def set_default_concurrency(limit: int) -> None:
    """Change the process-wide cap used by clients created without ``concurrency``.

    Requests already waiting keep the old cap; new ones get the new one.
    """
    global _default
    _default = ConcurrencyLimiter(limit)


def default_concurrency() -> int:
    """The process-wide cap in force."""
    return _default.limit


class BackgroundLoop:
    """One daemon thread running one event loop, where every ``complete_sync`` runs."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def started(self) -> bool:
        """Whether the loop's thread has been started."""
        return self._loop is not None

    def _get_loop(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="lateralgym-llm-sync", daemon=True)
                thread.start()
                self._loop = loop
            return self._loop

    def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the background loop and wait for its result in this thread."""
        loop = self._get_loop()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            coro.close()
            raise RuntimeError("complete_sync was called on the client's own loop; use 'await complete(...)'")
        # The task below runs in a copy of this thread's context, so it sees the flag.
        token = _blocking_a_loop.set(running is not None)
        try:
            future = asyncio.run_coroutine_threadsafe(coro, loop)
        finally:
            _blocking_a_loop.reset(token)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise


sync_loop = BackgroundLoop()
"""The one loop every ``complete_sync`` call runs on."""


def default_limiter() -> ConcurrencyLimiter:
    """The process-wide limiter in force."""
    return _default
