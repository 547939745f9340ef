"""A real OpenAI-compatible chat server on 127.0.0.1 for the test suite.

The server speaks just enough of the OpenAI HTTP API (``POST /v1/chat/completions``,
``POST /chat/completions``, ``POST /v1/embeddings``, ``GET /v1/models``) for the real ``openai``
and ``litellm`` clients to run their full code paths against it. Embeddings are deterministic
hashed bag-of-words vectors (``bag_of_words_vector``): texts sharing words point the same way. Replies are
scripted (a queue of replies and faults) or computed by a ``responder`` callable;
faults can also be injected at a seeded rate. Faults cover what real servers and proxies do
wrong: HTTP errors, rate limits, stalls, bodies that are not JSON or not UTF-8, completions with
empty or ``null`` content, and error bodies that echo the request's URL and ``Authorization``
header back (as some gateways do). Every request is recorded so tests
can count calls, inspect headers and measure the peak number of requests in
flight.

A request with ``stream: true`` is answered as server-sent events, one chunk per word of the reply.

Token counts are deterministic: one token per whitespace-separated word of the
message contents (prompt) and of the reply (completion). A request with ``logprobs: true`` gets
each reply token's logprob (``reply_tokens``, ``token_logprob``), one with vLLM's
``return_token_ids: true`` the tokens' ids (``token_ids``). ``peak_in_flight`` measures
the peak number of requests in flight among those a predicate picks (one caller's,
say), from the time each chat request was being handled.

Example:
    >>> server = ScriptedLLMServer().start()
    >>> server.enqueue("hello", Fault.status(500))
    >>> server.base_url  # doctest: +SKIP
    'http://127.0.0.1:43817/v1'
    >>> server.stop()
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import socket
import sys
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal
from urllib.parse import urlsplit

__all__ = [
    "Fault",
    "RecordedRequest",
    "Reply",
    "ScriptedLLMServer",
    "bag_of_words_vector",
    "count_words",
    "reply_tokens",
    "token_ids",
    "token_logprob",
]

FaultKind = Literal["status", "rate_limit", "delay", "garbage", "empty", "null", "non_utf8", "echo"]

_CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
_MODELS_PATHS = ("/v1/models", "/models")
_EMBEDDING_PATHS = ("/v1/embeddings", "/embeddings")
EMBEDDING_DIM = 64
"""Length of the server's embedding vectors."""
_MAX_BODY_BYTES = 1 << 20
_MAX_RECORDED = 10_000


def count_words(text: str) -> int:
    """Count tokens the way this server does: whitespace-separated words."""
    return len(text.split())


def bag_of_words_vector(text: str, dim: int = EMBEDDING_DIM) -> list[float]:
    """The server's embedding of ``text``: lower-cased words hashed (md5) into ``dim`` signed buckets,
    L2-normalised; all zeros but the first for a text without words."""
    vector = [0.0] * dim
    for word in text.lower().split():
        digest = int.from_bytes(hashlib.md5(word.strip(".,;:!?\"'()").encode()).digest()[:8], "little")
        vector[digest % dim] += 1.0 if (digest >> 63) & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0:
        return [1.0] + [0.0] * (dim - 1)
    return [x / norm for x in vector]


@dataclass(frozen=True)
class Reply:
    """A scripted successful reply.

    Attributes:
        text: The assistant message content (any string: it is sent JSON-escaped, so a lone
            surrogate arrives as a ``\\udc00`` escape).
        prompt_tokens: Reported prompt tokens; ``None`` counts the request's words.
        completion_tokens: Reported completion tokens; ``None`` counts the reply's words.
        model: The model the reply names; ``None`` echoes the request's.
        finish_reason: Why generation stopped, as reported.
    """

    text: str
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    model: str | None = None
    finish_reason: str = "stop"


