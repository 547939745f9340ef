"""``serve``: a LateralGym config served to RL trainers as an OpenEnv environment (``lateralgym serve``).

openenv-core's own server (``integrations/_openenv.py``) runs under uvicorn on a socket bound here
first, so a port in use is one clear line before anything starts and the port a client is given
is the one listening (``port=0`` takes any free one and says which). Every WebSocket client gets
its own episode session; with ``out`` all of them log to one run directory, closed (its summary
written) when the server stops.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lateralgym.envs import EpisodeConfig, LateralGymError
from lateralgym.episodes import EpisodeSessions, RunOptions

__all__ = ["SERVE_INSTALL_HINT", "UVICORN_SETTINGS", "ServeError", "ServeSettings", "bind", "serve", "served"]

SERVE_INSTALL_HINT = "pip install 'lateralgym[serve]'"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
UVICORN_SETTINGS: dict[str, Any] = {
    "log_level": "warning",
    "ws": "websockets-sansio",
    # moves and observations are short texts: compressing each frame cost more CPU than it saved
    "ws_per_message_deflate": False,
    "lifespan": "off",
    "access_log": False,
}
"""How uvicorn runs the server (``benchmarks/bench_serve.py`` serves its floor with the same)."""


class ServeError(LateralGymError, RuntimeError):
    """The server cannot start (a port in use, openenv-core missing)."""


@dataclass(frozen=True)
class ServeSettings:
    """Where and how a config is served."""

    host: str = "127.0.0.1"
    """The address to listen on; anything but loopback is reachable from other machines."""
    port: int = 8000
    """The port (0: any free one)."""
    max_sessions: int = 64
    """WebSocket sessions at once; a client beyond them gets openenv-core's CAPACITY_REACHED error."""
    out: Path | None = None
    """Where the run directory of the served episodes goes (None: no log)."""


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``.

    Raises:
        ServeError: the port is in use or the address cannot be had.
    """
    if not 0 <= port <= 65535:
        raise ServeError(f"--port must be from 0 to 65535 (0: any free port), got {port}")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ServeError(
                f"port {port} on {host} is in use: pick another with --port (0 takes any free one)"
            ) from None
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror or exc} (check --host and --port)") from None
    except (OverflowError, UnicodeError) as exc:  # a host name that is no address
        sock.close()
        raise ServeError(f"cannot listen on {host}:{port}: {exc}") from None
    return sock


def serve(
    config: EpisodeConfig,
    options: RunOptions | None = None,
    settings: ServeSettings | None = None,
    *,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve ``config`` until stopped (Ctrl-C, SIGTERM), then close its run directory.

    Args:
        config: the config to serve.
        options: the judge's settings (``judge``, ``judge_base_url``, ``judge_samples``, the cache).
        settings: address, session limit and run directory.
        ready: called with the server's URL once it listens (default: print where it is).

    Raises:
        ServeError: openenv-core is not installed, or the address cannot be listened on.
        ConfigError: a bad config, judge or session limit.
    """
    settings = settings or ServeSettings()
    from lateralgym.agents import serving

    with serving(), _Served(config, options, settings) as server:  # a local/ judge's model stops with it
        (ready or _announce(config, server.sessions, settings))(server.url)
        server.run()


@contextlib.contextmanager
def served(
    config: EpisodeConfig, options: RunOptions | None = None, settings: ServeSettings | None = None
) -> Iterator[str]:
    """``config`` served on a background thread for the ``with`` block, which gets the server's URL
    (``settings.port`` 0 by default here: any free port); the run directory is closed on leaving it.

    Example:
        >>> with served(EpisodeConfig.named(name)) as url:  # doctest: +SKIP
        ...     with GenericEnvClient(base_url=url).sync() as env:
        ...         result = env.reset(seed=0)
    """
    settings = settings or ServeSettings(port=0)
    with _Served(config, options, settings) as server:
        thread = threading.Thread(target=server.run, name="lateralgym-serve", daemon=True)
        thread.start()
        try:
            server.wait_started(thread)
            yield server.url
        finally:
            server.stop()
            thread.join(30)


