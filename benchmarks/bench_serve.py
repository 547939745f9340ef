"""``lateralgym serve`` (an OpenEnv server) against openenv-core's own echo environment, steps per second.

Goal (issue 24): through the server, with 64 concurrent WebSocket sessions, every offline config makes
at least 0.8x the steps per second of openenv-core's minimal echo environment served the same way
in the same run (the framework's floor: what any OpenEnv env costs over the wire). Printed per
config and number of sessions (1, 16, 64): steps/s, the ratio to the floor, p50 / p99 step latency.

The two servers, both in this process, each on a background thread under uvicorn on 127.0.0.1 with
the same settings (``integrations.serve.UVICORN_SETTINGS``: uvicorn's sans-I/O WebSocket protocol without
per-message compression, log level warning, no lifespan, no access log):

* **serve**: ``lateralgym.integrations.serve.served`` (what ``lateralgym serve`` runs), no run
  directory (``--out`` off), the config's offline judge.
* **echo**: openenv-core's ``openenv init`` template (``openenv/cli/templates/openenv_env``: its
  ``models.py`` and ``server/__ENV_NAME___environment.py``), read from the installed package at run
  time, its placeholders filled in (class name ``Echo``), written as a package into a temporary
  folder and imported; served with ``create_fastapi_app(EchoEnvironment, EchoAction,
  EchoObservation, max_concurrent_envs=N)``. Its ``step`` echoes the message back: nothing but the
  framework (its sync ``step`` runs on the session's executor thread, as openenv-core runs sync
  envs; ours runs on the event loop).

Both servers take up to twice the largest number of sessions, so sessions of the round before that
are still closing never refuse the next round's.

Moves: episodes are recorded in-process first (``bench_env_step.recorded_episodes``: the benchmark's
``random_action`` each step, sent as ``action_to_text``, refused moves dropped; seeds 0..63), then
replayed through openenv-core's async ``GenericEnvClient``: ``reset(seed=...)``, from which the
server draws the recorded item (checked in-process before the run, with ``EpisodeSessions.open``),
then ``step({"text": MOVE})`` move by move until the server says ``done``. ``--item-id`` sends
``reset(seed=..., item_id=...)`` instead. The echo side replays the same episodes with ``step({"message": MOVE})`` (the
same text; its ``reset`` takes no seed or item and openenv-core drops them). **A reset counts as a
step** on both sides (where one episode ends and the next starts: a BrainTeaser episode is two
steps, its reset and its commit). The share of replayed moves the server accepted
(``info["valid_action"]``) is printed.

The clients run in a subprocess of their own (one asyncio loop, N ``GenericEnvClient``s, session
``i`` playing episodes ``i, i+N, ...``), so on a 2-core machine their CPU is not taken from the
server's. Each round connects its N sessions first (not timed), then plays for ``--seconds`` (every
session stops at the deadline, mid-episode if need be; the round's time runs to the last reply);
step latency is each call's round trip as the client sees it. The server's CPU per step (this
process's, ``resource.getrusage``: only the servers run here meanwhile) over the timed window is
printed, and the demand on the server's event-loop thread and on the client's: the share of the
window it was running or waiting for a CPU (``/proc/.../schedstat``), so other jobs taking the CPU
do not hide it. Near 1.0 that thread is the bottleneck: for the server's, its steps/s is then its
CPU per step (the ratio is the servers' own); for the client's, the ratio would understate the gap
between the servers. The JSON also has each server's CPU busy share, the client's CPU per step and
``cpu_vs_echo``: the echo server's CPU per step over ours, per round.

The two sides of each config and level run in interleaved rounds (the order alternates each round),
and each round's ratio serve / echo is taken within the round, so a load that comes and goes falls
on both; printed are min/median/max over rounds, and medians of the rest. A short untimed warm-up
round on each server comes first.

SPLAT with an LLM judge (``splat+llm``): ``splat`` served with ``RunOptions(judge="openai/gpt-4o-mini
?base_url=...", use_cache=False)`` (a priced name, so every call is priced as a real run's are; the
cache off, so each judged move calls the model) against the tests' scripted OpenAI-compatible
server (``tests/llm_server.py``, answering as ``benchmarks/_scripted.py``'s cooperative model: "yes"
to questions, "not yet" to wrong explanations) after a fixed delay (``--judge-latency-ms``, 20), in
a process of its own. Expected far below the floor (each judged move waits for the model); no goal,
its ratio is printed all the same, with the judge's requests in flight at the model server (mean,
max) and model calls per step. (``lateralgym serve`` lets a model judge have as many requests in flight
as it has sessions, at least 8.)

The last line is JSON with every figure. Run: ``python benchmarks/bench_serve.py [--quick]``
(default ~4 min: 3 rounds of 3 s per side, config and level; ``--quick`` ~40 s).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import logging
import os
import resource
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GOAL = 0.8
"""At 64 sessions, every offline config's steps/s at least this share of the echo floor's."""
GOAL_SESSIONS = 64
LEVELS = (1, 16, 64)
OFFLINE = ("brainteaser", "creativity-interactive", "splat")
LLM_CONFIG = "splat+llm"
"""SPLAT served with an LLM judge against the scripted loopback server."""
MODEL = "openai/gpt-4o-mini"
"""The judge's model name: in the shipped price list, so every call is priced as a real run's are."""
KEY = "sk-bench-not-a-key"
HOST = "127.0.0.1"
ECHO_PACKAGE = "lateralgym_bench_echo"
ECHO_THREAD = "echo-serve"
SERVE_THREAD = "lateralgym-serve"
"""The thread ``integrations.serve.served`` runs uvicorn's event loop on."""
TEMPLATE_FILES = {"models.py": "models.py", "server/__ENV_NAME___environment.py": "server/echo_environment.py"}
"""The ``openenv init`` template's files the echo env is made of, and where they go in its package."""
PLACEHOLDERS = {"__ENV_CLASS_NAME__": "Echo", "__ENV_TITLE_NAME__": "Echo", "__ENV_NAME__": "echo"}
PLACEHOLDERS |= {"__ENV_CAMEL_NAME__": "echo"}