@dataclass(frozen=True)
class Fault:
    """A scripted failure for one call.

    Attributes:
        kind: ``status`` (an HTTP error), ``rate_limit`` (429 with Retry-After),
            ``delay`` (sleep, then answer normally), ``garbage`` (a 200 whose body
            is not JSON), ``empty`` (a valid completion with empty content), ``null`` (a
            completion whose content is ``null``), ``non_utf8`` (a completion whose body is not
            UTF-8) or ``echo`` (an HTTP error whose body echoes the request's URL and headers).
        status_code: HTTP status for ``status`` and ``echo`` faults.
        retry_after: Seconds sent in the ``Retry-After`` header of ``rate_limit``.
        delay_s: Seconds to sleep for ``delay`` faults.
    """

    kind: FaultKind
    status_code: int = 500
    retry_after: float | None = None
    delay_s: float = 0.0

    @classmethod
    def status(cls, code: int = 500) -> Fault:
        """An HTTP error reply with an OpenAI-style JSON error body."""
        return cls("status", status_code=code)

    @classmethod
    def rate_limit(cls, retry_after: float | None = 0.2) -> Fault:
        """A 429 reply, with a ``Retry-After`` header unless ``retry_after`` is None."""
        return cls("rate_limit", status_code=429, retry_after=retry_after)

    @classmethod
    def delay(cls, seconds: float) -> Fault:
        """Sleep ``seconds`` before replying (use more than the client timeout)."""
        return cls("delay", delay_s=seconds)

    @classmethod
    def garbage(cls) -> Fault:
        """A 200 reply whose body is not JSON."""
        return cls("garbage")

    @classmethod
    def empty(cls) -> Fault:
        """A well-formed completion whose content is the empty string."""
        return cls("empty")

    @classmethod
    def null(cls) -> Fault:
        """A well-formed completion whose message content is ``null``."""
        return cls("null")

    @classmethod
    def non_utf8(cls) -> Fault:
        """A 200 completion whose body holds bytes that are not UTF-8 (a Latin-1 proxy, say)."""
        return cls("non_utf8")

    @classmethod
    def echo(cls, code: int = 400) -> Fault:
        """An HTTP error whose message repeats the request line (path and query) and its headers,
        ``Authorization`` included, as a careless gateway's error page does; with ``code=200``, a
        completion whose text repeats them."""
        return cls("echo", status_code=code)


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server received it.

    Attributes:
        method: HTTP method.
        path: Request path.
        headers: Request headers, lower-cased names.
        body: Parsed JSON body, or ``None`` when absent or unparsable.
        received_at: ``time.monotonic()`` when the request arrived.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    received_at: float


Responder = Callable[[dict[str, Any]], str]
ScriptItem = Reply | Fault
Span = tuple[Any, float, float]
"""A chat request's body and when its handling started and ended (``time.monotonic()``)."""


@dataclass
class _State:
    script: deque[ScriptItem] = field(default_factory=deque)
    requests: deque[RecordedRequest] = field(default_factory=lambda: deque(maxlen=_MAX_RECORDED))
    responses: list[str] = field(default_factory=list)
    spans: deque[Span] = field(default_factory=lambda: deque(maxlen=_MAX_RECORDED))
    in_flight: int = 0
    max_in_flight: int = 0
    faults_served: int = 0


