"""The command's exit status and its one-line errors: 0 done, 2 usage/config/data/run-directory
errors, 3 some episodes errored, 4 every episode errored, 130 interrupted; each against the real
test server where a model is involved."""

from __future__ import annotations

import errno
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from llm_server import Fault, ScriptedLLMServer

from lateralgym.cli import main
from lateralgym.episodes import run

EXE = [sys.executable, "-m", "lateralgym.cli"]
KEY = "sk-exit-codes-test"


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("lateralgym: error: "), err
    return lines[0]


def dead_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def llm_run(url: str, out: Path, *flags: str) -> list[str]:
    return [
        "run",
        "riddlesense",
        "--player",
        "openai/p?max_retries=0&timeout=5",
        "--base-url",
        url,
        "--limit",
        "4",
        "--concurrency",
        "1",
        "--no-cache",
        "--no-progress",
        "--out",
        str(out),
        *flags,
    ]


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def test_help_documents_the_exit_codes() -> None:
    for argv in (["--help"], ["run", "--help"]):
        out = subprocess.run([*EXE, *argv], capture_output=True, text=True, timeout=60, check=True).stdout
        assert "exit status:" in out
        for code in ("0 ", "2 ", "3 ", "4 ", "130 "):
            assert f"\n  {code}" in out, (argv, code)
        assert "--resume" in out


def test_3_when_some_episodes_errored_then_0_once_resumed(
    key: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ScriptedLLMServer(default_reply="Answer: A").start()
    try:
        server.enqueue(Fault.status(500))  # the first episode's one call fails, for good (no retries)
        assert main(llm_run(server.base_url, tmp_path)) == 3
        first, last = capsys.readouterr().err.strip().splitlines()
        (run_dir,) = tmp_path.iterdir()
        assert first.startswith("lateralgym: episode rs-sample-01#0 ended in an error (HTTP 500;")  # as it happened
        assert (
            last == f"lateralgym: 1 of 4 episodes ended in an error; rerun them with: lateralgym run --resume {run_dir}"
        )
        assert main(["run", "--resume", str(run_dir), "--no-progress"]) == 0
        assert "1 episodes run, 4 planned" in capsys.readouterr().out
    finally:
        server.stop()


def test_4_when_nothing_worked_a_dead_port(key: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With the check before the run skipped (the check itself: tests/cli/test_loud_failures.py)."""
    assert main(llm_run(dead_url(), tmp_path, "--no-check")) == 4
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and err[0].startswith("lateralgym: episode ") and "(connection;" in err[0]
    err = one_line_error(err[1])
    (run_dir,) = tmp_path.iterdir()
    assert "all 4 episodes run ended in an error" in err and "APIConnectionError" in err
    assert f"lateralgym run --resume {run_dir}" in err
    # a resume on a server that answers now: the rest is done
    server = ScriptedLLMServer(default_reply="Answer: A").start()
    try:
        assert main(["run", "--resume", str(run_dir), "--base-url", server.base_url, "--no-progress"]) == 0
    finally:
        server.stop()


def test_4_when_the_server_refuses_every_request(key: None, tmp_path: Path) -> None:
    """``temperature=inf`` passes the spec's checks but no request carrying it can be sent."""
    server = ScriptedLLMServer(default_reply="Answer: A").start()
    try:
        argv = llm_run(server.base_url, tmp_path)
        argv[argv.index("--player") + 1] += "&temperature=inf"
        assert main(argv) == 4
    finally:
        server.stop()


def test_130_when_interrupted_and_the_run_resumes(tmp_path: Path) -> None:
    server = ScriptedLLMServer(default_reply="Answer: A", latency_s=60).start()
    try:
        proc = subprocess.Popen(
            [*EXE, *llm_run(server.base_url, tmp_path)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "OPENAI_API_KEY": KEY},
        )
        deadline = time.monotonic() + 60
        while server.chat_calls == 0 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        server.stop()
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1].startswith("lateralgym: interrupted; finish the run with")
    (run_dir,) = tmp_path.iterdir()
    fast = ScriptedLLMServer(default_reply="Answer: A").start()
    try:  # the lock went with the interrupted process
        resumed = run(resume=run_dir, base_url=fast.base_url, progress=False)
    finally:
        fast.stop()
    assert resumed.ran == 4 and resumed.errored == 0


def test_130_when_a_person_stops_playing_and_the_run_resumes(tmp_path: Path) -> None:
    """Input that ends (a closed pipe, Ctrl-D) or ``quit`` mid-run: unfinished, so 130 and one line, never 0."""
    play = [*EXE, "run", "creativity-interactive", "--player", "human", "--limit", "2", "--no-progress"]
    for stop, out in (("", tmp_path / "eof"), ("quit\n", tmp_path / "quit")):
        done = subprocess.run(
            [*play, "--out", str(out)], input="commit: a | b | c\n" + stop, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 130, done.stderr
        (run_dir,) = out.iterdir()
        assert [line for line in done.stderr.strip().splitlines() if not line.startswith("warning: ")] == [
            "lateralgym: stopped, so the run is unfinished: the episodes finished are kept, the one under way goes on "
            f"from its last move (the turns played are shown again); finish the run later with: lateralgym run "
            f"--resume {run_dir}"
        ]
    resumed = subprocess.run(
        [*EXE, "run", "--resume", str(run_dir), "--no-progress"],
        input="commit: a | b | c\n",
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "1 episodes run, 2 planned" in resumed.stdout


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--limit", "-1"], "--limit must be 0 or more, got -1"),
        (["--limit", "0"], "nothing to run: --limit 0 selects no item"),
        (["--repeats", "0"], "--repeats must be at least 1, got 0"),
        (["--concurrency", "0"], "--concurrency must be at least 1, got 0"),
        (["--llm-concurrency", "0"], "--llm-concurrency must be at least 1, got 0"),
        (["--judge-samples", "0"], "--judge-samples must be at least 1, got 0"),
        (["--seed", "-1"], "field 'seed': the run seed must be an integer from 0 to 2**64 - 1"),
        (["--seed", str(2**64)], "field 'seed': the run seed must be an integer from 0 to 2**64 - 1"),
        (["--max-turns", "0"], "field 'max_turns'"),
    ],
)
def test_bad_numbers_are_refused_in_one_line_and_make_no_run(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "splat", *flags, "--out", str(tmp_path / "runs"), "--no-progress"]) == 2
    assert message in one_line_error(capsys.readouterr().err)
    assert not (tmp_path / "runs").exists()


