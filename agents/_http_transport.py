"""The HTTP transport of the model clients: ``httpx``'s own, with a request sent in one write, a
bounded response, and the environment's proxies.

``httpcore`` writes a request's head and its body to the socket separately, and walks its pool's
idle connections asking each whether the server closed it (``is_readable``) whenever a request
starts or ends. On the benchmark machine the second ``send`` was about a tenth of a call's CPU (a
system call, and a second segment for the server to read), and each idle check rebuilt the socket's
whole attribute table, with a ``getpeername`` system call, to find the socket it already had.

``RequestTransport`` is ``httpx.AsyncHTTPTransport`` (its pool, limits, TLS context, timeouts and
error mapping) over streams that hold what is written until the response is read, and keep their
socket at hand. It speaks HTTP/1.1 only, request then response, which is all the chat and
embeddings endpoints use: a stream that writes and never reads (an upgraded connection) would hold
its bytes, so it is not for those.

Every response is bounded (``BoundedTransport``): a body stops being read past
``MAX_RESPONSE_BYTES`` (a server sending without end would otherwise grow memory until the timeout),
and is asked for, and accepted, uncompressed only (a compressed body's expanded size is unknown until
it is expanded). Either refusal raises ``RefusedResponseError``, which the client counts as a
malformed reply.

A client given a transport of its own is given no proxy by ``httpx``, so the environment's proxies
(``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``) are mounted here (``proxy_mounts``), as
``httpx`` mounts them for a client without one: ``httpx``'s own proxy transports, bounded.
"""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
import typing
import urllib.request
from collections.abc import AsyncIterator

import httpcore
import httpx
from httpcore import AsyncNetworkStream

__all__ = [
    "MAX_RESPONSE_BYTES",
    "BoundedTransport",
    "RefusedResponseError",
    "RequestTransport",
    "environment_proxies",
    "proxy_mounts",
]

MAX_RESPONSE_BYTES = 8 << 20
"""The most of a response body read (8 MiB). A reply is cut to its role's cap after it is read (200,000
characters at most: 2.4 MB even were each one a JSON ``\\u`` escape pair), and a batch of 128 embeddings
of 3,072 numbers is ~6 MB: a body past this is no answer."""

_HELD_BYTES = 1 << 16
"""A write that would hold more than this is sent at once (with what is held): a large body
costs a send of its own anyway, and is not kept twice in memory."""

_READ_AHEAD_BYTES = 1 << 18
"""The most a connection reads ahead of httpcore before it stops reading from the socket."""