class ScriptedLLMServer:
    """An OpenAI-compatible chat-completions server running in a background thread.

    Args:
        responder: Computes the reply text from the request JSON when the script
            queue is empty. Defaults to ``default_reply``.
        default_reply: Reply text when there is neither a script nor a responder.
        fault_rate: Probability in [0, 1] that an unscripted call faults.
        fault_kinds: Faults drawn (uniformly, seeded) when ``fault_rate`` fires.
        seed: Seed of the RNG behind ``fault_rate``.
        latency_s: Seconds every successful reply is held (to build concurrency).
        require_key: When set, requests without ``Authorization: Bearer <key>`` get 401.
        port: The port to bind (0: a free one).
        listener: A socket already bound and listening to serve on instead (``port`` is then ignored).
        models: The model ids ``GET /v1/models`` lists.
    """

    def __init__(
        self,
        *,
        responder: Responder | None = None,
        default_reply: str = "ok",
        fault_rate: float = 0.0,
        fault_kinds: Iterable[Fault] = (Fault.status(500),),
        seed: int = 0,
        latency_s: float = 0.0,
        require_key: str | None = None,
        port: int = 0,
        listener: socket.socket | None = None,
        models: Iterable[str] = ("scripted",),
    ) -> None:
        if not 0.0 <= fault_rate <= 1.0:
            raise ValueError(f"fault_rate must be in [0, 1], got {fault_rate}")
        self.responder = responder
        self.default_reply = default_reply
        self.fault_rate = fault_rate
        self.fault_kinds = tuple(fault_kinds)
        self.latency_s = latency_s
        self.require_key = require_key
        self._port = port
        self._listener = listener
        self.models = tuple(models)
        self._rng = random.Random(seed)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._state = _State()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -----------------------------------------------------------------

    def start(self) -> ScriptedLLMServer:
        """Bind 127.0.0.1 on a free port and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        handler = _make_handler(self)
        if self._listener is not None:
            httpd = _Server(self._listener.getsockname()[:2], handler, bind_and_activate=False)
            httpd.socket.close()
            httpd.socket = self._listener
        else:
            httpd = _Server(("127.0.0.1", self._port), handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="scripted-llm-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Wake sleeping handlers, stop serving and close the socket."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The bound port."""
        if self._httpd is None:
            raise RuntimeError("server is not running; call start()")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """Base URL to give an OpenAI client, ending in ``/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    # -- scripting -----------------------------------------------------------------

    def enqueue(self, *items: str | ScriptItem) -> None:
        """Queue replies (plain strings become ``Reply``) and faults, served in order."""
        with self._lock:
            for item in items:
                self._state.script.append(Reply(item) if isinstance(item, str) else item)

    def configure_faults(self, rate: float, kinds: Iterable[Fault], *, seed: int = 0) -> None:
        """Make a fraction ``rate`` of unscripted calls fault, drawn from ``kinds`` by a seeded RNG."""
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"fault rate must be in [0, 1], got {rate}")
        with self._lock:
            self.fault_rate = rate
            self.fault_kinds = tuple(kinds)
            self._rng = random.Random(seed)

    def reset(self) -> None:
        """Forget the script, the recorded requests and the counters."""
        with self._lock:
            self._state = _State()

    # -- observations --------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every recorded request (the most recent 10,000), oldest first."""
        with self._lock:
            return list(self._state.requests)

    @property
    def chat_calls(self) -> int:
        """How many chat-completion requests arrived."""
        return sum(1 for r in self.requests if urlsplit(r.path).path in _CHAT_PATHS)

    @property
    def embedding_calls(self) -> int:
        """How many embeddings requests arrived."""
        return sum(1 for r in self.requests if urlsplit(r.path).path in _EMBEDDING_PATHS)

    @property
    def max_in_flight(self) -> int:
        """The peak number of chat requests being handled at once."""
        with self._lock:
            return self._state.max_in_flight

    def peak_in_flight(self, picks: Callable[[Any], bool] = lambda body: True) -> int:
        """The peak number of chat requests handled at once, among those whose body ``picks``."""
        with self._lock:
            spans = [(start, end) for body, start, end in self._state.spans if picks(body)]
        # An end sorts before a start at the same instant: touching requests did not overlap.
        events = sorted([(start, 1) for start, _ in spans] + [(end, -1) for _, end in spans])
        peak = current = 0
        for _, change in events:
            current += change
            peak = max(peak, current)
        return peak

    @property
    def faults_served(self) -> int:
        """How many calls were answered with a fault."""
        with self._lock:
            return self._state.faults_served

    @property
    def response_bodies(self) -> list[str]:
        """Every response body sent, in order (for no-secret-in-response checks)."""
        with self._lock:
            return list(self._state.responses)

    # -- used by the handler -------------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._state.requests.append(request)

    def _enter(self) -> None:
        with self._lock:
            self._state.in_flight += 1
            self._state.max_in_flight = max(self._state.max_in_flight, self._state.in_flight)

    def _leave(self, body: Any, started: float) -> None:
        with self._lock:
            self._state.in_flight -= 1
            self._state.spans.append((body, started, time.monotonic()))

    def _next_item(self, body: dict[str, Any]) -> ScriptItem:
        with self._lock:
            if self._state.script:
                item = self._state.script.popleft()
            elif self.fault_rate and self.fault_kinds and self._rng.random() < self.fault_rate:
                item = self._rng.choice(self.fault_kinds)
            else:
                item = None
            if isinstance(item, Fault) and item.kind not in ("empty", "null"):
                self._state.faults_served += 1
        if item is not None:
            return item
        text = self.responder(body) if self.responder is not None else self.default_reply
        return Reply(text)

    def _next_embedding_fault(self) -> Fault | None:
        """A scripted fault at the head of the queue (scripted replies are left for chat), or one drawn
        at ``fault_rate``, or None."""
        with self._lock:
            head = self._state.script[0] if self._state.script else None
            item: Fault | None = None
            if isinstance(head, Fault):
                self._state.script.popleft()
                item = head
            elif head is None and self.fault_rate and self.fault_kinds and self._rng.random() < self.fault_rate:
                item = self._rng.choice(self.fault_kinds)
            if item is not None and item.kind not in ("empty", "null"):
                self._state.faults_served += 1
        return item

    def _sent(self, body: str) -> None:
        with self._lock:
            if len(self._state.responses) < _MAX_RECORDED:
                self._state.responses.append(body)

    def _sleep(self, seconds: float) -> None:
        # An Event wait, so stop() wakes sleeping handlers at once.
        self._stopping.wait(seconds)


