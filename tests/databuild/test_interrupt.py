"""Ctrl-C in ``kb build`` / ``tasks build``: a real subprocess gets SIGINT mid-build against the loopback
server, says that the same command resumes the build (not ``run --resume``), exits 130, and the same
command then finishes from the checkpoints."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _kb_replies import KBResponder
from llm_server import ScriptedLLMServer
from test_tasks_pipeline import build_args, responder

RESUME_HINT = "the same command resumes the build from its checkpoints"


def _command(args: list[str]) -> list[str]:
    return [sys.executable, "-m", "lateralgym.cli", *args]


def _interrupt(args: list[str], started: Callable[[], bool]) -> dict[str, Any]:
    """Run ``lateralgym ARGS``, SIGINT it once ``started()`` holds; its exit status and stderr."""
    process = subprocess.Popen(_command(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 300  # a bound against a hang, not a measurement
        while not started() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        finished_first = process.poll() is not None
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    return {"status": process.returncode, "err": err, "finished_first": finished_first}


def interrupted_builds_job(run: Callable[..., subprocess.CompletedProcess[str]], workdir: Path) -> dict[str, Any]:
    """Background job: each build SIGINTed after a few answers, then run again with the same command."""
    facts: dict[str, Any] = {}
    with ScriptedLLMServer(responder=KBResponder(), latency_s=0.05) as server:
        kb_args = ["kb", "build", "--scenes", "kitchen", "--entities-per-scene", "2", "--model"]
        kb_args += ["openai/annotator?timeout=30", "--base-url", server.base_url, "--out", str(workdir / "kb")]
        kb_args += ["--concurrency", "2", "--quiet", "--max-physical-variants", "1", "--max-state-combinations", "1"]
        facts["kb"] = _interrupt(kb_args, lambda: server.chat_calls >= 5)
        server.latency_s = 0.0
        again = run(_command(kb_args), timeout=600)
        facts["kb_again"] = (again.returncode, again.stdout + again.stderr[-2000:])
    with ScriptedLLMServer(responder=responder, latency_s=0.05) as server:
        (workdir / "tasks").mkdir()
        tasks_args = build_args(workdir / "tasks", server, "--concurrency", "2", entities=6)
        facts["tasks"] = _interrupt(tasks_args, lambda: server.chat_calls >= 5)
        server.latency_s = 0.0
        before = server.chat_calls
        again = run(_command(tasks_args), timeout=600)
        facts["tasks_again"] = (again.returncode, again.stdout + again.stderr[-2000:])
        facts["tasks_again_calls"] = server.chat_calls - before
        facts["tasks_stored_before_rerun"] = before
    return facts


@pytest.mark.slow
@pytest.mark.background(job=interrupted_builds_job)
def test_ctrl_c_in_a_build_says_the_same_command_resumes_it(background_job: Callable[[], Any]) -> None:
    facts = background_job()
    for name in ("kb", "tasks"):
        interrupted = facts[name]
        assert not interrupted["finished_first"], f"{name} build ended before it could be interrupted"
        assert interrupted["status"] == 130, interrupted["err"][-2000:]
        assert RESUME_HINT in interrupted["err"] and "run --resume" not in interrupted["err"]
        assert "Traceback" not in interrupted["err"]
    status, output = facts["kb_again"]
    assert status == 0 and "2 entities" in output, output
    status, output = facts["tasks_again"]
    assert status == 0 and "wrote " in output, output
    # The rerun served what the interrupted build had stored from its checkpoints, and asked the rest.
    cached = [int(n) for n in re.findall(r"(\d+) cached", output)]
    assert sum(cached) > 0 and facts["tasks_again_calls"] > 0, output
