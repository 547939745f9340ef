"""An HTTP forward proxy on 127.0.0.1 for the tests: it relays absolute-URI requests (plain HTTP, no
``CONNECT``) to their server and records each URL it relayed."""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

__all__ = ["ForwardProxy"]

_HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "transfer-encoding", "te"}


class ForwardProxy:
    """An HTTP forward proxy on 127.0.0.1: relays absolute-URI requests and records their URLs."""

    def __init__(self) -> None:
        self.relayed: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                """No access log."""

            def do_GET(self) -> None:  # noqa: N802 - stdlib naming
                self._relay()

            def do_POST(self) -> None:  # noqa: N802 - stdlib naming
                self._relay()

            def _relay(self) -> None:
                proxy.relayed.append(self.path)
                target = urlsplit(self.path)
                if not target.scheme:  # not a proxy request
                    self.send_error(400, "a proxy takes absolute URIs")
                    return
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_BY_HOP | {"host"}}
                upstream = http.client.HTTPConnection(target.hostname or "", target.port or 80, timeout=30)
                try:
                    path = target.path + (f"?{target.query}" if target.query else "")
                    upstream.request(self.command, path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    data = answer.read()
                finally:
                    upstream.close()
                self.send_response(answer.status)
                for name, value in answer.getheaders():
                    if name.lower() not in _HOP_BY_HOP | {"content-length"}:
                        self.send_header(name, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
