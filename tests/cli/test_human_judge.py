"""A person as the SPLAT judge (``--judge human``) in a real pseudo-terminal: an LLM player on the
loopback test server asks, the person answers y/n/i and grades the explanation; the replies are
logged like any judge's (agreement labels by playing), the player never sees the hidden answer,
and Ctrl-D stops the run, unfinished (exit status 130)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer

from lateralgym.cli import main
from lateralgym.envs import load_sample_items
from lateralgym.envs.benchmarks.splat import judge_labels_from_run
from lateralgym.episodes import EpisodeEnd, StepLine, read_log

pexpect = pytest.importorskip("pexpect", reason="human-judge tests drive a real terminal with pexpect")

KEY = "sk-human-judge-test"
QUESTION = "Was the audience deaf?"
EXPLANATION = "The audience was deaf and applauded in sign language, so it was silent."


def _player(body: dict[str, Any]) -> str:
    turns = sum(1 for m in body["messages"] if m["role"] == "assistant")
    return f"Question: {QUESTION}" if turns == 0 else f"Answer: {EXPLANATION}"


def _spawn(server: ScriptedLLMServer, out: Path, *extra: str) -> Any:
    args = ["-m", "lateralgym.cli", "run", "splat", "--player", "openai/p?max_retries=0", "--judge", "human"]
    args += ["--base-url", server.base_url, "--limit", "2", "--max-turns", "4", "--no-cache", "--out", str(out), *extra]
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    return pexpect.spawn(sys.executable, args, encoding="utf-8", timeout=60, dimensions=(40, 200), env=env)


def test_a_person_judges_an_llm_player_the_labels_are_logged_and_ctrl_d_stops(tmp_path: Path) -> None:
    puzzle = load_sample_items("splat")[0]
    server = ScriptedLLMServer(responder=_player).start()
    try:
        child = _spawn(server, tmp_path)
        child.expect("HIDDEN ANSWER \\(only you see this\\): " + puzzle.answer[:30])
        child.expect(f"The player asks: {QUESTION}")
        child.expect(r"\[y/n/i\] > ")
        child.sendline("maybe")  # not a label: asked again, nothing recorded
        child.expect("type one of: i, n, y")
        child.expect(r"\[y/n/i\] > ")
        child.sendline("y")
        child.expect(f"The player explains: {EXPLANATION}")
        child.expect(r"\[c\]orrect or \[n\]ot yet > ")
        child.sendline("c")
        child.expect("HIDDEN ANSWER \\(only you see this\\): ")  # the second puzzle
        child.expect(r"\[y/n/i\] > ")
        child.sendeof()  # Ctrl-D: a clean stop, the episode left for --resume
        child.expect("finish the run later with: lateralgym run --resume")
        child.expect(pexpect.EOF)
        child.close()
        bodies = [json.dumps(r.body) for r in server.requests if r.method == "POST"]
    finally:
        server.stop()
    assert child.exitstatus == 130  # the run is unfinished
    assert len(bodies) == 3 and "Yes." in bodies[1]
    assert not any(puzzle.answer[:40] in body for body in bodies)  # the player never saw the answer
    (run_dir,) = tmp_path.iterdir()
    steps = [r for r in read_log(run_dir / "steps.jsonl") if isinstance(r, StepLine)]
    assert [(s.judge_label, s.judge_raw) for s in steps] == [("yes", "human: y"), ("correct", "human: c")]
    (end,) = [r for r in read_log(run_dir / "steps.jsonl") if isinstance(r, EpisodeEnd)]  # the second: unfinished
    assert end.outcome is not None and end.outcome["solved"] is True and end.episode_id == f"{puzzle.id}#0"
    labels = judge_labels_from_run(run_dir)  # labels for `lateralgym agreement`, made by judging
    assert [(label.question, label.answer, label.verdict) for label in labels] == [
        (QUESTION, "yes", None),
        (None, None, "correct"),
    ]
    assert json.loads((run_dir / "manifest.json").read_text())["options"]["judge"] == "human"


def test_the_human_judge_is_for_splat_and_not_for_a_person_playing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "brainteaser", "--judge", "human", "--out", str(tmp_path)]) == 2
    assert "the human judge judges SPLAT situation puzzles (splat), not brainteaser" in capsys.readouterr().err
    assert main(["run", "splat", "--judge", "human", "--player", "human", "--out", str(tmp_path)]) == 2
    assert "a person cannot both play and judge" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