class _Served:
    """The sessions, the app, the bound socket and uvicorn's server of one served config."""

    def __init__(self, config: EpisodeConfig, options: RunOptions | None, settings: ServeSettings) -> None:
        try:
            import uvicorn

            from lateralgym.integrations._openenv import openenv_app
        except ImportError as exc:
            raise ServeError(f"serving needs openenv-core ({exc.name} is missing): {SERVE_INSTALL_HINT}") from None
        from lateralgym.agents import DEFAULT_CONCURRENCY, set_default_concurrency

        # a model judge's requests in flight follow the sessions, as the runner's follow --concurrency
        llm_cap = (options.llm_concurrency if options else None) or max(DEFAULT_CONCURRENCY, settings.max_sessions)
        set_default_concurrency(llm_cap)
        self.sessions = EpisodeSessions(config, options=options, out=settings.out)
        try:
            app = openenv_app(self.sessions, max_sessions=settings.max_sessions)
            self.sock = bind(settings.host, settings.port)
        except BaseException:
            self.sessions.close()
            raise
        if settings.host not in LOOPBACK:
            print(
                f"lateralgym: warning: listening on {settings.host}: other machines can reach this server, which "
                "has no authentication; put it behind your own network controls",
                file=sys.stderr,
            )

        host = f"[{settings.host}]" if ":" in settings.host else settings.host
        self.url = f"http://{host}:{self.sock.getsockname()[1]}"
        self.server = _server_class()(uvicorn.Config(app, **UVICORN_SETTINGS))
        logging.getLogger("uvicorn.error").addFilter(_quiet_disconnects)

    def __enter__(self) -> _Served:
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.sock.close()
        finally:
            self.sessions.close()

    def run(self) -> None:
        self.server.run(sockets=[self.sock])

    def wait_started(self, thread: threading.Thread) -> None:
        while not self.server.started:
            if not thread.is_alive():
                raise ServeError("the server stopped before it started; see the lines above")
            time.sleep(0.01)

    def stop(self) -> None:
        self.server.should_exit = True


_DISCONNECTS = ("WebSocketDisconnect", "WebSocketDisconnected", "ClientDisconnected", "ConnectionClosed")


def _quiet_disconnects(record: logging.LogRecord) -> bool:
    """Drop uvicorn's traceback for a WebSocket client that closed first: openenv-core closes the socket
    again after every session, which uvicorn logs as an error though nothing went wrong."""
    exc = record.exc_info[1] if record.exc_info else None
    while exc is not None:
        if type(exc).__name__.startswith(_DISCONNECTS):
            return False
        exc = exc.__cause__ or exc.__context__
    return True


def _server_class() -> type[Any]:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn's server, stopped by SIGINT / SIGTERM without raising the signal again once stopped
        (uvicorn does, which would end the process before the run directory is closed)."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            if threading.current_thread() is not threading.main_thread():
                yield
                return
            before = {sig: signal.signal(sig, self.handle_exit) for sig in (signal.SIGINT, signal.SIGTERM)}
            try:
                yield
            finally:
                for sig, handler in before.items():
                    signal.signal(sig, handler)

    return Server


def _announce(config: EpisodeConfig, sessions: EpisodeSessions, settings: ServeSettings) -> Callable[[str], None]:
    def say(url: str) -> None:
        logged = f"; logging to {sessions.run_dir}" if sessions.run_dir is not None else "; not logged (--out DIR logs)"
        print(
            f"serving {config.name} ({config.benchmark}, judge {getattr(sessions.judge, 'name', config.judge)}) at "
            f"{url}: OpenEnv WebSocket {url.replace('http', 'ws', 1)}/ws, {url}/health, {url}/schema; at most "
            f"{settings.max_sessions} sessions{logged}. Ctrl-C stops.",
            flush=True,
        )

    return say
