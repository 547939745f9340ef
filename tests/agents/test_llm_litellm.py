"""The litellm path of the LLM client layer, against the same real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import functools
import os
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
from llm_server import Fault, ScriptedLLMServer

from lateralgym.agents._llm_client import LLMCallError, LLMClient, UsageMeter
from lateralgym.agents._llm_usage import import_litellm, litellm_available, lookup_cost_usd, shipped_price
from lateralgym.envs._calls import ModelCall

if not litellm_available():  # not importorskip: a bare "import litellm" would fetch its price list
    pytest.skip("litellm is not installed", allow_module_level=True)

# litellm 1.106.2 builds a pydantic schema lazily on its first reply; pydantic 2.14 warns about it.
pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly. qualifier:UserWarning")

MakeClient = Callable[..., LLMClient]


@pytest.fixture
def make_client(make_client: MakeClient) -> MakeClient:
    """The shared client factory (``conftest.py``), on the litellm backend."""
    return functools.partial(make_client, backend="litellm")


def ask(client: LLMClient, text: str = "Is a spoon a lever?") -> ModelCall:
    return client.complete_sync([{"role": "user", "content": text}])


def test_plain_completion_and_tokens(llm_server: ScriptedLLMServer, make_client: MakeClient, api_key: str) -> None:
    llm_server.enqueue("a spoon is a lever")
    meter = UsageMeter()
    client = make_client(usage=meter, temperature=0.0)

    reply = ask(client, "one two three")

    assert (reply.text, reply.attempts, reply.cache_hit) == ("a spoon is a lever", 1, False)
    assert (reply.role, reply.model, reply.served_by) == ("player", "openai/scripted-model", "scripted-model")
    assert (reply.prompt_tokens, reply.completion_tokens) == (3, 5)
    assert reply.cost_usd is None  # litellm's map has no "scripted-model"
    assert llm_server.chat_calls == 1
    request = llm_server.requests[0]
    assert request.body["model"] == "scripted-model" and request.body["temperature"] == 0.0
    assert request.headers["authorization"] == f"Bearer {api_key}"
    assert meter.summary().calls == 1


def test_async_complete(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.responder = lambda body: "echo: " + body["messages"][-1]["content"]

    async def run() -> list[ModelCall]:
        client = make_client()
        return await asyncio.gather(*(client.complete(f"q{i}") for i in range(4)))

    assert sorted(r.text for r in asyncio.run(run())) == [f"echo: q{i}" for i in range(4)]


def test_retry_on_5xx_without_hidden_retries(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue(Fault.status(500), Fault.status(503), "recovered")

    reply = ask(make_client())

    assert (reply.text, reply.attempts) == ("recovered", 3)
    assert llm_server.chat_calls == 3  # litellm's and the openai SDK's retries are off


def test_429_then_success(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue(Fault.rate_limit(retry_after=0.2), "ok after 429")
    reply = ask(make_client())
    assert (reply.text, reply.attempts) == ("ok after 429", 2)
    assert llm_server.chat_calls == 2


def test_400_is_not_retried(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue(Fault.status(400))
    with pytest.raises(LLMCallError) as info:
        ask(make_client())
    assert (info.value.status, info.value.attempts, info.value.retryable) == (400, 1, False)
    assert llm_server.chat_calls == 1


def test_timeout_then_call_error(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue(*[Fault.delay(5.0)] * 2)
    client = make_client(timeout=0.2, max_retries=1)
    with pytest.raises(LLMCallError) as info:
        ask(client)
    assert (info.value.attempts, info.value.retryable) == (2, True)
    assert llm_server.chat_calls == 2


def test_garbage_body_is_an_error(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.enqueue(*[Fault.garbage()] * 2)
    client = make_client(max_retries=1)
    with pytest.raises(LLMCallError) as info:
        ask(client)
    assert info.value.attempts == 2
    assert llm_server.chat_calls == 2


def test_cache_and_secrets(
    llm_server: ScriptedLLMServer, tmp_path: Path, make_client: MakeClient, api_key: str
) -> None:
    client = make_client(max_retries=0)
    first = ask(client)
    again = ask(client)
    assert again.cache_hit and again.text == first.text and llm_server.chat_calls == 1

    llm_server.enqueue(Fault.status(500))
    with pytest.raises(LLMCallError) as info:
        client.complete_sync("a fresh question")
    texts = [str(info.value), repr(info.value), "".join(traceback.format_exception(info.value)), repr(client)]
    texts += [p.read_text() for p in (tmp_path / "cache").rglob("*.json")]
    assert all(api_key not in text for text in texts)


def test_cost_from_litellm_cost_map() -> None:
    cost = lookup_cost_usd("openai/gpt-4o-mini", 1000, 1000)
    assert cost is not None and cost > 0
    assert lookup_cost_usd("openai/no-such-model-anywhere", 1000, 1000) is None


@pytest.mark.parametrize(
    "model",
    [
        "openai/gpt-4o-mini",
        "gpt-4o-mini",
        "openai/gpt-4o-mini-2024-07-18",
        "openai/ft:gpt-4o-mini-2024-07-18:acme::abc",
        "gemini/gemini-2.5-flash",
        "together_ai/meta-llama/Llama-3-8b-chat-hf",
        "novita/qwen/qwen2.5-7b-instruct",
        "openai/qwen2.5-7b-instruct",
        "hosted_vllm/qwen2.5-7b-instruct",
        "openai/no-such-model-anywhere",
    ],
)
def test_the_shipped_map_read_as_data_prices_as_litellm_does(model: str) -> None:
    """The price read from litellm's JSON (no import) is litellm's own, and unknown where litellm's is."""
    litellm = import_litellm()
    try:
        expected: float | None = sum(litellm.cost_per_token(model=model, prompt_tokens=1000, completion_tokens=500))
    except Exception:
        expected = None
    price = shipped_price(model)
    mine = None if price is None else 1000 * price[0] + 500 * price[1]
    assert mine == pytest.approx(expected)


