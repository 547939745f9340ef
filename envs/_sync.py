"""The one background event loop behind every synchronous call into async code.

``LateralEnv.step`` with an LLM judge and ``LLMClient.complete_sync`` both run their coroutines
here, on one daemon thread, so synchronous users (a Gymnasium loop, a notebook) share one loop,
one connection pool and one concurrency cap. The async path (the runner) never comes here.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundLoop:
    """One daemon thread running one event loop."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None

    @property
    def started(self) -> bool:
        """Whether the loop's thread has been started."""
        return self._loop is not None

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The loop, started on first use."""
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="lateralgym-sync", daemon=True)
                thread.start()
                self._loop = loop
            return self._loop

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the background loop and wait for its result in this thread.

        Raises:
            RuntimeError: called from a coroutine already running on the background loop.
        """
        loop = self.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            coroutine.close()
            raise RuntimeError("a synchronous call was made on the background loop itself; await the coroutine")
        future = asyncio.run_coroutine_threadsafe(coroutine, loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise


background = BackgroundLoop()
"""The process's one background loop."""


def run_sync(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion from synchronous code, on the background loop."""
    return background.run(coroutine)