Episode = tuple[int, str, list[str]]
"""A seed, the item it drew (``item_id``) and the moves played from it (as text)."""


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _say(message: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


# -- the clients, in their own subprocess ------------------------------------------------------------


async def _round(job: dict[str, Any]) -> None:
    """One round: connect ``sessions`` clients, say so, wait for ``go``, play ``seconds``, report."""
    from openenv.core import GenericEnvClient

    url, sessions, seconds, echo = job["url"], job["sessions"], job["seconds"], job["side"] == "echo"
    with_item = job["item_id"]
    episodes: list[Episode] = [(int(seed), str(item), list(moves)) for seed, item, moves in job["episodes"]]
    clients = [GenericEnvClient(base_url=url, message_timeout_s=300.0) for _ in range(sessions)]
    latencies: list[float] = []
    tally = {"sent": 0, "accepted": 0, "episodes": 0}

    async def play(index: int, client: Any, deadline: float) -> None:
        clock = time.perf_counter
        played = index
        while clock() < deadline:
            seed, item_id, moves = episodes[played % len(episodes)]
            played += sessions
            start = clock()
            await client.reset(seed=seed, item_id=item_id) if with_item else await client.reset(seed=seed)
            latencies.append(clock() - start)
            tally["episodes"] += 1
            for move in moves:
                if clock() >= deadline:
                    return
                start = clock()
                result = await client.step({"message": move} if echo else {"text": move})
                latencies.append(clock() - start)
                if not echo:
                    tally["sent"] += 1
                    tally["accepted"] += bool(result.observation.get("info", {}).get("valid_action"))
                    if result.done:
                        break

    try:
        await asyncio.gather(*(client.connect() for client in clients))
        _say({"phase": "connected"})
        if (await asyncio.to_thread(sys.stdin.readline)).strip() != "go":
            return
        cpu, start = _cpu_s(), time.perf_counter()
        await asyncio.gather(*(play(i, client, start + seconds) for i, client in enumerate(clients)))
        elapsed, cpu = time.perf_counter() - start, _cpu_s() - cpu
        latencies.sort()
        _say(
            {
                "steps": len(latencies),
                "seconds": elapsed,
                "p50_ms": 1000 * latencies[len(latencies) // 2],
                "p99_ms": 1000 * latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))],
                "client_cpu_s": cpu,
                **tally,
            }
        )
    finally:
        await asyncio.gather(*(client.disconnect() for client in clients), return_exceptions=True)


def _client_worker() -> None:
    """Rounds read from stdin (one JSON line each) until it closes; every round ends with ``closed``."""
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            asyncio.run(_round(json.loads(line)))
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which stops the benchmark
            _say({"error": f"{type(exc).__name__}: {exc}"})
        _say({"phase": "closed"})


