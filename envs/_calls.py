"""``ModelCall``: the one record of a request to a language model, whoever made it.

The LLM client returns it, the response cache stores it, players and judges hand it to the env and
the runner, and the step log writes it. A judge's calls are recorded exactly like a player's, with
``role`` telling them apart, so every token a run spends is in the log and in the usage totals.
It is plain data: ``envs`` holds it so that a ``JudgeReply`` can carry the calls behind it without
``envs`` knowing anything about LLM clients.

Its text comes from outside (a server's reply, the model name it reports, an error body), so the
record admits only text that can be written: a lone UTF-16 surrogate (a ``\\udc00`` escape in a
server's JSON) is not a Unicode scalar value and cannot be encoded as UTF-8, so it is replaced by
U+FFFD wherever a call is built or copied (``writable``). Every other character (NUL, control
characters, right-to-left marks, emoji) is kept as received: JSON escapes what it must.

Its length is bounded too: a looping model can send a megabyte, and parsers, logs and caches must
never see that. ``capped`` cuts a reply to its role's cap (``REPLY_CHAR_CAPS``) before anything
reads it, keeping its start and its end (a move comes first in a direct reply and last after
reasoning) and recording how much went in ``truncated_chars``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, field_validator

__all__ = ["OTHER_REPLY_CHARS", "REPLY_CHAR_CAPS", "ModelCall", "cap_text", "capped", "reply_cap", "writable"]

REPLY_CHAR_CAPS: Mapping[str, int] = {"player": 32_000, "judge": 8_000}
"""The most characters of a model's reply anything reads, by the role of the call: a player's move
(with its reasoning) fits in 32,000 (some 8,000 tokens), a judge's label or verdict JSON in 8,000."""
OTHER_REPLY_CHARS = 200_000
"""The cap of every other role (``annotator``: a data pipeline's JSON answers, which run longer)."""
_HEAD_SHARE = 4
"""A cut reply keeps the first quarter of its cap and the last three quarters."""

_SURROGATE = re.compile("[\ud800-\udfff]")


def writable(value: Any) -> Any:
    """``value`` with every lone surrogate in its text replaced by U+FFFD, so it encodes as UTF-8.

    Strings are cleaned; dict keys and values, list and tuple items are cleaned recursively; any
    other value is returned as it is. Text without a surrogate comes back unchanged (the same object).

    Example:
        >>> writable({"text": "bad \\udc00 char"})
        {'text': 'bad \\ufffd char'}
    """
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {writable(key): writable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [writable(item) for item in value]
    if isinstance(value, tuple):
        return tuple(writable(item) for item in value)
    return value


class ModelCall(BaseModel):
    """One request to a model (or its answer from the cache), and what it cost.

    Every text field holds writable text only (see the module docstring): it is cleaned on
    validation and again by ``model_copy(update=...)``, which validates its result.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str = "player"
    """Who made the call: ``player``, ``judge`` (or ``annotator`` for data pipelines)."""
    model: str | None = None
    """The model spec that was asked, ``provider/model`` (never a key)."""
    served_by: str | None = None
    """The model name the server reported, when it said."""
    text: str = ""
    """The reply text as received (lone surrogates replaced); empty when the request failed."""
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
    tokens: list[str] | None = None
    """The completion's tokens as the server wrote them, when logprobs were asked for (the spec's
    ``logprobs=true``) and returned; ``None`` otherwise."""
    logprobs: list[float] | None = None
    """The sampling log-probability of each completion token (parallel to ``tokens``), when asked
    for and returned."""
    token_ids: list[int] | None = None
    """The completion's token ids, when the server returned them (vLLM: ``token_ids=true`` in the
    spec, or tokens written ``token_id:N``); parallel to ``logprobs``."""
    format_reasks: int = 0
    """Player calls: follow-up requests that re-asked for the expected format after an unparsable
    reply (their tokens, latency, attempts and cost are included in this record's)."""
    unparsed_replies: tuple[str, ...] = ()
    """Player calls: the unparsable replies that were re-asked, in order (``text`` is the last reply)."""
    fallback: str | None = None
    """Player calls: the kind of move (``ask``, ``commit``) read from a reply still unparsable after the
    re-asks by the benchmark's fallback; ``None`` when the reply parsed (or no fallback applied)."""
    truncated_chars: int = 0
    """Characters cut from the middle of ``text`` because the reply ran past its role's cap
    (``REPLY_CHAR_CAPS``); 0 when the reply is whole. A cut reply has no token data."""
    constrained: str | None = None
    """Player calls: what the server was asked to decode the reply under (``grammar``, ``json_schema``:
    the benchmark's action grammar); ``None`` for free text."""

    @field_validator(
        "role",
        "model",
        "served_by",
        "text",
        "parsed_action",
        "finish_reason",
        "request_key",
        "error",
        "tokens",
        "unparsed_replies",
        "fallback",
        "constrained",
        mode="after",
    )
    @classmethod
    def _writable(cls, value: Any) -> Any:
        return writable(value)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """A copy with ``update`` applied, validated like a new record (pydantic's own copy skips
        validation, which would let unwritable text in)."""
        if not update:
            return super().model_copy(deep=deep)
        return self.model_validate({**dict(self), **update})


def reply_cap(role: str) -> int:
    """The most characters of a ``role``'s reply that are read and kept (``REPLY_CHAR_CAPS``)."""
    return REPLY_CHAR_CAPS.get(role, OTHER_REPLY_CHARS)


def cap_text(text: str, limit: int) -> tuple[str, int]:
    """``text`` cut to at most ``limit`` characters, and how many were cut (0: unchanged, same object).

    The cut keeps about the first quarter of ``limit`` and the rest from the end, joined by a line
    that says how much is missing (it holds no ``?``, ``:``, brace or label a parser could read). A
    cut text is within ``limit``, so cutting it again changes nothing.
    """
    if len(text) <= limit:
        return text, 0
    cut = len(text)  # an upper bound of the marker's number, so the marker only gets shorter
    marker = f"\n[... {cut} characters cut ...]\n"
    head = max(0, min(limit // _HEAD_SHARE, limit - len(marker)))
    tail = max(0, limit - head - len(marker))
    cut = len(text) - head - tail
    kept = f"{text[:head]}\n[... {cut} characters cut ...]\n{text[len(text) - tail :]}"
    return kept[:limit], cut


def capped(call: ModelCall) -> ModelCall:
    """``call`` with its reply and unparsed replies cut to its role's cap (``reply_cap``); a cut reply
    records ``truncated_chars`` and loses its token data (which no longer matches the text)."""
    limit = reply_cap(call.role)
    if len(call.text) <= limit and all(len(t) <= limit for t in call.unparsed_replies):
        return call
    text, cut = cap_text(call.text, limit)
    earlier = tuple(cap_text(t, limit)[0] for t in call.unparsed_replies)
    update: dict[str, Any] = {"text": text, "unparsed_replies": earlier}
    if cut:
        update |= {"truncated_chars": call.truncated_chars + cut, "tokens": None, "logprobs": None, "token_ids": None}
    return call.model_copy(update=update)
