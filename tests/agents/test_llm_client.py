"""The LLM client layer against a real OpenAI-compatible server on 127.0.0.1 (openai path)."""

from __future__ import annotations

import asyncio
import json
import logging
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llm_server import Fault, Reply, ScriptedLLMServer

from lateralgym.agents import _llm_backends
from lateralgym.agents._llm_cache import CACHE_FORMAT, ResponseCache
from lateralgym.agents._llm_client import (
    ConcurrencyLimiter,
    LLMCallError,
    LLMClient,
    LLMConfigError,
    ModelSpec,
    UsageMeter,
    default_concurrency,
    redact,
    request_key,
    set_default_concurrency,
)
from lateralgym.envs._calls import ModelCall

SECRET = "sk-test-SECRET123"
"""Key-shaped text for the tests that need no server (the live key is the ``api_key`` fixture)."""
MODEL = "openai/scripted-model"
MakeClient = Callable[..., LLMClient]
"""The ``make_client`` fixture (``conftest.py``): keyword arguments override client fields."""


def ask(client: LLMClient, text: str = "Is a spoon a lever?", **params: Any) -> ModelCall:
    return client.complete_sync([{"role": "user", "content": text}], **params)


# -- plain calls ----------------------------------------------------------------------


def test_plain_completion(llm_server: ScriptedLLMServer, make_client: MakeClient, api_key: str) -> None:
    llm_server.enqueue("Yes, a spoon can be a lever.")
    client = make_client()

    reply = ask(client)

    assert reply.text == "Yes, a spoon can be a lever."
    assert (reply.role, reply.model, reply.served_by) == ("player", MODEL, "scripted-model")
    assert (reply.attempts, reply.cache_hit, reply.error, reply.finish_reason) == (1, False, None, "stop")
    assert reply.parsed_action is None
    assert reply.cost_usd is None  # a local model has no price
    assert llm_server.chat_calls == 1
    request = llm_server.requests[0]
    assert request.path == "/v1/chat/completions"
    assert request.body["model"] == "scripted-model"
    assert request.body["messages"] == [{"role": "user", "content": "Is a spoon a lever?"}]
    assert request.headers["authorization"] == f"Bearer {api_key}"