# -- the scripted model server, in its own subprocess ------------------------------------------------


def _model_server(latency_s: float) -> None:
    """The tests' scripted server answering as the cooperative model; prints its URL, then answers
    ``stats`` (the chat requests since the last ``stats``: calls, mean and max in flight) until stdin closes."""
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _scripted import cooperative_model
    from llm_server import ScriptedLLMServer

    from lateralgym.envs import load_sample_items

    server = ScriptedLLMServer(responder=cooperative_model(load_sample_items("splat")), latency_s=latency_s)
    server.start()
    _say({"url": server.base_url})
    try:
        for line in sys.stdin:
            if line.strip() == "stats":
                with server._lock:
                    spans = [(s, e) for _, s, e in server._state.spans]
                    server._state.spans.clear()
                _say(_in_flight(spans))
    finally:
        server.stop()


def _in_flight(spans: Sequence[tuple[float, float]]) -> dict[str, float]:
    """The judge's requests as the model server saw them (``bench_llm_throughput``'s view) and their count."""
    from bench_llm_throughput import _server_view

    return {**_server_view(list(spans)), "calls": len(spans)}


# -- the parent: servers, rounds, figures ------------------------------------------------------------


class _Child:
    """A subprocess of this script speaking JSON lines on its stdin / stdout, in a session of its own
    (a Ctrl-C reaches this process only, which stops it); it exits when its stdin closes."""

    def __init__(self, *flags: str) -> None:
        self.flags = flags
        env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost", "OPENAI_API_KEY": KEY}
        self.process = subprocess.Popen(
            [sys.executable, __file__, *flags],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            start_new_session=True,
        )

    def send(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"bench_serve: subprocess {' '.join(self.flags)} ended (exit {self.process.poll()})")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def close(self, wait_s: float = 15.0) -> None:
        """Close its stdin and let it finish; after ``wait_s``, stop it (this child, by its pid)."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                assert self.process.stdin is not None
                self.process.stdin.close()
            try:
                self.process.wait(wait_s)
            except subprocess.TimeoutExpired:
                self.process.terminate()
                try:
                    self.process.wait(5)
                except subprocess.TimeoutExpired:
                    self.process.kill()
                    self.process.wait()
        for stream in (self.process.stdin, self.process.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()


def _echo_types(folder: Path) -> tuple[type[Any], type[Any], type[Any]]:
    """openenv-core's echo env: its ``openenv init`` template filled in, written into ``folder`` as a package."""
    from importlib import resources

    template = resources.files("openenv.cli").joinpath("templates", "openenv_env")
    package = folder / ECHO_PACKAGE
    (package / "server").mkdir(parents=True)
    for source, target in TEMPLATE_FILES.items():
        text = template.joinpath(*source.split("/")).read_text(encoding="utf-8")
        for placeholder, value in PLACEHOLDERS.items():
            text = text.replace(placeholder, value)
        if "__ENV_" in text:
            raise SystemExit(f"bench_serve: openenv's template {source} has a placeholder this script does not fill")
        (package / target).write_text(text, encoding="utf-8")
    for init in (package / "__init__.py", package / "server" / "__init__.py"):
        init.write_text("", encoding="utf-8")
    sys.path.insert(0, str(folder))
    try:
        models = importlib.import_module(f"{ECHO_PACKAGE}.models")
        environment = importlib.import_module(f"{ECHO_PACKAGE}.server.echo_environment")
    finally:
        sys.path.remove(str(folder))
    return environment.EchoEnvironment, models.EchoAction, models.EchoObservation


@contextlib.contextmanager
def echo_served(max_sessions: int) -> Iterator[str]:
    """The echo env served by openenv-core's ``create_fastapi_app`` under uvicorn on a background thread,
    as ``integrations/serve.py`` serves ours; yields its URL."""
    import uvicorn
    from openenv.core.env_server.http_server import create_fastapi_app

    from lateralgym.integrations.serve import UVICORN_SETTINGS, bind

    with tempfile.TemporaryDirectory() as tmp:
        environment, action, observation = _echo_types(Path(tmp))
    app = create_fastapi_app(environment, action, observation, max_concurrent_envs=max_sessions)
    sock = bind(HOST, 0)
    server = uvicorn.Server(uvicorn.Config(app, **UVICORN_SETTINGS))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, name=ECHO_THREAD, daemon=True)
    thread.start()
    try:
        while not server.started:
            if not thread.is_alive():
                raise SystemExit("bench_serve: the echo server stopped before it started")
            time.sleep(0.01)
        yield f"http://{HOST}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def _demand_s(pid: int, tid: int) -> float:
    """Seconds thread ``tid`` of process ``pid`` has run or waited for a CPU (``/proc/.../schedstat``; 0 without it)."""
    try:
        run, wait, _ = Path(f"/proc/{pid}/task/{tid}/schedstat").read_text().split()
    except (OSError, ValueError):
        return 0.0
    return (int(run) + int(wait)) / 1e9


