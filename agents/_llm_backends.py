"""The two ways a request leaves the process: the ``openai`` SDK and ``litellm``.

Each backend sends one request with the SDK's own retries off and returns a
``ModelCall`` holding what the server said (text, the model it named, tokens,
finish reason); the client fills in the rest. ``classify`` turns whatever either
library raised into a ``Failure`` the client's retry loop understands.
"""

from __future__ import annotations

import asyncio
import email.utils
import functools
import json
import re
import ssl
import sys
import time
import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar
from urllib.parse import parse_qsl, urlsplit, urlunsplit

import httpx
import openai
import pydantic

from lateralgym.agents._http_transport import RefusedResponseError, RequestTransport, proxy_mounts
from lateralgym.agents._llm_errors import LLMConfigError
from lateralgym.agents._llm_secrets import conventional_key_values, url_secrets
from lateralgym.agents._llm_spec import ModelSpec
from lateralgym.agents._llm_usage import LITELLM_INSTALL_HINT, import_litellm, litellm_available
from lateralgym.envs import ModelCall

PLACEHOLDER_KEY = "not-needed"
"""Sent as the key to a ``base_url`` server when no key is set (local servers ignore it). Through
litellm only when the spec names a key variable: otherwise litellm looks up the provider's own."""

_RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


@dataclass(frozen=True)
class Failure:
    """One failed attempt, as the retry loop sees it.

    Attributes:
        kind: ``http``, ``timeout``, ``connection``, ``tls``, ``malformed``, ``config`` or ``error``.
        status: HTTP status for ``http`` failures.
        retryable: Whether another attempt may succeed.
        retry_after: Seconds the server asked us to wait, when it said.
        detail: The library's message (``tls``: ours; the SDK's says only "Connection error"), neither
            redacted nor shortened (a secret cut in half could no longer be found): the client does both,
            in that order.
        advice: What to do about it, when the kind says (``tls``: which certificates to trust).
    """

    kind: str
    status: int | None
    retryable: bool
    retry_after: float | None
    detail: str
    advice: str = ""


TLS_ADVICE = "set SSL_CERT_FILE to the CA certificate (PEM) that signed it, or use http:// for a server on this machine"
"""What to do when a server's certificate is not trusted (``httpx`` reads ``SSL_CERT_FILE``, and ``SSL_CERT_DIR``,
as OpenSSL does)."""


class MalformedReplyError(Exception):
    """The server answered 200 with something that is not a chat completion."""


class Backend(Protocol):
    """Sends one chat request; no retries of its own."""

    async def send(self, messages: list[dict[str, Any]], params: Mapping[str, Any]) -> ModelCall:
        """Send one request and return the reply, or raise whatever the library raised."""
        ...

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        """Embed ``texts`` in one request: one vector per text, in order, and the prompt tokens."""
        ...

    async def aclose(self) -> None:
        """Release connections held for the running event loop."""
        ...

    def secrets(self) -> list[str | None]:
        """Values that must never be written anywhere (read now, not stored)."""
        ...


def _require_key(spec: ModelSpec, *, own_lookup: bool = False, given: str | None = None) -> str | None:
    """The key to send, the placeholder for a keyless ``base_url`` server, or a clear error.

    Args:
        spec: The model's spec.
        own_lookup: The library finds a key itself when none is given (litellm reads the
            provider's ``ANTHROPIC_API_KEY``, ``HOSTED_VLLM_API_KEY``, ...): with no variable
            named, send nothing rather than a placeholder over that lookup.
        given: A key the caller holds (a ``local/`` server's own), sent whatever the spec says.
    """
    if given is not None:
        return given
    if own_lookup and spec.api_key_env is None:
        return None
    key = spec.read_api_key()
    if key is not None:
        return key
    if spec.base_url is not None:
        return PLACEHOLDER_KEY
    if spec.api_key_env is not None:
        raise LLMConfigError(
            f"{spec.name}: no API key: set the environment variable {spec.api_key_env} "
            "(or give base_url for a local OpenAI-compatible server that needs none)"
        )
    return None


