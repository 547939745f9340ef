"""A model served by transformers on CPU torch, its replies constrained by llguidance, on a socket
LateralGym bound for it and requiring the key it was given: ``python -m
lateralgym.agents._transformers_serve FD SETTINGS`` (run under ``_local_guard``).

Everything here installs from binary wheels (no compiler). ``transformers serve`` cannot constrain a
reply (it refuses ``response_format`` and has no grammar field) and binds its own port, so this is a
small OpenAI-compatible server of our own, with the properties of the llama.cpp one LateralGym starts
(``_llama_serve``): it serves on the listening socket it inherits (``FD``), and answers only requests
carrying the key in ``KEY_ENV`` (taken out of the environment before the model loads); anything else
gets 401.

Endpoints: ``GET /v1/models`` (the alias), ``POST /v1/chat/completions`` (``messages``,
``max_tokens``, ``temperature``, ``top_p``, ``seed``, ``stop``, ``logprobs``, ``stream``; a reply
constrained by llama.cpp's ``grammar`` field (GBNF) or by ``response_format`` ``json_schema`` /
``json_object``, written as compact JSON). One request decodes at a time (the CPU is the limit); others wait their turn.

Memory: the key/value cache grows with the request, up to ``context`` tokens (prompt and reply; a
longer prompt is refused with 400, as llama.cpp does). The prompt cache keeps the key/value cache of
the last ``cache_slots`` conversations (a multi-turn episode's next prompt starts with its last one,
so only what the chat gained is read); ``LocalModelServer`` sizes both to the run's longest prompt and
concurrency.

``SETTINGS`` is a JSON object: ``folder`` (the dequantised model, ``_local_weights``), ``alias``,
``threads``, ``context``, ``cache_slots`` and ``dtype``.
"""

from __future__ import annotations

import hmac
import json
import os
import socket
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from lateralgym.agents._local_identity import KEY_ENV

USAGE = "usage: python -m lateralgym.agents._transformers_serve FD SETTINGS_JSON (the key in the environment)"
MAX_BODY_BYTES = 16 << 20
"""The largest request body read (a whole scene's chat is far smaller)."""


class RequestError(Exception):
    """A request this server cannot answer (HTTP 400, with the message)."""


@dataclass
class Reply:
    """A finished completion."""

    text: str = ""
    finish: str = "stop"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    logprobs: list[dict[str, Any]] = field(default_factory=list)


