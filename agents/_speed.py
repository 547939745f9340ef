"""How fast a model server reads and writes, from one timed, streamed call (``measure_speed``).

The time to the first streamed token is the time the server took to read the prompt; the tokens after
it, over the time they took, are its writing speed. The prompt is counted in estimated tokens
(``CHARS_PER_TOKEN`` characters each), the unit a run's plan (``lateralgym run --dry-run``) counts in,
so the two multiply into seconds without a tokenizer. Used before a run on a ``local/`` model, whose
speed depends on the machine and on whatever else runs on it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

import httpx
from pydantic import BaseModel

from lateralgym.agents._gguf import LocalModelError
from lateralgym.agents._local_serve import local_api_key

__all__ = ["CHARS_PER_TOKEN", "Speed", "measure_speed"]

CHARS_PER_TOKEN = 4.0
PROBE_TOKENS = 16


class Speed(BaseModel):
    """A server's measured speed."""

    read_tokens_per_s: float
    """Prompt tokens (estimated, ``CHARS_PER_TOKEN`` characters each) read per second."""
    write_tokens_per_s: float
    """Completion tokens written per second."""
    seconds: float
    """How long the timed call took."""


async def measure_speed(
    base_url: str,
    messages: Sequence[dict[str, Any]],
    *,
    model: str = "local",
    timeout: float = 900,
    api_key: str | None = None,
) -> Speed:
    """Time one streamed chat call: ``messages`` read, ``PROBE_TOKENS`` tokens written.

    Give it the run's first prompt: reading slows as a prompt grows (attention), so a short probe would
    promise a long scene too soon; and a llama.cpp server with its prompt cache keeps what it read, so
    the run's first call does not read it again.

    The key sent is ``api_key``, else that of the ``local/`` server this process runs at ``base_url``.

    Raises:
        LocalModelError: the server did not answer the call, or streamed nothing.
    """
    chat = [
        {"role": str(m.get("role", "user")), "content": str(m.get("content", ""))} for m in messages if m.get("content")
    ]
    chat = chat or [{"role": "user", "content": "Say hello."}]
    body = {"model": model, "messages": chat, "max_tokens": PROBE_TOKENS, "temperature": 0, "stream": True}
    key = api_key if api_key is not None else local_api_key(base_url)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    started = time.monotonic()
    first: float | None = None
    pieces = 0
    try:
        async with (
            httpx.AsyncClient(timeout=timeout, trust_env=False) as client,  # loopback: never through a proxy
            client.stream("POST", f"{base_url}/chat/completions", json=body, headers=headers) as response,
        ):
            response.raise_for_status()
            async for line in response.aiter_lines():
                data = line.removeprefix("data:").strip()
                if not line.startswith("data:") or not data or data == "[DONE]":
                    continue
                for choice in json.loads(data).get("choices") or []:
                    if (choice.get("delta") or {}).get("content"):
                        pieces += 1
                        first = first if first is not None else time.monotonic()
    except (httpx.HTTPError, ValueError) as exc:
        raise LocalModelError(f"the timing call to {base_url} failed: {type(exc).__name__}: {exc}") from exc
    ended = time.monotonic()
    if first is None:
        raise LocalModelError(f"the timing call to {base_url} streamed no text")
    prompt = sum(len(m["content"]) for m in chat) / CHARS_PER_TOKEN
    reading = max(first - started, 1e-3)
    writing = max(ended - first, 1e-3)
    return Speed(
        read_tokens_per_s=prompt / reading,
        write_tokens_per_s=max(pieces - 1, 1) / writing,
        seconds=ended - started,
    )