def _secrets(spec: ModelSpec, *, litellm_lookup: bool, given: str | None = None) -> list[str | None]:
    """The key as the environment holds it now (or the one given), credentials in ``base_url`` and, when
    litellm looks the key up itself, every provider key variable it might have read."""
    found: list[str | None] = [given, spec.read_api_key(), *url_secrets(spec.base_url)]
    if litellm_lookup and spec.api_key_env is None:
        found += conventional_key_values()
    return found


_SDK_ON_HTTPX = isinstance(openai.DefaultAsyncHttpxClient, type) and issubclass(
    openai.DefaultAsyncHttpxClient, httpx.AsyncClient
)
"""Whether the SDK sends its requests with ``httpx`` (openai 1 and 2; openai 3 has ``httpx2``): only then
do its clients get ``RequestTransport`` and chat requests after the first leave through ``httpx``."""

POOL_REQUESTS = 8
"""Requests one SDK client (one ``httpx`` connection pool) carries at once; more in flight open more clients.

``httpcore`` walks its pool's connections whenever a request starts or ends, and part of that walk
is quadratic in their number: one pool at 64 requests in flight cost ~11 ms of CPU a call on the
benchmark machine, pools of 8 ~1.3 ms (``benchmarks/bench_llm_throughput.py``)."""

_CREATE_OPTIONS = ("extra_headers", "extra_query", "extra_body", "timeout")
"""Arguments of the SDK's ``chat.completions.create`` that shape the HTTP request rather than its body."""


class _Connection:
    """One SDK client (one ``httpx`` pool), its ``httpx`` client, and the route of its chat requests.

    ``route``: the URL, headers and timeout the SDK's request path sent this client's first chat
    request with (it builds them the same way for every request without per-call options), so the
    next ones are sent alike by ``httpx`` directly. None until that first request has been answered.
    """

    def __init__(self, sdk: openai.AsyncOpenAI, http: Any, *, direct: bool) -> None:
        self.sdk = sdk
        self.http = http
        self.direct = direct
        """Whether chat requests may leave through ``httpx`` directly once the route is known."""
        self.route: _ChatRoute | None = None
        self.load = 0


class _Pools:
    """The SDK clients of one event loop, each carrying at most ``POOL_REQUESTS`` requests at once."""

    def __init__(self, make: Callable[[], _Connection]) -> None:
        self._make = make
        self.connections: list[_Connection] = []

    @property
    def clients(self) -> list[openai.AsyncOpenAI]:
        """The SDK clients, in the order they were made."""
        return [connection.sdk for connection in self.connections]

    def first(self) -> openai.AsyncOpenAI:
        """The first client (made now if none is), for one-off requests such as the endpoint check."""
        if not self.connections:
            self.connections.append(self._make())
        return self.connections[0].sdk

    def acquire(self) -> _Connection:
        """A client with room for one more request, counted as carrying it."""
        for connection in self.connections:
            if connection.load < POOL_REQUESTS:
                connection.load += 1
                return connection
        connection = self._make()
        connection.load = 1
        self.connections.append(connection)
        return connection


@dataclass(frozen=True)
class _ChatRoute:
    """How the SDK sent a chat request without per-call options: URL, headers (its auth, its
    platform headers, ``httpx``'s defaults) and timeout, all the same for every such request."""

    url: httpx.URL
    headers: httpx.Headers
    extensions: dict[str, Any]

    @classmethod
    def of(cls, response: httpx.Response) -> _ChatRoute | None:
        """The route of the request ``response`` answers; None after a redirect (the SDK's path keeps
        following the client's rules) or when the server set a cookie (``httpx`` sends it back)."""
        request = response.request
        if response.history or "set-cookie" in response.headers:
            return None
        headers = request.headers.copy()
        del headers["content-length"]  # the next body's own
        timeout = request.extensions.get("timeout")
        return cls(request.url, headers, {"timeout": timeout} if timeout is not None else {})


@functools.cache
def _tls_context() -> ssl.SSLContext:
    """The TLS context every SDK client of the process shares: what each would make itself (the CA
    bundle loaded, ~30 ms of CPU), made once, when the first client is."""
    return httpx.create_ssl_context(verify=True, trust_env=True)


