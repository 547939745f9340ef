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
import stat
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
    "MAX_RUN_FILE",
    "read_capped",
    "refuse_links",
    "write_text_atomic",
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


MAX_RUN_FILE = 256 * 2**20
"""The most bytes a run directory's manifest, config or summary (or one step-log line) may hold: far
above any real run's, so a file swapped for an endless one is refused instead of read until memory ends."""


def refuse_links(run_dir: Path) -> None:
    """Refuse a run directory that holds a symbolic link: its files must be its own, or a report or a
    resume would write (or read) through the link, outside the run. ``run_dir`` itself may be a link.

    Raises:
        ConfigError: the first link found (named, with where it points).
    """
    if not run_dir.is_dir():
        return
    pending = [run_dir.resolve()]
    while pending:
        try:
            entries = list(os.scandir(pending.pop()))
        except OSError:
            continue  # unreadable: whoever reads it says so
        for entry in entries:
            if entry.is_symlink():
                where = Path(entry.path).relative_to(run_dir.resolve())
                raise ConfigError(
                    f"{run_dir / where} is a symbolic link (to {os.readlink(entry.path)}): a run directory's files "
                    "must be its own, so nothing is read or written through it; remove the link"
                )
            if entry.is_dir(follow_symlinks=False):
                pending.append(Path(entry.path))


def read_capped(path: Path, limit: int = MAX_RUN_FILE) -> bytes:
    """A run-directory file's bytes, at most ``limit`` (no link followed).

    Raises:
        FileNotFoundError: there is no such file.
        ConfigError: it is a link, not a regular file, or larger than ``limit`` (named).
        OSError: it cannot be read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ConfigError(f"{path} is a symbolic link: a run directory's files must be its own") from None
        raise
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a device (/dev/zero) or a pipe: never read
            raise ConfigError(f"{path} is not a regular file: not a run's file (was it replaced?)")
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise ConfigError(f"{path} holds more than {limit // 2**20} MB: not a run's file (was it replaced?)")
    return data


def write_text_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a new file beside ``path``, then rename it over ``path`` (a link there is replaced,
    never written through; a reader sees the old file or the new one, never half of one)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(tmp, path)


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (``write_text_atomic``: a new file, then a rename)."""
    write_text_atomic(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


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
