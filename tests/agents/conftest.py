"""Fixtures of the LLM client tests: a fake API key, clients of the scripted server closed at teardown, and
``local/stand-in`` (a ``local/`` model served by the stand-in server, ``tests/local_stand_in.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from local_servers import write_gguf
from local_stand_in import stand_in_command

from lateralgym.agents import LOCAL_MODELS, LocalModel, register_local_model
from lateralgym.agents._llm_client import LLMClient


@pytest.fixture
def api_key() -> str:
    """The fake key in ``OPENAI_API_KEY``: it may travel in the request header, nowhere else."""
    return "sk-test-SECRET123"


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch, api_key: str) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", api_key)


@pytest.fixture
def opened_clients() -> Iterator[list[LLMClient]]:
    """Clients a test opened, closed at teardown (``complete_sync`` keeps connections open)."""
    clients: list[LLMClient] = []
    yield clients
    for client in clients:
        client.close()


@pytest.fixture
def make_client(
    llm_server: ScriptedLLMServer, tmp_path: Path, opened_clients: list[LLMClient]
) -> Callable[..., LLMClient]:
    """Makes clients of ``openai/scripted-model`` on the scripted server, caching under ``tmp_path/cache``.

    Each has a 60 s timeout (a test about timeouts sets its own: on a busy machine litellm's first call
    alone took over 2 s), 3 retries and a 10 ms backoff; keyword arguments override or add client and
    spec fields (``backend="litellm"``, ``usage=...``, ...).
    """

    def make(**fields: Any) -> LLMClient:
        client = LLMClient(
            "openai/scripted-model",
            base_url=llm_server.base_url,
            cache_dir=tmp_path / "cache",
            backoff_base_s=0.01,
            **{"timeout": 60.0, "max_retries": 3, **fields},
        )
        opened_clients.append(client)
        return client

    return make


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """``local/stand-in``: a GGUF header served by the stand-in server; its files in ``tmp_path/server``."""
    model = write_gguf(tmp_path / "stand-in.gguf")
    register_local_model(
        LocalModel("stand-in", "a stand-in server", "nothing", lambda: model, command=stand_in_command)
    )
    monkeypatch.setenv("STAND_IN_DIR", str(tmp_path / "server"))
    yield tmp_path / "server"
    LOCAL_MODELS.pop("stand-in", None)
