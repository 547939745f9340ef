"""The judge is a first-class, async, accounted model caller: its calls are logged like the player's,
counted in usage, bounded only by the run's caps, and cancelled with the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer, count_words
from test_llm_runs import splat_actor

from lateralgym.episodes import EpisodeEnd, StepLine, read_log, run

KEY = "sk-judge-accounting-test"


def llm_splat_run(server: ScriptedLLMServer, out: Path, **kwargs: Any) -> Any:
    """A SPLAT run with an LLM player and an LLM judge on ``server``, no cache."""
    return run(
        "splat",
        player="openai/test-player",
        judge="openai/test-judge",
        base_url=server.base_url,
        use_cache=False,
        out=out,
        progress=False,
        **kwargs,
    )


def is_judge(body: Any) -> bool:
    return "FULL EXPLANATION (secret" in json.dumps(body)


def prompt_words(body: dict[str, Any]) -> int:
    return sum(count_words(m["content"]) for m in body["messages"])


def test_judge_calls_are_logged_and_counted_like_the_players(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server = ScriptedLLMServer(responder=splat_actor).start()
    try:
        result = llm_splat_run(server, tmp_path, limit=4)
        judge_requests = [r.body for r in server.requests if r.path.endswith("/chat/completions") and is_judge(r.body)]
    finally:
        server.stop()
    records = list(read_log(result.run_dir / "steps.jsonl"))
    steps = [r for r in records if isinstance(r, StepLine)]
    judge_calls = [call for s in steps for call in s.judge_calls]
    assert judge_calls and all(c.role == "judge" and c.model == "openai/test-judge" for c in judge_calls)
    assert all(s.llm is not None and s.llm.role == "player" for s in steps)
    # The log's judge calls are the server's judge requests, token for token.
    assert len(judge_calls) == len(judge_requests) == 12  # 4 puzzles x (2 questions + 1 explanation)
    assert sum(c.prompt_tokens for c in judge_calls) == sum(prompt_words(b) for b in judge_requests)
    # Episode usage and the run's summary count them under the judge's role.
    ends = [r for r in records if isinstance(r, EpisodeEnd)]
    assert sum(e.usage["judge"].calls for e in ends) == 12
    summary = json.loads((result.run_dir / "summary.json").read_text())
    judge = summary["llm_usage"]["judge"]
    assert judge["calls"] == 12 and judge["prompt_tokens"] == sum(c.prompt_tokens for c in judge_calls)
    assert judge["completion_tokens"] == sum(c.completion_tokens for c in judge_calls) > 0
    assert result.usage["judge"].calls == 12 and result.usage["player"].calls == 12


def test_the_judge_is_bounded_by_the_runs_caps_not_by_a_thread_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    # The server shares this process (and its two cores) with the run, so a long latency keeps the
    # test about where the judge's calls wait, not about how fast one process can make them.
    server = ScriptedLLMServer(responder=splat_actor, latency_s=0.5).start()
    try:
        # 70 episodes: more than the 64 in flight
        result = llm_splat_run(server, tmp_path, repeats=2, concurrency=64, llm_concurrency=64)
        judge_peak = server.peak_in_flight(is_judge)
        overall = server.max_in_flight
    finally:
        server.stop()
        from lateralgym.agents import set_default_concurrency

        set_default_concurrency(8)
    assert result.metrics.episodes == 70 and result.metrics.errored == 0
    # The server counts a request until its handler returns, a moment after the client has its reply
    # and has handed its slot on: a request or two of overlap is that race, not a broken cap.
    assert overall <= 64 + 2
    # Episodes move in lockstep (player call, judge call, ...): the judge's requests fill the cap.
    # With the old thread round trip the judge stayed at the default pool's 6 workers.
    assert judge_peak >= 24, judge_peak  # (the old thread pool capped it at 6; 2 busy cores smear the lockstep)


def test_ctrl_c_stops_a_run_with_a_slow_judge_and_resume_finishes_it(tmp_path: Path) -> None:
    """SIGINT while the judge's request hangs: the run stops at once (no waiting for the reply),
    keeps what finished, and ``--resume`` completes every episode exactly once."""
    slow = ScriptedLLMServer(responder=lambda body: "yes", latency_s=60.0).start()
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    command = [
        sys.executable,
        "-m",
        "lateralgym.cli",
        "run",
        "splat",
        "--player",
        "heuristic",
        "--judge",
        "openai/slow-judge?timeout=120&max_retries=0",
        "--base-url",
        slow.base_url,
        "--limit",
        "3",
        "--out",
        str(tmp_path),
        "--no-progress",
        "--no-cache",
    ]
    try:
        process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while slow.chat_calls == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert slow.chat_calls > 0, "the judge never called the server"
        process.send_signal(signal.SIGINT)
        # Well before the 60 s reply would arrive: the in-flight judge call was cancelled.
        _, err = process.communicate(timeout=30)
    finally:
        slow.stop()
    assert process.returncode == 130, err
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    assert f"--resume {run_dir}" in err  # the real path, ready to paste
    fast = ScriptedLLMServer(responder=lambda body: "irrelevant").start()
    try:
        result = run("splat", resume=run_dir, base_url=fast.base_url, progress=False)
    finally:
        fast.stop()
    ends = [r for r in read_log(run_dir / "steps.jsonl") if isinstance(r, EpisodeEnd)]
    assert result.metrics.episodes == 3 and len(ends) == len({e.episode_id for e in ends}) == 3
