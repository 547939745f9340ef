"""The runner: seeds, repeats, concurrency, errors, resume after a real kill, replay."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import time
import weakref
from pathlib import Path
from typing import Any

import pytest

from lateralgym.agents import Agent, HeuristicAgent
from lateralgym.envs import Action, Commit, EpisodeConfig
from lateralgym.episodes import EpisodeEnd, EpisodeStart, StepLine, read_log, replay, run, transcript
from lateralgym.episodes._metrics import MovesTally, metrics_and_usage
from lateralgym.episodes._resume import drop_partial_episodes


def _actions(run_dir: Path) -> list[tuple[str, int, str, float]]:
    return [
        (r.episode_id, r.step, json.dumps(r.action, sort_keys=True), r.reward)
        for r in read_log(run_dir / "steps.jsonl")
        if isinstance(r, StepLine)
    ]


def test_same_config_seed_and_agents_give_the_same_episodes(tmp_path: Path) -> None:
    a = run("splat", player="random", limit=6, concurrency=3, out=tmp_path / "a", progress=False)
    b = run("splat", player="random", limit=6, concurrency=1, out=tmp_path / "b", progress=False)
    assert sorted(_actions(a.run_dir)) == sorted(_actions(b.run_dir))
    assert a.metrics.headline == b.metrics.headline
    seeded = EpisodeConfig.named("splat").model_copy(update={"seed": 99})
    c = run(seeded, player="random", limit=6, out=tmp_path / "c", progress=False)
    assert sorted(_actions(c.run_dir)) != sorted(_actions(a.run_dir))


def test_run_directory_contents_and_log_contract(tmp_path: Path) -> None:
    result = run("creativity-interactive", player="heuristic", limit=5, out=tmp_path, progress=False)
    manifest = json.loads((result.run_dir / "manifest.json").read_text())
    assert (
        manifest["options"]["player"] == "heuristic"
        and manifest["options"]["judge"] == "exact"
        and len(manifest["episodes"]) == 5
    )
    assert EpisodeConfig.from_file(result.run_dir / "config.yaml").name == "creativity-interactive"
    records = list(read_log(result.run_dir / "steps.jsonl"))
    starts = [r for r in records if isinstance(r, EpisodeStart)]
    ends = [r for r in records if isinstance(r, EpisodeEnd)]
    steps = [r for r in records if isinstance(r, StepLine)]
    assert len(starts) == len(ends) == 5 and len(steps) == sum((e.outcome or {})["turns"] for e in ends)
    assert all(s.schema_version == 2 and s.run_id == result.run_id for s in steps)
    assert all(e.meta["distractor_count"] in (3, 6, 9, 12) for e in ends)
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["episodes"] == 5


def test_repeats_report_best_and_mean(tmp_path: Path) -> None:
    result = run("brainteaser", player="random", limit=9, repeats=3, out=tmp_path, progress=False)
    assert result.planned == 27
    keys = set(result.metrics.headline)
    assert any(k.endswith("_best_of_3") for k in keys) and any(k.endswith("_mean_of_3") for k in keys)


class Exploding(Agent):
    name = "exploding"

    def __init__(self, fail: bool) -> None:
        super().__init__()
        self.fail = fail

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        if self.fail:
            raise RuntimeError("API down")
        return Commit(choice=0)


def test_an_agent_failure_ends_its_episode_not_the_run(tmp_path: Path) -> None:
    result = run(
        "brainteaser", agent_factory=lambda seed: Exploding(fail=seed % 4 == 3), limit=12, out=tmp_path, progress=False
    )
    ends = [r for r in read_log(result.run_dir / "steps.jsonl") if isinstance(r, EpisodeEnd)]
    errored = [e for e in ends if e.error]
    assert len(ends) == 12 and errored and all("API down" in e.error for e in errored)
    assert result.metrics.errored == len(errored)


def test_torn_last_line_and_partial_episode_are_moved_out(tmp_path: Path) -> None:
    result = run("splat", player="heuristic", limit=3, out=tmp_path, progress=False)
    log = result.run_dir / "steps.jsonl"
    lines = log.read_text().splitlines()
    start = next(json.loads(line) for line in lines if '"episode_start"' in line)
    start["episode_id"] = "ghost#0"
    with log.open("a") as handle:
        handle.write(json.dumps(start) + "\n")
        handle.write('{"type": "step", "run_id": "x", "episo')  # torn by a kill
    assert len(list(read_log(log))) == len(lines) + 1  # the torn tail is skipped
    discarded = drop_partial_episodes(log)
    assert log.read_text().splitlines() == lines
    assert discarded is not None and discarded.name.startswith("steps.discarded-")  # moved, not deleted
    moved = discarded.read_text().splitlines()
    assert len(moved) == 2 and json.loads(moved[0])["episode_id"] == "ghost#0" and moved[1].endswith('"episo')
    assert drop_partial_episodes(log) is None  # nothing left to move


def test_replay_matches_and_reports_the_first_divergence(tmp_path: Path) -> None:
    result = run("creativity-interactive", player="heuristic", limit=4, out=tmp_path, progress=False)
    replays = replay(result.run_dir)
    assert len(replays) == 4 and all(r.divergence is None and r.complete for r in replays)
    assert "inspect" in transcript(result.run_dir)
    log = result.run_dir / "steps.jsonl"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    target = next(r for r in records if r["type"] == "step" and r["step"] == 2)
    target["reward"] = 5.0
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    diverged = [r for r in replay(result.run_dir) if r.divergence]
    assert len(diverged) == 1
    d = diverged[0].divergence
    assert d is not None and (d.episode_id, d.step, d.field) == (target["episode_id"], 2, "reward")
    assert d.expected == "5.0"


def _wait_for(predicate: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise TimeoutError("condition not reached")
        time.sleep(0.05)


def _ends(log: Path) -> list[EpisodeEnd]:
    return [r for r in read_log(log) if isinstance(r, EpisodeEnd)] if log.exists() else []


def test_killed_run_resumes_without_redoing_or_losing_episodes(tmp_path: Path) -> None:
    """A real subprocess is SIGKILLed mid-episode; --resume finishes it and counts every episode once."""
    exe = [sys.executable, "-m", "lateralgym.cli"]
    common = ["--player", "human", "--concurrency", "1", "--no-progress"]
    proc = subprocess.Popen(
        [*exe, "run", "creativity-interactive", "--limit", "5", "--out", str(tmp_path), *common[:-1], "--no-progress"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdin is not None
    try:
        # two whole episodes, then half of the third (an inspection), then the kill
        proc.stdin.write("inspect: nothing\ncommit: a | b | c\n" * 2 + "inspect: nothing\n")
        proc.stdin.flush()
        _wait_for(lambda: any(tmp_path.glob("*/steps.jsonl")))
        (run_dir,) = tmp_path.iterdir()
        log = run_dir / "steps.jsonl"

        def third_started() -> bool:
            return len(_ends(log)) == 2 and log.read_text().count('"type":"step"') >= 5

        _wait_for(third_started)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    assert len(_ends(log)) == 2
    before = {e.episode_id: e.model_dump() for e in _ends(log)}
    resumed = subprocess.run(
        [*exe, "run", "--resume", str(run_dir), "--no-progress"],
        input="inspect: nothing\ncommit: a | b | c\n" * 3,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "3 episodes run, 5 planned" in resumed.stdout
    records = list(read_log(log))
    ends = [r for r in records if isinstance(r, EpisodeEnd)]
    starts = [r for r in records if isinstance(r, EpisodeStart)]
    assert sorted(e.episode_id for e in ends) == sorted({e.episode_id for e in ends})
    assert len(ends) == len(starts) == 5
    assert all(before[k] == e.model_dump() for e in ends for k in [e.episode_id] if k in before)
    assert all(r.divergence is None for r in replay(run_dir))


def test_resume_needs_a_run_directory(tmp_path: Path) -> None:
    from lateralgym.envs import ConfigError

    with pytest.raises(ConfigError, match="not a run directory"):
        run("splat", resume=tmp_path, progress=False)


def test_heuristic_agent_spec_is_reproducible() -> None:
    assert HeuristicAgent(seed=1).name == "heuristic"


def test_resume_reruns_errored_episodes_once(tmp_path: Path) -> None:
    from lateralgym.envs import load_sample_items
    from lateralgym.episodes import plan_episodes

    failing = {s.seed for s in plan_episodes(load_sample_items("brainteaser"), 0, limit=9)[::3]}  # 3 of the 9
    first = run(
        "brainteaser", agent_factory=lambda seed: Exploding(fail=seed in failing), limit=9, out=tmp_path, progress=False
    )
    assert first.metrics.errored == 3
    again = run("brainteaser", agent_factory=lambda seed: Exploding(fail=False), resume=first.run_dir, progress=False)
    assert again.ran == 3 and again.metrics.errored == 0
    ends = [r for r in read_log(first.run_dir / "steps.jsonl") if isinstance(r, EpisodeEnd)]
    starts = [r for r in read_log(first.run_dir / "steps.jsonl") if isinstance(r, EpisodeStart)]
    assert len(ends) == len(starts) == 9 and len({e.episode_id for e in ends}) == 9


def test_a_run_that_cannot_start_leaves_no_directory(tmp_path: Path) -> None:
    from lateralgym.envs import ConfigError

    with pytest.raises(ConfigError, match="cannot judge splat"):
        run("splat", judge="exact", out=tmp_path, progress=False)
    assert list(tmp_path.iterdir()) == []


def test_resume_refuses_flags_that_would_change_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from lateralgym.cli import main

    result = run("splat", player="heuristic", limit=2, out=tmp_path, progress=False)
    assert main(["run", "--resume", str(result.run_dir), "--player", "oracle", "--limit", "5"]) == 2
    err = capsys.readouterr().err
    assert "drop --player, --limit" in err


def test_errored_splat_episodes_count_the_runs_own_round_limit(tmp_path: Path) -> None:
    config = EpisodeConfig.named("splat").model_copy(update={"max_turns": 5})

    class Fails(Agent):
        def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
            raise RuntimeError("API down")

    result = run(config, agent_factory=lambda seed: Fails(), limit=2, out=tmp_path, progress=False)
    assert result.metrics.errored == 2 and result.metrics.headline["rnd"] == 5.0


class _Cycle:
    """An object in a reference cycle: only the cyclic collector frees it."""

    def __init__(self) -> None:
        self.me = self


class FreezeWatcher(Agent):
    """Commits option 0, noting how many objects the collector has frozen and whether a cycle the
    agent drops is still collected during the run."""

    name = "freeze-watcher"
    seen: list[tuple[int, bool]] = []

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        dropped = weakref.ref(_Cycle())
        gc.collect()
        FreezeWatcher.seen.append((gc.get_freeze_count(), dropped() is None))
        return Commit(choice=0)


def _watched_run(tmp_path: Path) -> list[tuple[int, bool]]:
    FreezeWatcher.seen = []
    run("brainteaser", agent_factory=lambda seed: FreezeWatcher(), limit=3, out=tmp_path, progress=False)
    return FreezeWatcher.seen


def test_a_run_freezes_what_existed_and_still_collects_what_it_makes(tmp_path: Path) -> None:
    assert gc.get_freeze_count() == 0
    before = weakref.ref(_Cycle())  # garbage from before the run: frozen with the rest, freed after it
    seen = _watched_run(tmp_path)
    assert len(seen) == 3 and all(frozen > 1000 and collected for frozen, collected in seen)
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert before() is None


def test_a_process_that_freezes_or_turns_the_collector_off_is_left_as_it_is(tmp_path: Path) -> None:
    gc.freeze()
    try:
        mine = gc.get_freeze_count()  # falls as frozen objects are freed (by their reference counts)
        assert all(frozen <= mine for frozen, _ in _watched_run(tmp_path / "frozen"))
        assert mine / 2 < gc.get_freeze_count() <= mine  # not thawed by the run
    finally:
        gc.unfreeze()
    gc.disable()
    try:
        assert all(frozen == 0 for frozen, _ in _watched_run(tmp_path / "off"))
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("config", ["brainteaser", "splat", "creativity-interactive"])
def test_a_new_runs_summary_is_what_its_log_reads_back(tmp_path: Path, config: str) -> None:
    """A new run tallies its records as they are written; the summary is the one the log gives read back."""
    if config == "brainteaser":  # errored episodes too
        result = run(
            config, agent_factory=lambda seed: Exploding(fail=seed % 3 == 0), limit=9, out=tmp_path, progress=False
        )
        assert result.errored
    else:
        result = run(config, player="random", limit=6, repeats=2, out=tmp_path, progress=False)
    moves = MovesTally()
    metrics, usage = metrics_and_usage(result.run_dir / "steps.jsonl", moves)
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert result.metrics == metrics and result.usage == usage and result.moves == moves.totals()
    assert summary == {
        **metrics.model_dump(mode="json"),
        "moves": moves.totals().model_dump(),
        "llm_usage": {role: u.model_dump() for role, u in usage.items()},
    }
