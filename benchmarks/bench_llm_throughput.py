"""LateralGym's runner against two bare-SDK floors, LLM calls per second, at equal concurrency.

The floors make the same number of chat calls, with prompts of the same size, from one asyncio loop
at the same concurrency (for SPLAT, each "episode" a chain of 8 sequential calls: three questions
and an answer, each judged), against the same loopback OpenAI-compatible server with 100 ms latency (``--latency-ms``)
(the tests' scripted server), with ``chat.completions.create``:

* the sharded floor: the ``openai`` SDK used the way LateralGym's transport uses it, each request on
  an ``AsyncOpenAI`` client (one ``httpx`` pool) carrying at most ``POOL_REQUESTS`` (8) requests,
  more clients opened as more are in flight (``agents/_llm_backends.py``'s ``_Pools``). This is the
  floor the goal is measured against: one pool's CPU per call grows with its connections.
* the single-pool floor: one ``AsyncOpenAI`` client, as the SDK's documentation uses it.

LateralGym: ``lateralgym.episodes.run`` with an LLM player (and for SPLAT an LLM judge), the step
log and the cache off, and a priced model name (``openai/gpt-4o-mini``, in the shipped price list, so
every call is priced as a real run's are). Its time is the whole ``run`` call: set-up (options,
player, judge, endpoint check, run directory, manifest) and tear-down (summary, metrics) included.
A floor's time is its clients made, the calls, and the clients closed.

Each side runs in its own subprocess (the server stays in this one), so the CPU it reports
(``resource.getrusage``: user + system over what is timed) is its own. The sides of one
concurrency run in interleaved rounds (LateralGym and the sharded floor back to back, which first
alternating by round, then the other sides), and each round's ratio LateralGym / floor is taken
within the round, so load from other jobs hits both alike; printed are
min / median / max over the rounds. At c = 1 the two floors are one program (one client carries
the one request), so it runs once per round; at c = 1 the whole ``lateralgym run`` command
(subprocess, start to exit: interpreter, imports, set-up, calls, report) is also timed against the
floor's whole script (subprocess, start to exit), and "over the requests" compares the server's
view (first request in to last reply out) of the two, which leaves set-up and tear-down out.

With ``--items FILE`` (a BrainTeaser file in an official format, as ``lateralgym run brainteaser
--data FILE`` reads it) the BrainTeaser workload plays each of the file's items once, as a person's
run of that file does, instead of the sample items replayed to a set number of episodes; an untimed
LateralGym run first records the messages its player sends, and the floors send those same
messages (one chain per episode), so both sides send the same prompts. Each round's ratio is printed
with the load average after it and LateralGym's CPU per call over the floor's in that round (on a busy
machine the steadier figure: calls/s of runs a few seconds long follow the other jobs).

Goal (issue 24): LateralGym >= 0.9x the sharded floor at c = 1, 8, 64 and 256, both workloads; issue
39: in every round, on a release file at c = 64 with 100 ms latency.
The last line is JSON with every figure.
Run: ``python benchmarks/bench_llm_throughput.py [--rounds 3] [--quick]``, or
``python benchmarks/bench_llm_throughput.py --items FILE --latency-ms 100 --concurrency 64 --rounds 3``.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LATENCY_S = 0.1
KEY = "sk-bench-not-a-key"
MODEL = "gpt-4o-mini"
"""The model name every side asks for: in the shipped price list, so LateralGym prices each call."""
PROMPT = "x " * 300  # the floor's system prompt, about the player's size
POOL_REQUESTS = 8
"""Requests one SDK client carries at once in the sharded floor: LateralGym's ``POOL_REQUESTS``."""
SPLAT_CHAIN = 8
"""Calls of one SPLAT episode with the scripted model: three questions and an answer, each judged."""
GOAL = 0.9


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


# -- the sides, each run in its own subprocess ----------------------------------------------------


