"""A response body stops at ``MAX_RESPONSE_BYTES`` while it streams in, and counts as a malformed reply.

A server on 127.0.0.1 (a real socket; the request goes through the real ``openai`` SDK, ``httpx`` and
our transport) answers 200 and then sends a body without end, a ``Content-Length`` of gigabytes, or a
small gzip body that expands to many times the cap. Each call fails in one line as a malformed reply,
and the server's count of what it could send shows the client stopped reading near the cap: memory
stays bounded by the cap, not by the body.
"""

from __future__ import annotations

import gzip
import socket
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lateralgym.agents import LLMCallError, LLMClient
from lateralgym.agents._http_transport import MAX_RESPONSE_BYTES

ENDLESS_BYTES = 8 * MAX_RESPONSE_BYTES
"""How much an "endless" body sends before the server gives up (so the test ends even were the cap broken)."""
SLACK_BYTES = 16 << 20
"""What the sockets' buffers may hold beyond what the client read (both kernels' buffers, autotuned)."""
OPENING = (
    b'{"id":"x","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"'
)
CLOSING = b'"},"finish_reason":"stop"}]}'


class RawServer:
    """Answers each HTTP request on 127.0.0.1 with ``answer(connection)``; counts the bytes it sent."""

    def __init__(self, answer: Callable[[RawServer, socket.socket], None]) -> None:
        self._answer = answer
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.sent = 0
        self.client_hung_up = False
        self.heads: list[bytes] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/v1"

    def send(self, connection: socket.socket, data: bytes) -> None:
        connection.sendall(data)
        self.sent += len(data)

    def _serve(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            with connection:
                head = _read_request(connection)
                if head is None:
                    continue
                self.heads.append(head)
                try:
                    self._answer(self, connection)
                except (BrokenPipeError, ConnectionResetError):
                    self.client_hung_up = True

    def close(self) -> None:
        self._listener.close()


def _read_request(connection: socket.socket) -> bytes | None:
    """Read one request (head and ``Content-Length`` body): its head, or None when the client closed first."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return None
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")),
        0,
    )
    while len(body) < length:
        body += connection.recv(65536)
    return head + b"\r\n"


def endless(server: RawServer, connection: socket.socket) -> None:
    """A completion whose text never ends (chunked), up to ``ENDLESS_BYTES``."""
    server.send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
    piece = b"x" * 65536
    server.send(connection, b"%x\r\n%s\r\n" % (len(OPENING), OPENING))
    while server.sent < ENDLESS_BYTES:
        server.send(connection, b"%x\r\n%s\r\n" % (len(piece), piece))
    server.send(connection, b"%x\r\n%s\r\n0\r\n\r\n" % (len(CLOSING), CLOSING))


def announced(server: RawServer, connection: socket.socket) -> None:
    """A head announcing 3 GB, then the body's first bytes."""
    server.send(connection, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 3000000000\r\n\r\n")
    server.send(connection, OPENING + b"x" * 65536)


def compressed(server: RawServer, connection: socket.socket) -> None:
    """A valid completion, gzip-compressed to ~0.1% of its ``ENDLESS_BYTES`` (sent though not asked for)."""
    body = gzip.compress(OPENING + b"x" * ENDLESS_BYTES + CLOSING, compresslevel=9)
    head = f"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: {len(body)}"
    server.send(connection, head.encode() + b"\r\n\r\n" + body)


@pytest.fixture
def raw_server(request: pytest.FixtureRequest) -> Iterator[RawServer]:
    server = RawServer(request.param)
    yield server
    server.close()


def ask(server: RawServer, tmp_path: Path) -> LLMCallError:
    client = LLMClient("openai/m", base_url=server.base_url, cache_dir=tmp_path / "cache", timeout=120.0, max_retries=0)
    try:
        with pytest.raises(LLMCallError) as caught:
            client.complete_sync("hello")
    finally:
        client.close()
    return caught.value


@pytest.mark.parametrize("raw_server", [endless], indirect=True)
def test_an_endless_body_stops_at_the_cap_as_a_malformed_reply(raw_server: RawServer, tmp_path: Path) -> None:
    error = ask(raw_server, tmp_path)
    assert error.kind == "malformed" and error.attempts == 1 and "\n" not in str(error)
    assert f"passed {MAX_RESPONSE_BYTES:,} bytes" in str(error)
    # The client hung up: the server could not send its whole body, only what the client read (up to the
    # cap) and what the two sockets' buffers hold.
    assert raw_server.client_hung_up and raw_server.sent < MAX_RESPONSE_BYTES + SLACK_BYTES < ENDLESS_BYTES
    assert not list((tmp_path / "cache").glob("*/*.json"))


@pytest.mark.parametrize("raw_server", [announced], indirect=True)
def test_a_body_announced_past_the_cap_is_not_read(raw_server: RawServer, tmp_path: Path) -> None:
    error = ask(raw_server, tmp_path)
    assert error.kind == "malformed" and "\n" not in str(error)
    assert "announced a body of 3,000,000,000 bytes" in str(error)


@pytest.mark.parametrize("raw_server", [compressed], indirect=True)
def test_a_compressed_body_is_refused_before_it_expands(raw_server: RawServer, tmp_path: Path) -> None:
    error = ask(raw_server, tmp_path)
    assert error.kind == "malformed" and "\n" not in str(error)
    assert "gzip-compressed though asked for uncompressed" in str(error)


def near_the_cap(server: RawServer, connection: socket.socket) -> None:
    """A completion just under the cap, its length announced."""
    body = OPENING + b"y" * (MAX_RESPONSE_BYTES - 4096) + CLOSING
    server.send(
        connection, b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(body)
    )
    server.send(connection, body)


@pytest.mark.parametrize("raw_server", [near_the_cap], indirect=True)
def test_a_reply_within_the_cap_is_read_and_asked_for_uncompressed(raw_server: RawServer, tmp_path: Path) -> None:
    client = LLMClient("openai/m", base_url=raw_server.base_url, cache_dir=tmp_path / "cache", max_retries=0)
    try:
        call = client.complete_sync("hello", role="annotator")
    finally:
        client.close()
    assert call.error is None and call.truncated_chars > 0  # read whole, then cut to the role's cap
    assert b"\r\naccept-encoding: identity\r\n" in raw_server.heads[0].lower()
