"""The runner under misuse: one process per run directory, duplicate records found and reported,
configs that would break a run refused, a full disk that loses nothing, and a resume that applies
its new connection and cache settings to every role."""

from __future__ import annotations

import errno
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llm_server import ScriptedLLMServer

from lateralgym.agents import Agent
from lateralgym.cli import main
from lateralgym.envs import Action, Ask, Commit, ConfigError, EpisodeConfig, LateralEnv, RewardConfig, parse_action
from lateralgym.envs._config import MAX_REWARD
from lateralgym.envs._engine import MAX_ACTION
from lateralgym.episodes import (
    EpisodeEnd,
    EpisodeStart,
    RunLockedError,
    StepLine,
    metrics_from_log,
    read_log,
    read_manifest,
    replay,
    run,
)
from lateralgym.episodes._rundir import locked, new_run_dir
from lateralgym.episodes._viewer import viewer_data

EXE = [sys.executable, "-m", "lateralgym.cli"]
KEY = "sk-hardening-test"
SPLAT = EpisodeConfig.named("splat").model_dump(mode="json")


def dead_url() -> str:
    """The URL of a port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def one_line_error(err: str) -> str:
    """The single ``lateralgym: error:`` line of ``err`` (asserting it is one line and no traceback); a
    warning said before the run started (``--limit``'s) may precede it."""
    lines = [line for line in err.strip().splitlines() if not line.startswith("warning: ")]
    assert len(lines) == 1 and lines[0].startswith("lateralgym: error: "), err
    return lines[0]


def records(run_dir: Path) -> list[Any]:
    return list(read_log(run_dir / "steps.jsonl"))


def assert_each_episode_once(run_dir: Path, planned: int) -> None:
    logged = records(run_dir)
    starts = [r.episode_id for r in logged if isinstance(r, EpisodeStart)]
    ends = [r.episode_id for r in logged if isinstance(r, EpisodeEnd)]
    assert len(starts) == len(set(starts)) == planned and sorted(ends) == sorted(starts)
    assert metrics_from_log(run_dir).duplicates == 0


# -- one process per run directory ---------------------------------------------------------------


def test_two_processes_racing_resume_on_one_run_directory_run_it_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both start at once: one runs the episodes, the other fails at once naming it; the server is
    asked once per episode and the log records each episode once."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    flags = ["--no-progress", "--concurrency", "1"]
    argv = ["run", "riddlesense", "--player", "openai/p?max_retries=0", "--limit", "4", "--no-cache", *flags]
    assert main([*argv, "--base-url", dead_url(), "--out", str(tmp_path), "--no-check"]) == 4  # all to rerun
    (run_dir,) = tmp_path.iterdir()
    one_has_exited = threading.Event()

    def answer_once_a_racer_has_exited(body: Any) -> str:
        # Whoever holds the directory is kept from finishing until the other has given up, so the
        # two surely overlap; without the lock both would wait here and the test would time out.
        assert one_has_exited.wait(timeout=30), "both processes are running the run directory"
        return "Answer: A"

    server = ScriptedLLMServer(responder=answer_once_a_racer_has_exited).start()
    try:
        resume = [*EXE, "run", "--resume", str(run_dir), "--base-url", server.base_url, *flags]
        racers = [subprocess.Popen(resume, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in "ab"]
        while all(proc.poll() is None for proc in racers):
            time.sleep(0.02)
        one_has_exited.set()
        outcomes = {proc.pid: (proc.wait(timeout=120), *proc.communicate()) for proc in racers}
    finally:
        one_has_exited.set()
        server.stop()
    codes = sorted(code for code, _, _ in outcomes.values())
    assert codes == [0, 2], outcomes
    (winner,) = [pid for pid, (code, _, _) in outcomes.items() if code == 0]
    (loser_err,) = [err for code, _, err in outcomes.values() if code == 2]
    assert f"another process (pid {winner}) is running {run_dir}" in one_line_error(loser_err)
    assert server.chat_calls == 4  # not 8: the API spend is not doubled
    assert_each_episode_once(run_dir, 4)


def test_a_locked_run_directory_is_refused_and_a_dead_holder_leaves_no_lock(tmp_path: Path) -> None:
    result = run("brainteaser", player="oracle", limit=3, out=tmp_path, progress=False)
    with locked(result.run_dir):
        with pytest.raises(RunLockedError, match=f"another process \\(pid {os.getpid()}\\)"):
            run(resume=result.run_dir, progress=False)
    # a holder killed mid-run: the OS drops its lock with it
    holder = subprocess.Popen(
        [*EXE, "run", "creativity-interactive", "--player", "human", "--limit", "2", "--out", str(tmp_path / "h")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert holder.stdout is not None
    holder.stdout.readline()  # the human player's first prompt: the run is under way
    holder.kill()
    holder.wait(timeout=30)
    (killed,) = (tmp_path / "h").iterdir()
    assert (killed / "run.lock").exists()
    assert run(resume=killed, agent_factory=lambda seed: _Commits(), progress=False).ran == 2


class _Commits(Agent):
    """A player that commits at once (enough to end any creativity episode)."""

    name = "commits"

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        return Commit(entity="x", part="y", how="z")


# -- duplicate records ---------------------------------------------------------------------------


def test_duplicate_episode_records_are_counted_once_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A hand-made log: episode A recorded twice in full (its second end errored: the last record
    wins), episode B started twice before its end (two racing writers interleaved), episode C
    started again after its end (a second writer killed mid-episode)."""
    result = run("brainteaser", player="oracle", limit=6, out=tmp_path, progress=False)
    log = result.run_dir / "steps.jsonl"
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    a, b, c = list(dict.fromkeys(r["episode_id"] for r in lines))[:3]
    again = [dict(r) for r in lines if r["episode_id"] == a]
    again[-1]["error"] = "RuntimeError: the second writer's copy"
    b_start = next(n for n, r in enumerate(lines) if r["episode_id"] == b)
    c_start = next(r for r in lines if r["episode_id"] == c and r["type"] == "episode_start")
    doubled = [*lines[: b_start + 1], lines[b_start], *lines[b_start + 1 :], *again, c_start]
    log.write_text("".join(json.dumps(r) + "\n" for r in doubled))

    metrics = metrics_from_log(log)
    assert (metrics.duplicates, metrics.episodes, metrics.errored) == (3, 6, 1)
    assert main(["report", str(result.run_dir)]) == 0
    out = capsys.readouterr().out
    assert "warning: 3 episodes are recorded more than once in the step log" in out
    assert "| recorded more than once | 3 |" in (result.run_dir / "report.md").read_text()
    assert main(["replay", str(result.run_dir), "--quiet"]) == 1
    captured = capsys.readouterr()
    assert "3 episodes are recorded more than once" in captured.err and a in captured.err
    assert "replayed 3 episodes" in captured.out and "3 recorded more than once" in captured.out
    assert viewer_data(result.run_dir)["summary"]["duplicates"] == 3
    assert json.loads((result.run_dir / "summary.json").read_text())["duplicates"] == 0  # the run itself was clean


# -- configs refused -----------------------------------------------------------------------------


@given(field=st.sampled_from(sorted(RewardConfig.model_fields)), value=st.floats())
def test_rewards_must_be_finite_and_bounded(field: str, value: float) -> None:
    data = {**SPLAT, "rewards": {field: value}}
    if math.isfinite(value) and abs(value) <= MAX_REWARD:
        assert getattr(EpisodeConfig.from_dict(data).rewards, field) == value
    else:
        with pytest.raises(ConfigError, match=f"field 'rewards.{field}': a reward must be a finite number"):
            EpisodeConfig.from_dict(data)


@pytest.mark.parametrize("text", [".nan", ".inf", "-.inf", "nan", "'inf'", "1e400"])
def test_non_finite_rewards_in_a_yaml_file_are_refused(text: str, tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(
        f"name: x\nbenchmark: splat\nmode: multiturn\nallowed_actions: [ask, commit]\nrewards: {{step: {text}}}\n"
    )
    with pytest.raises(ConfigError, match="rewards.step"):
        EpisodeConfig.from_file(path)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rewards=st.fixed_dictionaries({name: st.floats(-MAX_REWARD, MAX_REWARD) for name in ("correct", "invalid", "step")})
)
def test_any_accepted_rewards_give_a_run_that_reads_back_and_replays(rewards: dict[str, float]) -> None:
    config = EpisodeConfig.from_dict({**SPLAT, "max_turns": 4, "rewards": rewards})
    with tempfile.TemporaryDirectory() as out:
        result = run(config, player="random", limit=3, out=out, progress=False)
        logged = records(result.run_dir)
        assert all(math.isfinite(r.reward) for r in logged if isinstance(r, StepLine | EpisodeEnd))
        assert all(r.divergence is None for r in replay(result.run_dir))


UNSAFE_NAMES = ["..", ".", "../escape", "/tmp/abs", "a/b", "a\\b", "C:x", "x\x00y", " x", "x\n", "\ud800"]


@settings(max_examples=200, deadline=None)
@given(name=st.text(max_size=40) | st.sampled_from(UNSAFE_NAMES))
def test_config_names_name_one_directory_inside_out(name: str) -> None:
    try:
        config = EpisodeConfig.from_dict({**SPLAT, "name": name})
    except ConfigError as exc:
        assert "field 'name'" in str(exc) and "\n" not in str(exc)
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "runs"
        run_dir, run_id = new_run_dir(root, config.name)
        assert run_dir.parent == root and run_dir.is_dir() and run_id.startswith(config.name)
        assert [p.name for p in Path(tmp).iterdir()] == ["runs"]


def test_a_name_that_skipped_validation_cannot_leave_out(tmp_path: Path) -> None:
    escaping = EpisodeConfig.named("splat").model_copy(update={"name": "../escape"})  # model_copy does not validate
    with pytest.raises(ConfigError, match="field 'name'"):
        run(escaping, out=tmp_path / "runs", progress=False)
    with pytest.raises(ConfigError, match="plain file name"):
        new_run_dir(tmp_path / "runs", "../escape")
    assert list(tmp_path.iterdir()) == []


def test_seeds_are_refused_outside_0_to_2_64(tmp_path: Path) -> None:
    from lateralgym.episodes import episode_seed

    for seed in (-1, 2**64):
        with pytest.raises(ConfigError, match="seed"):
            EpisodeConfig.from_dict({**SPLAT, "seed": seed})
        with pytest.raises(ConfigError, match="seed"):
            episode_seed(seed, "item", 0)
    # the two ends of the range draw their own streams (a folded -1 would have been 2**64 - 1)
    assert len({episode_seed(s, "item", 0) for s in (0, 2**32 - 1, 2**32, 2**64 - 1)}) == 4


# -- the action length limit ---------------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(length=st.integers(0, 3 * MAX_ACTION), form=st.sampled_from(["text", "dict", "action"]))
def test_actions_over_the_limit_are_answered_invalid_and_never_parsed(length: int, form: str) -> None:
    question = "é" * length
    action = {
        "text": f"ask: {question}",
        "dict": {"kind": "ask", "question": question},
        "action": Ask(question=question),
    }[form]
    env = LateralEnv(EpisodeConfig.named("splat"))
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(action)
    size = len(f"ask: {question}") if form == "text" else len("ask") + length
    over = size > MAX_ACTION
    assert info["valid_action"] is not over or length == 0
    assert (f"the action is {size} characters long; at most {MAX_ACTION} are read" in obs["text"]) is over
    if over:
        logged = env.records[-1].action
        assert logged["kind"] == "invalid" and len(logged["raw"]) <= 200  # the log keeps only its start


def test_an_overlong_action_in_a_run_replays(tmp_path: Path) -> None:
    class Rambler(Agent):
        def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
            overlong = observation["turn"] == 0
            return parse_action("ask: " + "why " * 2000 if overlong else "commit: it was a dream")

    config = EpisodeConfig.from_dict({**SPLAT, "max_turns": 2})
    result = run(config, agent_factory=lambda seed: Rambler(), limit=2, out=tmp_path, progress=False)
    valid: dict[str, list[bool]] = {}
    for line in records(result.run_dir):
        if isinstance(line, StepLine):
            valid.setdefault(line.episode_id, []).append(line.valid)
    assert list(valid.values()) == [[False, True], [False, True]]
    assert all(r.divergence is None for r in replay(result.run_dir))


# -- a full disk ---------------------------------------------------------------------------------


def test_a_full_disk_mid_run_keeps_the_episodes_written_and_the_run_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc/self/fd to tell the step log's writes apart")
    real_write = os.write
    ended = 0

    def full_after_three_episodes(fd: int, data: bytes) -> int:
        nonlocal ended
        if not os.readlink(f"/proc/self/fd/{fd}").endswith("steps.jsonl"):
            return real_write(fd, data)
        if ended == 3:
            real_write(fd, bytes(data)[: len(data) // 2])  # the disk fills mid-line: a torn line
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        ended += b'"type":"episode_end"' in data
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", full_after_three_episodes)
    argv = ["run", "brainteaser", "--player", "oracle", "--limit", "9", "--out", str(tmp_path), "--no-progress"]
    assert main(argv) == 2
    err = one_line_error(capsys.readouterr().err)
    (run_dir,) = tmp_path.iterdir()
    assert "No space left on device" in err and f"lateralgym run --resume {run_dir}" in err
    kept = {r.episode_id: r for r in records(run_dir) if isinstance(r, EpisodeEnd)}
    assert len(kept) == 3
    monkeypatch.undo()
    assert main(["run", "--resume", str(run_dir), "--no-progress"]) == 0
    assert "6 episodes run, 9 planned" in capsys.readouterr().out
    assert_each_episode_once(run_dir, 9)
    assert all(kept[r.episode_id] == r for r in records(run_dir) if isinstance(r, EpisodeEnd) and r.episode_id in kept)
    assert all(r.divergence is None for r in replay(run_dir))


# -- resume: new connection settings for every role, --no-cache honoured -------------------------


def _is_judge(body: Any) -> bool:
    return "FULL EXPLANATION (secret" in json.dumps(body)


def _asks_and_says_yes(body: dict[str, Any]) -> str:
    return "yes" if _is_judge(body) else "Question: Was it a dream?"


def _splat_llm(tmp_path: Path, *flags: str) -> list[str]:
    return [
        "run",
        "splat",
        "--player",
        "openai/player?max_retries=0",
        "--judge",
        "openai/judge?max_retries=0&samples=3",
        "--max-turns",
        "2",
        "--limit",
        "3",
        "--no-cache",
        "--no-progress",
        "--out",
        str(tmp_path),
        *flags,
    ]


def test_resume_with_a_new_base_url_moves_the_player_and_the_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    old, new = ScriptedLLMServer(responder=_asks_and_says_yes), ScriptedLLMServer(responder=_asks_and_says_yes)
    old.start()
    new.start()
    try:
        old_url = old.base_url
        old.stop()  # the server moved: everything sent to the old URL fails
        assert main(_splat_llm(tmp_path, "--base-url", old_url, "--no-check")) == 4
        (run_dir,) = tmp_path.iterdir()
        assert main(["run", "--resume", str(run_dir), "--base-url", new.base_url, "--no-progress"]) == 0
        bodies = [r.body for r in new.requests if r.path.endswith("/chat/completions")]
    finally:
        new.stop()
    judged = [b for b in bodies if _is_judge(b)]
    assert len(bodies) - len(judged) == 6 and len(judged) == 18  # 3 episodes x 2 turns; the judge's 3 samples kept
    assert read_manifest(run_dir).options.judge == "openai/judge?max_retries=0&samples=3"
    assert metrics_from_log(run_dir).errored == 0


def test_resume_keeps_a_judge_that_had_its_own_server_and_asks_again_for_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    judge, player = ScriptedLLMServer(responder=_asks_and_says_yes), ScriptedLLMServer(responder=_asks_and_says_yes)
    judge.start()
    player.start()
    try:
        with_secret = dead_url().replace("http://", "http://alice:pw-SECRET-9@")
        flags = ["--base-url", with_secret, "--judge-base-url", judge.base_url]
        assert main(_splat_llm(tmp_path, *flags, "--no-check")) == 4
        capsys.readouterr()
        (run_dir,) = tmp_path.iterdir()
        assert "pw-SECRET-9" not in (run_dir / "manifest.json").read_text()
        assert main(["run", "--resume", str(run_dir), "--no-progress"]) == 2
        assert "carried credentials" in one_line_error(capsys.readouterr().err)
        assert main(["run", "--resume", str(run_dir), "--base-url", player.base_url, "--no-progress"]) == 0
    finally:
        judge.stop()
        player.stop()
    assert all(not _is_judge(r.body) for r in player.requests if r.body) and player.chat_calls == 6
    assert all(_is_judge(r.body) for r in judge.requests if r.body) and judge.chat_calls == 18


def test_no_cache_on_resume_is_honoured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server = ScriptedLLMServer(default_reply="Answer: A").start()
    cache = ["--cache-dir", str(tmp_path / "cache")]
    try:
        argv = ["run", "riddlesense", "--player", "openai/p", "--base-url", server.base_url, "--limit", "3", *cache]
        assert main([*argv, "--out", str(tmp_path / "runs"), "--no-progress"]) == 0
        (run_dir,) = (tmp_path / "runs").iterdir()
        assert server.chat_calls == 3
        resume = ["run", "--resume", str(run_dir), "--base-url", server.base_url, *cache, "--no-progress"]
        (run_dir / "steps.jsonl").write_text("")  # as if killed before any episode ended
        assert main(resume) == 0 and server.chat_calls == 3  # the run's cache answered
        (run_dir / "steps.jsonl").write_text("")
        assert main([*resume, "--no-cache"]) == 0 and server.chat_calls == 6  # asked afresh
    finally:
        server.stop()
    assert read_manifest(run_dir).options.use_cache  # the run is still one that uses the cache


def test_the_lock_file_stays_behind_empty_and_locks_nothing(tmp_path: Path) -> None:
    """Empty while nobody holds it, so a process that finds it locked and empty knows the holder is
    about to write its pid (and waits for it) rather than naming a stale one."""
    result = run("riddlesense", player="oracle", limit=2, out=tmp_path, progress=False)
    assert (result.run_dir / "run.lock").read_text() == ""
    assert run(resume=result.run_dir, progress=False).ran == 0
