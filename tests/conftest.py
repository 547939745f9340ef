"""Shared pytest fixtures."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from llm_server import ScriptedLLMServer


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A real OpenAI-compatible server on 127.0.0.1 (random port), stopped at teardown."""
    server = ScriptedLLMServer().start()
    try:
        yield server
    finally:
        server.stop()