def _thread_id(name: str) -> int:
    """The OS thread id of this process's thread called ``name`` (-1: none; its demand then reads 0)."""
    return next((t.native_id for t in threading.enumerate() if t.name == name and t.native_id is not None), -1)


def _measure(
    worker: _Child,
    url: str,
    side: str,
    sessions: int,
    seconds: float,
    episodes: list[Episode],
    item_id: bool,
    loop_tid: int,
) -> dict[str, Any]:
    """One round in the client subprocess; its figures, and over the timed window (``go`` to the result)
    the server's CPU and the demand on its event-loop thread and the client's (run + wait for a CPU, / wall)."""
    job = {"url": url, "side": side, "sessions": sessions, "seconds": seconds, "episodes": episodes}
    job["item_id"] = item_id
    worker.send(json.dumps(job))
    result: dict[str, Any] = {}
    error = None
    pid, client = os.getpid(), worker.process.pid
    cpu = wall = loop = client_demand = 0.0
    while True:
        message = worker.receive()
        if message.get("phase") == "connected":
            cpu, wall = _cpu_s(), time.perf_counter()
            loop, client_demand = _demand_s(pid, loop_tid), _demand_s(client, client)
            worker.send("go")
        elif message.get("phase") == "closed":
            break
        elif "error" in message:
            error = message["error"]
        else:
            cpu, wall = _cpu_s() - cpu, time.perf_counter() - wall
            result = {
                **message,
                "server_cpu_s": cpu,
                "server_busy": cpu / wall,
                "loop_demand": (_demand_s(pid, loop_tid) - loop) / wall,
                "client_demand": (_demand_s(client, client) - client_demand) / wall,
            }
    if error is not None or not result:
        raise SystemExit(f"bench_serve: {side} at {sessions} sessions failed: {error}")
    return result


