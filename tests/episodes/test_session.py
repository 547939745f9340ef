"""``EpisodeSession`` and ``EpisodeSessions``: one object owns an episode (its identity, its records written
once), and sessions opened for outside drivers get their items, ids and run directory right."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lateralgym.envs import ConfigError, EpisodeConfig, EpisodeOverError, LateralEnv, load_config_items
from lateralgym.episodes import (
    EpisodeEnd,
    EpisodeSession,
    EpisodeSessions,
    EpisodeSpec,
    EpisodeStart,
    StepLine,
    read_log,
    read_run,
    replay,
)


class ListWriter:
    def __init__(self) -> None:
        self.records: list[Any] = []
        self.syncs = 0

    def write(self, record: Any) -> None:
        self.records.append(record)

    def sync(self) -> None:
        self.syncs += 1


def test_a_session_writes_one_start_its_steps_and_one_end() -> None:
    config = EpisodeConfig.named("splat")
    env = LateralEnv(config)
    item_id = env.benchmark.item_id(env.items[0])
    spec = EpisodeSpec(episode_id=f"{item_id}#3", item_id=item_id, repeat=3, seed=11)
    writer = ListWriter()
    session = EpisodeSession(env, spec, writer=writer, run_id="r1", player="someone")
    with pytest.raises(EpisodeOverError):
        session.step("ask: too early?")
    obs, _ = session.start()
    session.log_start()
    session.step("ask: Did it happen at night?")
    session.step("commit: it was all a dream")
    end = session.finish("stopped by the test")
    assert session.finish() is end and session.done  # written once
    start, *steps, last = writer.records
    assert isinstance(start, EpisodeStart) and isinstance(last, EpisodeEnd) and last is end
    assert all(isinstance(s, StepLine) for s in steps) and [s.step for s in steps] == [1, 2]
    assert {r.episode_id for r in writer.records} == {f"{item_id}#3"} and start.seed == 11
    assert start.observation.text == obs["text"] and start.player == "someone"
    assert end.reward == pytest.approx(session.reward) and end.error == "stopped by the test" and writer.syncs == 1
    assert end.outcome is not None and end.outcome["turns"] == 2


def test_a_session_without_a_writer_keeps_nothing_but_plays_the_same() -> None:
    config = EpisodeConfig.named("brainteaser")
    env = LateralEnv(config)
    item_id = env.benchmark.item_id(env.items[0])
    spec = EpisodeSpec(episode_id=f"{item_id}#0", item_id=item_id, repeat=0, seed=0)
    session = EpisodeSession(env, spec)
    session.start()
    _, reward, terminated, _, _ = session.step("commit: B")
    twin = LateralEnv(config)
    twin.reset(seed=0, options={"item_id": item_id})
    assert (reward, terminated) == twin.step("commit: B")[1:3] and session.done
    assert session.finish().reward == reward


def test_sessions_draw_items_by_seed_and_split_and_number_their_episodes(tmp_path: Path) -> None:
    config = EpisodeConfig.named("riddlesense")
    sessions = EpisodeSessions(config, out=tmp_path)
    first = sessions.open(seed=5, split="test")
    again = sessions.open(seed=5, split="test")
    assert first.spec.item_id == again.spec.item_id in sessions.item_ids("test")
    assert (first.spec.episode_id, again.spec.episode_id) == (f"{first.spec.item_id}#0", f"{first.spec.item_id}#1")
    with pytest.raises(ConfigError, match="split must be 'train' or 'test'"):
        sessions.open(seed=1, split="dev")
    with pytest.raises(ConfigError, match="seed must be a whole number"):
        sessions.open(seed=-1)
    with pytest.raises(ConfigError, match="is not in the train split"):
        sessions.open(item_id=sessions.item_ids("test")[0], split="train")
    for session in (first, again):
        session.start()
        session.log_start()
    first.step("commit: A")
    first.finish()
    sessions.release(first)
    sessions.close()  # the one left open is ended as unfinished
    run = read_run(_only(tmp_path))
    ends = [r for r in read_log(run.log_path) if isinstance(r, EpisodeEnd)]
    assert [e.error for e in ends] == [None, "unfinished: stopped mid-episode (the server or trainer closed)"]
    assert run.manifest is not None and run.manifest.options.player == "remote" and run.manifest.episodes is None
    assert all(r.divergence is None for r in replay(run.run_dir))


def test_an_env_is_reused_only_once_its_session_is_released() -> None:
    config = EpisodeConfig.named("brainteaser")
    sessions = EpisodeSessions(config, items=load_config_items(config))
    held = [sessions.open(seed=n) for n in range(3)]
    assert len({id(s.env) for s in held}) == 3  # every open session has an env of its own
    with pytest.raises(ConfigError, match="finish the session before releasing it"):
        sessions.release(held[0])
    held[0].start()
    held[0].finish()
    sessions.release(held[0])
    assert sessions.open(seed=9).env is held[0].env


def _only(folder: Path) -> Path:
    (path,) = [p for p in folder.iterdir() if p.is_dir()]
    return path
