"""LLM failures are loud: the check before a run (one free ``GET /models`` per distinct server) stops a
dead server or a wrong key at once, the first error of each kind is printed as it happens, and a run
stops after N errored episodes in a row. All against the real loopback test server."""

from __future__ import annotations

from pathlib import Path

import pytest
from llm_server import Fault, ScriptedLLMServer
from test_exit_codes import dead_url, llm_run, one_line_error

from lateralgym.cli import main
from lateralgym.episodes import EpisodeEnd, read_log
from lateralgym.episodes._play import FailureWatch, error_kind

KEY = "sk-loud-failures-test"


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)


def test_a_dead_server_is_found_before_anything_is_made(
    key: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = dead_url()
    assert main(llm_run(url, tmp_path / "runs")) == 4
    err = one_line_error(capsys.readouterr().err)
    assert f"the player model openai/p at {url} failed the check before the run: connection error" in err
    assert "is the server up, and its URL (--base-url) right?" in err and "--no-check" in err
    assert not (tmp_path / "runs").exists()  # nothing was made: nothing to resume


def test_a_wrong_key_is_found_before_any_chat_request(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-1234567890")
    server = ScriptedLLMServer(default_reply="Answer: A", require_key=KEY).start()
    try:
        assert main(llm_run(server.base_url, tmp_path / "runs")) == 4
        assert server.chat_calls == 0  # one GET, no chat request, no spend
        assert [r.method for r in server.requests] == ["GET"]
    finally:
        server.stop()
    err = one_line_error(capsys.readouterr().err)
    assert "HTTP 401" in err and "check the API key in OPENAI_API_KEY" in err
    assert "sk-wrong-key-1234567890" not in err
    assert not (tmp_path / "runs").exists()


def test_one_check_per_server_and_the_judge_named_when_its_server_is_down(
    key: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ScriptedLLMServer(default_reply="Is it a fish?").start()
    judge_url = dead_url()
    try:
        argv = ["run", "splat", "--player", "openai/p?max_retries=0", "--judge", "openai/j?max_retries=0"]
        argv += ["--base-url", server.base_url, "--judge-base-url", judge_url, "--limit", "1", "--no-progress"]
        assert main([*argv, "--out", str(tmp_path / "runs")]) == 4
        assert [r.method for r in server.requests] == ["GET"]  # the player's server, checked once
    finally:
        server.stop()
    err = one_line_error(capsys.readouterr().err)
    assert f"the judge model openai/j at {judge_url} failed the check" in err and "player model" not in err


def test_player_and_judge_on_one_server_are_checked_once(key: None, tmp_path: Path) -> None:
    server = ScriptedLLMServer(default_reply="yes").start()
    try:
        argv = ["run", "splat", "--player", "openai/p", "--judge", "openai/j", "--base-url", server.base_url]
        argv += ["--limit", "1", "--max-turns", "1", "--no-progress", "--out", str(tmp_path)]
        assert main(argv) == 0
        gets = [r for r in server.requests if r.method == "GET"]
        assert len(gets) == 1 and gets[0].path.endswith("/models")
    finally:
        server.stop()


def test_a_server_without_a_model_list_is_not_refused_and_its_errors_are_loud(
    key: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 404 on /models proves nothing (some servers lack it): the run goes ahead, and its errors show."""
    server = ScriptedLLMServer(default_reply="Answer: A").start()
    try:
        url = server.base_url.replace("/v1", "/v2")  # GET /v2/models and POST /v2/chat/completions: 404
        assert main(llm_run(url, tmp_path)) == 4
    finally:
        server.stop()
    lines = capsys.readouterr().err.strip().splitlines()
    shown = [line for line in lines if "ended in an error (" in line]
    assert len(shown) == 1 and "(HTTP 404;" in shown[0]  # four errored episodes, one kind: printed once
    assert lines[-1].startswith("lateralgym: error: all 4 episodes run ended in an error")


def test_a_run_stops_after_errors_in_a_row_and_resumes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ScriptedLLMServer(default_reply="Answer: A").start()
    try:
        monkeypatch.setenv("OPENAI_API_KEY", KEY)
        server.enqueue(*[Fault.status(503)] * 3)
        argv = llm_run(server.base_url, tmp_path, "--stop-after-errors", "2")
        assert main(argv) == 4
        out, err = capsys.readouterr()
        (run_dir,) = tmp_path.iterdir()
        ends = [r for r in read_log(run_dir / "steps.jsonl") if isinstance(r, EpisodeEnd)]
        assert len(ends) == 2 and all(e.error for e in ends)  # two, then stopped: two never started
        assert "2 episodes in a row ended in an error, so the run stopped early" in err
        assert "errors by kind: HTTP 503 x 2" in out and "(2 episodes run, 4 planned)" in out
        assert server.chat_calls == 2  # the episode woken by the stopping one's env sent nothing
        assert main(["run", "--resume", str(run_dir), "--no-progress"]) == 3  # the third 503, then fine
        assert main(["run", "--resume", str(run_dir), "--no-progress"]) == 0
        ends = [r for r in read_log(run_dir / "steps.jsonl") if isinstance(r, EpisodeEnd)]
        assert sorted(e.episode_id for e in ends) == sorted({e.episode_id for e in ends}) and len(ends) == 4
    finally:
        server.stop()


def test_negative_stop_after_errors_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "splat", "--stop-after-errors", "-1", "--out", str(tmp_path / "r"), "--no-progress"]) == 2
    assert "--stop-after-errors must be 0 (never) or more" in one_line_error(capsys.readouterr().err)


@pytest.mark.parametrize(
    ("message", "kind"),
    [
        ("LLMCallError: openai/p: request failed after 5 attempt(s), retries exhausted: HTTP 429: x", "HTTP 429"),
        ("LLMCallError: openai/p: request failed after 1 attempt(s), not retried: HTTP 401: bad key", "HTTP 401"),
        ("LLMCallError: openai/p: request failed after 5 attempt(s), retries exhausted: connection: c", "connection"),
        ("LLMCallError: openai/p: request failed after 2 attempt(s), retries exhausted: timeout: t", "timeout"),
        ("ValueError: the model said nothing", "ValueError"),
        ("", "error"),
    ],
)
def test_error_kinds(message: str, kind: str) -> None:
    assert error_kind(message) == kind


def test_the_watch_prints_each_kind_once_and_counts_errors_in_a_row(tmp_path: Path) -> None:
    out = tmp_path / "err.txt"

    def end(n: int, error: str | None) -> EpisodeEnd:
        return EpisodeEnd(run_id="r", episode_id=f"i{n}#0", item_id=f"i{n}", benchmark="splat", error=error)

    with out.open("w") as stream:
        watch = FailureWatch(stop_after=3, stream=stream)
        http = "LLMCallError: m: request failed after 1 attempt(s), not retried: HTTP 400: bad"
        assert not watch.episode_ended(end(1, http))
        assert not watch.episode_ended(end(2, http))
        assert not watch.episode_ended(end(3, None))  # a clean episode breaks the row
        assert not watch.episode_ended(end(4, "RuntimeError: boom"))
        assert not watch.episode_ended(end(5, http))
        assert watch.episode_ended(end(6, http))
    lines = out.read_text().splitlines()
    assert [line.split("(")[1].split(";")[0] for line in lines[:2]] == ["HTTP 400", "RuntimeError"]
    assert "3 episodes in a row" in lines[2] and len(lines) == 3
    assert watch.summary() == "HTTP 400 x 4, RuntimeError x 1"
