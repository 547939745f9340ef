"""``LLMClient``: the one way LateralGym talks to a language model.

It owns retries (exponential backoff with jitter, ``Retry-After`` honoured),
timeouts, a concurrency cap, the on-disk response cache and usage accounting, and
it never writes an API key anywhere: keys are read from the environment variable
the ``ModelSpec`` names and live only inside the SDK client objects. Every call,
whoever makes it (``role``: player, judge, annotator), comes back as one
``ModelCall`` record.

The cap holds per event loop: a run's players and judges share the runner's loop;
synchronous calls (``complete_sync``) all run on the one background loop.

Example:
    >>> client = LLMClient("openai/qwen", base_url="http://127.0.0.1:8000/v1")  # doctest: +SKIP
    >>> client.complete_sync([{"role": "user", "content": "Is a spoon a lever?"}]).text  # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import logging
import os
import random
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from lateralgym.agents._llm_backends import Backend, Failure, classify, make_backend
from lateralgym.agents._llm_cache import DEFAULT_CACHE_DIR, ResponseCache, request_key
from lateralgym.agents._llm_concurrency import (
    DEFAULT_CONCURRENCY,
    ConcurrencyLimiter,
    default_concurrency,
    default_limiter,
    set_default_concurrency,
)
from lateralgym.agents._llm_errors import LLMCallError, LLMConfigError, LLMError
from lateralgym.agents._llm_secrets import display_url, redact, redact_values
from lateralgym.agents._llm_spec import GENERATION_KEYS, LOCAL_PROVIDER, ModelSpec
from lateralgym.agents._llm_usage import (
    UsageMeter,
    UsageSummary,
    lookup_cost_usd,
    shipped_prices_loaded,
)
from lateralgym.agents._prices import offline_price
from lateralgym.envs import ModelCall
from lateralgym.envs.support import background, capped

if TYPE_CHECKING:
    from lateralgym.agents._served import ServedModel

__all__ = [
    "DEFAULT_CACHE_DIR",
    "DEFAULT_CONCURRENCY",
    "ConcurrencyLimiter",
    "LLMCallError",
    "LLMClient",
    "LLMConfigError",
    "LLMError",
    "Messages",
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
_DETAIL_CHARS = 500  # of a library's error message, in ours
_DETAIL_SCAN_CHARS = 20_000  # of a library's error message, redacted (a server may send a page)

Messages = str | Sequence[Mapping[str, Any]]
_T = TypeVar("_T")


class LLMClient:
    """Sends chat requests for one model, with retries, a cache and accounting.

    Args:
        spec: A ``ModelSpec`` or its string (``provider/model[?name=value&...]``); the client
            uses its generation settings and ignores role options.
        cache_dir: Where cached replies live; default ``.lateralgym-cache/llm``
            under the working directory at construction.
        use_cache: Whether calls read and write the cache unless told otherwise.
        concurrency: Requests in flight per event loop. ``None`` shares the default limiter
            (8 per loop, see ``set_default_concurrency``); an int gives this client its own
            per-loop cap; a ``ConcurrencyLimiter`` is shared with whoever else holds it.
        usage: A meter to add to (share one to total several clients).
        backoff_base_s: First backoff delay; it doubles each retry, with jitter.
        backoff_max_s: Longest backoff delay (a server's ``Retry-After`` may exceed it).
        raise_on_error: Raise ``LLMCallError`` on failure (default), or return a
            ``ModelCall`` whose ``error`` says what went wrong.
        **spec_fields: Overrides of the spec's generation settings (``base_url``,
            ``temperature``, ...; ``None`` is ignored).

    Raises:
        LLMConfigError: The name or a setting is invalid, the key's variable is unset (and no
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
        unknown = sorted(set(spec_fields) - set(GENERATION_KEYS))
        if unknown:
            raise LLMConfigError(
                f"LLMClient got unknown setting(s) {', '.join(unknown)}; settings are {', '.join(GENERATION_KEYS)}"
            )
        self.spec = ModelSpec.parse(spec, **spec_fields)
        self.local: ServedModel | None = None
        """The server a ``local/`` spec is served by (started now unless it already runs); None otherwise."""
        self._server = display_url(self.spec.base_url)
        """Who answers, for the cache key: the base URL without credentials, or a local server's identity."""
        key: str | None = None
        if self.spec.provider == LOCAL_PROVIDER:
            from lateralgym.agents._local_serve import serve

            endpoint = serve(self.spec)
            self.local, key, self._server = endpoint.served, endpoint.api_key, f"local:{endpoint.identity}"
            self.spec = self.spec.model_copy(update={"base_url": self.local.base_url})
        # a local server's key (its own, held by the backend only) and prompts never leave the machine
        # through a proxy
        self._backend: Backend = make_backend(self.spec, api_key=key, direct=self.local is not None)
        self.cache = ResponseCache(Path(cache_dir) if cache_dir is not None else Path.cwd() / DEFAULT_CACHE_DIR)
        self.use_cache = use_cache
        self._limiter = ConcurrencyLimiter(concurrency) if isinstance(concurrency, int) else concurrency
        self.usage = usage if usage is not None else UsageMeter()
        self.backoff_base_s = backoff_base_s
        self.backoff_max_s = backoff_max_s
        self.raise_on_error = raise_on_error
        self._rng = random.Random()
        self.prompt_sink: Callable[[str, list[dict[str, Any]]], None] | None = None
        """Called with (request key, messages) for every call, cached or not (the runner stores each
        distinct prompt once in the run directory); never given credentials."""

    def __repr__(self) -> str:
        return f"LLMClient({self.spec.name!r}, backend={self.spec.backend!r}, cache={str(self.cache.directory)!r})"

    @property
    def limiter(self) -> ConcurrencyLimiter:
        """The limiter this client's requests wait on (its cap holds per event loop)."""
        return self._limiter if self._limiter is not None else default_limiter()

    # -- public calls ----------------------------------------------------------------

    async def complete(
        self,
        messages: Messages,
        *,
        role: str = "player",
        use_cache: bool | None = None,
        cache_tag: str | None = None,
        **params: Any,
    ) -> ModelCall:
        """Ask the model; answer from the cache when the same request was answered before.

        Args:
            messages: Chat messages (``[{"role": "user", "content": "..."}]``), or a
                string, sent as one user message.
            role: Who is asking (``player``, ``judge``, ``annotator``): set on the returned
                call, never sent, not part of the cache key.
            use_cache: Override the client's ``use_cache`` for this call.
            cache_tag: Part of the cache key, never sent: equal requests with different
                tags are separate calls (the player tags each with its episode seed, so
                repeats of an item are asked afresh while a rerun replays them).
            **params: Request parameters: ``temperature``, ``max_tokens`` and ``seed``
                override the spec's; others (``stop``, ``top_p``, ...) are passed on.
                All are part of the cache key.

        Returns:
            The call: text, the model the server named (``served_by``), tokens, latency,
            attempts, cost, cache hit and request key, with ``role`` set.

        Raises:
            LLMCallError: The request failed for good (unless ``raise_on_error`` is off); its
                ``calls`` holds this call's record, ``error`` set.
        """
        started = time.monotonic()
        chat = _as_messages(messages)
        call_params = self._call_params(params)
        request: dict[str, Any] = {
            "provider": self.spec.provider,
            "model": self.spec.model,
            # credentials neither key nor sit in the cache; a local model is its server's identity (the
            # runtime, how it was started and the file), whatever its port
            "base_url": self._server,
            "messages": chat,
            "params": call_params,
        }
        if cache_tag is not None:  # absent otherwise, so untagged keys are what they always were
            request["cache_tag"] = cache_tag
        key = request_key(request)
        if self.prompt_sink is not None:
            self.prompt_sink(key, chat)
        caching = self.use_cache if use_cache is None else use_cache
        if caching:
            cached = self.cache.get(key)  # None for an entry without a usable reply, too
            if cached is not None:
                hit = capped(cached).model_copy(
                    update={
                        "role": role,
                        "model": self.spec.name,
                        "parsed_action": None,
                        "latency_s": time.monotonic() - started,
                        "cache_hit": True,
                        "cost_usd": 0.0,
                        "attempts": 0,
                        "request_key": key,
                        "error": None,
                    }
                )
                self.usage.record(hit)
                return hit

        reply, attempts, failure = await self._send_with_retries(chat, call_params)
        if reply is None:
            assert failure is not None
            return self._failed(failure, attempts, started, key, role)

        secrets = self._backend.secrets()
        texts: dict[str, Any] = {name: redact_values(value, secrets) for name, value in _reply_texts(reply).items()}
        if texts.get("text", reply.text) != reply.text:
            # The reply echoed a credential: its tokens may hold pieces of it, so they are dropped.
            texts = {**texts, "tokens": None, "logprobs": None, "token_ids": None}
        call = reply.model_copy(
            update={
                # A server may echo the key it was sent (or its Basic form): it never leaves the client.
                **texts,
                "role": role,
                "latency_s": time.monotonic() - started,
                "cost_usd": 0.0 if self.local else await _price(self.spec.name, reply),  # a local model is free
                "attempts": attempts,
                "request_key": key,
            }
        )
        call = capped(call)  # before any parser, cache or log reads it (a looping model sends megabytes)
        if caching:  # only a usable reply is stored (``put`` decides); any other is asked again
            try:
                self.cache.put(key, request, call, secrets=secrets)
            except OSError as exc:  # a full disk must not cost the answer
                logger.warning("%s: could not write the response cache (%s)", self.spec.name, exc)
        self.usage.record(call)
        return call

    async def embed(self, texts: Sequence[str], *, role: str = "embedder") -> tuple[list[list[float]], ModelCall]:
        """Embed ``texts`` in one ``/embeddings`` request, with the retries, timeout and cap of ``complete``.

        Embeddings are not cached here (callers that reuse them keep their own store).

        Args:
            texts: The texts, sent as one batch (split large inputs into batches yourself).
            role: Who is asking, set on the returned call.

        Returns:
            One vector per text, in order, and the call (prompt tokens, latency, attempts; empty text).

        Raises:
            LLMCallError: The request failed for good (unless ``raise_on_error`` is off, when the
                vectors are empty and the call's ``error`` says why).
        """
        started = time.monotonic()
        batch = [str(text) for text in texts]
        key = request_key({"provider": self.spec.provider, "model": self.spec.model, "embed": batch})
        result, attempts, failure = await self._with_retries(lambda: self._backend.embed(batch))
        if result is None:
            assert failure is not None
            return [], self._failed(failure, attempts, started, key, role)
        vectors, prompt_tokens = result
        call = ModelCall(
            role=role,
            model=self.spec.name,
            prompt_tokens=prompt_tokens,
            latency_s=time.monotonic() - started,
            attempts=attempts,
            request_key=key,
        )
        self.usage.record(call)
        return vectors, call

    def complete_sync(
        self,
        messages: Messages,
        *,
        role: str = "player",
        use_cache: bool | None = None,
        cache_tag: str | None = None,
        **params: Any,
    ) -> ModelCall:
        """``complete`` for synchronous code; runs on the process's one background event loop
        (``lateralgym.envs._sync``), whose cap all synchronous calls share. It also works from
        inside a running loop, which it blocks until the answer comes (its slots are the background
        loop's, so it cannot deadlock on the blocked loop's)."""
        return background.run(self.complete(messages, role=role, use_cache=use_cache, cache_tag=cache_tag, **params))

    async def aclose(self) -> None:
        """Release the connections held for the running event loop."""
        await self._backend.aclose()

    def close(self) -> None:
        """Release the connections held for ``complete_sync`` calls."""
        if background.started:
            background.run(self._backend.aclose())

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
        if self.spec.logprobs:
            merged["logprobs"] = True
        if self.spec.token_ids:  # vLLM's field, not OpenAI's: the SDK sends it in the body as given
            merged["extra_body"] = {"return_token_ids": True}
        extra = {**merged.get("extra_body", {}), **params.get("extra_body", {})}  # a grammar joins, never replaces
        merged.update(params)
        if extra:
            merged["extra_body"] = extra
        return {name: value for name, value in merged.items() if value is not None}

    async def _send_with_retries(
        self, chat: list[dict[str, Any]], params: dict[str, Any]
    ) -> tuple[ModelCall | None, int, Failure | None]:
        return await self._with_retries(lambda: self._backend.send(chat, params))

    async def _with_retries(self, send: Callable[[], Awaitable[_T]]) -> tuple[_T | None, int, Failure | None]:
        """``send()`` under a slot and the timeout, retried as the spec says: (result, attempts, failure)."""
        total = self.spec.max_retries + 1
        attempt = 0
        while True:
            attempt += 1
            limiter = self.limiter
            sent = time.monotonic()
            try:
                async with limiter.slot():
                    sent = time.monotonic()
                    async with asyncio.timeout(self.spec.timeout + _TIMEOUT_GRACE_S):
                        reply = await send()
                limiter.observe(time.monotonic() - sent, rate_limited=False)
                return reply, attempt, None
            except Exception as exc:  # sorted by classify; CancelledError is not an Exception
                failure = classify(exc)
            limiter.observe(time.monotonic() - sent, rate_limited=failure.status == 429)
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

    def _failed(self, failure: Failure, attempts: int, started: float, key: str, role: str) -> ModelCall:
        verdict = "retries exhausted" if failure.retryable else "not retried"
        secrets = self._backend.secrets()
        # Redacted, then shortened: a secret cut in half would no longer be recognised. (What the first
        # cut may halve lies far past the second.)
        detail = redact(failure.detail[:_DETAIL_SCAN_CHARS], secrets)[:_DETAIL_CHARS]
        advice = f"; {failure.advice}" if failure.advice else ""
        message = redact(
            f"{self.spec.name}: request failed after {attempts} attempt(s), {verdict}: {_describe(failure)}: {detail}"
            + advice,
            secrets,
        )
        failed = ModelCall(
            role=role,
            model=self.spec.name,
            latency_s=time.monotonic() - started,
            attempts=attempts,
            request_key=key,
            error=message,
        )
        self.usage.record(failed)
        if self.raise_on_error:
            raise LLMCallError(
                message,
                model=self.spec.name,
                status=failure.status,
                attempts=attempts,
                retryable=failure.retryable,
                kind=failure.kind,
                calls=(failed,),
            )
        return failed


def _as_messages(messages: Messages) -> list[dict[str, Any]]:
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    return [dict(message) for message in messages]


def _reply_texts(reply: ModelCall) -> dict[str, Any]:
    """The text fields of a reply that came from the server."""
    texts = {"text": reply.text, "served_by": reply.served_by, "finish_reason": reply.finish_reason}
    return {name: value for name, value in texts.items() if value is not None}


def _describe(failure: Failure) -> str:
    return f"HTTP {failure.status}" if failure.status is not None else failure.kind


async def _price(model: str, reply: ModelCall) -> float | None:
    """The price by litellm's cost map (``lookup_cost_usd``), else the offline table's (``_prices``), else None.

    litellm is never imported for it: its shipped map is read as data, once per process, off the
    event loop (the first priced call waits ~0.1 s for that read, never for litellm's import).
    """
    if "litellm" in sys.modules or shipped_prices_loaded():
        cost = lookup_cost_usd(model, reply.prompt_tokens, reply.completion_tokens)
    else:
        cost = await asyncio.to_thread(lookup_cost_usd, model, reply.prompt_tokens, reply.completion_tokens)
    return cost if cost is not None else offline_price(model, reply.prompt_tokens, reply.completion_tokens)
