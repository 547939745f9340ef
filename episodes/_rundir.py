"""A run directory on disk: making one (``new_run_dir``), holding its lock (``locked``), writing its
JSON files atomically (``write_json``), and the errors of a directory that cannot be made or is
taken.

A run holds an OS lock on its directory (``run.lock``, ``fcntl.flock``) for its whole life, so a
second run or resume of the same directory fails at once instead of writing the log under the
first. What the files hold is in ``_manifest.py`` (``manifest.json``, ``read_run``) and ``_log.py``
(``steps.jsonl``).
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import re
import secrets
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from lateralgym.agents import safe_spec
from lateralgym.envs import ConfigError, LateralGymError
from lateralgym.envs.support import check_name
from lateralgym.episodes._options import HUMAN

__all__ = [
    "CONFIG_FILE",
    "LOCK_FILE",
    "MANIFEST",
    "SUMMARY",
    "RunDirError",
    "RunLockedError",
    "locked",
    "new_run_dir",
    "os_reason",
    "player_slug",
    "write_json",
]

MANIFEST = "manifest.json"
CONFIG_FILE = "config.yaml"
"""The resolved config a run ran, with the player and judge that actually ran."""
SUMMARY = "summary.json"
"""The metrics and the model usage per role, written when a run (or a resume) ends."""
LOCK_FILE = "run.lock"
"""The file a running run holds its directory's lock on (it stays behind; the lock does not)."""


class RunLockedError(ConfigError):
    """Another process is running (or resuming) the run directory; wait for it, or stop it first."""


class RunDirError(LateralGymError):
    """A run directory cannot be created or written (a full disk, no permission, ``--out`` not a directory).

    Raised mid-run, the episodes already written are kept: ``--resume`` finishes the run.
    """


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (a temporary file, then a rename)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def player_slug(player: str | None) -> str:
    """The player's model (or offline player) as a folder-name part: ``openai/gpt-4o-mini?temperature=0``
    gives ``gpt-4o-mini``, ``anthropic/claude-3-5-haiku-latest`` ``claude-3-5-haiku-latest``; at most 40
    characters of letters, digits, ``.``, ``_`` and ``-``."""
    if not player:
        return ""
    model = safe_spec(player).split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9._]+", "-", model).strip("-.")[:40].strip("-.")


def new_run_dir(root: Path, config_name: str, player: str | None = None, judge: str | None = None) -> tuple[Path, str]:
    """A fresh ``root/<config>-<player model>-<timestamp>-<random>`` directory and its run id (the model
    part from ``player_slug``; absent when no player is given), with ``-human-judge`` after the model when
    a person judged, so such a run is told apart from the same player's scored ones at a glance.

    Raises:
        ConfigError: ``config_name`` is not one plain file name (the directory would not be in ``root``).
        RunDirError: the directory cannot be created (``root`` is a file, read-only, on a full disk).
    """
    try:
        check_name(config_name)
    except ValueError as exc:
        raise ConfigError(f"config {exc}") from None
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    slug = "-".join(part for part in (player_slug(player), "human-judge" if judge == HUMAN else "") if part)
    run_id = f"{config_name}-{slug + '-' if slug else ''}{stamp}-{secrets.token_hex(3)}"
    path = root / run_id
    if path.resolve().parent != root.resolve():  # a second guard: the name is checked above
        raise ConfigError(f"config name {config_name!r} would put the run outside {root}")
    try:
        path.mkdir(parents=True, exist_ok=False)
    except OSError as exc:
        raise RunDirError(f"cannot create a run directory in {root} (--out): {os_reason(exc)}") from exc
    return path, run_id


def os_reason(exc: OSError) -> str:
    """An OS error in a few words (``Not a directory``, ``No space left on device``), with its file."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno == errno.ENOTDIR:
        reason += " (a path on the way is a file)"
    return f"{reason}: {exc.filename}" if exc.filename else reason


@contextmanager
def locked(run_dir: Path) -> Iterator[None]:
    """Hold the run directory's lock (``run.lock``, an exclusive ``flock``) for the ``with`` block.

    The OS drops the lock when the process ends however it ends, so a killed run never leaves a
    stale one. The file holds the owner's pid while it is held (for the message a second process
    gets) and is emptied on release.

    Raises:
        RunLockedError: another process holds the lock (the message names its pid).
        RunDirError: the lock file cannot be made or locked (a read-only or full disk, a file
            system without locks).
    """
    try:
        fd = os.open(run_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise RunDirError(f"cannot lock {run_dir}: {os_reason(exc)}") from exc
    try:
        _lock(fd, run_dir)
        try:
            yield
        finally:
            with suppress(OSError):  # empty while nobody holds it: a reader waits for the pid
                os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # releases the lock


def _lock(fd: int, run_dir: Path) -> None:
    try:
        if sys.platform != "win32":  # no flock on Windows: one run per directory is then up to you
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        pid = f"{os.getpid()}\n".encode("ascii")
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, pid)  # written, then cut to length: never empty once written
        os.ftruncate(fd, len(pid))
    except BlockingIOError:
        raise RunLockedError(
            f"another process (pid {_holder(fd)}) is running {run_dir}; wait for it to finish, or stop it and "
            "then resume"
        ) from None
    except OSError as exc:
        raise RunDirError(f"cannot lock {run_dir}: {os_reason(exc)}") from exc


def _holder(fd: int) -> str:
    """The lock holder's pid from the lock file; the holder writes it just after taking the lock, so
    an empty file is read again for a moment before the pid is called unknown."""
    for _ in range(50):
        os.lseek(fd, 0, os.SEEK_SET)
        holder = os.read(fd, 32).decode("ascii", "replace").strip()
        if holder:
            return holder
        time.sleep(0.01)
    return "unknown"
