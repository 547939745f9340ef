"""``LLMClient``: the one way LateralGym talks to a language model.

It owns retries (exponential backoff with jitter, ``Retry-After`` honoured),
timeouts, a process-wide concurrency limit, the on-disk response cache and usage
accounting, and it never writes an API key anywhere: keys are read from the
environment variable the ``ModelSpec`` names and live only inside the SDK
client objects.

Example:
    >>> client = LLMClient("openai/qwen", base_url="http://127.0.0.1:8000/v1")  # doctest: +SKIP
    >>> client.complete_sync([{"role": "user", "content": "Is a spoon a lever?"}]).text  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import random
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from lateralgym.agents._llm_backends import Backend, Failure, RawReply, classify, make_backend
from lateralgym.agents._llm_cache import DEFAULT_CACHE_DIR, CachedReply, ResponseCache, request_key
from lateralgym.agents._llm_concurrency import (
    DEFAULT_CONCURRENCY,
    ConcurrencyLimiter,
    default_concurrency,
    default_limiter,
    set_default_concurrency,
    sync_loop,
)
from lateralgym.agents._llm_errors import LLMCallError, LLMConfigError, LLMError, redact
from lateralgym.agents._llm_secrets import display_url
from lateralgym.agents._llm_spec import ModelSpec
from lateralgym.agents._llm_usage import UsageMeter, UsageSummary, litellm_available, lookup_cost_usd

__all__ = [
    "DEFAULT_CACHE_DIR",
    "DEFAULT_CONCURRENCY",
    "CachedReply",
    "Completion",
    "ConcurrencyLimiter",
    "LLMCallError",
    "LLMClient",
    "LLMConfigError",
    "LLMError",
    "ModelSpec",
    "ResponseCache",
    "UsageMeter",
    "UsageSummary",
    "default_concurrency",
    "redact",
    "request_key",
    "set_default_concurrency",
]

logger = logging.getLogger("lateralgym.llm")

_MAX_RETRY_AFTER_S = 120.0  # a server asking for longer is treated as asking for this
_TIMEOUT_GRACE_S = 1.0  # the hard outer bound sits just past the SDK's own timeout

Messages = str | Sequence[Mapping[str, Any]]


class Completion(BaseModel):
    """One answer from a model (or from the cache), with what it cost."""

    model_config = ConfigDict(frozen=True)

    text: str
    """The assistant message content; empty when the request failed."""
    model: str
    """The model that answered, as the server named it."""
    prompt_tokens: int = 0
    """Prompt tokens reported by the server (of the original call, on a cache hit)."""
    completion_tokens: int = 0
    """Completion tokens reported by the server (of the original call, on a cache hit)."""
    latency_s: float = 0.0
    """Seconds spent in ``complete``: waiting for a slot, every attempt and every backoff."""
    cache_hit: bool = False
    """Whether the answer came from the on-disk cache (no request sent)."""
    cost_usd: float | None = None
    """What this call cost; ``0.0`` on a cache hit; ``None`` when the price is unknown."""
    attempts: int = 1
    """Requests sent: 1 plus retries; 0 on a cache hit."""
    error: str | None = None
    """``None``, or why the request failed (only when the client returns errors as values)."""
    finish_reason: str | None = None
    """Why generation stopped (``stop``, ``length``, ...), when the server said."""
    request_key: str | None = None
    """sha256 of the full request (the cache key), for logs."""


class LLMClient:
    """Sends chat requests for one model, with retries, a cache and accounting.

    Args:
        spec: A ``ModelSpec`` or its ``provider/model`` string.
        cache_dir: Where cached replies live; default ``.lateralgym-cache/llm``
            under the working directory at construction.
        use_cache: Whether calls read and write the cache unless told otherwise.
        concurrency: ``None`` shares the process-wide limiter (8 by default, see
            ``set_default_concurrency``); an int gives this client its own cap; a
            ``ConcurrencyLimiter`` is shared with whoever else holds it.
        usage: A meter to add to (share one to total several clients).
        backoff_base_s: First backoff delay; it doubles each retry, with jitter.
        backoff_max_s: Longest backoff delay (a server's ``Retry-After`` may exceed it).
        raise_on_error: Raise ``LLMCallError`` on failure (default), or return a
            ``Completion`` whose ``error`` says what went wrong.
        **spec_fields: Overrides of ``spec`` fields (``base_url``, ``temperature``, ...).

    Raises:
        LLMConfigError: The name is invalid, the key's variable is unset (and no
            ``base_url`` is given), or litellm is needed but not installed.
    """

    def __init__(
        self,
        spec: ModelSpec | str,
        *,
        cache_dir: str | os.PathLike[str] | None = None,
        use_cache: bool = True,
        concurrency: int | ConcurrencyLimiter | None = None,
        usage: UsageMeter | None = None,
        backoff_base_s: float = 0.5,
        backoff_max_s: float = 30.0,
        raise_on_error: bool = True,
        **spec_fields: Any,
    ) -> None:
        self.spec = ModelSpec.parse(spec, **spec_fields) if (spec_fields or isinstance(spec, str)) else spec
        self._backend: Backend = make_backend(self.spec)
        self.cache = ResponseCache(Path(cache_dir) if cache_dir is not None else Path.cwd() / DEFAULT_CACHE_DIR)
        self.use_cache = use_cache
        self._limiter = ConcurrencyLimiter(concurrency) if isinstance(concurrency, int) else concurrency
        self.usage = usage if usage is not None else UsageMeter()
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.raise_on_error = raise_on_error
        self._rng = random.Random()

    def __repr__(self) -> str:
        return f"LLMClient({self.spec.name!r}, backend={self.spec.backend!r}, cache={str(self.cache.directory)!r})"

    @property
    def limiter(self) -> ConcurrencyLimiter:
        """The concurrency limiter this client's requests wait on."""
        return self._limiter if self._limiter is not None else default_limiter()

    # -- public calls ----------------------------------------------------------------

    async def complete(
        self,
        messages: Messages,
        *,
        use_cache: bool | None = None,
        cache_tag: str | None = None,
        **params: Any,
    ) -> Completion:
        """Ask the model; answer from the cache when the same request was answered before.

        Args:
            messages: Chat messages (``[{"role": "user", "content": "..."}]``), or a
                string, sent as one user message.
            use_cache: Override the client's ``use_cache`` for this call.
            cache_tag: Part of the cache key, never sent: equal requests with different
                tags are separate calls (the player tags each with its episode seed, so
                repeats of an item are asked afresh while a rerun replays them).
            **params: Request parameters: ``temperature``, ``max_tokens`` and ``seed``
                override the spec's; others (``stop``, ``top_p``, ...) are passed on.
                All are part of the cache key.

        Raises:
            LLMCallError: The request failed for good (unless ``raise_on_error`` is off).
        """
        started = time.monotonic()
        chat = _as_messages(messages)
        call_params = self._call_params(params)
        request: dict[str, Any] = {
            "provider": self.spec.provider,
            "model": self.spec.model,
            "base_url": display_url(self.spec.base_url),  # credentials neither key nor sit in the cache
            "messages": chat,
            "params": call_params,
        }
        if cache_tag is not None:  # absent otherwise, so untagged keys are what they always were
            request["cache_tag"] = cache_tag
        key = request_key(request)
        caching = self.use_cache if use_cache is None else use_cache
        if caching:
            cached = self.cache.get(key)
            if cached is not None:
                hit = _answered(cached, started, key, attempts=0, cost_usd=0.0, cache_hit=True)
                self.usage.record(hit)
                return hit

        reply, attempts, failure = await self._send_with_retries(chat, call_params)
        if reply is None:
            assert failure is not None
            return self._failed(failure, attempts, started, key)

        cost = await _price(self.spec.name, reply)
        completion = _answered(reply, started, key, attempts=attempts, cost_usd=cost)
        if caching and reply.text:  # an empty reply is not worth making sticky
            entry = CachedReply(**dataclasses.asdict(reply), cost_usd=cost)
            try:
                self.cache.put(key, request, entry, secrets=self._backend.secrets())
            except (OSError, UnicodeEncodeError) as exc:  # a full disk or odd text must not cost the answer
                logger.warning("%s: could not write the response cache (%s)", self.spec.name, exc)
        self.usage.record(completion)
        return completion

    def complete_sync(
        self,
        messages: Messages,
        *,
        use_cache: bool | None = None,
        cache_tag: str | None = None,
        **params: Any,
    ) -> Completion:
        """``complete`` for synchronous code; runs on a shared background event loop."""
        return sync_loop.run(self.complete(messages, use_cache=use_cache, cache_tag=cache_tag, **params))

    async def aclose(self) -> None:
        """Release the connections held for the running event loop."""
        await self._backend.aclose()

    def close(self) -> None:
        """Release the connections held for ``complete_sync`` calls."""
        if sync_loop.started:
            sync_loop.run(self._backend.aclose())

    def __enter__(self) -> LLMClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> LLMClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- internals -------------------------------------------------------------------

    def _call_params(self, params: Mapping[str, Any]) -> dict[str, Any]:
        merged: dict[str, Any] = {
            "temperature": self.spec.temperature,
            "max_tokens": self.spec.max_tokens,
            "seed": self.spec.seed,
        }
        merged.update(params)
        return {name: value for name, value in merged.items() if value is not None}

    async def _send_with_retries(
        self, chat: list[dict[str, Any]], params: dict[str, Any]
    ) -> tuple[RawReply | None, int, Failure | None]:
        total = self.spec.max_retries + 1
        attempt = 0
        while True:
            attempt += 1
            try:
                async with self.limiter.slot():
                    async with asyncio.timeout(self.spec.timeout + _TIMEOUT_GRACE_S):
                        return await self._backend.send(chat, params), attempt, None
            except Exception as exc:  # sorted by classify; CancelledError is not an Exception
                failure = classify(exc)
            # Outside the except block, so the library's exception (whose request
            # object carries the auth header) is already released.
            if not failure.retryable or attempt == total:
                return None, attempt, failure
            delay = self._backoff(attempt, failure)
            logger.info(
                "%s: attempt %d/%d failed (%s); retrying in %.2fs",
                self.spec.name,
                attempt,
                total,
                _describe(failure),
                delay,
                extra={"llm_attempt": attempt, "llm_status": failure.status, "llm_retry_delay_s": delay},
            )
            await asyncio.sleep(delay)

    def _backoff(self, attempt: int, failure: Failure) -> float:
        if failure.retry_after is not None:
            return min(failure.retry_after, _MAX_RETRY_AFTER_S)
        ceiling = min(self.backoff_max_s, self.backoff_base_s * 2 ** (attempt - 1))
        return self._rng.uniform(ceiling / 2, ceiling)

    def _failed(self, failure: Failure, attempts: int, started: float, key: str) -> Completion:
        verdict = "retries exhausted" if failure.retryable else "not retried"
        message = redact(
            f"{self.spec.name}: request failed after {attempts} attempt(s), {verdict}: "
            f"{_describe(failure)}: {failure.detail}",
            self._backend.secrets(),
        )
        if self.raise_on_error:
            self.usage.record_failure(attempts)
            raise LLMCallError(
                message,
                model=self.spec.name,
                status=failure.status,
                attempts=attempts,
                retryable=failure.retryable,
                kind=failure.kind,
            )
        failed = Completion(
            text="",
            model=self.spec.model,
            latency_s=time.monotonic() - started,
            attempts=attempts,
            error=message,
            request_key=key,
        )
        self.usage.record(failed)
        return failed


def _answered(
    reply: RawReply | CachedReply,
    started: float,
    key: str,
    *,
    attempts: int,
    cost_usd: float | None,
    cache_hit: bool = False,
) -> Completion:
    """The completion of a call answered by ``reply`` (``started``: the call's ``time.monotonic()``)."""
    return Completion(
        text=reply.text,
        model=reply.model,
        prompt_tokens=reply.prompt_tokens,
        completion_tokens=reply.completion_tokens,
        latency_s=time.monotonic() - started,
        cache_hit=cache_hit,
        cost_usd=cost_usd,
        attempts=attempts,
        finish_reason=reply.finish_reason,
        request_key=key,
    )


def _as_messages(messages: Messages) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return [dict(message) for message in messages]


def _describe(failure: Failure) -> str:
    return f"HTTP {failure.status}" if failure.status is not None else failure.kind


async def _price(model: str, reply: RawReply) -> float | None:
    if not litellm_available():
        return None
    if "litellm" not in sys.modules:
        # The cost map comes with litellm, whose first import takes seconds.
        return await asyncio.to_thread(lookup_cost_usd, model, reply.prompt_tokens, reply.completion_tokens)
    return lookup_cost_usd(model, reply.prompt_tokens, reply.completion_tokens)
