"""The endpoint check before a run: one free request per distinct model server, so a wrong key or a
dead server stops the run in a second instead of erroring every episode.

The request is ``GET <base_url>/models`` (the OpenAI API's model list, which OpenAI, vLLM, Ollama,
llama.cpp and most gateways serve, and which costs nothing). A connection error, a TLS failure (a
certificate not trusted), a timeout or an HTTP 401 / 403 is a failed check; any other answer (a server
without ``/models`` answers 404) is inconclusive, and the run goes ahead: the runner's own loud errors
and its stop after failures in a row cover the rest. Models reached through litellm are not checked
(there is no one free request for every provider).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import httpx

from lateralgym.agents._llm_backends import OpenAIBackend, classify
from lateralgym.agents._llm_client import LLMClient
from lateralgym.agents._llm_errors import LLMError
from lateralgym.agents._llm_secrets import display_url, redact

__all__ = ["EndpointCheckError", "EndpointProblem", "check_endpoints"]

_PROBE_TIMEOUT_S = 15.0
_FATAL_STATUS = frozenset({401, 403})
_DETAIL_CHARS = 300


class EndpointCheckError(LLMError):
    """The check before a run could not reach a model server, or the server refused the key.

    Nothing was run and no run directory was made: fix the URL, the server or the key and run again
    (``--no-check`` skips the check).
    """


@dataclass(frozen=True)
class EndpointProblem:
    """Why one server failed the check."""

    roles: tuple[tuple[str, str], ...]
    """Who uses the server: (role, model) pairs, e.g. ``("player", "openai/qwen")``."""
    url: str
    """The server's URL as it may be shown (credentials removed), or the provider's default."""
    reason: str
    """A few words (``connection refused: ...``, ``HTTP 401``) and the library's message, redacted."""
    advice: str

    def describe(self) -> str:
        """One line: who, where, what went wrong, what to do."""
        who = " and ".join(f"{role} model {model}" for role, model in self.roles)
        return f"the {who} at {self.url} failed the check before the run: {self.reason}; {self.advice}"


async def _probe(client: LLMClient) -> tuple[str, str] | None:
    """Why ``client``'s server fails the check and what to do about it (empty: the usual advice), or None
    when it passes (or cannot be checked)."""
    backend = getattr(client, "_backend", None)
    if not isinstance(backend, OpenAIBackend):
        return None
    try:
        async with asyncio.timeout(min(client.spec.timeout, _PROBE_TIMEOUT_S) + 1.0):
            # ``models.list()``'s request, through the SDK's request path (auth, errors) without importing
            # its resource classes (every API the SDK has, ~1.3 s): a run never needs them otherwise.
            get: Any = backend._client().get  # noqa: SLF001 - the backend's own per-loop SDK client
            await get("/models", cast_to=httpx.Response)
    except Exception as exc:  # noqa: BLE001 - sorted below; anything not clearly fatal lets the run go ahead
        failure = classify(exc)
    else:
        return None
    detail = redact(failure.detail, backend.secrets())[:_DETAIL_CHARS]
    if failure.kind == "tls":
        return detail, failure.advice  # in words of our own: the SDK says only "Connection error"
    if failure.kind in ("connection", "timeout"):
        return f"{failure.kind} error ({detail})", ""
    if failure.kind == "http" and failure.status in _FATAL_STATUS:
        return f"HTTP {failure.status} ({detail})", ""
    return None


def _advice(reason: str, client: LLMClient) -> str:
    if reason.startswith("HTTP"):
        variable = client.spec.api_key_env or ("OPENAI_API_KEY" if client.spec.provider == "openai" else None)
        where = f" in {variable}" if variable else ""
        return f"check the API key{where} (it is read from the environment)"
    return "is the server up, and its URL (--base-url) right?"


async def check_endpoints(clients: Iterable[tuple[str, LLMClient]]) -> list[EndpointProblem]:
    """Check each distinct server the ``(role, client)`` pairs use, once, concurrently.

    Servers are told apart by backend, provider, URL and key variable; roles sharing one are
    checked once and named together.

    Returns:
        The servers that failed, in the order first named (empty when every one passed or could
        not be checked).
    """
    groups: dict[tuple[str, str, str | None, str | None], tuple[list[tuple[str, str]], LLMClient]] = {}
    for role, client in clients:
        spec = client.spec
        key = (spec.backend, spec.provider, spec.base_url, spec.api_key_env)
        roles, _ = groups.setdefault(key, ([], client))
        if (role, spec.name) not in roles:
            roles.append((role, spec.name))
    results = await asyncio.gather(*(_probe(client) for _, client in groups.values()))
    problems: list[EndpointProblem] = []
    for (roles, client), found in zip(groups.values(), results, strict=True):
        if found is not None:
            reason, advice = found
            url = display_url(client.spec.base_url) or f"the {client.spec.provider} API"
            problems.append(EndpointProblem(tuple(roles), url, reason, advice or _advice(reason, client)))
    return problems