def _prompt_words(body: Mapping[str, Any]) -> int:
    total = 0
    for message in body.get("messages") or []:
        content = message.get("content") if isinstance(message, Mapping) else None
        if isinstance(content, str):
            total += count_words(content)
        elif isinstance(content, list):
            total += sum(count_words(str(part.get("text", ""))) for part in content if isinstance(part, dict))
    return total


def _completion_json(body: Mapping[str, Any], reply: Reply, *, null: bool = False) -> dict[str, Any]:
    prompt_tokens = reply.prompt_tokens if reply.prompt_tokens is not None else _prompt_words(body)
    completion_tokens = reply.completion_tokens if reply.completion_tokens is not None else count_words(reply.text)
    return {
        "id": f"chatcmpl-{random.getrandbits(48):012x}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": reply.model if reply.model is not None else str(body.get("model", "scripted")),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None if null else reply.text},
                "finish_reason": reply.finish_reason,
                "logprobs": _logprobs(reply.text) if body.get("logprobs") and not null else None,
                **({"token_ids": token_ids(reply.text)} if body.get("return_token_ids") and not null else {}),
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def reply_tokens(text: str) -> list[str]:
    """How this server splits a reply into tokens when logprobs are asked for: each word with the
    whitespace before it (the tokens concatenate back to the text)."""
    return re.findall(r"\s*\S+|\s+$", text)


def token_logprob(token: str) -> float:
    """The logprob this server reports for a token (deterministic, negative)."""
    return -round((zlib.crc32(token.encode("utf-8")) % 1000) / 250 + 0.001, 3)


def token_ids(text: str) -> list[int]:
    """The token ids this server reports (vLLM's ``return_token_ids``): a hash of each token."""
    return [zlib.crc32(token.encode("utf-8")) % 50_000 for token in reply_tokens(text)]