class _ShardedClients:
    """SDK clients of at most ``POOL_REQUESTS`` requests each, picked as LateralGym's ``_Pools`` picks."""

    def __init__(self, base_url: str, per_client: int | None) -> None:
        self.base_url = base_url
        self.per_client = per_client  # None: one client carries everything
        self.clients: list[Any] = []
        self.load: list[int] = []

    def acquire(self) -> int:
        for index, load in enumerate(self.load):
            if self.per_client is None or load < self.per_client:
                self.load[index] = load + 1
                return index
        from openai import AsyncOpenAI

        self.clients.append(AsyncOpenAI(base_url=self.base_url, api_key=KEY, max_retries=2))  # the SDK default
        self.load.append(1)
        return len(self.clients) - 1

    def release(self, index: int) -> None:
        self.load[index] -= 1

    async def close(self) -> None:
        for client in self.clients:
            await client.close()


async def _floor(
    base_url: str,
    chains: int,
    chain_length: int,
    concurrency: int,
    sharded: bool,
    prompts: list[list[dict[str, Any]]] | None = None,
) -> dict[str, float]:
    """The bare SDK making ``chains`` x ``chain_length`` calls, ``concurrency`` chains at once; chain ``i``
    opens with ``prompts[i]`` (the messages LateralGym's player sent) when given, else a fixed prompt."""
    cpu, start = _cpu_s(), time.perf_counter()
    clients = _ShardedClients(base_url, POOL_REQUESTS if sharded else None)
    gate = asyncio.Semaphore(concurrency)

    async def chain(i: int) -> None:
        async with gate:
            if prompts is not None:
                messages = list(prompts[i % len(prompts)])
            else:
                messages = [{"role": "system", "content": PROMPT}, {"role": "user", "content": f"bench floor {i}"}]
            for _ in range(chain_length):
                index = clients.acquire()
                try:
                    create = clients.clients[index].chat.completions.create
                    reply = await create(model=MODEL, messages=messages, temperature=0)
                finally:
                    clients.release(index)
                messages.append({"role": "assistant", "content": reply.choices[0].message.content or ""})
                messages.append({"role": "user", "content": "go on"})

    await asyncio.gather(*(chain(i) for i in range(chains)))
    await clients.close()
    elapsed, cpu = time.perf_counter() - start, _cpu_s() - cpu
    return {"seconds": elapsed, "cpu_s": cpu, "calls": chains * chain_length, "clients": len(clients.clients)}


def _lateralgym_api(
    config: str, base_url: str, limit: int | None, repeats: int, concurrency: int, data: str | None = None
) -> dict[str, float]:
    from lateralgym.envs import EpisodeConfig
    from lateralgym.episodes import RunOptions, StepLine, read_log, run

    options = RunOptions(
        player=f"openai/{MODEL}",
        judge=f"openai/{MODEL}" if config == "splat" else None,
        base_url=base_url,
        limit=limit,
        repeats=repeats,
        concurrency=concurrency,
        llm_concurrency=concurrency,
        use_cache=False,
        progress=False,
    )
    named = EpisodeConfig.named(config)
    if data is not None:  # the items of a release file, as ``lateralgym run CONFIG --data FILE``
        named = named.model_copy(update={"dataset": data})
    with tempfile.TemporaryDirectory() as tmp:
        cpu, start = _cpu_s(), time.perf_counter()
        result = run(named, options.merge(out=Path(tmp)))
        elapsed, cpu = time.perf_counter() - start, _cpu_s() - cpu
        if result.errored:
            raise SystemExit(
                f"lateralgym {config} c={concurrency}: {result.errored} episodes errored: {result.first_error}"
            )
        steps = [r for r in read_log(result.run_dir / "steps.jsonl") if isinstance(r, StepLine)]
        cost = sum((r.llm.cost_usd or 0.0) for r in steps if r.llm is not None)
    calls = len(steps) + sum(len(r.judge_calls) for r in steps)
    return {"seconds": elapsed, "cpu_s": cpu, "calls": calls, "player_cost_usd": cost}


