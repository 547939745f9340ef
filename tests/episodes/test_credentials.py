"""Credentials never reach a file, end to end: whole runs against a server that echoes the request's
URL and ``Authorization`` header back, into its error bodies and into its replies.

The player and the judge name their server with credentials in every form a URL can carry them:
``user:password@`` (sent as ``Authorization: Basic base64(user:password)``), a token as the user
name alone, secret query parameters (``api-key``, ``token``, ``access_token``, ``sig``), in the
spec's ``?base_url=`` raw or URL-encoded, or given as ``base_url``; the API key is in
``OPENAI_API_KEY`` (sent as ``Authorization: Bearer``). No file under the run directory or the
cache, and no exception message, holds any of them, raw, URL-encoded or base64.
"""

from __future__ import annotations

import base64
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, quote_plus, unquote, urlsplit

import pytest
from llm_server import Fault, ScriptedLLMServer

from lateralgym.agents import LLMCallError, LLMClient, ModelSpec, safe_spec
from lateralgym.envs import load_sample_items
from lateralgym.episodes import EpisodeEnd, StepLine, read_log, run

KEY = "sk-env-SECRET-KEY-6f1a2b"
PUZZLES = {p.story: p for p in load_sample_items("splat")}  # type: ignore[union-attr]


@dataclass(frozen=True)
class Setup:
    """How a run names its servers: the player and judge specs and ``run``'s own URL arguments."""

    player: str
    judge: str
    base_url: str | None = None
    judge_base_url: str | None = None


def _setups(port: int) -> dict[str, Setup]:
    host = f"127.0.0.1:{port}"
    encoded = quote(f"http://carol:pw%40SECRET-C3@{host}/v1?token=tk-SECRET-C4", safe="")
    judge = quote(f"http://dave:pw-SECRET-D5@{host}/v1?sig=sg-SECRET-D6", safe="")
    return {
        "userinfo": Setup(
            player=f"openai/p?base_url=http://alice:pw-SECRET-A1@{host}/v1&max_retries=1",
            judge=f"openai/j?base_url=http://bob:pw-SECRET-B2@{host}/v1&max_retries=1",
        ),
        "query": Setup(
            player=f"openai/p?base_url=http://{host}/v1?api-key=qk-SECRET-Q1&max_retries=1",
            judge=f"openai/j?base_url=http://{host}/v1?access_token=at-SECRET-Q2&max_retries=1",
        ),
        "url-encoded": Setup(player=f"openai/p?base_url={encoded}&max_retries=1", judge=f"openai/j?base_url={judge}"),
        "run-arguments": Setup(
            player="openai/p?max_retries=1",
            judge="openai/j?max_retries=1",
            base_url=f"http://tok-SECRET-T1@{host}/v1",
            judge_base_url=f"http://erin:pw-SECRET-T2@{host}/v1?key=k-SECRET-T3",
        ),
    }


def _forbidden(setup: Setup) -> set[str]:
    """Every credential of ``setup`` and ``KEY``, in every form that must not appear anywhere: raw,
    URL-encoded and base64, and the ``Basic`` token the client sends for a URL's userinfo."""
    urls = [setup.base_url, setup.judge_base_url]
    urls += [dict(parse_qsl(spec.partition("?")[2])).get("base_url") for spec in (setup.player, setup.judge)]
    secrets = {KEY}
    for url in filter(None, urls):
        parts = urlsplit(url)
        user, password = unquote(parts.username or ""), unquote(parts.password or "")
        if "@" in parts.netloc:
            secrets |= {parts.netloc.rpartition("@")[0], f"{user}:{password}", password}
        secrets |= {value for _, value in parse_qsl(parts.query)}
    forms = {"SECRET"}  # every secret holds it: this covers them raw and URL-encoded
    for value in filter(None, secrets):
        encoded = base64.b64encode(value.encode()).decode()
        forms |= {value, quote(value, safe=""), quote_plus(value), encoded, encoded.rstrip("=")}
    return forms


def _actor(body: dict[str, Any]) -> str:
    """A cooperative model: the player asks once, then explains; the judge says yes, then correct."""
    text = "\n".join(str(m.get("content", "")) for m in body["messages"])
    if "FULL EXPLANATION (secret" in text:
        return "correct" if "proposes an explanation" in text else "yes"
    puzzle = next(p for story, p in PUZZLES.items() if story in text)
    asked = sum(1 for m in body["messages"] if m["role"] == "assistant")
    return "Question: Is it about the weather?" if asked < 1 else f"Answer: {puzzle.answer}"


