"""The step log's fsync runs on a timer and at close, not after every episode, and nothing is lost."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lateralgym.episodes import EpisodeEnd, EpisodeStart, read_log, run
from lateralgym.episodes import _log as log_module
from lateralgym.episodes._log import StepLogWriter


def _end(episode: int) -> EpisodeEnd:
    return EpisodeEnd(run_id="r", episode_id=f"i{episode}#0", item_id=f"i{episode}", benchmark="splat")


def test_sync_waits_for_its_interval_and_close_always_syncs(tmp_path: Path) -> None:
    with StepLogWriter(tmp_path / "steps.jsonl", sync_interval_s=3600) as lazy:
        for episode in range(5):
            lazy.write(_end(episode))
            lazy.sync()
        assert lazy.fsyncs == 0
        lazy.sync(force=True)
        assert lazy.fsyncs == 1
        lazy.sync(force=True)  # nothing new written: nothing to make durable
        assert lazy.fsyncs == 1
        lazy.write(_end(5))
    assert lazy.fsyncs == 2  # the close
    assert [r.episode_id for r in read_log(tmp_path / "steps.jsonl")] == [f"i{e}#0" for e in range(6)]

    eager = StepLogWriter(tmp_path / "eager.jsonl", sync_interval_s=0)
    for episode in range(3):
        eager.write(_end(episode))
        eager.sync()
    eager.close()
    assert eager.fsyncs == 3


def test_a_run_syncs_its_log_once_an_interval_not_once_an_episode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With an interval longer than the run, its 12 episodes cost one fsync (at close), and every
    episode's lines are in the log when the run returns."""
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(log_module, "SYNC_INTERVAL_S", 3600.0)
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    result = run("splat", player="heuristic", limit=4, repeats=3, out=tmp_path, progress=False, concurrency=4)
    assert result.ran == 12 and result.errored == 0
    assert len(synced) == 1
    records = list(read_log(result.run_dir / "steps.jsonl"))
    ends = {r.episode_id for r in records if isinstance(r, EpisodeEnd)}
    starts = {r.episode_id for r in records if isinstance(r, EpisodeStart)}
    assert len(ends) == 12 and starts == ends