def _side(args: argparse.Namespace) -> None:
    """One measurement, in this subprocess; prints its JSON. A floor imports nothing of LateralGym."""
    import openai  # noqa: F401

    if args.side in ("sharded", "single"):
        # The SDK imports its chat resources and response types on a client's first ``.chat`` (~1 s):
        # start-up, like LateralGym's imports, so not in the floor's timed calls. What its first client
        # loads (httpcore, a TLS context) is in them, as it is in LateralGym's run.
        import openai.resources.chat  # noqa: F401

        prompts = json.loads(Path(args.prompts).read_text()) if args.prompts else None
        out = asyncio.run(_floor(args.url, args.chains, args.chain_length, args.c, args.side == "sharded", prompts))
    else:
        import lateralgym.episodes  # noqa: F401

        out = _lateralgym_api(args.config, args.url, args.limit, args.repeats, args.c, args.data)
    print(json.dumps(out))


# -- the parent: server, rounds, figures ------------------------------------------------------------


def _spans(server: Any) -> list[tuple[float, float]]:
    with server._lock:
        return [(s, e) for _, s, e in server._state.spans]


def _clear_spans(server: Any) -> None:
    with server._lock:
        server._state.spans.clear()


def _server_view(spans: list[tuple[float, float]]) -> dict[str, float]:
    """The requests as the server saw them: window (first in to last out), mean and max in flight."""
    if not spans:
        return {"window_s": 0.0, "mean_in_flight": 0.0, "max_in_flight": 0}
    window = max(e for _, e in spans) - min(s for s, _ in spans)
    peak = current = 0
    for _, change in sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans]):
        current += change
        peak = max(peak, current)
    mean = sum(e - s for s, e in spans) / window if window > 0 else 0.0
    return {"window_s": window, "mean_in_flight": mean, "max_in_flight": peak}


def _subprocess(command: Sequence[str], what: str) -> tuple[str, float]:
    """Run ``command`` to its exit; its stdout and wall time from start to exit."""
    env = {**os.environ, "OPENAI_API_KEY": KEY, "NO_PROXY": "127.0.0.1,localhost"}
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{what}: failed (exit {done.returncode}):\n{done.stderr[-3000:]}")
    return done.stdout, wall


def _measure(server: Any, side: str, **fields: Any) -> dict[str, float]:
    """One side in its own subprocess: its own figures, its whole wall time, the server's view."""
    _clear_spans(server)
    command = [sys.executable, __file__, f"--side={side}"]
    command += [f"--{k.replace('_', '-')}={v}" for k, v in fields.items() if v is not None]
    stdout, wall = _subprocess(command, f"{side} {fields}")
    result: dict[str, float] = json.loads(stdout.strip().splitlines()[-1])
    return {**result, "process_s": wall, **_server_view(_spans(server))}


def _measure_command(server: Any, config: str, limit: int | None, repeats: int, data: str | None) -> dict[str, float]:
    """The whole ``lateralgym run`` command at c = 1, start to exit, as a person would type it."""
    _clear_spans(server)
    with tempfile.TemporaryDirectory() as tmp:
        command = [str(Path(sys.executable).parent / "lateralgym"), "run", config, f"--player=openai/{MODEL}"]
        command += [f"--data={data}"] if data else []
        command += [f"--judge=openai/{MODEL}"] if config == "splat" else []
        command += [f"--base-url={server.base_url}", f"--repeats={repeats}", "--concurrency=1", "--no-cache"]
        command += ["--no-progress", f"--out={tmp}"] + ([f"--limit={limit}"] if limit else [])
        _, wall = _subprocess(command, f"lateralgym run {config}")
    return {"process_s": wall, **_server_view(_spans(server))}


