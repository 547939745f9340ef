"""The model clients go through the environment's proxies as ``httpx`` would, and ``NO_PROXY`` is honoured.

A client given a transport of its own gets no proxy from ``httpx``: before, ``HTTP_PROXY`` was silently
ignored. Here a real forward proxy on 127.0.0.1 (absolute-URI HTTP requests, relayed) stands between
the client and the scripted server; the proxy records what it relayed. A ``local/`` model's requests
never take a proxy: its key and prompts stay on this machine.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from forward_proxy import ForwardProxy
from llm_server import ScriptedLLMServer

from lateralgym.agents import LLMCallError, LLMClient
from lateralgym.agents._http_transport import environment_proxies


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[ForwardProxy]:
    """A forward proxy named by ``HTTP_PROXY`` in an environment with no other proxy setting."""
    clear_proxy_settings(monkeypatch)
    running = ForwardProxy()
    monkeypatch.setenv("HTTP_PROXY", running.url)
    monkeypatch.setenv("NO_PROXY", "")  # nothing exempt unless a test says so (loopback included)
    yield running
    running.stop()


def clear_proxy_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)


def test_requests_go_through_the_environments_proxy(
    proxy: ForwardProxy, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.enqueue("first", "second")
    client = LLMClient("openai/m", base_url=llm_server.base_url, cache_dir=tmp_path / "cache", max_retries=0)
    try:
        # the first request takes the SDK's path, the second the direct one (``_post_chat``): both proxied
        texts = [client.complete_sync(f"question {n}", use_cache=False).text for n in (1, 2)]
        vectors, _ = client_embed(client, ["a text"])
    finally:
        client.close()
    assert texts == ["first", "second"] and len(vectors) == 1
    chat = f"{llm_server.base_url}/chat/completions"
    assert proxy.relayed == [chat, chat, f"{llm_server.base_url}/embeddings"]
    assert len(llm_server.requests) == 3


def client_embed(client: LLMClient, texts: list[str]) -> tuple[list[list[float]], Any]:
    from lateralgym.envs.support import background

    return background.run(client.embed(texts))


@pytest.mark.parametrize("exempt", ["127.0.0.1", "127.0.0.1,example.com", "http://127.0.0.1", "*"])
def test_no_proxy_sends_requests_direct(
    exempt: str, proxy: ForwardProxy, llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NO_PROXY", exempt)
    client = LLMClient("openai/m", base_url=llm_server.base_url, cache_dir=tmp_path / "cache", max_retries=0)
    try:
        assert client.complete_sync("hello").text == "ok"
    finally:
        client.close()
    assert proxy.relayed == [] and len(llm_server.requests) == 1


def test_a_proxy_that_is_down_fails_the_call_rather_than_being_bypassed(
    llm_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_proxy_settings(monkeypatch)
    stopped = ForwardProxy()
    stopped.stop()
    monkeypatch.setenv("HTTP_PROXY", stopped.url)
    client = LLMClient("openai/m", base_url=llm_server.base_url, cache_dir=tmp_path / "cache", max_retries=0)
    try:
        with pytest.raises(LLMCallError) as caught:
            client.complete_sync("hello")
    finally:
        client.close()
    assert caught.value.kind == "connection" and llm_server.requests == []


@pytest.mark.parametrize(
    "environment",
    [
        {"HTTP_PROXY": "http://proxy.example:3128"},
        {"https_proxy": "proxy.example:3129", "NO_PROXY": "localhost,::1,10.0.0.0/8,.internal.example,other.example"},
        {"ALL_PROXY": "socks5://proxy.example:1080", "no_proxy": "https://api.example"},
        {"HTTP_PROXY": "http://proxy.example:3128", "NO_PROXY": "a.example,*"},
        {"HTTP_PROXY": "http://proxy.example:3128", "http_proxy": "http://lower.example:3128"},
        {},
    ],
)
def test_the_environment_is_read_as_httpx_reads_it(
    environment: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    clear_proxy_settings(monkeypatch)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    httpx_utils = pytest.importorskip("httpx._utils")
    if not hasattr(httpx_utils, "get_environment_proxies"):
        pytest.skip(f"httpx {httpx.__version__} has no get_environment_proxies to compare with")
    assert environment_proxies() == httpx_utils.get_environment_proxies()
