"""Whole runs against a server whose replies are hostile text: every run ends with its summary, the
step log reads back, and a rerun replays the cached replies without a request.

Once, a reply whose JSON decoded to a lone surrogate (``"\\udc00"``) could not be written to the
step log: with an offline judge the run died outside any error handling (a traceback, no summary),
and the reply was cached, so every rerun died again without a request.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from llm_server import Fault, Reply, ScriptedLLMServer

from lateralgym.agents._llm_secrets import redact
from lateralgym.envs._calls import writable
from lateralgym.episodes import EpisodeEnd, StepLine, read_log, run

PIECES = ("\udc00", "\ud800", "\x00", "\x1b[2J", "\u202e", "\u200f", "😀", "commit: ", " | ", "\r\n", "\ufeff")
hostile = st.lists(st.one_of(st.sampled_from(PIECES), st.text(max_size=8)), max_size=8).map("".join)


def received(sent: str) -> str:
    """What a client receives for ``sent``: through JSON, then made writable."""
    return writable(json.loads(json.dumps(sent)))


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as started:
        yield started


def _steps(run_dir: Path) -> list[StepLine]:
    return sorted((r for r in read_log(run_dir / "steps.jsonl") if isinstance(r, StepLine)), key=lambda s: s.episode_id)


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=hostile.filter(lambda t: bool(received(t).strip())), served_by=hostile, finish_reason=hostile)
@example(text="\udc00", served_by="m", finish_reason="stop")
@example(text="commit: \udc00 | x | y", served_by="m\ud800", finish_reason="st\udc00op")
def test_a_run_with_an_offline_judge_survives_any_reply_and_its_rerun_replays_it(
    server: ScriptedLLMServer, text: str, served_by: str, finish_reason: str
) -> None:
    server.reset()
    server.enqueue(*[Reply(text, model=served_by or None, finish_reason=finish_reason or "stop")] * 2)
    expected = received(text)  # (blank replies are retried: tests/agents/test_llm_hostile.py)
    with tempfile.TemporaryDirectory() as tmp:
        kwargs: dict[str, Any] = {
            "player": "openai/m?max_retries=2",
            "judge": "exact",
            "base_url": server.base_url,
            "limit": 2,
            "concurrency": 1,
            "cache_dir": Path(tmp) / "cache",
            "progress": False,
        }
        first = run("creativity-static", out=Path(tmp) / "a", **kwargs)
        calls = server.chat_calls
        second = run("creativity-static", out=Path(tmp) / "b", **kwargs)

        for result in (first, second):
            assert (result.run_dir / "summary.json").is_file() and result.ran == 2
            (result.run_dir / "steps.jsonl").read_bytes().decode("utf-8")  # strict
            ends = [r for r in read_log(result.run_dir / "steps.jsonl") if isinstance(r, EpisodeEnd)]
            assert len(ends) == 2 and not any(e.error for e in ends)
        logged = [s.llm for s in _steps(first.run_dir) if s.llm is not None]
        assert [call.text for call in logged] == [expected] * 2
        shown = [json.dumps(call.model_dump(mode="json"), ensure_ascii=False) for call in logged]
        if all(redact(one) == one for one in shown):
            assert server.chat_calls == calls  # the rerun sent nothing
            replayed = [s.llm for s in _steps(second.run_dir) if s.llm is not None]
            assert [call.text for call in replayed] == [expected] * 2 and all(c.cache_hit for c in replayed)


def test_a_splat_run_with_an_llm_judge_survives_hostile_text_from_both_roles(server: ScriptedLLMServer) -> None:
    server.default_reply = "Question: is it \udc00\u202e about 😀\x00?"
    server.enqueue(Fault.null(), Fault.non_utf8(), Fault.empty())  # the player's first call, retried
    with tempfile.TemporaryDirectory() as tmp:
        result = run(
            "splat",
            player="openai/m?max_retries=6",
            judge="openai/j?max_retries=6&max_reasks=1",
            base_url=server.base_url,
            limit=2,
            cache_dir=Path(tmp) / "cache",
            out=Path(tmp) / "runs",
            progress=False,
        )
        raw = (result.run_dir / "steps.jsonl").read_bytes().decode("utf-8")
        records = list(read_log(result.run_dir / "steps.jsonl"))
    assert server.faults_served > 0
    ends = [r for r in records if isinstance(r, EpisodeEnd)]
    assert len(ends) == 2 and not any(e.error for e in ends)
    steps = [r for r in records if isinstance(r, StepLine)]
    assert steps and all(s.llm is not None and "\ufffd" in s.llm.text for s in steps)
    assert all(call.text == "Question: is it \ufffd\u202e about 😀\x00?" for s in steps for call in s.judge_calls)
    assert "\\ud" not in raw  # no escaped surrogate reached the file either