def _plan(config: str, c: int, items: int, quick: bool, whole_file: bool = False) -> tuple[int | None, int]:
    """(limit, repeats) of LateralGym's run at concurrency ``c``: enough episodes for a steady state
    (waves of ``c`` episodes), few enough that c = 1, bound by latency, stays short. A file's items
    (``--items``) are each played once, as ``lateralgym run --data FILE`` plays them."""
    if whole_file:
        return None, 1
    if config == "brainteaser":
        episodes = {1: 60, 8: 320, 64: 1024, 256: 1536}[c]
    else:
        episodes = {1: 10, 8: 48, 64: 192, 256: 512}[c]  # x 8 calls
    if quick:
        episodes = max(episodes // 3, c, 4)
    if episodes < items:
        return episodes, 1
    return None, -(-episodes // items)


def _planned(config: Any, limit: int | None, repeats: int) -> list[Any]:
    from lateralgym.envs import load_config_items
    from lateralgym.episodes import plan_episodes

    return plan_episodes(load_config_items(config), config.seed, limit, repeats)


def _load() -> list[float]:
    return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]


def _capture_prompts(server: Any, config: str, c: int, limit: int | None, repeats: int, data: str) -> str:
    """One untimed LateralGym run over the file's items; the messages its player sent, in a JSON file
    the floors open their chains with (so both sides send the same prompts). It also warms the disk
    cache and compiled bytecode for both sides alike."""
    with server._lock:
        server._state.requests.clear()
    _measure(server, "lateralgym", url=server.base_url, config=config, c=c, limit=limit, repeats=repeats, data=data)
    prompts = [r.body["messages"] for r in server.requests if isinstance(r.body, dict) and "messages" in r.body]
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as out:
        json.dump(prompts, out)
    return out.name


def _spread(values: Sequence[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def _fmt(spread: dict[str, float]) -> str:
    return f"{spread['min']:.2f}/{spread['median']:.2f}/{spread['max']:.2f}"


def _rate(side: dict[str, float]) -> float:
    return side["calls"] / side["seconds"]


def _cpu_ms(side: dict[str, float]) -> float:
    return 1000 * side["cpu_s"] / side["calls"]


def _level(
    server: Any,
    config: str,
    c: int,
    items: int,
    plans: dict[str, Any],
    rounds: int,
    quick: bool,
    data: str | None = None,
) -> dict[str, Any]:
    """Every round of one workload at one concurrency; the figures of each side and the ratios per round."""
    limit, repeats = _plan(config, c, items, quick, whole_file=data is not None)
    chain_length = SPLAT_CHAIN if config == "splat" else 1
    chains = len(plans[config](limit, repeats))  # one chain of calls per episode LateralGym plans
    prompts = _capture_prompts(server, config, c, limit, repeats, data) if data is not None else None
    sides = ["lateralgym", "sharded"] + (["single"] if c > 1 else []) + (["command"] if c == 1 else [])
    runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    loads: list[list[float]] = []
    for round_ in range(rounds):
        # LateralGym and the sharded floor back to back, first one then the other (the goal's ratio is
        # theirs: load from other jobs changes within seconds), the other sides after them
        pair = ["lateralgym", "sharded"] if round_ % 2 == 0 else ["sharded", "lateralgym"]
        for side in pair + sides[2:]:
            if side == "lateralgym":
                got = _measure(
                    server, side, url=server.base_url, config=config, c=c, limit=limit, repeats=repeats, data=data
                )
                if got["calls"] != chains * chain_length:
                    raise SystemExit(
                        f"{config} c={c}: LateralGym made {got['calls']} calls, the floors make {chains * chain_length}"
                    )
            elif side == "command":
                got = _measure_command(server, config, limit, repeats, data)
            else:
                got = _measure(
                    server, side, url=server.base_url, c=c, chains=chains, chain_length=chain_length, prompts=prompts
                )
            runs[side].append(got)
        loads.append(_load())
    if prompts is not None:
        Path(prompts).unlink()
    lg, sharded = runs["lateralgym"], runs["sharded"]
    single = runs.get("single") or sharded  # at c = 1 the two floors are one program
    figures: dict[str, Any] = {
        "workload": config,
        "c": c,
        "calls": int(lg[0]["calls"]),
        "rounds": rounds,
        "vs_sharded": _spread([_rate(a) / _rate(b) for a, b in zip(lg, sharded, strict=True)]),
        "vs_sharded_rounds": [_rate(a) / _rate(b) for a, b in zip(lg, sharded, strict=True)],
        "load_per_round": loads,
        "cpu_per_call_vs_sharded_rounds": [_cpu_ms(a) / _cpu_ms(b) for a, b in zip(lg, sharded, strict=True)],
        "vs_single": _spread([_rate(a) / _rate(b) for a, b in zip(lg, single, strict=True)]),
        "calls_per_s": {
            name: statistics.median(_rate(r) for r in got)
            for name, got in (("lateralgym", lg), ("sharded", sharded), ("single", single))
        },
        "cpu_ms_per_call": {
            name: statistics.median(_cpu_ms(r) for r in got)
            for name, got in (("lateralgym", lg), ("sharded", sharded), ("single", single))
        },
        "mean_in_flight": {
            name: statistics.median(r["mean_in_flight"] for r in got)
            for name, got in (("lateralgym", lg), ("sharded", sharded))
        },
        "max_in_flight": {"lateralgym": max(int(r["max_in_flight"]) for r in lg)},
        "player_cost_usd": lg[0]["player_cost_usd"],
    }
    if c == 1:
        command = runs["command"]
        figures["whole_command"] = {
            "lateralgym_s": statistics.median(r["process_s"] for r in command),
            "floor_s": statistics.median(r["process_s"] for r in sharded),
            "ratio": _spread([b["process_s"] / a["process_s"] for a, b in zip(command, sharded, strict=True)]),
            # the command's own seconds outside its requests, and the floor script's
            "outside_requests_s": {
                "lateralgym": statistics.median(r["process_s"] - r["window_s"] for r in command),
                "floor": statistics.median(r["process_s"] - r["window_s"] for r in sharded),
            },
            "over_requests": _spread([b["window_s"] / a["window_s"] for a, b in zip(command, sharded, strict=True)]),
        }
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds per concurrency (default 3)")
    parser.add_argument("--quick", action="store_true", help="a third of the episodes (ratios noisier)")
    parser.add_argument(
        "--concurrency",
        "--levels",
        dest="levels",
        default="1,8,64,256",
        help="concurrencies, comma-separated (default 1,8,64,256)",
    )
    parser.add_argument(
        "--workloads", help="brainteaser, splat or both (default: both; brainteaser alone with --items)"
    )
    parser.add_argument(
        "--items",
        type=Path,
        metavar="FILE",
        help="BrainTeaser items from a release file (an official format, as 'lateralgym run --data' reads it), "
        "each played once; the floors send the prompts LateralGym's player sent (default: the sample items, "
        "replayed to a set number of episodes, and a fixed prompt of the player's size)",
    )
    parser.add_argument(
        "--latency-ms", type=float, default=LATENCY_S * 1000, help="the server's latency per reply (default 100)"
    )
    parser.add_argument("--side", choices=("sharded", "single", "lateralgym"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    parser.add_argument("--c", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--limit", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--chains", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--chain-length", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--data", help=argparse.SUPPRESS)
    parser.add_argument("--prompts", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        _side(args)
        return

    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _scripted import cooperative_model
    from llm_server import ScriptedLLMServer

    from lateralgym.agents import price_per_million
    from lateralgym.envs import EpisodeConfig, LateralGymError, load_sample_items

    if price_per_million(MODEL) is None:
        raise SystemExit(f"{MODEL} is not in the shipped price list: pick a model name it prices")
    splat_items = load_sample_items("splat")
    sizes = {"brainteaser": len(load_sample_items("brainteaser")), "splat": len(splat_items)}
    configs = {name: EpisodeConfig.named(name) for name in ("brainteaser", "splat")}
    data = None
    if args.items is not None:
        if args.workloads not in (None, "brainteaser"):
            raise SystemExit("--items gives BrainTeaser items: run it with --workloads brainteaser (the default)")
        if not args.items.is_file():
            raise SystemExit(f"--items {args.items}: no such file")
        data = str(args.items.resolve())
        configs["brainteaser"] = configs["brainteaser"].model_copy(update={"dataset": data})
        try:
            sizes["brainteaser"] = len(_planned(configs["brainteaser"], None, 1))
        except LateralGymError as exc:  # not a BrainTeaser file of a format LateralGym reads
            raise SystemExit(f"--items {args.items}: {exc}") from None
    plans = {  # the episodes LateralGym will run: the floors make as many chains of calls
        name: functools.partial(_planned, config) for name, config in configs.items()
    }
    latency = args.latency_ms / 1000
    server = ScriptedLLMServer(responder=cooperative_model(splat_items), default_reply="A", latency_s=latency)
    server.start()
    levels = [int(c) for c in args.levels.split(",")]
    workloads = (args.workloads or ("brainteaser" if data else "brainteaser,splat")).split(",")
    print(
        f"server latency {args.latency_ms:.0f} ms; model openai/{MODEL} (priced); {os.cpu_count()} CPUs; "
        f"load {_load()}; {args.rounds} interleaved rounds; "
        + (f"items: {args.items} ({sizes['brainteaser']}, each once); " if data else "")
        + "ratios LateralGym/floor per round, min/med/max"
    )
    print(
        f"{'workload':12} {'c':>4} {'calls':>6} {'vs sharded':>15} {'vs 1 pool':>15} "
        f"{'calls/s LG/shard/1pool':>23} {'CPU ms/call LG/shard/1pool':>27} {'in flight LG/shard':>19}"
    )
    everything: list[dict[str, Any]] = []
    for config in workloads:
        for c in levels:
            f = _level(
                server,
                config,
                c,
                sizes[config],
                plans,
                args.rounds,
                args.quick,
                data if config == "brainteaser" else None,
            )
            everything.append(f)
            rate, cpu, flight = f["calls_per_s"], f["cpu_ms_per_call"], f["mean_in_flight"]
            missed = "  < goal" if f["vs_sharded"]["min"] < GOAL else ""  # the goal: every round
            print(
                f"{config:12} {c:4d} {f['calls']:6d} {_fmt(f['vs_sharded']):>15} {_fmt(f['vs_single']):>15} "
                f"{rate['lateralgym']:7.1f}/{rate['sharded']:6.1f}/{rate['single']:6.1f}    "
                f"{cpu['lateralgym']:9.2f}/{cpu['sharded']:5.2f}/{cpu['single']:5.2f}      "
                f"{flight['lateralgym']:7.1f}/{flight['sharded']:5.1f}{missed}",
                flush=True,
            )
            rounds = ", ".join(
                f"{ratio:.2f} (load {load[0]:.1f}; CPU per call {cpu:.2f}x)"
                for ratio, load, cpu in zip(
                    f["vs_sharded_rounds"], f["load_per_round"], f["cpu_per_call_vs_sharded_rounds"], strict=True
                )
            )
            print(f"{'':12} {'':4} vs sharded per round: {rounds}", flush=True)
    print("\nwhole command at c = 1 (subprocess start to exit; ratio floor script / lateralgym run, min/med/max)")
    for f in everything:
        whole = f.get("whole_command")
        if whole:
            outside = whole["outside_requests_s"]
            print(
                f"{f['workload']:12} lateralgym run {whole['lateralgym_s']:6.2f} s, "
                f"floor script {whole['floor_s']:6.2f} s: "
                f"{_fmt(whole['ratio'])}; over the requests {_fmt(whole['over_requests'])}; outside the requests "
                f"{outside['lateralgym']:.2f} s vs {outside['floor']:.2f} s"
            )
    print(f"load at the end {_load()}")
    server.stop()
    print(
        json.dumps(
            {"bench": "llm_throughput", "latency_s": latency, "items": data, "model": MODEL, "levels": everything}
        )
    )


if __name__ == "__main__":
    main()