class Engine:
    """The model, its tokenizer and the prompt cache; decodes one request at a time."""

    def __init__(self, settings: dict[str, Any]) -> None:
        import llguidance
        import llguidance.hf
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        threads = int(settings.get("threads", 1))
        torch.set_num_threads(threads)
        self.torch = torch
        self.llguidance = llguidance
        folder = str(settings["folder"])
        self.tokenizer = AutoTokenizer.from_pretrained(folder)
        dtype = getattr(torch, str(settings.get("dtype", "float32")))
        self.model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype).eval()
        self.context = int(settings.get("context", 4096))
        self.slots = max(1, int(settings.get("cache_slots", 1)))
        stops = self.model.generation_config.eos_token_id
        stops = stops if isinstance(stops, list) else [stops]
        self.stops = {int(t) for t in [*stops, self.tokenizer.eos_token_id] if t is not None}
        self.ll_tokenizer = llguidance.hf.from_tokenizer(self.tokenizer)
        self.lock = threading.Lock()
        self.cached: list[tuple[list[int], Any]] = []
        """``(tokens, key/value cache holding them)``, least recently used first."""

    # -- requests --------------------------------------------------------------------------------

    def constraint(self, body: dict[str, Any]) -> str | None:
        """The llguidance grammar a request asks its reply to follow (None: free text).

        Raises:
            RequestError: the grammar or schema does not compile, or both are given.
        """
        grammar = body.get("grammar")
        response_format = body.get("response_format") or {}
        if not isinstance(response_format, dict):
            raise RequestError("response_format must be an object")
        kind = response_format.get("type", "text")
        if kind not in ("text", "json_object", "json_schema"):
            raise RequestError(f"response_format type {kind!r} is not supported (text, json_object, json_schema)")
        if grammar and kind != "text":
            raise RequestError("give a grammar or a response_format, not both")
        try:
            if grammar:
                if not isinstance(grammar, str):
                    raise RequestError("grammar must be a string (GBNF)")
                spec = self.llguidance.grammar_from("gbnf", grammar)
            elif kind in ("json_object", "json_schema"):
                schema = (response_format.get("json_schema") or {}).get("schema") if kind == "json_schema" else {}
                if not isinstance(schema, dict):
                    raise RequestError("response_format json_schema needs json_schema.schema, an object")
                # Compact JSON: with free whitespace a small model can fill its whole reply with blanks.
                schema = {"type": "object", **schema, "x-guidance": {"whitespace_flexible": False}}
                spec = self.llguidance.grammar_from("json_schema", json.dumps(schema))
            else:
                return None
        except ValueError as exc:
            raise RequestError(f"the constraint does not compile: {exc}") from None
        error = self.llguidance.LLMatcher.validate_grammar(spec, self.ll_tokenizer)
        if error:
            raise RequestError(f"the constraint does not compile: {error}")
        return str(spec)

    def prompt(self, body: dict[str, Any]) -> list[int]:
        """The request's chat as tokens, through the model's chat template.

        Raises:
            RequestError: no messages, or a message that is not ``{"role", "content"}`` text.
        """
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            raise RequestError("messages must be a non-empty list")
        chat = []
        for message in messages:
            if not isinstance(message, dict) or not isinstance(message.get("content", ""), str):
                raise RequestError("each message must be an object with a text content")
            chat.append({"role": str(message.get("role", "user")), "content": message.get("content") or ""})
        tokens = self.tokenizer.apply_chat_template(chat, add_generation_prompt=True, tokenize=True)
        if isinstance(tokens, dict) or hasattr(tokens, "keys"):
            tokens = tokens["input_ids"]
        ids = [int(t) for t in tokens]
        if len(ids) >= self.context:
            raise RequestError(
                f"the prompt has {len(ids)} tokens, more than the server's context of {self.context}: "
                "start it with a larger context (local/NAME?context=N)"
            )
        return ids

    def complete(self, body: dict[str, Any]) -> Iterator[str | Reply]:
        """The reply's text as it is written, then the finished ``Reply``.

        Raises:
            RequestError: a request that cannot be answered (before anything is written).
        """
        if int(body.get("n") or 1) != 1:
            raise RequestError("n must be 1 (ask again for more replies)")
        spec = self.constraint(body)
        ids = self.prompt(body)
        max_tokens = body.get("max_tokens") or body.get("max_completion_tokens") or self.context
        max_tokens = min(int(max_tokens), self.context - len(ids))
        temperature = _number(body, "temperature", 1.0)
        top_p = _number(body, "top_p", 1.0)
        stops = body.get("stop") or []
        stops = [stops] if isinstance(stops, str) else [str(s) for s in stops]
        generator = self.torch.Generator()
        if body.get("seed") is not None:
            generator.manual_seed(int(body["seed"]))
        else:
            generator.seed()
        matcher = self.llguidance.LLMatcher(self.ll_tokenizer, spec, log_level=0) if spec else None
        want_logprobs = bool(body.get("logprobs"))
        with self.lock:
            yield from self._decode(ids, max_tokens, temperature, top_p, stops, generator, matcher, want_logprobs)

    def _decode(
        self,
        ids: list[int],
        max_tokens: int,
        temperature: float,
        top_p: float,
        stops: list[str],
        generator: Any,
        matcher: Any,
        want_logprobs: bool,
    ) -> Iterator[str | Reply]:
        torch = self.torch
        reply = Reply(prompt_tokens=len(ids))
        written: list[int] = []
        shown = ""
        with torch.inference_mode():
            cache, fed = self._take(ids)
            logits = self._forward(ids[fed:], cache)
            fed_tokens = list(ids)
            reply.finish = "length"
            for _ in range(max(0, max_tokens)):
                scores = logits.float()
                if matcher is not None:
                    self._mask(scores, matcher)
                token = self._pick(scores, temperature, top_p, generator)
                if token is None or token in self.stops:
                    reply.finish = "stop"
                    break
                if matcher is not None and not matcher.consume_token(token):
                    reply.finish = "stop"
                    break
                written.append(token)
                if want_logprobs:
                    logprob = float(torch.log_softmax(logits.float(), dim=-1)[token])
                    piece = self.tokenizer.decode([token])
                    reply.logprobs.append({"token": piece, "logprob": logprob,
                                           "bytes": list(piece.encode()), "top_logprobs": []})  # fmt: skip
                text = self.tokenizer.decode(written, skip_special_tokens=True)
                cut = _stop_at(text, stops)
                if cut is not None:
                    text, reply.finish = text[:cut], "stop"
                if not text.endswith("\ufffd") and text.startswith(shown) and len(text) > len(shown):
                    yield text[len(shown) :]
                    shown = text
                if cut is not None or (matcher is not None and matcher.is_stopped()):
                    reply.finish = "stop"
                    break
                logits = self._forward([token], cache)
                fed_tokens.append(token)
            self._keep(fed_tokens, cache)
        text = self.tokenizer.decode(written, skip_special_tokens=True)
        cut = _stop_at(text, stops)
        reply.text = text[:cut] if cut is not None else text
        if reply.text.startswith(shown) and len(reply.text) > len(shown):
            yield reply.text[len(shown) :]
        reply.completion_tokens = len(written)
        yield reply

    def _forward(self, tokens: list[int], cache: Any) -> Any:
        # logits_to_keep=1: only the next token's scores (a 2,000-token prompt's would take 400 MB)
        output = self.model(input_ids=self.torch.tensor([tokens]), cache=cache, use_cache=True, logits_to_keep=1)
        return output.logits[0, -1]

    def _mask(self, scores: Any, matcher: Any) -> None:
        """Set the scores of the tokens the constraint forbids next to minus infinity."""
        import numpy as np

        bits = np.unpackbits(np.frombuffer(matcher.compute_bitmask(), dtype=np.uint8), bitorder="little")
        allowed = self.torch.from_numpy(bits[: scores.shape[0]].astype(bool))
        if allowed.shape[0] < scores.shape[0]:
            scores[allowed.shape[0] :] = float("-inf")
        scores[: allowed.shape[0]][~allowed] = float("-inf")

    def _pick(self, scores: Any, temperature: float, top_p: float, generator: Any) -> int | None:
        torch = self.torch
        if not bool(torch.isfinite(scores).any()):
            return None  # nothing allowed: the constraint is finished
        if temperature <= 0:
            return int(scores.argmax())
        probs = torch.softmax(scores / temperature, dim=-1)
        if top_p < 1.0:
            ordered, order = torch.sort(probs, descending=True)
            keep = torch.cumsum(ordered, dim=-1) - ordered < top_p
            probs = torch.zeros_like(probs).scatter(0, order[keep], ordered[keep])
        return int(torch.multinomial(probs, 1, generator=generator))

    # -- the prompt cache --------------------------------------------------------------------------

    def _take(self, ids: list[int]) -> tuple[Any, int]:
        """A key/value cache for ``ids``: the cached conversation sharing the longest start with it,
        cut to that start (at least one token is left to read), or a new one; and how many it holds."""
        from transformers import DynamicCache

        best, best_shared = -1, 0
        for n, (tokens, _) in enumerate(self.cached):
            shared = _shared_start(tokens, ids)
            if shared > best_shared:
                best, best_shared = n, shared
        if best < 0:
            return DynamicCache(config=self.model.config), 0
        tokens, cache = self.cached.pop(best)
        keep = min(best_shared, len(ids) - 1)
        if len(tokens) > keep:
            cache.crop(-(len(tokens) - keep))
        return cache, keep

    def _keep(self, tokens: list[int], cache: Any) -> None:
        self.cached.append((tokens, cache))
        del self.cached[: -self.slots]