def test_async_complete_and_string_messages(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.responder = lambda body: body["messages"][-1]["content"].upper()

    async def run() -> ModelCall:
        async with make_client() as client:
            return await client.complete("shout this", role="judge")

    reply = asyncio.run(run())
    assert (reply.text, reply.role) == ("SHOUT THIS", "judge")


def test_role_is_neither_sent_nor_part_of_the_cache_key(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    client = make_client()
    first = ask(client, role="judge")
    again = ask(client, role="annotator")
    assert (first.role, again.role, again.cache_hit) == ("judge", "annotator", True)
    assert again.request_key == first.request_key
    assert llm_server.chat_calls == 1 and set(llm_server.requests[0].body) == {"model", "messages"}


def test_token_counting_and_usage_meter(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue("a b", "c d e")
    meter = UsageMeter()
    client = make_client(usage=meter)

    first = ask(client, "one two three")
    second = ask(client, "four five")

    assert (first.prompt_tokens, first.completion_tokens) == (3, 2)
    assert (second.prompt_tokens, second.completion_tokens) == (2, 3)
    summary = meter.summary()
    assert (summary.calls, summary.cache_hits, summary.attempts) == (2, 0, 2)
    assert (summary.prompt_tokens, summary.completion_tokens, summary.total_tokens) == (5, 5, 10)
    assert summary.cost_usd is None and summary.unpriced_calls == 2
    assert summary.cost_text() == "unknown"


def test_params_reach_the_server(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    client = make_client(temperature=0.0, seed=7, max_tokens=20)
    ask(client, stop=["\n"], temperature=0.5)
    body = llm_server.requests[0].body
    assert (body["temperature"], body["seed"], body["max_tokens"], body["stop"]) == (0.5, 7, 20, ["\n"])


# -- retries --------------------------------------------------------------------------


def test_retry_on_5xx_then_success(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue(Fault.status(500), Fault.status(503), "recovered")
    client = make_client()

    reply = ask(client)

    assert (reply.text, reply.attempts) == ("recovered", 3)
    assert llm_server.chat_calls == 3  # the SDK's own retries are off: every attempt is ours
    assert client.usage.summary().attempts == 3


def test_429_retry_after_is_honoured(
    llm_server: ScriptedLLMServer, caplog: pytest.LogCaptureFixture, make_client: MakeClient
) -> None:
    llm_server.enqueue(Fault.rate_limit(retry_after=0.2), "after the wait")
    client = make_client()

    with caplog.at_level(logging.INFO, logger="lateralgym.llm"):
        reply = ask(client)

    assert (reply.text, reply.attempts) == ("after the wait", 2)
    assert llm_server.chat_calls == 2
    delays = [r.llm_retry_delay_s for r in caplog.records if hasattr(r, "llm_retry_delay_s")]
    statuses = [r.llm_status for r in caplog.records if hasattr(r, "llm_status")]
    assert delays == [0.2]  # the server's figure, not the 0.01 s backoff
    assert statuses == [429]


def test_429_without_retry_after_uses_backoff(
    llm_server: ScriptedLLMServer, caplog: pytest.LogCaptureFixture, make_client: MakeClient
) -> None:
    llm_server.enqueue(Fault.rate_limit(retry_after=None), Fault.rate_limit(retry_after=None), "ok")
    client = make_client()
    with caplog.at_level(logging.INFO, logger="lateralgym.llm"):
        assert ask(client).attempts == 3
    delays = [r.llm_retry_delay_s for r in caplog.records if hasattr(r, "llm_retry_delay_s")]
    assert len(delays) == 2
    assert 0.005 <= delays[0] <= 0.01 and 0.01 <= delays[1] <= 0.02  # base 0.01 s, doubling, jittered


def test_timeout_is_retried_then_fails(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue(*[Fault.delay(5.0)] * 3)
    client = make_client(timeout=0.2, max_retries=2)

    with pytest.raises(LLMCallError) as info:
        ask(client, role="judge")

    err = info.value
    assert (err.attempts, err.kind, err.status, err.retryable) == (3, "timeout", None, True)
    assert "3 attempt(s)" in str(err) and "retries exhausted" in str(err)
    assert llm_server.chat_calls == 3
    assert client.usage.summary().failures == 1
    (failed,) = err.calls  # the failed call's record, for the log
    assert (failed.role, failed.model, failed.text, failed.attempts, failed.error) == ("judge", MODEL, "", 3, str(err))
    assert failed.latency_s >= 0.6 and failed.request_key is not None


def test_400_is_not_retried(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue(Fault.status(400), "never sent")
    client = make_client()

    with pytest.raises(LLMCallError) as info:
        ask(client)

    assert (info.value.status, info.value.attempts, info.value.retryable) == (400, 1, False)
    assert "HTTP 400" in str(info.value) and "not retried" in str(info.value)
    assert llm_server.chat_calls == 1


@pytest.mark.parametrize("status", [401, 404])
def test_auth_and_not_found_are_not_retried(
    llm_server: ScriptedLLMServer, status: int, make_client: MakeClient
) -> None:
    llm_server.enqueue(Fault.status(status))
    with pytest.raises(LLMCallError) as info:
        ask(make_client())
    assert (info.value.status, info.value.attempts) == (status, 1)
    assert llm_server.chat_calls == 1


def test_garbage_body_is_an_error(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue(*[Fault.garbage()] * 2)
    client = make_client(max_retries=1)

    with pytest.raises(LLMCallError) as info:
        ask(client)

    assert (info.value.kind, info.value.attempts, info.value.status) == ("malformed", 2, None)
    assert llm_server.chat_calls == 2


def test_garbage_once_then_success(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue(Fault.garbage(), "clean")
    reply = ask(make_client())
    assert (reply.text, reply.attempts) == ("clean", 2)


@pytest.mark.parametrize("fault", [Fault.empty(), Fault.null(), Fault.non_utf8()], ids=["empty", "null", "non-utf8"])
def test_replies_without_usable_text_are_malformed_and_retried(
    llm_server: ScriptedLLMServer, make_client: MakeClient, fault: Fault
) -> None:
    llm_server.enqueue(fault, fault, "second")
    client = make_client()

    reply = ask(client)
    again = ask(client)

    assert (reply.text, reply.attempts, reply.error) == ("second", 3, None)
    assert again.cache_hit and again.text == "second"  # only the usable reply was cached
    assert llm_server.chat_calls == 3


@pytest.mark.parametrize("fault", [Fault.empty(), Fault.null(), Fault.non_utf8()], ids=["empty", "null", "non-utf8"])
def test_replies_without_usable_text_fail_as_malformed_when_retries_run_out(
    llm_server: ScriptedLLMServer, make_client: MakeClient, fault: Fault
) -> None:
    llm_server.enqueue(fault, fault)
    client = make_client(max_retries=1)

    with pytest.raises(LLMCallError) as info:
        ask(client)

    assert (info.value.kind, info.value.attempts, info.value.retryable) == ("malformed", 2, True)
    assert not list(client.cache.directory.rglob("*.json"))


def test_an_empty_reply_at_the_token_limit_is_the_models_answer_and_not_cached(
    llm_server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    llm_server.enqueue(Reply("", finish_reason="length"), "second")
    client = make_client()

    first = ask(client)  # a retry would only run out of tokens again
    second = ask(client)

    assert (first.text, first.finish_reason, first.attempts) == ("", "length", 1)
    assert (second.text, second.cache_hit) == ("second", False)
    assert llm_server.chat_calls == 2


def test_errors_as_values(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue(Fault.status(400))
    client = make_client(raise_on_error=False)

    reply = ask(client)

    assert reply.text == "" and reply.error is not None and "HTTP 400" in reply.error
    assert (reply.model, reply.attempts) == (MODEL, 1)
    assert client.usage.summary().failures == 1


def test_fault_rate_mode_recovers(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.configure_faults(0.3, [Fault.status(500), Fault.garbage(), Fault.rate_limit(retry_after=0)], seed=3)
    client = make_client(max_retries=10)

    replies = [ask(client, f"question {i}") for i in range(20)]

    assert all(r.text == "ok" for r in replies)
    assert llm_server.faults_served > 0
    assert sum(r.attempts for r in replies) == llm_server.chat_calls == 20 + llm_server.faults_served


# -- concurrency (more in test_llm_concurrency.py) ---------------------------------------


def test_concurrency_limit_is_respected(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.latency_s = 0.05
    client = make_client(concurrency=3)

    async def run() -> list[ModelCall]:
        async with client:
            return await asyncio.gather(*(client.complete(f"q{i}") for i in range(12)))

    replies = asyncio.run(run())

    assert len(replies) == 12 and llm_server.chat_calls == 12
    assert 2 <= llm_server.max_in_flight <= 3


def test_shared_limiter_caps_clients_together(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.latency_s = 0.05
    limiter = ConcurrencyLimiter(2)
    a = make_client(concurrency=limiter)
    b = make_client(concurrency=limiter)

    async def run() -> None:
        async with a, b:
            await asyncio.gather(*(c.complete(f"q{i}") for i in range(5) for c in (a, b)))

    asyncio.run(run())
    assert llm_server.max_in_flight <= 2


def test_default_concurrency_caps_clients_without_their_own(
    llm_server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    assert default_concurrency() == 8
    llm_server.latency_s = 0.05
    set_default_concurrency(2)
    try:
        client = make_client()

        async def run() -> None:
            async with client:
                await asyncio.gather(*(client.complete(f"q{i}") for i in range(8)))

        asyncio.run(run())
    finally:
        set_default_concurrency(8)
    assert llm_server.max_in_flight <= 2


def test_sync_calls_from_threads_share_the_background_loops_cap(
    llm_server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    from concurrent.futures import ThreadPoolExecutor

    llm_server.latency_s = 0.05
    client = make_client(concurrency=2)
    with ThreadPoolExecutor(6) as pool:
        replies = list(pool.map(lambda i: ask(client, f"t{i}"), range(6)))
    assert len(replies) == 6 and llm_server.max_in_flight <= 2


# -- cache ----------------------------------------------------------------------------


def test_cache_hit_costs_no_call(llm_server: ScriptedLLMServer, tmp_path: Path, make_client: MakeClient) -> None:
    llm_server.enqueue("first answer", "second answer")
    client = make_client()

    first = ask(client)
    again = ask(client)

    assert llm_server.chat_calls == 1
    assert (again.text, again.cache_hit, again.attempts, again.cost_usd) == ("first answer", True, 0, 0.0)
    assert again.request_key == first.request_key
    assert (again.prompt_tokens, again.completion_tokens) == (first.prompt_tokens, first.completion_tokens)
    summary = client.usage.summary()
    assert (summary.calls, summary.cache_hits) == (1, 1)
    files = list((tmp_path / "cache").rglob("*.json"))
    assert len(files) == 1 and files[0].stem == first.request_key
    # A fresh client over the same directory hits too.
    assert ask(make_client()).cache_hit


def test_cache_round_trip_of_a_model_call(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    call = ModelCall(
        role="judge",
        model=MODEL,
        served_by="scripted-model",
        text="yes",
        prompt_tokens=12,
        completion_tokens=1,
        latency_s=0.25,
        cost_usd=0.001,
        attempts=2,
        finish_reason="stop",
        request_key="ab" * 32,
    )
    cache = ResponseCache(tmp_path / "cache")
    path = cache.put("ab" * 32, {"model": "scripted-model"}, call)

    assert cache.get("ab" * 32) == call
    entry = json.loads(path.read_text())
    assert (entry["format"], entry["key"], entry["request"]) == (CACHE_FORMAT, "ab" * 32, {"model": "scripted-model"})
    assert ModelCall.model_validate(entry["call"]) == call
    assert cache.get("cd" * 32) is None


def test_a_cache_hit_is_this_calls_record(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue(Fault.status(500), "stored")
    client = make_client()
    first = ask(client, role="judge")
    hit = ask(client)

    assert (first.attempts, first.cache_hit, first.role) == (2, False, "judge")
    stored = client.cache.get(first.request_key or "")
    assert stored == first  # the entry is the original call, as it came back
    # The hit keeps what the server said (text, model, tokens, finish) and is this call's record.
    same = ("text", "model", "served_by", "prompt_tokens", "completion_tokens", "finish_reason", "request_key")
    assert hit.model_dump(include=set(same)) == first.model_dump(include=set(same))
    assert (hit.role, hit.cache_hit, hit.attempts, hit.cost_usd, hit.error) == ("player", True, 0, 0.0, None)
    assert hit.latency_s < first.latency_s


def test_cache_key_covers_the_request(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    client = make_client()
    ask(client)
    ask(client, temperature=0.7)
    ask(client, seed=1)
    ask(client, "a different question")
    make_client(max_tokens=5).complete_sync("Is a spoon a lever?")
    assert llm_server.chat_calls == 5


def test_no_cache_bypasses(llm_server: ScriptedLLMServer, tmp_path: Path, make_client: MakeClient) -> None:
    client = make_client()
    ask(client)
    ask(client, use_cache=False)
    assert llm_server.chat_calls == 2
    off = make_client(use_cache=False)
    ask(off)
    assert llm_server.chat_calls == 3
    assert not list((tmp_path / "cache").rglob("*.json"))[1:]  # only the first client wrote


def test_corrupt_cache_entry_is_a_miss(make_client: MakeClient) -> None:
    client = make_client()
    first = ask(client)
    assert first.request_key is not None
    client.cache.path_for(first.request_key).write_text("{ half an entry")
    assert not ask(client).cache_hit
    assert ask(client).cache_hit


# -- secrets --------------------------------------------------------------------------


def test_api_key_never_leaks(
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
    make_client: MakeClient,
    api_key: str,
) -> None:
    client = make_client(max_retries=1, timeout=0.2)
    texts: list[str] = []
    with caplog.at_level(logging.DEBUG):
        ask(client)  # cached
        llm_server.enqueue(Fault.status(500), Fault.status(500))
        llm_server.enqueue(Fault.status(400))
        llm_server.enqueue(Fault.delay(5.0), Fault.delay(5.0))
        for _ in range(3):
            with pytest.raises(LLMCallError) as info:
                ask(client, use_cache=False)
            err = info.value
            texts += [str(err), repr(err), "".join(traceback.format_exception(err))]
            assert err.__cause__ is None and err.__context__ is None
    texts += [repr(client), repr(client.spec), client.spec.model_dump_json(), repr(client.usage)]
    texts += [p.read_text() for p in (tmp_path / "cache").rglob("*.json")]
    texts += llm_server.response_bodies
    texts.append(caplog.text)
    assert all(api_key not in text for text in texts)
    # ... while the key did travel, in the header only.
    assert all(r.headers["authorization"] == f"Bearer {api_key}" for r in llm_server.requests)


def test_wrong_key_401_names_no_key(llm_server: ScriptedLLMServer, make_client: MakeClient, api_key: str) -> None:
    llm_server.require_key = "sk-the-right-one"
    with pytest.raises(LLMCallError) as info:
        ask(make_client())
    assert info.value.status == 401 and info.value.attempts == 1
    assert api_key not in str(info.value)


def test_redact() -> None:
    text = f"key={SECRET} header='Authorization: Bearer abcdefghijklmnopqrstu' the bearer of bad news"
    out = redact(text, [SECRET, None, ""])
    assert SECRET not in out and "abcdefghijklmnopqrstu" not in out
    assert "the bearer of bad news" in out and out.count("[REDACTED]") == 2


# -- configuration --------------------------------------------------------------------


def test_missing_key_without_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        LLMClient("openai/gpt-4o-mini")
    monkeypatch.setenv("MY_KEY", "")
    with pytest.raises(LLMConfigError, match="MY_KEY"):
        LLMClient("openai/gpt-4o-mini", api_key_env="MY_KEY")


def test_missing_key_with_base_url_uses_placeholder(
    llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch, make_client: MakeClient
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY")
    assert ask(make_client()).text == "ok"
    assert llm_server.requests[0].headers["authorization"] == "Bearer not-needed"


def test_model_spec_parsing() -> None:
    spec = ModelSpec.parse("openai/gpt-4o-mini")
    assert (spec.provider, spec.model, spec.backend) == ("openai", "gpt-4o-mini", "openai")
    assert spec.api_key_env == "OPENAI_API_KEY"
    assert (spec.timeout, spec.max_retries, spec.base_url) == (60.0, 4, None)
    local = ModelSpec.parse("openai/meta-llama/Llama-3-8B", base_url="http://127.0.0.1:8000/v1", temperature=0)
    assert local.model == "meta-llama/Llama-3-8B" and local.name == "openai/meta-llama/Llama-3-8B"
    claude = ModelSpec.model_validate("anthropic/claude-3-5-haiku-latest")
    assert (claude.backend, claude.api_key_env) == ("litellm", None)
    assert ModelSpec.model_validate({"name": "gemini/gemini-2.0-flash", "timeout": 5}).timeout == 5
    assert ModelSpec.parse(spec, temperature=0.3).temperature == 0.3


@pytest.mark.parametrize(
    "name, fields, message",
    [
        ("gpt-4o-mini", {}, "provider/model"),
        ("openai/", {}, "provider/model"),
        ("openai/x", {"base_url": "localhost:8000"}, "http://"),
        ("openai/x", {"timeout": 0}, "timeout"),
        ("openai/x", {"backend": "bogus"}, "backend"),
        ("openai/x", {"api_key_env": SECRET}, "name"),
    ],
)
def test_bad_specs(name: str, fields: dict[str, Any], message: str) -> None:
    with pytest.raises(LLMConfigError, match=message) as info:
        ModelSpec.parse(name, **fields)
    assert SECRET not in str(info.value)


def test_client_settings_are_generation_settings_only(tmp_path: Path) -> None:
    with pytest.raises(LLMConfigError, match="unknown setting.*tempreature"):
        LLMClient(MODEL, cache_dir=tmp_path, tempreature=0)
    # Role options in the spec string are the role's business: the client keeps and ignores them.
    client = LLMClient(f"{MODEL}?few_shot=true&temperature=0", cache_dir=tmp_path)
    assert (client.spec.temperature, client.spec.options) == (0.0, {"few_shot": "true"})


def test_litellm_missing_gives_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_llm_backends, "litellm_available", lambda: False)
    with pytest.raises(LLMConfigError, match=r"pip install 'lateralgym\[litellm\]'"):
        LLMClient("anthropic/claude-3-5-haiku-latest")


def test_unwritable_cache_still_answers(
    llm_server: ScriptedLLMServer, tmp_path: Path, opened_clients: list[LLMClient]
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the cache directory should be")
    client = LLMClient(MODEL, base_url=llm_server.base_url, cache_dir=blocker / "llm", timeout=2.0)
    opened_clients.append(client)
    assert ask(client).text == "ok"


def test_server_is_loopback_only(llm_server: ScriptedLLMServer) -> None:
    assert llm_server.base_url.startswith("http://127.0.0.1:")
    assert llm_server.port > 0


# -- cache tags, odd replies, errors inside a call ---------------------------------------


def test_cache_tag_separates_entries_and_is_never_sent(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.responder = lambda body: f"answer {len(llm_server.requests)}"
    client = make_client()

    a = ask(client, cache_tag="episode-0")
    b = ask(client, cache_tag="episode-1")
    again = ask(client, cache_tag="episode-0")
    untagged = ask(client)

    assert llm_server.chat_calls == 3
    assert again.cache_hit and again.text == a.text and again.request_key == a.request_key
    assert len({a.request_key, b.request_key, untagged.request_key}) == 3
    bodies = [r.body for r in llm_server.requests]
    assert bodies[0] == bodies[1] == bodies[2]  # the tag only reaches the cache key
    assert all("episode" not in str(body) for body in bodies)
    # No tag keeps the key it had before tags existed: old cache entries stay valid.
    request = {
        "provider": "openai",
        "model": "scripted-model",
        "base_url": llm_server.base_url,
        "messages": [{"role": "user", "content": "Is a spoon a lever?"}],
        "params": {},
    }
    assert untagged.request_key == request_key(request)


def test_lone_surrogate_in_a_reply_is_replaced(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue("bad \ud800 char")
    client = make_client()

    reply = ask(client)
    again = ask(client)

    assert reply.text == "bad \ufffd char"
    reply.model_dump_json()  # serialisable, so the step log can take it
    assert again.cache_hit and again.text == "bad \ufffd char"
    assert llm_server.chat_calls == 1


def test_a_lone_surrogate_in_the_request_keys_and_caches(
    llm_server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    client = make_client()

    reply = ask(client, cache_tag="lone \udc80 surrogate")  # the tag is stored, never sent
    again = ask(client, cache_tag="lone \udc80 surrogate")

    assert reply.text == "ok" and again.cache_hit
    (entry,) = client.cache.directory.rglob("*.json")
    assert json.loads(entry.read_bytes().decode("utf-8"))["request"]["cache_tag"] == "lone \ufffd surrogate"


def test_config_error_inside_a_call_is_not_retried(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, opened_clients: list[LLMClient]
) -> None:
    client = LLMClient("openai/gpt-4o-mini", cache_dir=tmp_path, max_retries=3, backoff_base_s=0.01)
    opened_clients.append(client)
    monkeypatch.delenv("OPENAI_API_KEY")  # unset after construction: the call finds no key

    with pytest.raises(LLMCallError) as info:
        ask(client)

    assert (info.value.kind, info.value.attempts, info.value.retryable) == ("config", 1, False)
    assert "OPENAI_API_KEY" in str(info.value)


@pytest.mark.parametrize(
    ("exc", "kind", "retryable"),
    [
        (LLMConfigError("no key"), "config", False),
        (json.JSONDecodeError("Expecting value", "<html>", 0), "malformed", True),
        (ValueError("some library bug"), "error", False),
    ],
)
def test_classify(exc: Exception, kind: str, retryable: bool) -> None:
    failure = _llm_backends.classify(exc)
    assert (failure.kind, failure.retryable) == (kind, retryable)
