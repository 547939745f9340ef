"""A looping model's megabyte reply is cut before anything reads it, and the run goes on.

SPLAT's player replies a megabyte of prose without a ``?`` (the reply that froze every episode in
flight: ``fallback_move`` was quadratic on it); its judge replies a megabyte of noise around its
label. The run ends with every episode played, each call records what its role's cap cut
(``truncated_chars``), the step log keeps at most the caps, and the console says how many replies
were cut. Another run's server fails some requests: the console says how many were retried.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from llm_server import Fault, ScriptedLLMServer

from lateralgym.cli import main
from lateralgym.envs.support import REPLY_CHAR_CAPS
from lateralgym.episodes import JUDGE_RAW_CHARS, StepLine, read_log

MEGABYTE = 1 << 20
PROSE = "and then the man walked on along the road thinking about the story once more "


def _looping(body: dict[str, Any]) -> str:
    system = str(body["messages"][0]["content"])
    if "FULL EXPLANATION (secret" in system or "secret" in system.lower():  # the judge
        return "yes " + "noise " * (MEGABYTE // 6)
    return (PROSE * (MEGABYTE // len(PROSE) + 1))[:MEGABYTE]


def test_a_megabyte_reply_is_cut_and_the_run_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with ScriptedLLMServer(responder=_looping) as server:
        status = main(
            ["run", "splat", "--player", "openai/looping", "--judge", "openai/judge", "--base-url", server.base_url,
             "--limit", "4", "--max-turns", "3", "--concurrency", "4", "--out", str(tmp_path / "runs"),
             "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
        )  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0, out
    assert "replies cut to the length cap" in out
    run_dir = next((tmp_path / "runs").iterdir())
    log = run_dir / "steps.jsonl"
    longest = max(len(line) for line in log.read_text(encoding="utf-8").splitlines())
    assert longest < 4 * (REPLY_CHAR_CAPS["player"] + REPLY_CHAR_CAPS["judge"] + JUDGE_RAW_CHARS)
    steps = [r for r in read_log(log) if isinstance(r, StepLine)]
    assert len({s.episode_id for s in steps}) == 4 and steps
    for step in steps:
        assert step.llm is not None and step.llm.truncated_chars > 0
        assert len(step.llm.text) <= REPLY_CHAR_CAPS["player"] and step.llm.tokens is None
        # the player's move: the fallback read the cut reply as an explanation attempt
        assert step.action["kind"] == "commit" and len(step.action["answer"]) <= 600
        for call in step.judge_calls:
            assert len(call.text) <= REPLY_CHAR_CAPS["judge"] and call.truncated_chars > 0
        assert step.judge_raw is None or len(step.judge_raw) <= JUDGE_RAW_CHARS
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["llm_usage"]["player"]["truncated"] == len(steps)


def test_the_console_says_how_many_requests_were_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    with ScriptedLLMServer(default_reply="Answer: A") as server:
        server.enqueue(Fault.rate_limit(0.01), Fault.status(503), Fault.rate_limit(0.01))
        status = main(
            ["run", "brainteaser", "--player", "openai/flaky", "--base-url", server.base_url, "--limit", "2",
             "--concurrency", "1", "--out", str(tmp_path / "runs"), "--cache-dir", str(tmp_path / "cache"),
             "--no-progress"]
        )  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0, out
    # --limit 2 runs the first group: an original puzzle with its two reconstructions
    assert "player LLM: 3 calls" in out and "3 requests retried (timeouts, rate limits, server errors)" in out
    summary = json.loads((next((tmp_path / "runs").iterdir()) / "summary.json").read_text(encoding="utf-8"))
    assert summary["llm_usage"]["player"]["retries"] == 3 and summary["llm_usage"]["player"]["attempts"] == 6