def test_litellm_finds_the_providers_own_key_with_base_url(
    llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened_clients: list[LLMClient]
) -> None:
    monkeypatch.setenv("HOSTED_VLLM_API_KEY", "hv-key-0123456789")
    monkeypatch.setenv("MY_VLLM_KEY", "my-key-0123456789")
    own = LLMClient("hosted_vllm/scripted-model", base_url=llm_server.base_url, cache_dir=tmp_path)
    named = LLMClient(
        "hosted_vllm/scripted-model", base_url=llm_server.base_url, cache_dir=tmp_path, api_key_env="MY_VLLM_KEY"
    )
    opened_clients += [own, named]

    own.complete_sync("first", use_cache=False)
    named.complete_sync("second", use_cache=False)

    first, second = (r.headers["authorization"] for r in llm_server.requests)
    assert first == "Bearer hv-key-0123456789"  # litellm's own lookup, not a placeholder over it
    assert second == "Bearer my-key-0123456789"


def test_seed_is_dropped_for_a_provider_without_one(
    llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, opened_clients: list[LLMClient]
) -> None:
    monkeypatch.setenv("PERPLEXITYAI_API_KEY", "pplx-key-0123456789")
    client = LLMClient("perplexity/scripted-model", base_url=llm_server.base_url, cache_dir=tmp_path, max_retries=0)
    opened_clients.append(client)

    reply = client.complete_sync("Is a spoon a lever?", seed=3)

    assert reply.text == "ok"
    assert "seed" not in llm_server.requests[0].body
    assert client.complete_sync("Is a spoon a lever?", seed=4).text == "ok"  # still a distinct request
    assert llm_server.chat_calls == 2


@pytest.mark.parametrize(("value", "expected"), [("1", "True"), ("yes", "True"), ("false", "false"), (None, "True")])
def test_litellm_always_uses_its_local_price_list(
    monkeypatch: pytest.MonkeyPatch, value: str | None, expected: str
) -> None:
    import_litellm()  # imported before "false" is set, so no case here fetches a price list
    if value is None:
        monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    else:
        monkeypatch.setenv("LITELLM_LOCAL_MODEL_COST_MAP", value)
    import_litellm()
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == expected