class _Protocol(asyncio.Protocol):
    """What the event loop tells a connection: bytes come in, the peer closes, the buffer fills."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.received = bytearray()
        self.eof = False
        self.error: Exception | None = None
        self.reading = True
        self.waiter: asyncio.Future[None] | None = None
        self.drained: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.received += data
        if len(self.received) > _READ_AHEAD_BYTES and self.transport is not None:
            self.transport.pause_reading()
            self.reading = False
        self._wake()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake()
        return False  # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self.error = exc
        self._wake()
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def pause_writing(self) -> None:
        self.drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)
        self.drained = None

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)


async def _within(future: asyncio.Future[None], timeout: float | None) -> None:
    """Wait for ``future``; ``TimeoutError`` after ``timeout`` seconds (None: no limit)."""
    if timeout is None:
        await future
        return
    timer = asyncio.get_running_loop().call_later(timeout, _expire, future)
    try:
        await future
    finally:
        timer.cancel()


def _expire(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_exception(TimeoutError())


class _Stream(AsyncNetworkStream):
    """One connection on the running event loop, as httpcore's asyncio backend gives it, but whose
    writes wait until the next read (or ``_HELD_BYTES``), and which knows without a system call
    whether the server has sent something (its close) on an idle connection."""

    def __init__(self, transport: asyncio.Transport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol
        self._held: list[bytes] = []
        self._held_bytes = 0
        self._write_timeout: float | None = None

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self._held:
            try:
                await self._flush()
            except httpcore.WriteError:
                # As httpcore does with a failed write: read on, the server may have answered (an
                # error response to a request it cut short) or closed, which the read reports.
                pass
        protocol = self._protocol
        if not protocol.received and not protocol.eof:
            protocol.waiter = asyncio.get_running_loop().create_future()
            try:
                await _within(protocol.waiter, timeout)
            except TimeoutError:
                raise httpcore.ReadTimeout("timed out reading from the server") from None
            finally:
                protocol.waiter = None
        if not protocol.received:
            if protocol.error is not None:
                raise httpcore.ReadError(str(protocol.error) or type(protocol.error).__name__)
            return b""  # the server closed the connection
        data = bytes(protocol.received[:max_bytes])
        del protocol.received[:max_bytes]
        if not protocol.reading and len(protocol.received) <= _READ_AHEAD_BYTES // 2:
            self._transport.resume_reading()
            protocol.reading = True
        return data

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        self._held.append(buffer)
        self._held_bytes += len(buffer)
        self._write_timeout = timeout
        if self._held_bytes > _HELD_BYTES:
            await self._flush()

    async def _flush(self) -> None:
        data = b"".join(self._held) if len(self._held) > 1 else self._held[0]
        self._held, self._held_bytes = [], 0
        if self._transport.is_closing():
            raise httpcore.WriteError("the connection is closed")
        self._transport.write(data)
        drained = self._protocol.drained
        if drained is not None:
            try:
                await _within(drained, self._write_timeout)
            except TimeoutError:
                raise httpcore.WriteTimeout("timed out writing to the server") from None
            if self._protocol.error is not None:
                raise httpcore.WriteError(str(self._protocol.error))

    async def aclose(self) -> None:
        self._held, self._held_bytes = [], 0
        self._transport.abort()  # as httpcore's asyncio backend closes a connection

    async def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(
                    self._transport, self._protocol, ssl_context, server_hostname=server_hostname
                )
        except TimeoutError:
            self._transport.abort()
            raise httpcore.ConnectTimeout("timed out in the TLS handshake") from None
        except (OSError, ssl.SSLError) as exc:
            self._transport.abort()
            raise httpcore.ConnectError(str(exc)) from exc
        if transport is None:  # pragma: no cover - the server closed during the handshake
            raise httpcore.ConnectError("the server closed the connection during the TLS handshake")
        assert isinstance(transport, asyncio.Transport)
        self._protocol.transport = transport
        return _Stream(transport, self._protocol)

    def get_extra_info(self, info: str) -> typing.Any:
        if info == "is_readable":
            # What httpcore asks of an idle connection: has the server sent something (its close)?
            return bool(self._protocol.received) or self._protocol.eof
        name = {"ssl_object": "ssl_object", "client_addr": "sockname", "server_addr": "peername", "socket": "socket"}
        return self._transport.get_extra_info(name[info]) if info in name else None


class _Backend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend on the running asyncio loop, its connections ``_Stream``s."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address is not None else None
        connecting = loop.create_connection(_Protocol, host, port, local_addr=local)
        return await self._connected(connecting, timeout, socket_options)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        return await self._connected(loop.create_unix_connection(_Protocol, path), timeout, socket_options)

    async def _connected(
        self,
        connecting: typing.Awaitable[tuple[asyncio.BaseTransport, _Protocol]],
        timeout: float | None,
        socket_options: typing.Iterable[httpcore.SOCKET_OPTION] | None,
    ) -> _Stream:
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await connecting
        except TimeoutError:
            raise httpcore.ConnectTimeout("timed out connecting to the server") from None
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        assert isinstance(transport, asyncio.Transport)
        sock = transport.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        return _Stream(transport, protocol)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


class RefusedResponseError(Exception):
    """A response the transport stopped reading: a body past ``MAX_RESPONSE_BYTES``, or a compressed one."""


class _BoundedStream(httpx.AsyncByteStream):
    """A response body that raises ``RefusedResponseError`` once more than ``limit`` bytes came in."""

    def __init__(self, stream: httpx.AsyncByteStream, limit: int) -> None:
        self._stream = stream
        self._limit = limit
        self.received = 0
        """Bytes of the body read so far (at most ``limit`` plus one read)."""

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._stream:
            self.received += len(chunk)
            if self.received > self._limit:
                raise RefusedResponseError(
                    f"the response body passed {self._limit:,} bytes ({self._limit >> 20} MiB) and was not read "
                    "further: no reply is that long"
                )
            yield chunk

    async def aclose(self) -> None:
        await self._stream.aclose()  # a body not read to its end closes its connection (httpcore)


class BoundedTransport(httpx.AsyncHTTPTransport):
    """``httpx.AsyncHTTPTransport`` whose responses come uncompressed and stop at ``max_bytes``.

    A request asks for its response uncompressed (``Accept-Encoding: identity``); a response compressed
    anyway, or whose ``Content-Length`` is past ``max_bytes``, is refused before its body is read, and a
    body that grows past ``max_bytes`` while it streams in is refused there, its connection closed.
    Refusals raise ``RefusedResponseError`` from the body's read (``Response.aread``), or from
    ``handle_async_request`` for those seen in the head.

    Args:
        max_bytes: The most of a body read (``MAX_RESPONSE_BYTES``).
        **settings: ``httpx.AsyncHTTPTransport``'s (``verify``, ``limits``, ``proxy``, ...).
    """

    def __init__(self, *, max_bytes: int = MAX_RESPONSE_BYTES, **settings: typing.Any) -> None:
        super().__init__(**settings)
        self.max_bytes = max_bytes

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        request.headers["Accept-Encoding"] = "identity"
        response = await super().handle_async_request(request)
        encoding = response.headers.get("Content-Encoding", "").strip().lower()
        length = response.headers.get("Content-Length", "").strip()
        refusal = None
        if encoding not in ("", "identity"):
            refusal = f"the response came {encoding}-compressed though asked for uncompressed: its size is unknown"
        elif length.isdigit() and int(length) > self.max_bytes:
            refusal = f"the response announced a body of {int(length):,} bytes, past the {self.max_bytes:,} read"
        if refusal is not None:
            await response.aclose()
            raise RefusedResponseError(refusal)
        assert isinstance(response.stream, httpx.AsyncByteStream)
        response.stream = _BoundedStream(response.stream, self.max_bytes)
        return response


class RequestTransport(BoundedTransport):
    """``BoundedTransport`` (HTTP/1.1, no proxy) whose connections send a request in one write.

    Args:
        ssl_context: The TLS context of every connection.
        limits: The pool's limits (connections, keep-alive connections and their expiry).
        max_bytes: The most of a response body read.
    """

    def __init__(
        self, ssl_context: ssl.SSLContext, limits: httpx.Limits, *, max_bytes: int = MAX_RESPONSE_BYTES
    ) -> None:
        super().__init__(verify=ssl_context, limits=limits, max_bytes=max_bytes)
        # The pool httpx built, rebuilt with the same settings over our streams.
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=ssl_context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            http1=True,
            http2=False,
            network_backend=_Backend(),
        )


def environment_proxies() -> dict[str, str | None]:
    """The environment's proxies as ``httpx`` reads them for a client with ``trust_env`` (its
    ``get_environment_proxies``, which is private): URL pattern -> proxy URL, or ``None`` for the hosts
    ``NO_PROXY`` exempts (``NO_PROXY=*``: no proxy at all).

    ``HTTP_PROXY``, ``HTTPS_PROXY`` and ``ALL_PROXY`` (either case, lower case first, as
    ``urllib.request.getproxies`` reads them, with the system's settings on macOS and Windows) give the
    proxies of ``http://``, ``https://`` and all URLs; each ``NO_PROXY`` entry exempts a URL pattern
    (``scheme://host``), an address, ``localhost``, or a domain and its subdomains (``example.com``;
    ``.example.com``: its subdomains only).
    """
    found = urllib.request.getproxies()
    patterns: dict[str, str | None] = {}
    for scheme in ("http", "https", "all"):
        if found.get(scheme):
            url = found[scheme]
            patterns[f"{scheme}://"] = url if "://" in url else f"http://{url}"
    for host in (entry.strip() for entry in found.get("no", "").split(",")):
        if host == "*":
            return {}
        if not host:
            continue
        if "://" in host:
            patterns[host] = None
        elif _is_ip(host, 4) or host.lower() == "localhost":
            patterns[f"all://{host}"] = None
        elif _is_ip(host, 6):
            patterns[f"all://[{host}]"] = None
        else:
            patterns[f"all://*{host}"] = None
    return patterns


def _is_ip(host: str, version: int) -> bool:
    try:
        return ipaddress.ip_address(host.split("/")[0]).version == version
    except ValueError:
        return False


def proxy_mounts(ssl_context: ssl.SSLContext, limits: httpx.Limits) -> dict[str, httpx.AsyncBaseTransport | None]:
    """The ``mounts`` that route a client's requests through the environment's proxies
    (``environment_proxies``), each a ``BoundedTransport`` through its proxy; ``None`` for an exempt
    pattern (the client's own transport). Read when called: a client made later sees a later environment.
    """
    return {
        pattern: None if url is None else BoundedTransport(proxy=url, verify=ssl_context, limits=limits)
        for pattern, url in environment_proxies().items()
    }