def _spread(values: Sequence[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def _level(
    worker: _Child,
    urls: dict[str, str],
    episodes: list[Episode],
    sessions: int,
    rounds: int,
    seconds: float,
    model: _Child | None,
    item_id: bool,
    loops: dict[str, int],
) -> dict[str, Any]:
    """Every round of one config at one number of sessions; each side's figures, the ratios per round."""
    runs: dict[str, list[dict[str, Any]]] = {"serve": [], "echo": []}
    judge: list[dict[str, Any]] = []
    for round_ in range(rounds):
        for side in ("serve", "echo") if round_ % 2 == 0 else ("echo", "serve"):
            if model is not None and side == "serve":
                model.send("stats")  # clears the model server's record
                model.receive()
            got = _measure(worker, urls[side], side, sessions, seconds, episodes, item_id, loops[side])
            if model is not None and side == "serve":
                model.send("stats")
                judge.append(model.receive())
            runs[side].append(got)

    def per_side(figure: Any) -> dict[str, float]:
        return {side: statistics.median(figure(r) for r in got) for side, got in runs.items()}

    serve = runs["serve"]
    pairs = list(zip(serve, runs["echo"], strict=True))
    figures: dict[str, Any] = {
        "sessions": sessions,
        "rounds": rounds,
        "vs_echo": _spread([a["steps"] / a["seconds"] / (b["steps"] / b["seconds"]) for a, b in pairs]),
        "cpu_vs_echo": _spread([b["server_cpu_s"] / b["steps"] / (a["server_cpu_s"] / a["steps"]) for a, b in pairs]),
        "steps_per_s": per_side(lambda r: r["steps"] / r["seconds"]),
        "p50_ms": per_side(lambda r: r["p50_ms"]),
        "p99_ms": per_side(lambda r: r["p99_ms"]),
        "server_cpu_us_per_step": per_side(lambda r: 1e6 * r["server_cpu_s"] / r["steps"]),
        "server_busy": per_side(lambda r: r["server_busy"]),
        "loop_demand": per_side(lambda r: r["loop_demand"]),
        "client_demand": per_side(lambda r: r["client_demand"]),
        "client_cpu_us_per_step": per_side(lambda r: 1e6 * r["client_cpu_s"] / r["steps"]),
        "steps": {side: int(sum(r["steps"] for r in got)) for side, got in runs.items()},
        "valid_share": sum(r["accepted"] for r in serve) / max(sum(r["sent"] for r in serve), 1),
    }
    if judge:
        figures["judge"] = {
            "calls_per_step": sum(j["calls"] for j in judge) / max(sum(r["steps"] for r in serve), 1),
            "mean_in_flight": statistics.median(j["mean_in_flight"] for j in judge),
            "max_in_flight": max(int(j["max_in_flight"]) for j in judge),
        }
    return figures


def _recorded(config_name: str, item_id: bool) -> list[Episode]:
    """``bench_env_step``'s recorded episodes of the config; unless ``item_id``, checked to be on the item
    the server draws from the episode's seed alone."""
    if str(ROOT / "benchmarks") not in sys.path:
        sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_env_step import recorded_episodes

    from lateralgym.envs import EpisodeConfig, LateralEnv
    from lateralgym.episodes import EpisodeSessions

    config = EpisodeConfig.named(config_name)
    recorded, _ = recorded_episodes(LateralEnv(config))
    episodes = [(int(seed), str(item), [str(move) for move in moves]) for seed, item, moves in recorded]
    if not item_id:
        sessions = EpisodeSessions(config)
        try:
            drawn = [sessions.open(seed=seed).spec.item_id for seed, _, _ in episodes]
        finally:
            sessions.close()
        if drawn != [item for _, item, _ in episodes]:
            raise SystemExit(f"bench_serve: {config_name}: the server draws other items from the seeds: use --item-id")
    return episodes


def _row(config: str, f: dict[str, Any], goal: str) -> str:
    rate, p50, p99 = f["steps_per_s"], f["p50_ms"], f["p99_ms"]
    cpu, busy, client = f["server_cpu_us_per_step"], f["loop_demand"], f["client_demand"]
    ratio = f["vs_echo"]
    judge = f.get("judge")
    extra = (
        f"  judge {judge['calls_per_step']:.2f} calls/step, in flight {judge['mean_in_flight']:.1f} "
        f"(max {judge['max_in_flight']})"
        if judge
        else ""
    )
    return (
        f"{config:22} {f['sessions']:4d} {rate['serve']:8.0f}/{rate['echo']:<6.0f} "
        f"{ratio['min']:5.2f}/{ratio['median']:.2f}/{ratio['max']:.2f}x "
        f"{p50['serve']:7.2f}/{p50['echo']:<6.2f} {p99['serve']:7.2f}/{p99['echo']:<6.2f} "
        f"{cpu['serve']:6.0f}/{cpu['echo']:<5.0f} {busy['serve']:5.2f}/{busy['echo']:<4.2f} "
        f"{client['serve']:5.2f}/{client['echo']:<4.2f} {100 * f['valid_share']:5.0f}%  {goal}{extra}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per round and side (default 3)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per config and level (default 3)")
    parser.add_argument("--quick", action="store_true", help="2 rounds of 0.5 s (~40 s in all; ratios noisier)")
    parser.add_argument("--levels", default=",".join(map(str, LEVELS)), help="sessions at once (default 1,16,64)")
    parser.add_argument(
        "--configs",
        default=",".join((*OFFLINE, LLM_CONFIG)),
        help=f"configs (default all: {', '.join(OFFLINE)}, {LLM_CONFIG})",
    )
    parser.add_argument("--judge-latency-ms", type=float, default=20.0, help="the model server's delay (default 20)")
    parser.add_argument(
        "--item-id",
        action="store_true",
        help="reset(seed=, item_id=) rather than reset(seed=) alone (which the server draws the same item from)",
    )
    parser.add_argument("--client", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--model-server", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        _client_worker()
        return
    if args.model_server:
        _model_server(args.judge_latency_ms / 1000)
        return
    if args.quick:
        args.seconds, args.rounds = 0.5, 2
    levels = [int(level) for level in args.levels.split(",")]
    configs = args.configs.split(",")
    unknown = sorted(set(configs) - {*OFFLINE, LLM_CONFIG})
    if unknown:
        parser.error(f"unknown configs {', '.join(unknown)}: pick from {', '.join((*OFFLINE, LLM_CONFIG))}")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # the servers and subprocesses stop as on Ctrl-C

    from lateralgym.agents import price_per_million
    from lateralgym.envs import EpisodeConfig
    from lateralgym.episodes import RunOptions
    from lateralgym.integrations.serve import ServeSettings, served

    if LLM_CONFIG in configs and price_per_million(MODEL.split("/", 1)[1]) is None:
        raise SystemExit(f"{MODEL} is not in the shipped price list: pick a model name it prices")
    os.environ["OPENAI_API_KEY"] = KEY  # the judge's key: a stand-in, only ever sent to the loopback server
    os.environ["NO_PROXY"] = "127.0.0.1,localhost"
    capacity = 2 * max(levels)
    recorded = {name: _recorded(name, args.item_id) for name in {c.replace("+llm", "") for c in configs}}
    print(
        f"goal: at {GOAL_SESSIONS} sessions, every offline config's steps/s >= {GOAL:g}x openenv-core's echo env's "
        f"(served the same way, same run); a reset counts as a step; {os.cpu_count()} CPUs; "
        f"load {Path('/proc/loadavg').read_text().split()[:3]}; {args.rounds} interleaved rounds of "
        f"{args.seconds:g} s; judge delay {args.judge_latency_ms:g} ms"
    )
    print(
        f"{'config':22} {'sess':>4} {'steps/s serve/echo':>19} {'x echo min/med/max':>18} {'p50 ms s/e':>14} "
        f"{'p99 ms s/e':>14} {'srv CPU us/step':>15} {'srv loop':>9} {'client':>10} {'valid':>6}  goal"
    )
    everything: list[dict[str, Any]] = []
    missed: list[str] = []
    model: _Child | None = None
    worker = _Child("--client")
    try:
        if LLM_CONFIG in configs:
            model = _Child("--model-server", f"--judge-latency-ms={args.judge_latency_ms}")
            model_url = model.receive()["url"]
        with echo_served(capacity) as echo_url:
            for config in configs:
                name = config.replace("+llm", "")
                options = None
                if config == LLM_CONFIG:
                    options = RunOptions(judge=f"{MODEL}?base_url={model_url}", use_cache=False)
                settings = ServeSettings(host=HOST, port=0, max_sessions=capacity)
                with served(EpisodeConfig.named(name), options, settings) as url:
                    urls = {"serve": url, "echo": echo_url}
                    loops = {"serve": _thread_id(SERVE_THREAD), "echo": _thread_id(ECHO_THREAD)}
                    for side in urls:  # warm-up, untimed
                        _measure(worker, urls[side], side, 1, 0.3, recorded[name], args.item_id, loops[side])
                    for sessions in levels:
                        judge = model if config == LLM_CONFIG else None
                        f = _level(
                            worker,
                            urls,
                            recorded[name],
                            sessions,
                            args.rounds,
                            args.seconds,
                            judge,
                            args.item_id,
                            loops,
                        )
                        goal = "-"
                        if config in OFFLINE and sessions == GOAL_SESSIONS:
                            goal = "met" if f["vs_echo"]["median"] >= GOAL else "NOT MET"
                            if goal != "met":
                                missed.append(config)
                        everything.append({"config": config, **f, "goal": goal})
                        print(_row(config, f, goal), flush=True)
    except BaseException:
        # stopped (Ctrl-C, SIGTERM, a failed round): the clients' sessions drop at once, so the servers stop
        # without waiting on them; openenv-core's tracebacks for the dropped sockets are not shown
        logging.getLogger("uvicorn.error").disabled = True
        worker.close(wait_s=0)
        raise
    finally:
        worker.close()
        if model is not None:
            model.close()
    checked = [c for c in configs if c in OFFLINE] if GOAL_SESSIONS in levels else []
    if checked:
        print(
            f"goal met at {GOAL_SESSIONS} sessions: {', '.join(checked)}"
            if not missed
            else f"goal NOT met at {GOAL_SESSIONS} sessions: {', '.join(missed)}"
        )
    print(f"load at the end {Path('/proc/loadavg').read_text().split()[:3]}")
    print(
        json.dumps(
            {
                "bench": "serve",
                "goal": GOAL,
                "goal_sessions": GOAL_SESSIONS,
                "seconds": args.seconds,
                "judge_latency_ms": args.judge_latency_ms,
                "judge_model": MODEL,
                "cpus": os.cpu_count(),
                "levels": everything,
                "missed": missed,
            }
        )
    )


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the servers and subprocesses are stopped by now
        sys.exit("bench_serve: interrupted")