@pytest.fixture
def echoing_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ScriptedLLMServer]:
    """A server that, now and then, echoes the request's URL and headers into an error or a reply."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    faults = (Fault.echo(400), Fault.echo(500), Fault.echo(200))
    with ScriptedLLMServer(responder=_actor, fault_rate=0.3, fault_kinds=faults, seed=11) as server:
        server.enqueue(Fault.echo(200), Fault.echo(400))  # at least one of each, whatever the draw
        yield server


def _files(*roots: Path) -> Iterator[Path]:
    for root in roots:
        yield from (path for path in root.rglob("*") if path.is_file())


def _run(setup: Setup, tmp_path: Path) -> Path:
    result = run(
        "splat",
        player=setup.player,
        judge=setup.judge,
        base_url=setup.base_url,
        judge_base_url=setup.judge_base_url,
        limit=4,
        out=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    return result.run_dir


@pytest.mark.parametrize("name", ["userinfo", "query", "url-encoded", "run-arguments"])
def test_no_credential_in_the_step_log_the_cache_or_an_error(
    echoing_server: ScriptedLLMServer, tmp_path: Path, name: str
) -> None:
    setup = _setups(echoing_server.port)[name]
    forbidden = _forbidden(setup)

    run_dir = _run(setup, tmp_path)

    # The credentials were used, and the server did echo them back.
    headers = [r.headers.get("authorization", "") for r in echoing_server.requests]
    assert all(h.startswith(("Basic ", "Bearer ")) for h in headers) and echoing_server.faults_served > 0
    records = list(read_log(run_dir / "steps.jsonl"))
    errors = [r.error for r in records if isinstance(r, EpisodeEnd) and r.error]
    calls = [c for r in records if isinstance(r, StepLine) for c in (r.llm, *r.judge_calls) if c is not None]
    echoed = [c.text for c in calls if "with Authorization" in c.text]
    assert errors and echoed and any("[REDACTED]" in text for text in errors + echoed)
    for path in _files(tmp_path / "cache", run_dir):
        if path.name in ("manifest.json", "config.yaml"):
            continue  # the runner's files, written through safe_spec: see the next test
        text = path.read_bytes().decode("utf-8")
        assert not [form for form in forbidden if form in text], path


@pytest.mark.parametrize("name", ["query", "url-encoded"])
def test_no_credential_in_the_manifest_or_config_yaml(
    echoing_server: ScriptedLLMServer, tmp_path: Path, name: str
) -> None:
    setup = _setups(echoing_server.port)[name]
    forbidden = _forbidden(setup)
    run_dir = _run(setup, tmp_path)
    for path in (run_dir / "manifest.json", run_dir / "config.yaml"):
        text = path.read_text(encoding="utf-8")
        assert not [form for form in forbidden if form in text], path


@pytest.mark.parametrize("name", ["userinfo", "query", "url-encoded", "run-arguments"])
def test_no_credential_in_an_exception_a_spec_dump_or_safe_spec(
    echoing_server: ScriptedLLMServer, tmp_path: Path, name: str
) -> None:
    setup = _setups(echoing_server.port)[name]
    forbidden = _forbidden(setup)
    spec = ModelSpec.parse(setup.player)
    if spec.base_url is None:
        spec = spec.merge(base_url=setup.base_url)
    texts = [safe_spec(setup.player), safe_spec(setup.judge), repr(spec), str(spec), spec.model_dump_json()]
    texts += [str(spec.model_dump()), str(spec.model_dump(mode="json"))]
    echoing_server.reset()
    echoing_server.configure_faults(1.0, [Fault.echo(400)])
    with LLMClient(spec, cache_dir=tmp_path / "cache") as client:
        texts.append(repr(client))
        with pytest.raises(LLMCallError) as info:
            client.complete_sync("Is it about the weather?")
    texts += [str(info.value), "".join(traceback.format_exception(info.value))]
    texts += [call.model_dump_json() for call in info.value.calls]
    assert "cannot serve POST" in str(info.value)  # the echo, redacted
    for text in texts:
        assert not [form for form in forbidden if form in text], text


def test_a_run_whose_spec_held_credentials_refuses_to_resume_clearly(tmp_path: Path) -> None:
    """The written spec lacks its credentials: resuming would send requests without them."""
    server = ScriptedLLMServer(responder=lambda body: "Answer: A").start()
    try:
        url = server.base_url.replace("http://", "http://reader:sup3r-s3cret-pass@")
        first = run("brainteaser", player=f"openai/m?base_url={url}", limit=1, out=tmp_path, progress=False)
        with pytest.raises(Exception, match="player spec carried credentials") as caught:
            run(resume=first.run_dir, progress=False)
        assert "sup3r-s3cret-pass" not in str(caught.value)
    finally:
        server.stop()
