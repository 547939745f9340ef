"""Secrets outside the API-key variable: a key pasted as a URL, credentials in a URL, provider keys."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
from llm_server import Fault, ScriptedLLMServer

from lateralgym.agents import display_url
from lateralgym.agents._llm_client import LLMCallError, LLMClient, LLMConfigError, ModelSpec
from lateralgym.agents._llm_usage import litellm_available

MakeClient = Callable[..., LLMClient]
PASTED = "sk-pasted-by-mistake-0123456789"
CREDENTIAL = "sk-url-credential-0123456789"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        (f"https://user:{CREDENTIAL}@llm.example.com/v1", "https://llm.example.com/v1"),
        (f"http://{CREDENTIAL}@10.0.0.2:8000", "http://10.0.0.2:8000"),
        (f"https://llm.example.com/v1?api-key={CREDENTIAL}&x=1", "https://llm.example.com/v1?api-key=[REDACTED]&x=1"),
        (None, None),
    ],
)
def test_display_url(url: str | None, shown: str | None) -> None:
    assert display_url(url) == shown


def test_a_bad_base_url_is_not_echoed() -> None:
    with pytest.raises(LLMConfigError, match="http://") as info:
        ModelSpec.parse("openai/x", base_url=PASTED)
    assert PASTED not in str(info.value)


def test_url_credentials_stay_out_of_reprs_and_the_cache(
    llm_server: ScriptedLLMServer, make_client: MakeClient, tmp_path: Path, opened_clients: list[LLMClient]
) -> None:
    url = f"http://user:{CREDENTIAL}@127.0.0.1:{llm_server.port}/v1"
    client = LLMClient("openai/scripted-model", base_url=url, cache_dir=tmp_path / "cache", max_retries=1)
    opened_clients.append(client)
    assert client.complete_sync("Is a spoon a lever?").text == "ok"
    llm_server.enqueue(Fault.status(500), Fault.status(500))
    with pytest.raises(LLMCallError) as info:
        client.complete_sync("another question")

    texts = [repr(client), repr(client.spec), str(client.spec), client.spec.model_dump_json()]
    texts += [str(info.value), "".join(traceback.format_exception(info.value))]
    texts += [p.read_text() for p in (tmp_path / "cache").rglob("*.json")]
    assert all(CREDENTIAL not in text for text in texts)
    assert f"127.0.0.1:{llm_server.port}/v1" in texts[-1]  # the cache still says which server answered
    # The credentials are still used (the spec keeps them for the SDK).
    assert client.spec.base_url == url
    # Credentials do not split the cache: the same server without them hits the same entry.
    assert make_client().complete_sync("Is a spoon a lever?").cache_hit


@pytest.mark.filterwarnings("ignore:.*ReadOnly. qualifier:UserWarning")  # litellm 1.106.2 with pydantic 2.14
def test_providers_key_variables_are_redacted_from_the_cache(
    llm_server: ScriptedLLMServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    opened_clients: list[LLMClient],
) -> None:
    if not litellm_available():  # not importorskip: a bare "import litellm" would fetch its price list
        pytest.skip("litellm is not installed")
    secret = "hv-secret-key-0123456789"
    monkeypatch.setenv("HOSTED_VLLM_API_KEY", secret)
    llm_server.enqueue(f"I was called with {secret}")  # a reply that echoes the key
    client = LLMClient("hosted_vllm/scripted-model", base_url=llm_server.base_url, cache_dir=tmp_path / "cache")
    opened_clients.append(client)

    reply = client.complete_sync("Is a spoon a lever?")

    assert secret in reply.text  # the reply itself is the caller's
    assert llm_server.requests[0].headers["authorization"] == f"Bearer {secret}"
    (entry,) = (tmp_path / "cache").rglob("*.json")
    assert secret not in entry.read_text() and "[REDACTED]" in entry.read_text()
