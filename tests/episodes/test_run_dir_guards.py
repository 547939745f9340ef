"""A run directory is data (docs/security.md): links refused, reads capped, damage named in one line, and
resume keeps the lines it cannot continue. Each case failed on fa6f8d5 (a traceback, a write through a link,
an unbounded read, or turns deleted without a word)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lateralgym.envs import ConfigError
from lateralgym.episodes import read_log, read_run, run
from lateralgym.episodes._log import LogError


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return run("splat", player="heuristic", limit=2, out=tmp_path / "runs", progress=False).run_dir


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "lateralgym.cli", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", ["report.md", "viewer.html", "summary.json", "steps.jsonl"])
def test_a_symlinked_file_refuses_the_run_and_nothing_is_written_through_it(
    run_dir: Path, tmp_path: Path, name: str
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("precious", encoding="utf-8")
    target = run_dir / name
    if target.exists():
        target.unlink()
    target.symlink_to(outside)
    for command in (["report"], ["view"], ["run", "--resume"]):
        done = _cli(*command, str(run_dir), "--no-progress") if command[0] == "run" else _cli(*command, str(run_dir))
        assert done.returncode == 2, (command, done.stderr)
        assert "is a symbolic link" in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert outside.read_text(encoding="utf-8") == "precious"


def test_a_symlinked_folder_is_refused_but_the_run_dir_itself_may_be_a_link(run_dir: Path, tmp_path: Path) -> None:
    alias = tmp_path / "latest"
    alias.symlink_to(run_dir)
    assert read_run(alias).manifest is not None  # a link to the run is the user's own
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (run_dir / "prompts").symlink_to(elsewhere)
    with pytest.raises(ConfigError, match="prompts is a symbolic link"):
        read_run(run_dir)


def test_a_file_swapped_for_a_device_or_an_endless_one_is_refused(run_dir: Path) -> None:
    manifest = run_dir / "manifest.json"
    manifest.unlink()
    os.mkfifo(manifest)  # a pipe: opening it to read would block forever
    with pytest.raises(ConfigError, match="not a regular file"):
        read_run(run_dir)
    manifest.unlink()
    with manifest.open("wb") as handle:  # sparse: 300 MB of zero bytes on disk in no space
        handle.truncate(300 * 2**20)
    with pytest.raises(ConfigError, match="more than 256 MB"):
        read_run(run_dir)


def test_a_damaged_log_line_is_one_line_naming_it(run_dir: Path) -> None:
    log = run_dir / "steps.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    for damage, message in (
        (b"[" * 100_000 + b"\n", "nested too deeply"),
        (b'{"type": "step", "episode_id": "\xff\xfe"}\n', "not UTF-8"),
    ):
        log.write_bytes(b"".join([lines[0], damage, *lines[1:]]))
        with pytest.raises(LogError, match=rf"line 2: .*{message}"):
            list(read_log(log))
        done = _cli("report", str(run_dir))
        assert done.returncode != 0 and "Traceback" not in done.stderr and message in done.stderr


def test_resume_moves_the_lines_it_cannot_continue_aside_and_says_so(run_dir: Path) -> None:
    log = run_dir / "steps.jsonl"
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    first = records[0]["episode_id"]
    kept = [r for r in records if not (r["episode_id"] == first and r["type"] == "episode_end")]
    log.write_text("".join(json.dumps(r) + "\n" for r in kept), encoding="utf-8")  # episode 1 never ended
    done = _cli("run", "--resume", str(run_dir), "--no-progress")
    assert done.returncode == 0, done.stderr
    (discarded,) = run_dir.glob("steps.discarded-*.jsonl")
    assert f"moved to {discarded}" in done.stdout
    moved = [json.loads(line) for line in discarded.read_text(encoding="utf-8").splitlines()]
    assert moved and {r["episode_id"] for r in moved} == {first}  # the unfinished turns, kept as they were
    ends = [r for r in read_log(log) if r.type == "episode_end"]
    assert sorted(e.episode_id for e in ends) == sorted({r["episode_id"] for r in records})  # each once


def test_a_log_with_repeated_or_non_positive_step_numbers_is_named(run_dir: Path) -> None:
    log = run_dir / "steps.jsonl"
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    first_step = next(n for n, r in enumerate(records) if r["type"] == "step")
    for number, expected in ((-3, "line"), (0, "line")):
        edited = [dict(r) for r in records]
        edited[first_step]["step"] = number
        log.write_text("".join(json.dumps(r) + "\n" for r in edited), encoding="utf-8")
        with pytest.raises(LogError, match=rf"{expected} {first_step + 1}: not a step-log record"):
            list(read_log(log))
    edited = [dict(r) for r in records]
    episode = records[first_step]["episode_id"]  # episodes run side by side: their lines interleave
    second = next(
        n for n, r in enumerate(records) if r["type"] == "step" and n > first_step and r["episode_id"] == episode
    )
    edited[second]["step"] = edited[first_step]["step"]  # a turn repeated
    log.write_text("".join(json.dumps(r) + "\n" for r in edited), encoding="utf-8")
    done = _cli("replay", "--quiet", str(run_dir))
    assert "step 1: step number differs" in done.stderr and "Traceback" not in done.stderr
    assert done.returncode != 0
