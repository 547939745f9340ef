"""``CheckpointStore``: the append-only record store that makes a data build resumable.

Every stage of a build writes each validated record under a key (the inputs it was made from); a
killed build reopens the store and skips what is there, and a finished build rerun costs nothing.
The format is plain JSONL a person can read: ``root/<stage>.jsonl``, one
``{"key": ..., "record": {...}}`` per line, in first-written order.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any

from lateralgym.databuild._errors import DataBuildError

__all__ = ["CheckpointStore"]

_STAGE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_SYNC_EVERY_RECORDS = 64
_SYNC_EVERY_S = 1.0


class CheckpointStore:
    """Append-only JSONL per stage under ``root/<stage>.jsonl``; one ``{"key":..., "record":{...}}`` per line.

    Each ``put`` is written and flushed at once (a killed process loses nothing it wrote), and the
    files are fsynced per batch (every 64 records or second, and at ``close``) against power loss.
    An exclusive ``flock`` on ``root/.lock`` is held while the store is open, so a second build of
    the same directory fails with a one-line error instead of interleaving records. A torn last line
    (a write killed half-way) is ignored and truncated when its stage is first read.

    Args:
        root: The checkpoint directory (created if missing).

    Raises:
        DataBuildError: Another build holds the directory, or it cannot be created.

    Example:
        >>> import tempfile
        >>> with CheckpointStore(Path(tempfile.mkdtemp())) as store:
        ...     store.put("entities", "kitchen/0", {"name": "ladle"})
        ...     store.get("entities", "kitchen/0")
        {'name': 'ladle'}
    """

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            self._lock_file: IO[str] | None = open(self.root / ".lock", "a+", encoding="utf-8")  # noqa: SIM115
        except OSError as exc:
            raise DataBuildError(f"{self.root}: cannot create the checkpoint directory ({exc.strerror})") from None
        try:
            fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._lock_file.close()
            self._lock_file = None
            raise DataBuildError(
                f"{self.root}: another build is using this directory; wait for it to finish or stop it, then rerun"
            ) from None
        self._records: dict[str, dict[str, dict[str, Any]]] = {}
        self._files: dict[str, IO[str]] = {}
        self._unsynced = 0
        self._last_sync = time.monotonic()
        self._mutex = threading.Lock()

    # -- public API ----------------------------------------------------------------------

    def get(self, stage: str, key: str) -> dict[str, Any] | None:
        """The record stored under ``key`` in ``stage``, or None."""
        with self._mutex:
            return self._stage(stage).get(key)

    def put(self, stage: str, key: str, record: Mapping[str, Any]) -> None:
        """Store ``record`` under ``key``; a key already stored keeps its first record (idempotent).

        Raises:
            DataBuildError: The store is closed, or the record is not JSON-serialisable.
        """
        with self._mutex:
            records = self._stage(stage)
            if key in records:
                return
            try:
                line = json.dumps({"key": key, "record": dict(record)}, ensure_ascii=False, allow_nan=False)
            except (TypeError, ValueError) as exc:
                raise DataBuildError(f"stage {stage!r}, key {key!r}: record is not JSON ({exc})") from None
            handle = self._writer(stage)
            handle.write(line + "\n")  # one write: a kill leaves at most a torn last line
            handle.flush()
            records[key] = json.loads(line)["record"]
            self._unsynced += 1
            if self._unsynced >= _SYNC_EVERY_RECORDS or time.monotonic() - self._last_sync >= _SYNC_EVERY_S:
                self._sync()

    def records(self, stage: str) -> dict[str, dict[str, Any]]:
        """Every record of ``stage``, key -> record, in first-written order (a copy)."""
        with self._mutex:
            return dict(self._stage(stage))

    def stages(self) -> list[str]:
        """The stages with a file under ``root``, sorted."""
        return sorted(path.stem for path in self.root.glob("*.jsonl"))

    def sync(self) -> None:
        """fsync every stage file written since the last sync."""
        with self._mutex:
            self._sync()

    def close(self) -> None:
        """Sync and close every file and release the directory lock (idempotent)."""
        with self._mutex:
            self._sync()
            for handle in self._files.values():
                handle.close()
            self._files.clear()
            if self._lock_file is not None:
                fcntl.flock(self._lock_file.fileno(), fcntl.LOCK_UN)
                self._lock_file.close()
                self._lock_file = None

    @property
    def closed(self) -> bool:
        """Whether ``close`` was called."""
        return self._lock_file is None

    def __enter__(self) -> CheckpointStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"CheckpointStore({str(self.root)!r})"

    # -- internals -----------------------------------------------------------------------

    def _path(self, stage: str) -> Path:
        if not _STAGE_NAME.match(stage):
            raise DataBuildError(f"stage name {stage!r} must be letters, digits, '_', '.' or '-'")
        return self.root / f"{stage}.jsonl"

    def _stage(self, stage: str) -> dict[str, dict[str, Any]]:
        records = self._records.get(stage)
        if records is None:
            if self.closed:
                raise DataBuildError(f"{self.root}: the checkpoint store is closed")
            records = self._records[stage] = _load(self._path(stage))
        return records

    def _writer(self, stage: str) -> IO[str]:
        handle = self._files.get(stage)
        if handle is None:
            handle = self._files[stage] = open(self._path(stage), "a", encoding="utf-8")  # noqa: SIM115
        return handle

    def _sync(self) -> None:
        for handle in self._files.values():
            handle.flush()
            os.fsync(handle.fileno())
        self._unsynced = 0
        self._last_sync = time.monotonic()


def _load(path: Path) -> dict[str, dict[str, Any]]:
    """Read one stage file, truncating a torn last line; a bad complete line is an error."""
    if not path.exists():
        return {}
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1  # everything after the last newline is a torn write
    if end < len(data):
        with open(path, "r+b") as handle:
            handle.truncate(end)
            handle.flush()
            os.fsync(handle.fileno())
    records: dict[str, dict[str, Any]] = {}
    for number, raw in enumerate(data[:end].splitlines(), start=1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
            key, record = entry["key"], entry["record"]
            if not isinstance(key, str) or not isinstance(record, dict):
                raise TypeError("key must be a string and record an object")
        except (ValueError, KeyError, TypeError) as exc:
            raise DataBuildError(
                f"{path}, line {number}: not a checkpoint record ({exc}); delete that line (or the file) and rerun"
            ) from None
        records.setdefault(key, record)  # first written wins, as in put
    return records
