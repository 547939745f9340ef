"""Resuming a run: what a resume may and may not change, the servers it reaches, and the step log
made ready for it (partial and errored episodes dropped, but for those that go on where they
stopped, ``_continue.py``; so each episode is counted exactly once).

A resume continues a run exactly as it was started: the config (name, dataset, seed, turn limit),
the player, the judge (and its ``judge_samples``), ``limit`` and ``repeats`` are the run's own; a
caller may repeat them, not change them. How it reaches its servers (``base_url``,
``judge_base_url``), whether it uses the cache and how fast it goes are the resume's to say.
"""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from lateralgym.envs import ConfigError, EpisodeConfig
from lateralgym.episodes._log import EpisodeEnd, read_log
from lateralgym.episodes._manifest import Manifest
from lateralgym.episodes._options import RunOptions
from lateralgym.episodes._rundir import CONFIG_FILE

__all__ = ["ResumeRequest", "drop_partial_episodes", "finished_episodes", "resume_options", "resume_urls"]


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
    judge, ``judge_samples``, ``limit`` and ``repeats``; the servers from ``resume_urls``; the
    cache as the run was started unless ``options`` says; the rest from ``options``.

    Raises:
        ConfigError: ``request`` or ``options`` would change the run (the message names each flag
            to drop), its ``config.yaml`` is unreadable, or its credentials must be given again.
    """
    started = EpisodeConfig.from_file(request.run_dir / CONFIG_FILE)
    own = manifest.options
    # (given, the run's own) for every flag that shapes a run: repeating the run's own is fine
    shaping: dict[str, tuple[object, object]] = {
        "CONFIG": (request.config, started.name),
        "--data": (request.dataset, started.dataset),
        "--player": (options.player, own.player),
        "--judge": (options.judge, own.judge),
        "--judge-samples": (options.judge_samples, own.judge_samples),
        "--limit": (options.limit, own.limit),
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


def drop_partial_episodes(log_path: Path, keep: set[str] | None = None) -> int:
    """Rewrite the log without the lines of episodes that never ended or ended in an error
    (atomically), so that resuming runs them afresh; the unfinished episodes in ``keep`` keep
    theirs (they go on where they stopped). Returns the number of lines dropped."""
    if not log_path.exists():
        return 0
    done = finished_episodes(log_path) | (keep or set())
    kept = [r.model_dump_json(exclude_none=True) for r in read_log(log_path) if r.episode_id in done]
    raw_lines = sum(1 for line in log_path.read_text(encoding="utf-8").splitlines() if line.strip())
    dropped = raw_lines - len(kept)
    if dropped:
        tmp = log_path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
        os.replace(tmp, log_path)
    return dropped
