"""What a run records of a ``local/`` model it was served by (``ServedModel``), and the ``serving()``
block whose end stops the local servers started in it.

Both are light on purpose: a run's manifest holds ``ServedModel`` and every run is a ``serving()``
block, while the servers themselves (``_local_serve``: the model table, sizing, starting, the key
check) load only when a ``local/`` spec asks for one, and then end with the outermost block.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from pydantic import BaseModel, ConfigDict

__all__ = ["ServedModel", "on_serving_end", "serving"]


class ServedModel(BaseModel):
    """A model a ``local/`` spec was served by, as a run's manifest records it."""

    model_config = ConfigDict(frozen=True)

    spec: str
    """``local/<name>`` or ``local/<path>``, as the spec named it."""
    path: str
    """The GGUF file, absolute."""
    sha256: str
    threads: int
    context: int
    """Context tokens the server was started with."""
    runtime: str
    """What served it (``transformers 5.24.0 (torch 2.13.0+cpu, llguidance 1.9.1)``, ``llama-cpp-python 0.3.36``)."""
    base_url: str
    """Where it answered during the run (a new run or a resume starts it again on a free port)."""


class _Blocks:
    """How deep the ``serving()`` blocks are, and what runs when the outermost one ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth = 0
        self.on_end: list[Callable[[], None]] = []

    @contextlib.contextmanager
    def block(self) -> Iterator[None]:
        with self._lock:
            self._depth += 1
        try:
            yield
        finally:
            with self._lock:
                self._depth -= 1
                last = self._depth == 0
            if last:
                for end in list(self.on_end):
                    end()


_blocks = _Blocks()


def serving() -> contextlib.AbstractContextManager[None]:
    """A block whose end stops the local servers started in it (the outermost block's end stops all)."""
    return _blocks.block()


def on_serving_end(end: Callable[[], None]) -> None:
    """Call ``end`` whenever the outermost ``serving()`` block ends (``_local_serve`` stops its servers)."""
    if end not in _blocks.on_end:
        _blocks.on_end.append(end)
