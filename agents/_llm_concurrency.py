"""Concurrency for the LLM client layer: the request cap and the loop behind ``complete_sync``."""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from typing import Any, TypeVar

T = TypeVar("T")

DEFAULT_CONCURRENCY = 8
"""Requests in flight at once, per event loop, for clients that share the default limiter."""


class ConcurrencyLimiter:
    """Caps requests in flight; share one between clients to cap them together.

    asyncio semaphores belong to one event loop, so the limiter keeps one per
    loop; every ``complete_sync`` call runs on one shared background loop, so sync
    callers in any thread share a single cap.

    Args:
        limit: Requests allowed in flight at once.
    """

    def __init__(self, limit: int = DEFAULT_CONCURRENCY) -> None:
        if limit < 1:
            raise ValueError(f"concurrency limit must be at least 1, got {limit}")
        self.limit = limit
        self._semaphores: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
            weakref.WeakKeyDictionary()
        )

    def __repr__(self) -> str:
        return f"ConcurrencyLimiter(limit={self.limit})"

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one of the ``limit`` slots for the duration of the block."""
        loop = asyncio.get_running_loop()
        semaphore = self._semaphores.get(loop)
        if semaphore is None:
            semaphore = self._semaphores[loop] = asyncio.Semaphore(self.limit)
        async with semaphore:
            yield


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
        future = asyncio.run_coroutine_threadsafe(coro, loop)
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
