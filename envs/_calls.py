"""``ModelCall``: the one record of a request to a language model, whoever made it.

The LLM client returns it, the response cache stores it, players and judges hand it to the env and
the runner, and the step log writes it. A judge's calls are recorded exactly like a player's, with
``role`` telling them apart, so every token a run spends is in the log and in the usage totals.
It is plain data: ``envs`` holds it so that a ``JudgeReply`` can carry the calls behind it without
``envs`` knowing anything about LLM clients.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict


class ModelCall(BaseModel):
    """One request to a model (or its answer from the cache), and what it cost."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str = "player"
    """Who made the call: ``player``, ``judge`` (or ``annotator`` for data pipelines)."""
    model: str | None = None
    """The model spec that was asked, ``provider/model`` (never a key)."""
    served_by: str | None = None
    """The model name the server reported, when it said."""
    text: str = ""
    """The reply text as received; empty when the request failed."""
    parsed_action: dict[str, Any] | None = None
    """For player calls: the action parsed from ``text``."""
    prompt_tokens: int = 0
    """Prompt tokens reported by the server (of the original call, on a cache hit)."""
    completion_tokens: int = 0
    """Completion tokens reported by the server (of the original call, on a cache hit)."""
    latency_s: float = 0.0
    """Seconds the call took: waiting for a slot, every attempt and every backoff."""
    cache_hit: bool = False
    """Whether the answer came from the on-disk cache (no request sent)."""
    cost_usd: float | None = None
    """What the call cost; ``0.0`` on a cache hit; ``None`` when the price is unknown."""
    attempts: int = 1
    """Requests sent: 1 plus retries; 0 on a cache hit."""
    finish_reason: str | None = None
    """Why generation stopped (``stop``, ``length``, ...), when the server said."""
    request_key: str | None = None
    """sha256 of the full request (the cache key)."""
    error: str | None = None
    """Why the call failed, or why its reply could not be used; ``None`` when it was fine."""
