"""That what answers on a local model's port is the server LateralGym started for it, and nothing else.

The port: this process binds it (``listen``) and the server inherits the listening socket, so it is
never free between the choice and the server's start (``python -m llama_cpp.server --port N`` binds it
seconds later, once the model is loaded: any process could take it first, answer the readiness check
and be sent every prompt). This process holds the socket until the server is stopped, and once the
server has exited closes each connection to it at once (``turn_away``): no process takes the port after
a crash, and a request fails at once rather than waiting for its timeout.

The key: each server gets one drawn for it alone (``new_key``: ``secrets.token_urlsafe``), handed to
it in its environment (``KEY_ENV``: never on its command line, which any user of the machine can list)
and nowhere else: no file, log, manifest or spec holds it. The server requires it on every request.
``check_server``, the readiness check, asks for the model list with a wrong key and then with the key,
and requires:

* a 401 for the wrong key (a server that answers without checking the key, as any OpenAI-compatible
  server does by default, could be anyone's; it is refused before it is sent the key);
* the list given for the key (a server that refuses the key was not given it);
* the model it started among those listed (a server of another model is not it).

Only a process that knows the key passes, and only the server was given it. What this does not cover:
a process of the same user can read the server's environment or memory, and with it the key, or
trace either process; and a server command of one's own (``ServerCommand``) is trusted to be the server.
"""

from __future__ import annotations

import json
import secrets
import select
import socket
import subprocess
import threading
import urllib.error
import urllib.request
from typing import NoReturn
from urllib.parse import urlsplit

from lateralgym.agents._gguf import LocalModelError

__all__ = ["KEY_ENV", "LocalServerIdentityError", "check_server", "listen", "new_key", "turn_away"]

KEY_ENV = "LATERALGYM_SERVER_KEY"
"""The environment variable a local server reads its key from (``ServerCommand``)."""

_LIST_BYTES = 1 << 20
"""The most of a model list read (a server sending more is not answering as ours would)."""

_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy


class LocalServerIdentityError(LocalModelError):
    """What answers on a local model server's port did not prove it is the server LateralGym started
    (another process on the port, or a server command that does not require the key it is given)."""


def new_key() -> str:
    """A fresh key for one server (256 random bits)."""
    return secrets.token_urlsafe(32)


def check_server(base_url: str, key: str, model: str, *, timeout: float = 2.0) -> bool:
    """Whether the server LateralGym started at ``base_url`` with ``key`` is ready (one check).

    A wrong key is sent first: a server that answers it is refused before it is sent the real key.

    Args:
        base_url: The server's OpenAI-compatible base URL (``http://127.0.0.1:PORT/v1``).
        key: The key the server was given.
        model: The model name (alias) it was started to serve.
        timeout: Seconds each request may take (a server still loading the model answers nothing).

    Returns:
        False while nothing answers (not listening yet, loading, or an error status); True once the
        server refused a wrong key and answered the key with a list holding ``model``.

    Raises:
        LocalServerIdentityError: what answered is not that server: it answered a wrong key, refused
            the key, sent something that is no model list, or listed other models.
    """
    wrong, _ = _models(base_url, new_key(), timeout)
    if wrong is None or wrong not in (200, 401, 403):
        return False  # not answering yet, or not ready (an error status): asked again
    if wrong == 200:
        _refuse(base_url, "answered a request with a wrong key (HTTP 200, not 401): it does not check the key")
    status, body = _models(base_url, key, timeout)
    if status in (401, 403):
        _refuse(base_url, f"refused the key given to the server it started (HTTP {status})")
    if status != 200:
        return False  # gone, or an error status: the caller sees whether the server still runs
    listed = _model_ids(body)
    if listed is None:
        _refuse(base_url, "answered the model list with something that is not one")
    if model not in listed:
        shown = ", ".join(sorted(listed)[:5]) or "none"
        _refuse(base_url, f"serves {shown}, not {model}")
    return True


def _models(base_url: str, key: str, timeout: float) -> tuple[int | None, bytes]:
    """``GET {base_url}/models`` with ``key``: the status and the body's first ``_LIST_BYTES`` (None: no answer)."""
    request = urllib.request.Request(f"{base_url}/models", headers={"Authorization": f"Bearer {key}"})
    try:
        with _DIRECT.open(request, timeout=timeout) as response:
            return int(response.status), response.read(_LIST_BYTES + 1)
    except urllib.error.HTTPError as exc:
        exc.close()
        return int(exc.code), b""
    except (OSError, ValueError):  # refused, reset, timed out, or a reply that is not HTTP
        return None, b""


def _model_ids(body: bytes) -> set[str] | None:
    """The ids of an OpenAI model list (``{"data": [{"id": ...}, ...]}``), or None when it is not one."""
    if len(body) > _LIST_BYTES:
        return None
    try:
        data = json.loads(body).get("data")
    except (ValueError, AttributeError):
        return None
    if not isinstance(data, list):
        return None
    return {str(entry.get("id")) for entry in data if isinstance(entry, dict)}


def _refuse(base_url: str, reason: str) -> NoReturn:
    where = urlsplit(base_url).netloc
    raise LocalServerIdentityError(
        f"what answers on {where} is not the local model server LateralGym started: it {reason}; "
        "another process may have the port, or the server command ignores the key it is given "
        f"({KEY_ENV}): nothing was sent to it"
    )


def listen(port: int | None) -> socket.socket:
    """A socket listening on 127.0.0.1 (on ``port``, else a free port), for a server to inherit.

    Raises:
        LocalModelError: ``port`` is taken.
    """
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        listener.bind(("127.0.0.1", port or 0))
        listener.listen(128)
    except OSError:
        listener.close()
        raise LocalModelError(
            f"port {port} on 127.0.0.1 is taken (another server?): give another port=, "
            "or leave port out to use a free one"
        ) from None
    return listener


def turn_away(listener: socket.socket, process: subprocess.Popen[bytes], stopping: threading.Event) -> None:
    """Once ``process`` (the server) has exited, until ``stopping``: close every connection to its port at
    once. The port stays this process's (no other can take it and be sent requests); a request fails
    as on a closed server rather than waiting in the socket's queue for its timeout."""
    while process.poll() is None:
        if stopping.wait(0.2):
            return
    while not stopping.is_set():
        try:
            ready, _, _ = select.select([listener], [], [], 0.2)
            if ready:
                connection, _ = listener.accept()
                connection.close()
        except (BlockingIOError, InterruptedError):  # the server left the socket non-blocking
            continue
        except (OSError, ValueError):  # closed by ``stop``
            return
