"""Resuming a run: what a resume may and may not change, the servers it reaches, and the step log
made ready for it (partial and errored episodes dropped, but for those that go on where they
stopped, ``_continue.py``; so each episode is counted exactly once).

A resume continues a run exactly as it was started: the config (name, dataset, seed, turn limit),
the player, the judge (and its ``judge_samples``), ``limit``, ``sample`` and ``repeats`` are the run's own; a
caller may repeat them, not change them. How it reaches its servers (``base_url``,
``judge_base_url``), whether it uses the cache and how fast it goes are the resume's to say.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from lateralgym.envs import ConfigError, EpisodeConfig
from lateralgym.episodes._log import EpisodeEnd, read_log
from lateralgym.episodes._manifest import Manifest, recorded_config
from lateralgym.episodes._options import RunOptions
from lateralgym.episodes._rundir import CONFIG_FILE

__all__ = [
    "ResumeRequest",
    "discarded_note",
    "drop_partial_episodes",
    "finished_episodes",
    "resume_options",
    "resume_urls",
]


class ResumeRequest(BaseModel):
    """A run directory to finish, with what the caller says of the run's config: each given value
    must be the run's own (the command line's ``CONFIG``, ``--data``, ``--seed``, ``--max-turns``)."""

    model_config = ConfigDict(frozen=True)

    run_dir: Path
    """The run directory a run made."""
    config: str | None = None
    """The config's name (``CONFIG``)."""
    dataset: str | None = None
    """The dataset file (``--data``)."""
    seed: int | None = None
    """The run seed (``--seed``)."""
    max_turns: int | None = None
    """The turn limit (``--max-turns``)."""


def resume_options(request: ResumeRequest, manifest: Manifest, options: RunOptions) -> tuple[EpisodeConfig, RunOptions]:
    """The config and the options that finish the run in ``request``: the run's own config, player,
    judge, ``judge_samples``, ``limit``, ``sample`` and ``repeats``; the servers from ``resume_urls``; the
    cache as the run was started unless ``options`` says; the rest from ``options``.

    Raises:
        ConfigError: ``request`` or ``options`` would change the run (the message names each flag
            to drop), its ``config.yaml`` is unreadable, or its credentials must be given again.
    """
    started = recorded_config(request.run_dir / CONFIG_FILE)
    own = manifest.options
    # (given, the run's own) for every flag that shapes a run: repeating the run's own is fine
    shaping: dict[str, tuple[object, object]] = {
        "CONFIG": (request.config, started.name),
        "--data": (request.dataset, started.dataset),
        "--player": (options.player, own.player),
        "--judge": (options.judge, own.judge),
        "--judge-samples": (options.judge_samples, own.judge_samples),
        "--limit": (options.limit, own.limit),
        "--sample": (options.sample, own.sample),
        "--seed": (request.seed, started.seed),
        "--max-turns": (request.max_turns, started.max_turns),
        "--repeats": (None if options.repeats == 1 else options.repeats, own.repeats),
    }
    changed = [flag for flag, (given, run_own) in shaping.items() if given is not None and given != run_own]
    if changed:
        raise ConfigError(
            f"--resume continues a run exactly as it was started; drop {', '.join(changed)} "
            "(start a new run to change them)"
        )
    base_url, judge_base_url = resume_urls(manifest, options.base_url, options.judge_base_url)
    resumed = options.merge(
        player=own.player,
        judge=own.judge,
        judge_samples=own.judge_samples,
        limit=own.limit,
        sample=own.sample,
        repeats=own.repeats,
        base_url=base_url,
        judge_base_url=judge_base_url,
        use_cache=own.use_cache if options.use_cache is None else options.use_cache,
    )
    return started, resumed


def resume_urls(manifest: Manifest, base_url: str | None, judge_base_url: str | None) -> tuple[str | None, str | None]:
    """The player's and the judge's server on resume: the ones given, else the run's.

    ``--base-url`` moves every role that followed it when the run started (the judge too, unless the
    run gave it its own ``--judge-base-url``); ``--judge-base-url`` moves the judge. A role whose spec
    names its own ``base_url`` keeps it either way (the spec wins, as when the run started).

    Raises:
        ConfigError: a role's URL carried credentials (never written) and none is given.
    """
    if manifest.redacted_specs:
        raise ConfigError(
            f"this run's {' and '.join(manifest.redacted_specs)} spec carried credentials, which are never written, "
            "so it cannot be resumed as it was started; start a new run, and keep keys in environment variables "
            "(api_key_env=NAME) or give server credentials with --base-url"
        )
    own = manifest.options
    own_judge_url = own.judge_base_url is not None and own.judge_base_url != own.base_url
    player_url = base_url or own.base_url
    judge_url = judge_base_url or (own.judge_base_url if own_judge_url else None) or player_url
    missing = []
    if "player" in manifest.redacted_base_urls and base_url is None:
        missing.append("--base-url")
    if "judge" in manifest.redacted_base_urls and judge_base_url is None and (own_judge_url or base_url is None):
        missing.append("--judge-base-url" if own_judge_url else "--base-url")
    if missing:
        raise ConfigError(
            f"this run's server URL carried credentials, which are never written; give it again with "
            f"{' and '.join(dict.fromkeys(missing))} to resume"
        )
    return player_url, judge_url


def finished_episodes(log_path: Path) -> set[str]:
    """Episode ids that ended without an error; errored ones (an API outage) are run again on resume."""
    if not log_path.exists():
        return set()
    return {r.episode_id for r in read_log(log_path) if isinstance(r, EpisodeEnd) and r.error is None}


def drop_partial_episodes(log_path: Path, keep: set[str] | None = None) -> Path | None:
    """Move the lines of episodes that never ended or ended in an error out of the log (atomically), so
    that resuming runs them afresh; the unfinished episodes in ``keep`` keep theirs (they go on where
    they stopped). Nothing is deleted: the lines moved go, as they were, to a new
    ``steps.discarded-<time>.jsonl`` beside the log, whose path is returned (None: nothing moved)."""
    if not log_path.exists():
        return None
    done = finished_episodes(log_path) | (keep or set())
    kept: list[bytes] = []
    moved: list[bytes] = []
    with log_path.open("rb") as handle:
        for line in handle:
            if not line.strip():
                continue
            (kept if _episode_of(line) in done else moved).append(line if line.endswith(b"\n") else line + b"\n")
    if not moved:
        return None
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")
    discarded = log_path.with_name(f"{log_path.stem}.discarded-{stamp}.jsonl")
    fd = os.open(discarded, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as out:
        out.writelines(moved)
        out.flush()
        os.fsync(out.fileno())
    tmp = log_path.with_name(f".{log_path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
    with os.fdopen(fd, "wb") as out:
        out.writelines(kept)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, log_path)
    return discarded


def _episode_of(line: bytes) -> str | None:
    """The episode a log line belongs to (None: a torn or damaged line, which is moved out)."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    episode = record.get("episode_id") if isinstance(record, dict) else None
    return episode if isinstance(episode, str) else None


def discarded_note(discarded: Path | None) -> str | None:
    """What a resume says when it moved lines out of the log (None when it moved none)."""
    if discarded is None:
        return None
    lines = sum(1 for _ in discarded.open("rb"))
    return (
        f"resume: {lines} logged line(s) of episodes that could not go on (unfinished, errored, or no longer "
        f"matching the log) were moved to {discarded} (kept, not deleted); those episodes run again"
    )
