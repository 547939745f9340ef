"""LateralGym's runner against the bare-SDK floor, LLM calls per second, at equal concurrency.

The floor: the ``openai`` SDK's ``AsyncOpenAI`` making the same number of chat calls, with prompts
of the same size, from one asyncio loop at the same concurrency (for SPLAT, each "episode" a chain
of the same number of sequential calls), against the same loopback OpenAI-compatible server with
100 ms latency (the tests' scripted server). LateralGym: ``lateralgym.episodes.run`` with an LLM
player (and for SPLAT an LLM judge), the step log, the cache off. On few cores the limit is the
CPU each call costs, not latency; the ratio shows how close the runner comes to the floor.

Each side runs in its own subprocess (the server stays in this one), so the CPU it reports
(``resource.getrusage``: user + system, over the calls, LateralGym's run set-up included) is its
own; CPU per call is less sensitive to other jobs on the machine than wall time. Prints, per
benchmark and concurrency: calls/s of each, the ratio, CPU ms per call of each, and the mean / max
requests in flight counted at the server during LateralGym's run. Goals (issue 13): >= 0.9x the
floor at every concurrency; SPLAT's mean in flight >= 0.8 x concurrency.
Run: ``python benchmarks/bench_llm_throughput.py [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LATENCY_S = 0.1
KEY = "sk-bench-not-a-key"
PROMPT = "x " * 300  # the floor's system prompt, about the player's size


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _in_flight(server: Any, since: int) -> tuple[float, int]:
    """Mean and max chat requests in flight at the server over the requests after ``since``."""
    with server._lock:
        spans = [(s, e) for _, s, e in list(server._state.spans)[since:]]
    if not spans:
        return 0.0, 0
    wall = max(e for _, e in spans) - min(s for s, _ in spans)
    events = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    peak = current = 0
    for _, change in events:
        current += change
        peak = max(peak, current)
    return sum(e - s for s, e in spans) / wall if wall > 0 else 0.0, peak


async def _floor(base_url: str, chains: int, chain_length: int, concurrency: int) -> dict[str, float]:
    """The bare SDK making ``chains`` x ``chain_length`` calls, ``concurrency`` chains at once."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key=KEY, max_retries=2)  # the SDK default
    gate = asyncio.Semaphore(concurrency)

    async def chain(i: int) -> None:
        async with gate:
            messages = [{"role": "system", "content": PROMPT}, {"role": "user", "content": f"bench floor {i}"}]
            for _ in range(chain_length):
                reply = await client.chat.completions.create(model="bench", messages=messages, temperature=0)  # type: ignore[arg-type]
                messages.append({"role": "assistant", "content": reply.choices[0].message.content or ""})
                messages.append({"role": "user", "content": "go on"})

    cpu, start = _cpu_s(), time.perf_counter()
    await asyncio.gather(*(chain(i) for i in range(chains)))
    elapsed, cpu = time.perf_counter() - start, _cpu_s() - cpu
    await client.close()
    return {"seconds": elapsed, "cpu_s": cpu, "calls": chains * chain_length}


def _lateralgym(config: str, base_url: str, repeats: int, concurrency: int) -> dict[str, float]:
    from lateralgym.episodes import read_log, run
    from lateralgym.episodes._log import StepLine

    judge = {"judge": "openai/bench"} if config == "splat" else {}
    with tempfile.TemporaryDirectory() as tmp:
        cpu, start = _cpu_s(), time.perf_counter()
        result = run(
            config,
            player="openai/bench",
            base_url=base_url,
            repeats=repeats,
            concurrency=concurrency,
            llm_concurrency=concurrency,
            out=tmp,
            use_cache=False,
            progress=False,
            **judge,
        )
        elapsed, cpu = time.perf_counter() - start, _cpu_s() - cpu
        assert result.errored == 0, result.first_error
        steps = [r for r in read_log(result.run_dir / "steps.jsonl") if isinstance(r, StepLine)]
    calls = len(steps) + sum(len(r.judge_calls) for r in steps)
    return {"seconds": elapsed, "cpu_s": cpu, "calls": calls}


def _side(args: argparse.Namespace) -> None:
    """One measurement, in this (sub)process; prints its JSON."""
    import openai  # noqa: F401

    import lateralgym.episodes  # noqa: F401 - imports are start-up, not the measured calls

    if args.side == "floor":
        out = asyncio.run(_floor(args.url, args.chains, args.chain_length, args.c))
    else:
        out = _lateralgym(args.config, args.url, args.repeats, args.c)
    print(json.dumps(out))


def _measure(**fields: Any) -> dict[str, float]:
    command = [sys.executable, __file__] + [f"--{k.replace('_', '-')}={v}" for k, v in fields.items()]
    env = {**os.environ, "OPENAI_API_KEY": KEY, "NO_PROXY": "127.0.0.1,localhost"}
    done = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if done.returncode != 0:
        raise SystemExit(f"{fields}: failed:\n{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="concurrency 1, 8 and 64 only, fewer episodes")
    parser.add_argument("--side", choices=("floor", "lateralgym"), help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--config", help=argparse.SUPPRESS)
    parser.add_argument("--c", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--repeats", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--chains", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--chain-length", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.side:
        _side(args)
        return

    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _scripted import cooperative_model
    from llm_server import ScriptedLLMServer

    from lateralgym.envs import load_sample_items

    splat_items = load_sample_items("splat")
    teasers = load_sample_items("brainteaser")
    server = ScriptedLLMServer(responder=cooperative_model(splat_items), default_reply="A", latency_s=LATENCY_S)
    server.start()
    levels = (1, 8, 64) if args.quick else (1, 8, 64, 256)
    print(f"server latency {LATENCY_S * 1000:.0f} ms; {os.cpu_count()} CPUs; each side in its own process")
    print(
        f"{'benchmark':12} {'c':>4} {'calls':>6} {'floor calls/s':>13} {'LG calls/s':>10} {'ratio':>6} "
        f"{'floor CPU ms/call':>17} {'LG CPU ms/call':>14} {'mean in flight':>14} {'max':>5}"
    )
    for config in ("brainteaser", "splat"):
        for c in levels:
            if config == "brainteaser":
                episodes = max(4 * c, 300) if not args.quick else max(2 * c, 75)
                repeats, chain_length = -(-episodes // len(teasers)), 1
            else:
                # three waves of c episodes, so the mean in flight is not all ramp-up and tail
                episodes = max(3 * c, 40) if not args.quick else max(c // 2, 8)
                repeats, chain_length = -(-episodes // len(splat_items)), 8  # 3 questions and an answer, judged
            since = len(server._state.spans)
            lg = _measure(side="lateralgym", url=server.base_url, config=config, c=c, repeats=repeats)
            mean_flight, max_flight = _in_flight(server, since)
            chains = max(1, int(lg["calls"]) // chain_length)
            floor = _measure(side="floor", url=server.base_url, c=c, chains=chains, chain_length=chain_length)
            floor_rate, lg_rate = floor["calls"] / floor["seconds"], lg["calls"] / lg["seconds"]
            print(
                f"{config:12} {c:4d} {int(lg['calls']):6d} {floor_rate:13.1f} {lg_rate:10.1f} "
                f"{lg_rate / floor_rate:6.2f} {1000 * floor['cpu_s'] / floor['calls']:17.2f} "
                f"{1000 * lg['cpu_s'] / lg['calls']:14.2f} {mean_flight:14.1f} {max_flight:5d}",
                flush=True,
            )
    server.stop()


if __name__ == "__main__":
    main()