class OpenAIBackend:
    """Any OpenAI-compatible endpoint through ``openai.AsyncOpenAI``.

    SDK clients per event loop (an ``httpx`` connection pool cannot cross loops), as many as the
    requests in flight need at ``POOL_REQUESTS`` each; the key lives only inside those SDK clients.
    A chat request goes through the SDK's own request path (its auth, headers, timeout and error
    types: an HTTP error raises ``openai.APIStatusError`` as ``create`` does) but skips its typed
    parameter transform and response models: the body is sent as built and the reply's JSON is read
    once, here (``normalise_reply``), which halves the SDK's CPU per call.

    Requests go through the environment's proxies (``HTTP_PROXY``, ``NO_PROXY``, ...) as ``httpx``'s
    would, unless ``direct``; every response is bounded (``_http_transport``).

    Args:
        spec: The model's spec.
        api_key: The key to send whatever the spec names (a ``local/`` server's, drawn for it).
        direct: Never through a proxy.
    """

    def __init__(self, spec: ModelSpec, *, api_key: str | None = None, direct: bool = False) -> None:
        self._api_key = api_key
        self._direct = direct
        _require_key(spec, given=api_key)  # fail at construction, not at the first call
        self.spec = spec
        self._pools: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Pools] = weakref.WeakKeyDictionary()
        self._ssl: ssl.SSLContext | None = None
        """The TLS context of all the SDK clients (``_tls_context``: each would load the CA bundle itself)."""

    def _loop_pools(self) -> _Pools:
        loop = asyncio.get_running_loop()
        pools = self._pools.get(loop)
        if pools is None:
            pools = self._pools[loop] = _Pools(self._new_client)
        return pools

    def _new_client(self) -> _Connection:
        base_url, query = _split_query(self.spec.base_url)
        limits = httpx.Limits(max_connections=1000, max_keepalive_connections=POOL_REQUESTS)
        if _SDK_ON_HTTPX:
            # the SDK's defaults, with a pool of our size whose connections send a request in one write; a
            # client given a transport is given no proxy by httpx: the environment's are mounted here
            ssl_context = self._ssl_context()
            http = openai.DefaultAsyncHttpxClient(
                limits=limits,
                verify=ssl_context,
                transport=RequestTransport(ssl_context, limits),
                mounts=None if self._direct else proxy_mounts(ssl_context, limits),
            )
        else:  # an SDK on an HTTP library of its own (openai 3 on httpx2): its transport, its request path
            http = openai.DefaultAsyncHttpxClient(limits=limits, verify=self._ssl_context())
        sdk = openai.AsyncOpenAI(
            api_key=_require_key(self.spec, given=self._api_key),
            base_url=base_url,
            default_query=query,
            timeout=self.spec.timeout,
            max_retries=0,  # ours are the only retries
            http_client=http,
        )
        return _Connection(sdk, http, direct=_SDK_ON_HTTPX)

    def _ssl_context(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = _tls_context()
        return self._ssl

    def _client(self) -> openai.AsyncOpenAI:
        """An SDK client of the running loop (the first), for one-off requests."""
        return self._loop_pools().first()

    async def send(self, messages: list[dict[str, Any]], params: Mapping[str, Any]) -> ModelCall:
        """Send one chat-completions request (the body ``create`` would send) and read its reply.

        Raises:
            TypeError: a parameter ``chat.completions.create`` does not take (as ``create`` would).
        """
        body, options = _chat_request(self.spec.model, messages, params)
        connection = self._loop_pools().acquire()
        try:
            response = await _post_chat(connection, body, options)
        finally:
            connection.load -= 1
        # Not JSON, not UTF-8: ``classify`` calls both a malformed reply, as it did the SDK's parse errors.
        return normalise_reply(json.loads(response.content), self.spec.name)

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        """Send one ``/embeddings`` request."""
        connection = self._loop_pools().acquire()
        try:
            create: Any = connection.sdk.embeddings.create
            response = await create(model=self.spec.model, input=texts, encoding_format="float")
        finally:
            connection.load -= 1
        return normalise_embeddings(response, len(texts))

    async def aclose(self) -> None:
        """Close the SDK clients of the running loop."""
        pools = self._pools.pop(asyncio.get_running_loop(), None)
        if pools is not None:
            for connection in pools.connections:
                await connection.sdk.close()

    def secrets(self) -> list[str | None]:
        """The key as the environment holds it now (or the one given), and credentials in ``base_url``."""
        return _secrets(self.spec, litellm_lookup=False, given=self._api_key)


async def _post_chat(connection: _Connection, body: dict[str, Any], options: dict[str, Any]) -> httpx.Response:
    """POST a chat request and return the answer (2xx), raising what the SDK's request path raises.

    The first request of a connection, and any with per-call options (headers, query, timeout),
    go through the SDK's path; the others are sent by ``httpx`` on the route the SDK used, with the
    body it would have encoded, and fail as it fails: ``openai.APITimeoutError``,
    ``openai.APIConnectionError``, or the ``openai.APIStatusError`` subclass of the status.
    """
    route = connection.route
    content = None
    if route is not None and options.keys() <= {"extra_json"}:
        sent = {**body, **options["extra_json"]} if options else body  # the SDK's shallow merge of extra_body
        try:
            # as the SDK encodes it (``openapi_dumps``), for the plain JSON a chat body holds
            content = json.dumps(sent, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        except TypeError:  # an object only the SDK's encoder knows (a datetime, a pydantic model)
            content = None
    if route is None or content is None:
        post: Any = connection.sdk.post  # ``options`` is the SDK's RequestOptions, as create builds it
        response: httpx.Response = await post("/chat/completions", body=body, options=options, cast_to=httpx.Response)
        if route is None and not options and connection.direct:
            connection.route = _ChatRoute.of(response)
        return response
    request = httpx.Request("POST", route.url, headers=route.headers, content=content, extensions=route.extensions)
    try:
        response = await connection.http.send(request)
    except httpx.TimeoutException as exc:
        raise openai.APITimeoutError(request=request) from exc
    except Exception as exc:  # the SDK's own rule: anything else while sending is a connection error
        raise openai.APIConnectionError(request=request) from exc
    if not response.is_success:
        status_error: Any = connection.sdk._make_status_error_from_response  # noqa: SLF001 - the SDK's own errors
        raise status_error(response) from None
    return response


@functools.cache
def _create_parameters() -> frozenset[str]:
    """The keyword arguments the SDK's ``chat.completions.create`` takes: the request's fields (from the
    SDK's own ``CompletionCreateParams`` types, imported with ``openai``; the resource classes would
    import every API the SDK has, ~1.3 s) and the request options."""
    from openai.types.chat.completion_create_params import CompletionCreateParamsBase

    fields = CompletionCreateParamsBase.__required_keys__ | CompletionCreateParamsBase.__optional_keys__
    return frozenset(fields) | {"stream", *_CREATE_OPTIONS}


def _chat_request(
    model: str, messages: list[dict[str, Any]], params: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The JSON body and the SDK request options ``chat.completions.create(model=..., messages=..., **params)``
    would send (its body transform leaves plain JSON messages and parameters as they are).

    Raises:
        TypeError: a parameter ``create`` does not take.
    """
    unknown = sorted(set(params) - _create_parameters())
    if unknown:
        raise TypeError(f"chat.completions.create() got unexpected keyword argument(s): {', '.join(unknown)}")
    body: dict[str, Any] = {"messages": messages, "model": model}
    options: dict[str, Any] = {}
    for name, value in params.items():
        if name not in _CREATE_OPTIONS:
            body[name] = value
        elif value is not None:
            key = {"extra_headers": "headers", "extra_query": "params", "extra_body": "extra_json"}.get(name, name)
            options[key] = value
    return body, options


def _split_query(url: str | None) -> tuple[str | None, dict[str, str] | None]:
    """A base URL without its query, and the query's parameters (a gateway's ``?api-key=``): the SDK
    appends the request path to the base URL, so they must travel as query parameters of each request."""
    if url is None:
        return None, None
    parts = urlsplit(url)
    if not parts.query:
        return url, None
    return urlunsplit(parts._replace(query="")), dict(parse_qsl(parts.query, keep_blank_values=True))


class LiteLLMBackend:
    """Every other provider (and ``openai/...`` when asked) through ``litellm.acompletion``.

    The key is passed only when the spec names its variable; otherwise litellm reads the
    provider's own. Parameters a provider does not take (``seed`` on some) are dropped rather
    than failing the call.
    """

    def __init__(self, spec: ModelSpec, *, api_key: str | None = None) -> None:
        if not litellm_available():
            raise LLMConfigError(f"{spec.name} needs litellm, which is not installed: run {LITELLM_INSTALL_HINT}")
        self._api_key = api_key
        _require_key(spec, own_lookup=True, given=api_key)
        self.spec = spec

    async def send(self, messages: list[dict[str, Any]], params: Mapping[str, Any]) -> ModelCall:
        """Send one request through litellm with its retries off and our timeout."""
        if "litellm" not in sys.modules:
            # The first import takes seconds; keep the event loop responsive meanwhile.
            await asyncio.to_thread(import_litellm)
        litellm = import_litellm()
        kwargs: dict[str, Any] = {
            "model": self.spec.name,
            "messages": messages,
            "timeout": self.spec.timeout,
            "num_retries": 0,
            "max_retries": 0,
            "drop_params": True,
            **params,
        }
        if self.spec.base_url is not None:
            kwargs["api_base"] = self.spec.base_url
        key = _require_key(self.spec, own_lookup=True, given=self._api_key)
        if key is not None:
            kwargs["api_key"] = key
        response = await litellm.acompletion(**kwargs)
        return normalise_reply(response, self.spec.name)

    async def embed(self, texts: list[str]) -> tuple[list[list[float]], int]:
        """Send one embeddings request through litellm with its retries off and our timeout."""
        if "litellm" not in sys.modules:
            await asyncio.to_thread(import_litellm)
        litellm = import_litellm()
        kwargs: dict[str, Any] = {"model": self.spec.name, "input": texts, "timeout": self.spec.timeout}
        if self.spec.base_url is not None:
            kwargs["api_base"] = self.spec.base_url
        key = _require_key(self.spec, own_lookup=True, given=self._api_key)
        if key is not None:
            kwargs["api_key"] = key
        response = await litellm.aembedding(**kwargs)
        return normalise_embeddings(response, len(texts))

    async def aclose(self) -> None:
        """Nothing to release: litellm manages its own client cache."""

    def secrets(self) -> list[str | None]:
        """The key, credentials in ``base_url``, and the provider key variables litellm may read."""
        return _secrets(self.spec, litellm_lookup=True, given=self._api_key)


def make_backend(spec: ModelSpec, *, api_key: str | None = None, direct: bool = False) -> Backend:
    """The backend the spec asks for.

    Args:
        spec: The model's spec.
        api_key: A key to send whatever the spec names (a ``local/`` server's).
        direct: Never through a proxy (the ``openai`` backend's requests; litellm's clients are its own).
    """
    if spec.backend == "openai":
        return OpenAIBackend(spec, api_key=api_key, direct=direct)
    return LiteLLMBackend(spec, api_key=api_key)


def normalise_reply(response: Any, model: str) -> ModelCall:
    """The call of an OpenAI-shaped response: its text, the model it names, tokens and finish reason.

    Args:
        response: The reply's JSON (a dict), or a library's response object (litellm's).
        model: The spec that was asked, ``provider/model``.

    Raises:
        MalformedReplyError: The response is not a chat completion with text (a blank or null
            message is one, unless generation stopped at the token limit).
    """
    choices = _field(response, "choices")
    if not isinstance(choices, list | tuple) or not choices:
        raise MalformedReplyError(f"reply has no choices (got {type(response).__name__})")
    choice = choices[0]
    message = _field(choice, "message")
    if message is None or isinstance(message, str | int | float | list):
        raise MalformedReplyError("reply's first choice has no message")
    content = _field(message, "content")
    usage = _field(response, "usage")
    served_by = _field(response, "model")
    finish_reason = _field(choice, "finish_reason")
    if not isinstance(content, str) or not content.strip():
        if finish_reason != "length":
            # A null or blank message is a broken reply, not a move: retried like a garbled body. At
            # the token limit it is the model's answer (a retry would repeat it), returned uncached.
            shown = "blank" if isinstance(content, str) else "null" if content is None else type(content).__name__
            raise MalformedReplyError(f"reply has no text (content {shown}, finish_reason {finish_reason!r})")
        content = content if isinstance(content, str) else ""
    tokens, logprobs, token_ids = token_data(choice)
    # ModelCall replaces lone surrogates (a "\\udc00" escape in the JSON) in every text field.
    return ModelCall(
        model=model,
        served_by=str(served_by) if served_by else None,
        text=content,
        prompt_tokens=_count(usage, "prompt_tokens"),
        completion_tokens=_count(usage, "completion_tokens"),
        finish_reason=str(finish_reason) if finish_reason is not None else None,
        tokens=tokens,
        logprobs=logprobs,
        token_ids=token_ids,
    )


def _count(usage: Any, name: str) -> int:
    """A token count of the reply's ``usage`` (0 when absent).

    Raises:
        MalformedReplyError: The count is not a number.
    """
    value = _field(usage, name, 0) if usage is not None else 0
    try:
        return int(value or 0)
    except (TypeError, ValueError):
        raise MalformedReplyError(f"reply's usage.{name} is not a number ({type(value).__name__})") from None


_TOKEN_ID = re.compile(r"^token_id:(\d+)$")


def _field(obj: Any, name: str, default: Any = None) -> Any:
    """``obj.name`` or ``obj[name]``: SDK objects and litellm's dicts alike (extra fields included)."""
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)


def token_data(choice: Any) -> tuple[list[str] | None, list[float] | None, list[int] | None]:
    """The completion's tokens, their logprobs and token ids from a chat choice, where the server sent them.

    Logprobs come from OpenAI's ``choice.logprobs.content``; token ids from vLLM's ``choice.token_ids``
    (``return_token_ids``), or from tokens written ``token_id:N`` (vLLM's ``return_tokens_as_token_ids``).
    Anything malformed is dropped (``None``): token data is never worth failing a reply over.
    """
    tokens: list[str] | None = None
    logprobs: list[float] | None = None
    content = _field(_field(choice, "logprobs"), "content")
    if isinstance(content, list) and content:
        try:
            tokens = [str(_field(entry, "token")) for entry in content]
            logprobs = [float(_field(entry, "logprob")) for entry in content]
        except (TypeError, ValueError):
            tokens = logprobs = None
    raw_ids = _field(choice, "token_ids")
    token_ids: list[int] | None = None
    if isinstance(raw_ids, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in raw_ids):
        token_ids = list(raw_ids) or None
    elif tokens and all(_TOKEN_ID.match(token) for token in tokens):
        token_ids = [int(token.split(":", 1)[1]) for token in tokens]
    return tokens, logprobs, token_ids


def normalise_embeddings(response: Any, expected: int) -> tuple[list[list[float]], int]:
    """The vectors of an OpenAI-shaped embeddings response, in input order, and its prompt tokens.

    Raises:
        MalformedReplyError: The response does not hold ``expected`` numeric vectors of one length.
    """
    data = _field(response, "data", None)
    if not isinstance(data, list) or len(data) != expected:
        got = len(data) if isinstance(data, list) else type(data).__name__
        raise MalformedReplyError(f"embeddings reply has {got} vectors, expected {expected}")
    rows: list[tuple[int, list[float]]] = []
    for position, item in enumerate(data):
        vector, index = _field(item, "embedding", None), _field(item, "index", position)
        if not isinstance(vector, list) or not vector or not all(isinstance(x, (int, float)) for x in vector):
            raise MalformedReplyError(f"embeddings reply item {position} is not a list of numbers")
        rows.append((int(index) if isinstance(index, int) else position, [float(x) for x in vector]))
    rows.sort(key=lambda row: row[0])
    if len({len(vector) for _, vector in rows}) > 1:
        raise MalformedReplyError("embeddings reply has vectors of different lengths")
    tokens = _field(_field(response, "usage", None), "prompt_tokens", 0)
    return [vector for _, vector in rows], int(tokens) if isinstance(tokens, int) else 0


def classify(exc: BaseException) -> Failure:
    """Sort an exception from either library into retryable or final."""
    refused = _caused_by(exc, RefusedResponseError)
    if refused is not None:
        # A body past the size cap, or compressed: the SDK reports whatever its read raised as a
        # connection error; it is a malformed reply, and its own words say why.
        return Failure("malformed", None, True, None, f"{type(refused).__name__}: {refused}")
    tls = _caused_by(exc, ssl.SSLError)
    if tls is not None and not isinstance(tls, (ssl.SSLEOFError, ssl.SSLZeroReturnError)):  # not a closed connection
        return _tls_failure(tls)
    detail = f"{type(exc).__name__}: {exc}"
    retry_after = retry_after_seconds(exc)
    if isinstance(exc, (TimeoutError, openai.APITimeoutError)):
        return Failure("timeout", None, True, retry_after, detail)
    if isinstance(exc, openai.APIConnectionError):
        return Failure("connection", None, True, retry_after, detail)
    if isinstance(exc, LLMConfigError):  # a missing key or extra: no retry will find it
        return Failure("config", None, False, retry_after, detail)
    if isinstance(
        exc,
        (
            MalformedReplyError,
            openai.APIResponseValidationError,
            pydantic.ValidationError,
            json.JSONDecodeError,
            UnicodeDecodeError,
        ),
    ) or _decode_failure(exc):
        # A 200 whose body is not a chat completion, not JSON at all (a broken proxy), not UTF-8, or
        # without text.
        return Failure("malformed", None, True, retry_after, detail)
    status = getattr(exc, "status_code", None)
    if isinstance(status, int) and status >= 400:
        retryable = status in _RETRYABLE_STATUS or status >= 500
        return Failure("http", status, retryable, retry_after, detail)
    return Failure("error", None, False, retry_after, detail)


_HOSTNAME_MISMATCH = 62
"""OpenSSL's ``X509_V_ERR_HOSTNAME_MISMATCH``: a valid certificate, for another host name."""


def _tls_failure(error: ssl.SSLError) -> Failure:
    """A TLS failure: a certificate this machine does not trust (not retried: it stays untrusted), or
    another handshake failure (retried, as a lost connection is). The SDK reports either as a bare
    "Connection error"; the ``ssl`` error it was raised from says which."""
    if isinstance(error, ssl.SSLCertVerificationError):
        why = (error.verify_message or error.reason or "certificate verify failed").rstrip(".")
        # a certificate for another name: no CA to trust fixes it, the URL's host does
        advice = "use a host name its certificate names in the URL" if error.verify_code == _HOSTNAME_MISMATCH else ""
        what = f"the server's TLS certificate could not be verified ({why})"
        return Failure("tls", None, False, None, what, advice or TLS_ADVICE)
    why = error.reason or " ".join(str(error).split())
    advice = "does the server speak https? (one without TLS is reached over http://)"
    return Failure("tls", None, True, None, f"the TLS handshake with the server failed ({why})", advice)


_E = TypeVar("_E", bound=BaseException)


def _caused_by(exc: BaseException, kind: type[_E]) -> _E | None:
    """``exc`` or the exception it was raised from (or while handling) that is a ``kind``, if any."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, kind):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _decode_failure(exc: BaseException) -> bool:
    """Whether a library wrapped a body it could not decode as UTF-8 (litellm reports the SDK's
    ``UnicodeDecodeError`` as an HTTP 500 of its own making)."""
    return "codec can't decode" in str(exc)


def retry_after_seconds(exc: BaseException) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date), if sent."""
    for headers in _header_sources(exc):
        lowered = {str(k).lower(): str(v) for k, v in headers.items()}
        if "retry-after-ms" in lowered:
            try:
                return max(0.0, float(lowered["retry-after-ms"]) / 1000.0)
            except ValueError:
                pass
        if "retry-after" in lowered:
            return _parse_retry_after(lowered["retry-after"])
    return None


def _header_sources(exc: BaseException) -> list[Mapping[str, Any]]:
    sources: list[Mapping[str, Any]] = []
    for attr in ("response", "headers", "litellm_response_headers"):
        try:
            value = getattr(exc, attr, None)
        except Exception:  # some litellm errors raise from property access
            continue
        headers = getattr(value, "headers", value) if attr == "response" else value
        if isinstance(headers, Mapping):  # httpx.Headers is a Mapping too
            sources.append(headers)
    return sources


def _parse_retry_after(value: str) -> float | None:
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


__all__ = [
    "PLACEHOLDER_KEY",
    "Backend",
    "Failure",
    "LiteLLMBackend",
    "MalformedReplyError",
    "OpenAIBackend",
    "classify",
    "make_backend",
    "normalise_embeddings",
]