def test_resume_refuses_judge_samples_which_would_change_the_judge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = run("splat", player="heuristic", limit=1, out=tmp_path, progress=False).run_dir
    assert main(["run", "--resume", str(run_dir), "--judge-samples", "3"]) == 2
    assert "drop --judge-samples" in one_line_error(capsys.readouterr().err)


def test_the_largest_seed_runs(tmp_path: Path) -> None:
    assert (
        main(["run", "splat", "--seed", str(2**64 - 1), "--limit", "1", "--out", str(tmp_path), "--no-progress"]) == 0
    )


def test_a_config_name_that_leaves_out_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "escape.yaml"
    config.write_text("name: ../../escape\nbenchmark: splat\nmode: multiturn\nallowed_actions: [ask, commit]\n")
    out = tmp_path / "a" / "b"
    assert main(["run", str(config), "--out", str(out), "--no-progress"]) == 2
    assert "field 'name'" in one_line_error(capsys.readouterr().err)
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["escape.yaml"]


# -- --out that cannot hold a run ----------------------------------------------------------------


def _out_file(tmp_path: Path) -> Path:
    path = tmp_path / "a-file"
    path.write_text("not a directory")
    return path


@pytest.mark.parametrize(
    ("where", "reason"),
    [
        (_out_file, "Not a directory"),
        (lambda tmp_path: Path("/dev/null"), "Not a directory"),
        (lambda tmp_path: Path("/sys/lateralgym-runs"), "Operation not permitted"),  # a file system refusing writes
    ],
    ids=["a-file", "dev-null", "sysfs"],
)
def test_out_that_cannot_hold_a_run_is_one_line(
    where: object, reason: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = where(tmp_path)  # type: ignore[operator]
    if str(out).startswith("/sys") and not Path("/sys").is_dir():
        pytest.skip("no /sys here")
    assert main(["run", "splat", "--limit", "1", "--out", str(out), "--no-progress"]) == 2
    err = one_line_error(capsys.readouterr().err)
    assert f"cannot create a run directory in {out} (--out)" in err and reason in err


def test_a_full_disk_at_the_start_leaves_no_half_made_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_text = Path.write_text

    def full_disk(path: Path, *args: Any, **kwargs: Any) -> int:
        if path.name == "config.yaml":
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return write_text(path, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", full_disk)
    assert main(["run", "splat", "--limit", "1", "--out", str(tmp_path), "--no-progress"]) == 2
    err = one_line_error(capsys.readouterr().err)
    assert f"cannot create a run directory in {tmp_path} (--out): No space left on device" in err
    assert list(tmp_path.iterdir()) == []


def test_out_a_read_only_directory_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if os.geteuid() == 0:
        pytest.skip("root writes into read-only directories; the sysfs case covers a refused write")
    read_only = tmp_path / "ro"
    read_only.mkdir(mode=0o555)
    try:
        assert main(["run", "splat", "--limit", "1", "--out", str(read_only), "--no-progress"]) == 2
        assert "Permission denied" in one_line_error(capsys.readouterr().err)
    finally:
        read_only.chmod(0o755)


# -- a run directory whose files are damaged -----------------------------------------------------

DAMAGE = {
    "manifest-not-json": ("manifest.json", b'{"run_id": "x", '),
    "config-not-utf8": ("config.yaml", b"name: splat\xff\xfe\n"),
    "config-not-yaml": ("config.yaml", b"name: [splat\nbenchmark: {\n"),
}
COMMANDS = {
    "resume": ["run", "--resume"],
    "report": ["report"],
    "replay": ["replay"],
    "view": ["view"],
}


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run("splat", player="heuristic", limit=2, out=tmp_path_factory.mktemp("runs"), progress=False).run_dir


@pytest.mark.parametrize("damage", DAMAGE)
@pytest.mark.parametrize("command", COMMANDS)
def test_damaged_run_files_are_named_in_one_line(
    damage: str, command: str, finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name, content = DAMAGE[damage]
    run_dir = tmp_path / "run"
    shutil.copytree(finished_run, run_dir)
    (run_dir / name).write_bytes(content)
    code = main([*COMMANDS[command], str(run_dir)])
    if command == "report" and name == "config.yaml":
        assert code == 0  # a report reads only the log and the manifest
        return
    assert code == 2
    assert f"{run_dir / name}: not " in one_line_error(capsys.readouterr().err)


@pytest.mark.parametrize("command", ["kb", "tasks"])
def test_ctrl_c_in_a_data_build_says_the_same_command_resumes_it(
    command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import importlib

    module = importlib.import_module(f"lateralgym.envs.benchmarks.creativity.commands.{command}")

    def interrupted(args: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(module, "_cmd_stats", interrupted)
    assert main([command, "stats", str(tmp_path)]) == 130
    err = capsys.readouterr().err
    assert "the same command resumes the build from its checkpoints" in err and "run --resume" not in err
