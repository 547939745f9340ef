"""The per-call path of the OpenAI backend: pools sized to what is in flight, the body ``create`` would
send without its transform, and prices found without importing litellm."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import openai
import pytest
from llm_server import ScriptedLLMServer

from lateralgym.agents._llm_backends import POOL_REQUESTS, OpenAIBackend
from lateralgym.agents._llm_client import LLMCallError, LLMClient
from lateralgym.agents._llm_usage import litellm_available, shipped_price

MakeClient = Callable[..., LLMClient]


def test_requests_in_flight_spread_over_pools_of_a_few_connections(
    llm_server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    """20 requests at once all reach the server together, carried by ceil(20 / 8) SDK clients (one
    ``httpx`` pool each: a pool's bookkeeping grows with the square of its connections)."""
    llm_server.latency_s = 0.3
    client = make_client(concurrency=20)
    backend = client._backend
    assert isinstance(backend, OpenAIBackend)

    async def main() -> tuple[list[str], int]:
        calls = await asyncio.gather(*(client.complete(f"question {i}", use_cache=False) for i in range(20)))
        (pools,) = backend._pools.values()
        opened = len(pools.clients)
        await client.aclose()
        return [call.text for call in calls], opened

    texts, opened = asyncio.run(main())
    assert texts == ["ok"] * 20
    assert llm_server.peak_in_flight() == 20  # none waited for a connection
    assert opened == -(-20 // POOL_REQUESTS)


def test_the_body_sent_is_the_one_create_sends(llm_server: ScriptedLLMServer, api_key: str) -> None:
    """Same JSON body, same auth header as ``chat.completions.create`` with the same arguments,
    ``extra_body`` (vLLM's ``return_token_ids``) merged in, passed-on parameters included."""
    client = LLMClient(
        "openai/scripted-model?temperature=0.5&max_tokens=30&seed=7&token_ids=true",
        base_url=llm_server.base_url,
        use_cache=False,
    )
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Is a spoon a lever?"}]
    call = client.complete_sync(messages, stop=["\n"], top_p=0.9)
    client.close()
    ours = llm_server.requests[-1]

    async def sdk() -> None:
        sdk_client = openai.AsyncOpenAI(api_key=api_key, base_url=llm_server.base_url, max_retries=0)
        await sdk_client.chat.completions.create(
            model="scripted-model",
            messages=messages,  # type: ignore[arg-type]
            temperature=0.5,
            max_tokens=30,
            seed=7,
            stop=["\n"],
            top_p=0.9,
            extra_body={"return_token_ids": True},
        )
        await sdk_client.close()

    asyncio.run(sdk())
    theirs = llm_server.requests[-1]
    assert ours.body == theirs.body
    assert ours.body["return_token_ids"] is True
    assert ours.headers["authorization"] == theirs.headers["authorization"] == f"Bearer {api_key}"
    assert call.text == "ok" and call.token_ids  # the reply's JSON read once, token ids and all


def test_a_parameter_create_does_not_take_fails_before_sending(
    llm_server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    client = make_client()
    with pytest.raises(LLMCallError, match="no_such_option") as raised:
        client.complete_sync("hi", no_such_option=1)
    assert raised.value.retryable is False and raised.value.attempts == 1
    assert llm_server.chat_calls == 0


@pytest.mark.skipif(not litellm_available(), reason="litellm is not installed (pip install 'lateralgym[litellm]')")
def test_litellms_shipped_map_is_read_as_data_for_the_models_it_names() -> None:
    assert shipped_price("openai/gpt-4o-mini") is not None
    assert shipped_price("openai/gpt-4o-mini?temperature=0") == shipped_price("openai/gpt-4o-mini")
    assert shipped_price("openai/ft:gpt-4o-mini-2024-07-18:acme::abc123") is not None  # as its base model
    assert shipped_price("openai/scripted-model") is None
    # a name the map files under another provider only (novita/qwen/...) is not that provider's price
    assert shipped_price("openai/qwen2.5-7b-instruct") is None


@pytest.mark.parametrize("model", ["scripted-model", "gpt-4o-mini", "qwen2.5-7b-instruct"])
def test_an_llm_run_imports_neither_litellm_nor_the_sdks_resources(
    llm_server: ScriptedLLMServer, tmp_path: Path, model: str
) -> None:
    """litellm's import takes seconds, the SDK's resource classes (every API it has) one more: a run
    against a local model needs neither, whether or not its name is priced (the price comes from
    litellm's shipped map, read as JSON; the endpoint check and the calls go through the SDK's
    request path)."""
    code = (
        "import sys\n"
        "from lateralgym.episodes import StepLine, read_log, run\n"
        f"result = run('brainteaser', player='openai/{model}', base_url={llm_server.base_url!r}, limit=1,\n"
        f"             out={str(tmp_path)!r}, use_cache=False, progress=False)\n"
        "steps = [r for r in read_log(result.run_dir / 'steps.jsonl') if isinstance(r, StepLine)]\n"
        "costs = {r.llm.cost_usd for r in steps if r.llm}\n"
        "priced = 'unpriced' if costs == {None} else 'priced' if None not in costs and min(costs) > 0 else costs\n"
        "print(result.ran, result.errored, result.usage['player'].calls, priced,\n"
        "      'litellm' in sys.modules, 'openai.resources' in sys.modules)\n"
    )
    env = {**os.environ, "OPENAI_API_KEY": "sk-x"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    ran, errored, calls, priced, litellm, resources = done.stdout.splitlines()[-1].split()
    assert int(ran) >= 1 and errored == "0" and int(calls) == int(ran)
    assert (litellm, resources) == ("False", "False")
    # gpt-4o-mini is in the offline table too; the others no price list names under openai/
    assert priced == ("priced" if model == "gpt-4o-mini" else "unpriced")
    assert llm_server.chat_calls == int(calls)
