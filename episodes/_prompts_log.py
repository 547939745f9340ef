"""The exact messages sent to the models of a run, each distinct prompt stored once.

A run's LLM clients hand every request's messages to a ``PromptStore`` (``LLMClient.prompt_sink``),
which writes ``prompts/<request key>.json`` the first time it sees that key. The step log already
carries each call's ``request_key``, so the log stays small (a multi-turn prompt repeats the whole
conversation) while the viewer can show what each call was sent. A cached reply's prompt is stored
too. Request keys are sha256 digests of the request without credentials, and prompts are our own
text plus the dataset's: no key ever reaches these files.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import re
import threading
from pathlib import Path
from typing import Any

__all__ = ["PROMPTS_DIR", "PromptStore", "attach_prompt_store", "read_prompt"]

PROMPTS_DIR = "prompts"
_KEY = re.compile(r"^[0-9a-f]{64}$")

logger = logging.getLogger("lateralgym.prompts")


class PromptStore:
    """Writes each distinct prompt of a run once under ``run_dir/prompts``.

    The files are written by a thread of the store's own, in the order the prompts came, so the
    event loop never waits on the disk (a file's open, write and rename cost more than the rest of
    a call's bookkeeping); ``close`` waits until every prompt handed over is on disk.
    """

    def __init__(self, run_dir: Path) -> None:
        self.directory = Path(run_dir) / PROMPTS_DIR
        self._seen: set[str] = set()
        self._warned = False
        self._made = False
        self._pending: queue.SimpleQueue[tuple[str, bytes] | None] = queue.SimpleQueue()
        self._writer: threading.Thread | None = None

    def add(self, key: str, messages: list[dict[str, Any]]) -> None:
        """Store ``messages`` under ``key`` unless stored before; a failed write is logged, never raised
        (a full disk must not cost the model call: the step log reports it)."""
        if key in self._seen or not _KEY.match(key):
            return
        self._seen.add(key)
        # ASCII escapes: a lone surrogate from a dataset is kept as written, never fails the write.
        # No indent: that would take json's pure-Python encoder, several times slower. Encoded now,
        # so the file holds the messages as they were sent.
        data = (json.dumps({"messages": messages}) + "\n").encode("ascii")
        if self._writer is None:
            self._writer = threading.Thread(target=self._write_pending, name="lateralgym-prompts", daemon=True)
            self._writer.start()
        self._pending.put((key, data))

    def close(self) -> None:
        """Wait until every prompt handed to ``add`` is written (the runner calls it before the run ends)."""
        if self._writer is not None:
            self._pending.put(None)
            self._writer.join()
            self._writer = None

    def _write_pending(self) -> None:
        while (job := self._pending.get()) is not None:
            self._write(*job)

    def _write(self, key: str, data: bytes) -> None:
        directory = os.fspath(self.directory)
        path = os.path.join(directory, f"{key}.json")
        try:
            if not self._made:
                os.makedirs(directory, exist_ok=True)
                self._made = True
            tmp = os.path.join(directory, f"{key}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.replace(tmp, path)  # the same prompt stored before (a resumed run) is simply replaced
        except OSError as exc:
            if not self._warned:
                logger.warning("cannot store prompts in %s: %s", self.directory, exc)
                self._warned = True


def attach_prompt_store(run_dir: Path, *owners: Any) -> PromptStore:
    """Point the LLM client of each owner (a player factory, a judge) that has one at a new store
    (``close`` it when the run ends)."""
    store = PromptStore(run_dir)
    for owner in owners:
        client = getattr(owner, "client", None)
        if client is not None and hasattr(client, "prompt_sink"):
            client.prompt_sink = store.add
    return store


def read_prompt(run_dir: Path, key: str) -> list[dict[str, Any]] | None:
    """The messages stored under ``key``; None when there are none (an old run, or a bad key)."""
    if not _KEY.match(key):
        return None
    path = Path(run_dir) / PROMPTS_DIR / f"{key}.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    messages = data.get("messages") if isinstance(data, dict) else None
    return messages if isinstance(messages, list) else None
