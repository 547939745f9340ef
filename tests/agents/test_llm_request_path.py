"""A connection's later chat requests go out through ``httpx`` on the route the SDK's request path
took for its first: the same bytes and headers reach the server, and every failure comes back as the
same ``LLMCallError`` (type of error, status, message, retries) as it does through the SDK."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpcore
import pytest
from llm_server import Fault, ScriptedLLMServer

from lateralgym.agents._http_transport import _Protocol, _Stream
from lateralgym.agents._llm_client import LLMCallError, LLMClient

MakeClient = Callable[..., LLMClient]


def _outcome(client: LLMClient, text: str) -> tuple[Any, ...]:
    """What a failed call says: its kind, status, retry verdict, attempts and message (which names
    the library's error type)."""
    with pytest.raises(LLMCallError) as raised:
        client.complete_sync(text, use_cache=False)
    error = raised.value
    return error.kind, error.status, error.retryable, error.attempts, str(error)


def test_later_requests_send_what_the_first_sent(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    """The first request (the SDK's path) and the next (httpx directly): equal headers and bodies,
    ``extra_body`` merged in as the SDK merges it; a per-call option goes the SDK's way again."""
    client = make_client(token_ids=True, temperature=0.5)
    messages = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Is a spoon a lever? \u00e9"}]
    first = client.complete_sync(messages, use_cache=False, stop=["\n"])
    second = client.complete_sync(messages, use_cache=False, stop=["\n"])
    third = client.complete_sync(messages, use_cache=False, extra_headers={"X-Trace": "7"})
    sdk, direct, optioned = llm_server.requests[-3:]
    assert direct.headers == sdk.headers
    assert direct.body == sdk.body and direct.body["return_token_ids"] is True
    assert optioned.headers["x-trace"] == "7" and direct.path == sdk.path == optioned.path
    assert first.text == second.text == third.text == "ok" and second.token_ids


FAULTS = {
    "server error": Fault.status(500),
    "bad request": Fault.status(400),
    "rate limit": Fault.rate_limit(0.01),
    "echoed key": Fault.echo(401),
    "not json": Fault.garbage(),
    "null content": Fault.null(),
    "not utf-8": Fault.non_utf8(),
    "timeout": Fault.delay(1.5),
}


@pytest.mark.parametrize("fault", FAULTS.values(), ids=FAULTS.keys())
def test_a_failure_reads_the_same_on_either_path(
    llm_server: ScriptedLLMServer, make_client: MakeClient, fault: Fault
) -> None:
    """The same fault, met by a fresh client (the SDK's path) and by one whose connection already
    answered (httpx directly): the same error, word for word, the key redacted in both."""
    fresh = make_client(max_retries=0, timeout=0.5)
    llm_server.enqueue(fault)
    through_sdk = _outcome(fresh, "question")
    warm = make_client(max_retries=0, timeout=0.5)
    assert warm.complete_sync("warm up", use_cache=False).text == "ok"
    llm_server.enqueue(fault)
    direct = _outcome(warm, "question")
    assert direct == through_sdk
    assert "SECRET123" not in direct[-1]


def test_retries_after_a_warm_connection_fail(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    """429 with Retry-After, then 500, then an answer: retried on the direct path, three attempts."""
    client = make_client(max_retries=3)
    client.complete_sync("warm up", use_cache=False)
    llm_server.enqueue(Fault.rate_limit(0.01), Fault.status(503), "fine")
    call = client.complete_sync("question", use_cache=False)
    assert (call.text, call.attempts) == ("fine", 3)


def _loopback_listener() -> socket.socket:
    """A listening socket on 127.0.0.1 whose ``accept`` gives up every 0.2 s (so a server thread can stop)."""
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    return listener


def _chat_answer(content: str) -> bytes:
    """A whole HTTP/1.1 response carrying one chat completion whose reply is ``content``."""
    body = json.dumps(
        {"choices": [{"message": {"role": "assistant", "content": content}, "finish_reason": "stop"}], "model": "m"}
    ).encode()
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)


@pytest.fixture
def hang_up_server() -> Iterator[str]:
    """An HTTP server on 127.0.0.1 that answers one chat request per connection, then hangs up on the
    next without a word (as a server restarting under a kept-alive connection does)."""
    listener, stop, answer = _loopback_listener(), threading.Event(), _chat_answer("ok")

    def read_request(conn: socket.socket) -> bool:
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return False
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.lower().split(b"\r\n")
        length = next(int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length"))
        while len(rest) < length:
            rest += conn.recv(65536)
        return True

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                if read_request(conn):
                    conn.sendall(answer)
                    read_request(conn)  # the next request on this connection: hang up unanswered

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    stop.set()
    thread.join(timeout=5)
    listener.close()


def test_a_connection_the_server_drops_is_a_retryable_connection_error(hang_up_server: str) -> None:
    client = LLMClient("openai/m", base_url=hang_up_server, max_retries=0, use_cache=False, timeout=2.0)
    try:
        assert client.complete_sync("warm up").text == "ok"
        with pytest.raises(LLMCallError, match=r"connection: APIConnectionError: Connection error\.") as raised:
            client.complete_sync("question")
        assert (raised.value.kind, raised.value.retryable) == ("connection", True)
    finally:
        client.close()


async def _stream_pair() -> tuple[_Stream, socket.socket]:
    """One of our connections, and the socket at its other end (the server's side)."""
    ours, theirs = socket.socketpair()
    theirs.setblocking(False)
    transport, protocol = await asyncio.get_running_loop().create_connection(_Protocol, sock=ours)
    assert isinstance(transport, asyncio.Transport)
    return _Stream(transport, protocol), theirs


def _received(sock: socket.socket) -> bytes:
    try:
        return sock.recv(1 << 20)
    except BlockingIOError:
        return b""


def test_a_request_reaches_the_server_whole_when_the_response_is_read() -> None:
    """Head and body are held until httpcore reads the response, then go out together; a large
    write goes at once; the response comes back whole, then the server's close as b"" (and the idle
    connection reads as closed without a system call)."""

    async def main() -> None:
        stream, server = await _stream_pair()
        await stream.write(b"POST /v1/chat/completions HTTP/1.1\r\n\r\n")
        await stream.write(b'{"messages": []}')
        await asyncio.sleep(0.05)
        assert _received(server) == b""  # held
        reading = asyncio.ensure_future(stream.read(1024, timeout=2.0))
        await asyncio.sleep(0.05)
        assert _received(server) == b'POST /v1/chat/completions HTTP/1.1\r\n\r\n{"messages": []}'
        server.sendall(b"HTTP/1.1 200 OK\r\n\r\n")
        assert await reading == b"HTTP/1.1 200 OK\r\n\r\n"
        assert stream.get_extra_info("is_readable") is False
        await stream.write(b"x" * 70_000)  # past the hold: sent now
        await asyncio.sleep(0.05)
        got = b""
        while len(got) < 70_000 and (chunk := _received(server)):
            got += chunk
        assert got == b"x" * 70_000
        server.close()
        await asyncio.sleep(0.05)
        assert stream.get_extra_info("is_readable") is True
        assert await stream.read(1024, timeout=2.0) == b""
        await stream.aclose()

    asyncio.run(main())


def test_a_silent_server_is_a_read_timeout() -> None:
    async def main() -> None:
        stream, server = await _stream_pair()
        await stream.write(b"GET / HTTP/1.1\r\n\r\n")
        with pytest.raises(httpcore.ReadTimeout):
            await stream.read(1024, timeout=0.05)
        await stream.aclose()
        server.close()

    asyncio.run(main())


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A chat server over TLS on 127.0.0.1 (a self-signed certificate for ``localhost``, made with the
    ``openssl`` command), answering every request of a kept-alive connection; its URL and certificate."""
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert)]
        + ["-days", "1", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost"],
        check=True,
        capture_output=True,
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener, stop, answer = _loopback_listener(), threading.Event(), _chat_answer("over tls")

    def serve(conn: socket.socket) -> None:
        with conn, context.wrap_socket(conn, server_side=True) as tls:
            data = b""
            while True:
                while b"\r\n\r\n" not in data:
                    chunk = tls.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, data = data.partition(b"\r\n\r\n")
                lines = head.lower().split(b"\r\n")
                length = next((int(line.split(b":")[1]) for line in lines if line.startswith(b"content-length")), 0)
                while len(data) < length:
                    data += tls.recv(65536)
                data = data[length:]
                tls.sendall(answer)

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            conn.settimeout(5)
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"https://localhost:{listener.getsockname()[1]}/v1", cert
    stop.set()
    thread.join(timeout=5)
    listener.close()


def test_requests_go_over_tls_on_one_kept_alive_connection(tls_server: tuple[str, Path]) -> None:
    """Three calls to an https server, in a process that trusts its certificate (``SSL_CERT_FILE``):
    the TLS handshake on our connection, then the SDK's path and the direct one over it."""
    url, cert = tls_server
    code = (
        "from lateralgym.agents import LLMClient\n"
        f"client = LLMClient('openai/m', base_url={url!r}, use_cache=False, max_retries=0, timeout=5)\n"
        "print([client.complete_sync(f'question {i}').text for i in range(3)])\n"
        "client.close()\n"
    )
    env = {**os.environ, "SSL_CERT_FILE": str(cert), "OPENAI_API_KEY": "sk-x", "NO_PROXY": "localhost"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(["over tls"] * 3)
