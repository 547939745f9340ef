"""A person's episode killed mid-way goes on at the next turn on ``--resume``: the earlier turns are
replayed from the log (the judge not asked again) and shown again; a log the env no longer agrees
with starts the episode again at turn 1, with a line saying why."""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

pexpect = pytest.importorskip("pexpect", reason="human-play tests drive a real terminal with pexpect")

from llm_server import ScriptedLLMServer  # noqa: E402

from lateralgym.episodes import EpisodeEnd, EpisodeStart, StepLine, read_log  # noqa: E402

KEY = "sk-human-resume-test"
PUZZLE = {
    "id": "lantern-1",
    "title": "The Unlit Lantern",
    "story": "Every night Maren carries a lantern up the hill to the old mill, yet she never lights it.",
    "answer": "The lantern holds her grandfather's ashes; she walks it to the mill where he worked every night.",
    "difficulty": 1,
    "clues": ["The lantern is an urn.", "Her grandfather worked at the mill."],
}
QUESTIONS = ["Is the lantern used for light?", "Is someone dead?", "Does the mill matter?"]


def write_puzzles(path: Path, **changes: Any) -> Path:
    path.write_text(json.dumps({**PUZZLE, **changes}) + "\n", encoding="utf-8")
    return path


def spawn(*args: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    return pexpect.spawn(
        sys.executable,
        ["-m", "lateralgym.cli", "run", *args],
        encoding="utf-8",
        timeout=60,
        dimensions=(60, 200),
        env=env,
    )


def start(tmp_path: Path, data: Path, *extra: str, env: dict[str, str] | None = None) -> pexpect.spawn:
    out = str(tmp_path / "runs")
    return spawn("splat", "--data", str(data), "--player", "human", "--no-progress", "--out", out, *extra, env=env)


def ask(child: pexpect.spawn, turn: int, question: str) -> None:
    child.expect(rf"\[turn {turn}\] > ")
    child.sendline(question)
    child.expect(r"(Yes|No|Irrelevant)\.")


def only_run(tmp_path: Path) -> Path:
    (run_dir,) = [p for p in (tmp_path / "runs").iterdir() if p.is_dir()]
    return run_dir


def moves(run_dir: Path) -> list[tuple[Any, ...]]:
    """The episode's moves as logged: each step's action, reply, reward and judge label, then the outcome."""
    out: list[tuple[Any, ...]] = []
    for record in read_log(run_dir / "steps.jsonl"):
        if isinstance(record, StepLine):
            out.append((record.step, record.action, record.reply.sha256, record.reward, record.judge_label))
        elif isinstance(record, EpisodeEnd):
            out.append(("end", record.reward, record.outcome, record.error))
    return out


def finish(child: pexpect.spawn, turn: int) -> None:
    child.expect(rf"\[turn {turn}\] > ")
    child.sendline(f"Answer: {PUZZLE['answer']}")
    child.expect("Correct!")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_a_person_killed_mid_episode_goes_on_at_the_next_turn_with_the_earlier_turns_shown(tmp_path: Path) -> None:
    data = write_puzzles(tmp_path / "puzzles.jsonl")
    child = start(tmp_path / "a", data)
    ask(child, 1, QUESTIONS[0])
    ask(child, 2, QUESTIONS[1])
    child.expect(r"\[turn 3\] > ")
    child.kill(signal.SIGKILL)  # no quit, no clean-up: the log holds two steps and no end
    child.expect(pexpect.EOF)
    child.close()
    run_dir = only_run(tmp_path / "a")
    assert [type(r).__name__ for r in read_log(run_dir / "steps.jsonl")] == ["EpisodeStart", "StepLine", "StepLine"]

    again = spawn("--resume", str(run_dir))
    again.expect("an episode left under way goes on from its last move")
    again.expect("resumed: the 2 turns you played before")
    again.expect(PUZZLE["story"])
    again.expect(rf"\[turn 1\] > ask: {QUESTIONS[0]}")
    again.expect(rf"\[turn 2\] > ask: {QUESTIONS[1]}")
    ask(again, 3, QUESTIONS[2])
    finish(again, 4)

    # The same moves without the kill: the log is the same, step for step.
    uninterrupted = start(tmp_path / "b", data)
    for turn, question in enumerate(QUESTIONS, start=1):
        ask(uninterrupted, turn, question)
    finish(uninterrupted, 4)
    resumed = moves(run_dir)
    assert resumed == moves(only_run(tmp_path / "b"))
    assert [m[0] for m in resumed] == [1, 2, 3, 4, "end"]
    records = list(read_log(run_dir / "steps.jsonl"))
    assert sum(isinstance(r, EpisodeStart) for r in records) == 1  # one episode, counted once


def test_an_llm_judge_is_not_asked_again_for_the_replayed_turns(tmp_path: Path) -> None:
    def judge(body: dict[str, Any]) -> str:
        text = json.dumps(body)
        return "correct" if "proposes an explanation" in text and "ashes" in text.split("secret")[-1] else "yes"

    server = ScriptedLLMServer(responder=judge, require_key=KEY).start()
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    try:
        data = write_puzzles(tmp_path / "puzzles.jsonl")
        child = start(
            tmp_path, data, "--judge", "openai/test-judge", "--base-url", server.base_url, "--no-cache", env=env
        )
        ask(child, 1, QUESTIONS[0])
        ask(child, 2, QUESTIONS[1])
        child.expect(r"\[turn 3\] > ")
        child.kill(signal.SIGKILL)
        child.expect(pexpect.EOF)
        child.close()
        asked = server.chat_calls
        assert asked >= 2  # a judge's call for each question

        run_dir = only_run(tmp_path)
        again = spawn("--resume", str(run_dir), env=env)
        again.expect("resumed: the 2 turns you played before")
        again.expect(r"\[turn 2\] > ask: ")
        again.expect(r"\[turn 3\] > ")
        assert server.chat_calls == asked  # the two answered turns came from the log
        again.sendline(f"Answer: {PUZZLE['answer']}")
        again.expect("Correct!")
        again.expect(pexpect.EOF)
        again.close()
        assert again.exitstatus == 0
        total = server.chat_calls
    finally:
        server.stop()
    assert total > asked  # the explanation was graded
    records = list(read_log(run_dir / "steps.jsonl"))
    steps = [r for r in records if isinstance(r, StepLine)]
    assert [s.step for s in steps] == [1, 2, 3] and [s.judge_label for s in steps] == ["yes", "yes", "correct"]
    (end,) = [r for r in records if isinstance(r, EpisodeEnd)]
    # the episode's usage counts every judge call it made, before and after the resume
    assert end.error is None and end.outcome is not None and end.outcome["solved"]
    assert end.usage["judge"].calls == sum(len(s.judge_calls) for s in steps) == total


def test_a_log_the_env_no_longer_agrees_with_starts_the_episode_again_at_turn_1(tmp_path: Path) -> None:
    data = write_puzzles(tmp_path / "puzzles.jsonl")
    child = start(tmp_path, data)
    ask(child, 1, QUESTIONS[0])
    child.expect(r"\[turn 2\] > ")
    child.kill(signal.SIGKILL)
    child.expect(pexpect.EOF)
    child.close()
    run_dir = only_run(tmp_path)
    write_puzzles(data, story="Every night Maren carries a lantern to the mill; it has no wick.")  # the data changed

    again = spawn("--resume", str(run_dir))
    again.expect(
        "episode lantern-1#0 starts again at turn 1: its first observation is not the logged one "
        r"\(was the config, the dataset or the judge changed since\?\)"
    )
    finish(again, 1)
    records = list(read_log(run_dir / "steps.jsonl"))
    assert [type(r).__name__ for r in records] == ["EpisodeStart", "StepLine", "EpisodeEnd"]
    assert "no wick" in (records[0].observation.text or "")