def _logprobs(text: str) -> dict[str, Any]:
    """An OpenAI ``choice.logprobs`` object for ``text`` (``reply_tokens``, ``token_logprob``)."""
    return {
        "content": [
            {"token": t, "logprob": token_logprob(t), "bytes": list(t.encode("utf-8")), "top_logprobs": []}
            for t in reply_tokens(text)
        ],
        "refusal": None,
    }


def _make_handler(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        timeout = 30  # bound a stuck client connection

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes; without this, Nagle plus delayed
            # ACKs add ~40 ms to every reply.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            """Keep test output quiet: no access log."""

        def _send(self, status: int, body: str | bytes, headers: Mapping[str, str] | None = None) -> None:
            data = body.encode("utf-8") if isinstance(body, str) else body
            self.send_response(status)
            # Garbage is labelled JSON too, as a broken proxy would, so clients must parse it.
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            try:
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                return  # the client gave up (timeout); nothing to do
            server._sent(body if isinstance(body, str) else body.decode("utf-8", "replace"))

        def _error(self, status: int, message: str, headers: Mapping[str, str] | None = None) -> None:
            err_type = "invalid_request_error" if status < 500 else "server_error"
            payload = {"error": {"message": message, "type": err_type, "param": None, "code": None}}
            self._send(status, json.dumps(payload), headers)

        def _read_body(self) -> tuple[bytes, bool]:
            length = int(self.headers.get("Content-Length") or 0)
            if length > _MAX_BODY_BYTES:
                return b"", False
            return self.rfile.read(length) if length else b"", True

        def do_GET(self) -> None:  # noqa: N802 - stdlib naming
            server._record(RecordedRequest("GET", self.path, _lower_headers(self.headers), None, time.monotonic()))
            if server.require_key is not None and self.headers.get("Authorization") != f"Bearer {server.require_key}":
                self._error(401, "invalid API key")  # as real servers do: the model list needs the key too
                return
            if urlsplit(self.path).path in _MODELS_PATHS:
                models = {
                    "object": "list",
                    "data": [{"id": name, "object": "model", "owned_by": "test"} for name in server.models],
                }
                self._send(200, json.dumps(models))
            else:
                self._error(404, f"no route for GET {self.path}")

        def do_POST(self) -> None:  # noqa: N802 - stdlib naming
            raw, within_limit = self._read_body()
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            server._record(RecordedRequest("POST", self.path, _lower_headers(self.headers), body, time.monotonic()))
            if not within_limit:
                self.close_connection = True
                self._error(413, "request body too large")
                return
            route = urlsplit(self.path).path
            if route not in _CHAT_PATHS and route not in _EMBEDDING_PATHS:
                self._error(404, f"no route for POST {self.path}")
                return
            if server.require_key is not None:
                if self.headers.get("Authorization") != f"Bearer {server.require_key}":
                    self._error(401, "invalid API key")
                    return
            if route in _EMBEDDING_PATHS:
                self._embeddings(body)
                return
            if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
                self._error(400, "body must be JSON with a 'messages' list")
                return
            server._enter()
            started = time.monotonic()
            try:
                self._answer(body)
            finally:
                server._leave(body, started)

        def _embeddings(self, body: Any) -> None:
            texts = body.get("input") if isinstance(body, dict) else None
            texts = [texts] if isinstance(texts, str) else texts
            if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
                self._error(400, "body must be JSON with an 'input' string or list of strings")
                return
            fault = server._next_embedding_fault()
            if fault is not None and fault.kind == "delay":
                server._sleep(fault.delay_s)
                if server._stopping.is_set():
                    return
            elif fault is not None and fault.kind in ("empty", "null"):
                texts = []  # a 200 with no vectors: malformed for the client
            elif fault is not None and fault.kind == "garbage":
                self._send(200, "<html>502 upstream gone {not json</html>")
                return
            elif fault is not None and fault.kind == "rate_limit":
                headers = {} if fault.retry_after is None else {"Retry-After": f"{fault.retry_after:g}"}
                self._error(429, "scripted rate limit", headers)
                return
            elif fault is not None:  # status, echo, non_utf8: an HTTP error
                self._error(fault.status_code if fault.kind != "non_utf8" else 500, "scripted embeddings failure")
                return
            if server.latency_s:
                server._sleep(server.latency_s)
            tokens = sum(count_words(text) for text in texts)
            payload = {
                "object": "list",
                "model": str(body.get("model", "scripted")),
                "data": [
                    {"object": "embedding", "index": i, "embedding": bag_of_words_vector(text)}
                    for i, text in enumerate(texts)
                ],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
            self._send(200, json.dumps(payload))

        def _answer(self, body: dict[str, Any]) -> None:
            item = server._next_item(body)
            if isinstance(item, Fault):
                if item.kind == "echo":
                    # Authorization first, so that a client cutting long messages keeps it.
                    auth = self.headers.get("Authorization")
                    others = "; ".join(f"{k}: {v}" for k, v in self.headers.items() if k.lower() != "authorization")
                    echoed = f"POST {self.path} with Authorization: {auth} (other headers: {others})"
                    if item.status_code == 200:  # into the reply itself, as a model repeating its input
                        self._send(200, json.dumps(_completion_json(body, Reply(echoed))))
                    else:
                        self._error(item.status_code, f"cannot serve {echoed}")
                    return
                if item.kind == "null":
                    self._send(200, json.dumps(_completion_json(body, Reply(""), null=True)))
                    return
                if item.kind == "non_utf8":
                    completion = _completion_json(body, Reply("caf\u00e9 ok"))  # é as one Latin-1 byte
                    self._send(200, json.dumps(completion, ensure_ascii=False).encode("latin-1"))
                    return
                if item.kind == "status":
                    self._error(item.status_code, f"scripted HTTP {item.status_code}")
                    return
                if item.kind == "rate_limit":
                    headers = {} if item.retry_after is None else {"Retry-After": f"{item.retry_after:g}"}
                    self._error(429, "scripted rate limit", headers)
                    return
                if item.kind == "garbage":
                    self._send(200, "<html>502 upstream gone {not json</html>")
                    return
                if item.kind == "delay":
                    server._sleep(item.delay_s)
                    if server._stopping.is_set():
                        return
                    item = Reply(server.default_reply)
                else:  # empty
                    item = Reply("")
            if server.latency_s:
                server._sleep(server.latency_s)
            if body.get("stream"):
                self._stream(body, item)
                return
            self._send(200, json.dumps(_completion_json(body, item)))

        def _stream(self, body: dict[str, Any], reply: Reply) -> None:
            """The reply as server-sent events, one chunk per word (``stream: true``), then ``[DONE]``."""
            words = reply.text.split(" ")
            events = [
                {"choices": [{"index": 0, "delta": {"content": word if n == 0 else " " + word}}]}
                for n, word in enumerate(words)
            ]
            events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": reply.finish_reason}]})
            data = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Content-Length", str(len(data.encode())))
            self.end_headers()
            try:
                self.wfile.write(data.encode())
            except (BrokenPipeError, ConnectionResetError):
                return
            server._sent(reply.text)

    return Handler


class _Server(ThreadingHTTPServer):
    # The default listen backlog of 5 drops connections when hundreds of requests arrive at once
    # (a data build's fan-out); the clients' retries would then measure the backlog, not the client.
    request_queue_size = 1024

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up mid-request (a test's client closed, timed out or was cancelled) is
        the client's business: say nothing, or the traceback lands in whichever test reads stderr
        next. Anything else is a fault of this server, printed as the standard library does."""
        if isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            return
        super().handle_error(request, client_address)


def _lower_headers(headers: Message) -> dict[str, str]:
    return {name.lower(): value for name, value in headers.items()}
