"""``EpisodeSessions``: episode sessions of one config for drivers outside the runner (a server's
clients, TRL's ``environment_factory``, the verifiers plugin), with one run directory they all log to.

The config's items are loaded, checked and indexed once and its judge built once; each ``open``
gives a new ``EpisodeSession`` on a fresh env sharing them. An episode's item is the one asked for
(``item_id``), else drawn from its seed among the items of ``split`` (all when None): the draw is
``numpy.random.default_rng(seed).integers(n)``, and the env is then reset on that item with that
seed, exactly as ``lateralgym run`` resets an episode, so a served episode replays like a run's.
Its ``episode_id`` is ``<item id>#<n>``, n counting the item's episodes in this run.

With ``out``, the sessions write one run directory like ``lateralgym run``'s (``config.yaml``,
``manifest.json`` with the player ``remote`` and no plan, ``steps.jsonl``; ``summary.json`` on
``close``), held locked while open, so ``replay``, ``view``, ``report`` and ``compare`` read it.
Records from several threads are written one at a time.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any, cast

import numpy as np
import yaml

from lateralgym.agents import safe_spec
from lateralgym.envs import ConfigError, EpisodeConfig, Judge, LateralEnv, Split, load_config_items, split_items
from lateralgym.episodes._log import STEP_LOG, EpisodeEnd, EpisodeStart, StepLine, StepLogWriter, read_log
from lateralgym.episodes._manifest import new_manifest
from lateralgym.episodes._options import EpisodeSpec, RunOptions
from lateralgym.episodes._roles import build_judge
from lateralgym.episodes._rundir import CONFIG_FILE, MANIFEST, SUMMARY, locked, new_run_dir, write_json
from lateralgym.episodes._session import EpisodeSession

__all__ = ["REMOTE_PLAYER", "EpisodeSessions"]

REMOTE_PLAYER = "remote"
"""The player a served run's records name: whoever drives the sessions (a client, a trainer's model)."""

SEED_LIMIT = 2**32
"""Seeds drawn for a session opened without one are below this."""


class _LockedWriter:
    """A step-log writer shared by sessions that may finish on other threads (a server's clean-up)."""

    def __init__(self, writer: StepLogWriter) -> None:
        self._writer = writer
        self._lock = threading.Lock()

    def write(self, record: EpisodeStart | StepLine | EpisodeEnd) -> None:
        with self._lock:
            self._writer.write(record)

    def sync(self) -> None:
        with self._lock:
            self._writer.sync()

    def close(self) -> None:
        with self._lock:
            self._writer.close()


class EpisodeSessions:
    """Opens episode sessions of one config (see the module docstring).

    Args:
        config: the config (an ``EpisodeConfig`` or a shipped name).
        items: the items (default: the config's dataset, or the sample data).
        judge: the judge (default: the one ``options.judge`` or the config names, built once).
        options: the judge's settings (``judge``, ``judge_samples``, ``judge_base_url``, the cache), as
            ``lateralgym run`` takes them; the run records them.
        out: where the run directory goes (None: nothing is logged).

    Raises:
        ConfigError: a bad config, dataset or judge; ``RunDirError`` when ``out`` cannot be written.
    """

    def __init__(
        self,
        config: EpisodeConfig | str,
        *,
        items: Sequence[Any] | None = None,
        judge: Judge | None = None,
        options: RunOptions | None = None,
        out: Path | None = None,
    ) -> None:
        self.config = config if isinstance(config, EpisodeConfig) else EpisodeConfig.named(config)
        options = (options or RunOptions()).with_config(self.config)
        given = items if items is not None else load_config_items(self.config)
        if judge is None:
            judge = build_judge(self.config, options)
        first = LateralEnv(self.config, items=given, judge=judge)  # a wrong item type or judge fails here
        self.judge: Judge = first.judge
        self.items = first.items
        self.benchmark = first.benchmark
        self._envs = [first]
        self._splits: dict[str, list[str]] = {}
        self._counts: dict[str, int] = {}
        self._open: dict[int, EpisodeSession] = {}
        """Sessions opened and not yet released (each ended as unfinished if the sessions close first)."""
        self._lock = threading.Lock()
        self._held = ExitStack()
        self._writer: _LockedWriter | None = None
        self.run_dir: Path | None = None
        self.run_id = ""
        if out is not None:
            self._start_run(Path(out), options)

    def _start_run(self, out: Path, options: RunOptions) -> None:
        judge_spec = str(options.judge)
        config = self.config.model_copy(update={"player": REMOTE_PLAYER, "judge": safe_spec(judge_spec)})
        run_dir, run_id = new_run_dir(out, config.name, REMOTE_PLAYER, judge=judge_spec)
        self._held.enter_context(locked(run_dir))
        (run_dir / CONFIG_FILE).write_text(
            yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
        manifest = new_manifest(run_id, config, options.merge(out=out), judge_spec, None, player=REMOTE_PLAYER)
        client = getattr(self.judge, "client", None)
        local = getattr(client, "local", None) if client is not None else None
        if local is not None:  # a local/ judge's model file, with its sha256, as a run records it
            manifest = manifest.model_copy(update={"served": [local]})
        write_json(run_dir / MANIFEST, manifest.model_dump(mode="json"))
        self._writer = _LockedWriter(StepLogWriter(run_dir / STEP_LOG))
        self.run_dir, self.run_id = run_dir, run_id

    def item_ids(self, split: str | None = None) -> list[str]:
        """The ids of the items of ``split`` (``train`` / ``test``; None: all), in dataset order.

        Raises:
            ConfigError: ``split`` is neither ``train`` nor ``test``, or it holds no item.
        """
        key = split or ""
        if key not in self._splits:
            benchmark = self.benchmark
            if split is None:
                chosen = list(self.items)
            elif split in ("train", "test"):
                chosen = split_items(self.items, cast(Split, split))
            else:
                raise ConfigError(f"split must be 'train' or 'test', got {split!r}")
            self._splits[key] = [benchmark.item_id(item) for item in chosen]
        ids = self._splits[key]
        if not ids:
            raise ConfigError(f"the {split} split of config {self.config.name!r} holds no item")
        return ids

    def open(self, *, seed: int | None = None, item_id: str | None = None, split: str | None = None) -> EpisodeSession:
        """A new session (not started: call ``start``), on ``item_id`` or an item drawn from ``seed``.

        Raises:
            ConfigError: a seed outside ``0 .. 2**64-1``, an unknown item or split, or an item outside ``split``.
        """
        if seed is None:
            seed = secrets.randbelow(SEED_LIMIT)
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64:
            raise ConfigError(f"seed must be a whole number from 0 to 2**64 - 1, got {seed!r}")
        if item_id is None:
            pool = self.item_ids(split)
            item_id = pool[int(np.random.default_rng(seed).integers(len(pool)))]
        else:
            item_id = str(item_id)
            if item_id not in self.items.positions:
                raise ConfigError(
                    f"no item with id {item_id!r} in config {self.config.name!r} ({len(self.items)} items)"
                )
            if split is not None and item_id not in set(self.item_ids(split)):
                raise ConfigError(f"item {item_id!r} is not in the {split} split")
        with self._lock:
            repeat = self._counts.get(item_id, 0)
            self._counts[item_id] = repeat + 1
            env = self._envs.pop() if self._envs else LateralEnv(self.config, items=self.items, judge=self.judge)
        spec = EpisodeSpec(episode_id=f"{item_id}#{repeat}", item_id=item_id, repeat=repeat, seed=seed)
        session = EpisodeSession(
            env, spec, writer=self._writer, run_id=self.run_id, run_dir=self.run_dir, player=REMOTE_PLAYER
        )
        with self._lock:
            self._open[id(session)] = session
        return session

    def release(self, session: EpisodeSession) -> None:
        """Give a finished session's env back for the next one (an env holds one episode at a time)."""
        if session.end is None:
            raise ConfigError("finish the session before releasing it")
        with self._lock:
            if self._open.pop(id(session), None) is not None:
                self._envs.append(session.env)

    def close(self) -> None:
        """End the sessions still open as unfinished, close the log, write ``summary.json`` (the metrics
        of the finished episodes) and unlock the run."""
        try:
            with self._lock:
                left = list(self._open.values())
            for session in left:
                if session.started and session.end is None:
                    session.finish("unfinished: stopped mid-episode (the server or trainer closed)")
            with self._lock:
                self._open.clear()
            if self._writer is not None and self.run_dir is not None:
                self._writer.close()
                self._writer = None
                from lateralgym.episodes._metrics import MetricsError, compute_metrics

                try:
                    metrics = compute_metrics(read_log(self.run_dir / STEP_LOG))
                except MetricsError:  # no episode was played
                    return
                write_json(self.run_dir / SUMMARY, metrics.model_dump(mode="json"))
        finally:
            self._held.close()
