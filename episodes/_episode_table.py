"""A run's episodes as a table: one row per episode, for CSV files and pandas.

``episode_rows(run_dir)`` flattens each episode's last end record: the run's facts (run, config,
benchmark, mode, player, judge, dataset), the episode's (id, item, repeat, succeeded, turns,
reward, error), the item's public metadata as ``meta.<key>``, the benchmark's typed outcome as
``outcome.<field>`` and the model usage per role as ``<role>.calls`` / ``.prompt_tokens`` /
``.completion_tokens`` / ``.cost_usd``. Lists and nested values become JSON text.
``to_pandas(run_dirs)`` gives the rows of one or more runs as a ``pandas.DataFrame`` (pandas is an
optional extra: ``pip install 'lateralgym[pandas]'``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lateralgym.envs import ConfigError, get_benchmark
from lateralgym.episodes._compare import records_csv, run_dirs_under
from lateralgym.episodes._log import STEP_LOG, EpisodeEnd, EpisodeStart, read_log
from lateralgym.episodes._manifest import read_run
from lateralgym.episodes._metrics import MetricsError
from lateralgym.episodes._rollouts import ExportError

__all__ = ["episode_rows", "episodes_csv", "require_pandas", "to_pandas"]


def require_pandas() -> Any:
    """The ``pandas`` module, or an ``ExportError`` saying how to install it."""
    try:
        import pandas  # type: ignore[import-untyped,unused-ignore]
    except ImportError:
        raise ExportError(
            "to_pandas needs pandas, which is not installed: pip install 'lateralgym[pandas]' (or use CSV)"
        ) from None
    return pandas


def _flat(value: Any) -> Any:
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    return value


def episode_rows(run_dir: str | Path) -> list[dict[str, Any]]:
    """One flat dict per episode of a run (its last end record; unfinished episodes are left out).

    Raises:
        MetricsError: ``run_dir`` has no step log.
    """
    run_dir = Path(run_dir)
    log = run_dir / STEP_LOG
    if not log.is_file():
        raise MetricsError(f"{run_dir} has no {STEP_LOG}: pass a run directory made by 'lateralgym run'")
    manifest = read_run(run_dir).manifest
    options = manifest.options if manifest else None
    starts: dict[str, EpisodeStart] = {}
    ends: dict[str, EpisodeEnd] = {}
    for record in read_log(log):
        if isinstance(record, EpisodeStart):
            starts[record.episode_id] = record
        elif isinstance(record, EpisodeEnd):
            ends[record.episode_id] = record
    rows = []
    for episode_id, end in ends.items():
        start = starts.get(episode_id)
        try:
            succeeded = bool(
                end.error is None
                and end.outcome is not None
                and get_benchmark(end.benchmark).metrics.outcome_of(end.outcome).succeeded()
            )
        except (ConfigError, ValidationError):
            succeeded = False
        row: dict[str, Any] = {
            "run_id": end.run_id,
            "config": start.config if start else (manifest.config if manifest else None),
            "benchmark": end.benchmark,
            "mode": start.mode if start else None,
            "player": start.player if start else (options.player if options else None),
            "judge": start.judge if start else (options.judge if options else None),
            "dataset": manifest.dataset if manifest else None,
            "episode_id": episode_id,
            "item_id": end.item_id,
            "repeat": end.repeat,
            "seed": start.seed if start else None,
            "succeeded": succeeded,
            "turns": (end.outcome or {}).get("turns"),
            "reward": end.reward,
            "terminated": end.terminated,
            "truncated": end.truncated,
            "error": end.error,
        }
        row.update({f"meta.{key}": _flat(value) for key, value in end.meta.items()})
        row.update({f"outcome.{key}": _flat(value) for key, value in (end.outcome or {}).items()})
        for role, usage in end.usage.items():
            row.update(
                {
                    f"{role}.calls": usage.calls,
                    f"{role}.prompt_tokens": usage.prompt_tokens,
                    f"{role}.completion_tokens": usage.completion_tokens,
                    f"{role}.cost_usd": usage.cost_usd,
                }
            )
        rows.append(row)
    return rows


def episodes_csv(run_dirs: Sequence[str | Path] | str | Path) -> str:
    """The episodes of one or more runs as CSV text."""
    dirs = run_dirs_under([run_dirs] if isinstance(run_dirs, str | Path) else run_dirs)
    return records_csv([row for d in dirs for row in episode_rows(d)])


def to_pandas(run_dirs: Sequence[str | Path] | str | Path) -> Any:
    """The episodes of one or more runs (or of every run under a folder) as a ``pandas.DataFrame``.

    Raises:
        ExportError: pandas is not installed.
        MetricsError: a directory is not a run.
    """
    pandas = require_pandas()
    dirs = run_dirs_under([run_dirs] if isinstance(run_dirs, str | Path) else run_dirs)
    return pandas.DataFrame([row for d in dirs for row in episode_rows(d)])