def _number(body: dict[str, Any], name: str, default: float) -> float:
    value = body.get(name)
    return default if value is None else float(value)


def _shared_start(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _stop_at(text: str, stops: list[str]) -> int | None:
    found = [text.find(s) for s in stops if s and s in text]
    return min(found) if found else None


# -- HTTP ------------------------------------------------------------------------------------------


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base class's name
        pass  # an access log would fill the parent's log file

    def _authorised(self) -> bool:
        given = self.headers.get("Authorization", "")
        if hmac.compare_digest(given.encode(), f"Bearer {self.server.key}".encode()):
            return True
        self._json(401, _error("a valid key is required (Authorization: Bearer KEY)", "authentication_error"))
        return False

    def do_GET(self) -> None:  # noqa: N802 - the base class's name
        if self.path.rstrip("/") not in ("/v1/models", "/models"):
            self._json(404, _error(f"no such endpoint: GET {self.path}", "not_found"))
            return
        if self._authorised():
            model = {"id": self.server.alias, "object": "model", "owned_by": "lateralgym", "created": 0}
            self._json(200, {"object": "list", "data": [model]})

    def do_POST(self) -> None:  # noqa: N802 - the base class's name
        if self.path.rstrip("/") not in ("/v1/chat/completions", "/chat/completions"):
            self._json(404, _error(f"no such endpoint: POST {self.path}", "not_found"))
            return
        if not self._authorised():
            return
        try:
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                raise RequestError(f"the request body is larger than {MAX_BODY_BYTES} bytes")
            body = json.loads(self.rfile.read(length) or b"{}")
            if not isinstance(body, dict):
                raise RequestError("the request body must be a JSON object")
            pieces = self.server.engine.complete(body)
            first = next(pieces)  # what cannot be answered is refused before anything is sent
        except (RequestError, ValueError, TypeError) as exc:
            self._json(400, _error(str(exc), "invalid_request_error"))
            return
        if body.get("stream"):
            self._stream(first, pieces)
        else:
            *_, reply = _chain(first, pieces)
            assert isinstance(reply, Reply)
            self._json(200, self._completion(reply, bool(body.get("logprobs"))))

    def _completion(self, reply: Reply, logprobs: bool) -> dict[str, Any]:
        choice: dict[str, Any] = {
            "index": 0,
            "message": {"role": "assistant", "content": reply.text},
            "finish_reason": reply.finish,
            "logprobs": {"content": reply.logprobs} if logprobs else None,
        }
        return {
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": self.server.alias,
            "choices": [choice],
            "usage": _usage(reply),
        }

    def _stream(self, first: str | Reply, rest: Iterator[str | Reply]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        ident, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None, usage: dict[str, int] | None = None) -> None:
            data: dict[str, Any] = {
                "id": ident, "object": "chat.completion.chunk", "created": created, "model": self.server.alias,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }  # fmt: skip
            if usage is not None:
                data["usage"] = usage
            self.wfile.write(f"data: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()

        chunk({"role": "assistant", "content": ""})
        for piece in _chain(first, rest):
            if isinstance(piece, Reply):
                chunk({}, piece.finish, _usage(piece))
            else:
                chunk({"content": piece})
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()

    def _json(self, status: int, data: dict[str, Any]) -> None:
        payload = json.dumps(data).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


def _chain(first: str | Reply, rest: Iterator[str | Reply]) -> Iterator[str | Reply]:
    yield first
    yield from rest


def _usage(reply: Reply) -> dict[str, int]:
    return {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }


def _error(message: str, kind: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind}}


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, listener: socket.socket, engine: Engine, key: str, alias: str) -> None:
        super().__init__(listener.getsockname()[:2], _Handler, bind_and_activate=False)
        self.socket.close()
        self.socket = listener  # bound and listening already: LateralGym holds the port
        self.server_address = listener.getsockname()[:2]
        self.engine, self.key, self.alias = engine, key, alias


def main(argv: list[str]) -> None:
    """Serve ``argv``'s model settings on ``argv``'s socket, with the environment's key."""
    key = os.environ.pop(KEY_ENV, "")
    if len(argv) != 2 or not argv[0].isdigit() or not key:
        print(USAGE, file=sys.stderr)
        raise SystemExit(2)
    listener = socket.socket(fileno=int(argv[0]))
    settings = json.loads(argv[1])
    engine = Engine(settings)
    _Server(listener, engine, key, str(settings["alias"])).serve_forever()


if __name__ == "__main__":
    main(sys.argv[1:])
