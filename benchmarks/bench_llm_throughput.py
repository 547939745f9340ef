"""LateralGym's runner against the bare-SDK floor, LLM calls per second, at equal concurrency.

The floor: the ``openai`` SDK's ``AsyncOpenAI`` making the same number of chat calls, with prompts
of the same size, from one asyncio loop at the same concurrency (for SPLAT, each "episode" a chain
of the same number of sequential calls), against the same loopback OpenAI-compatible server with
100 ms latency (the tests' scripted server). LateralGym: ``lateralgym.episodes.run`` with an LLM
player (and for SPLAT an LLM judge), the step log, the cache off. On few cores the limit is the
CPU each call costs, not latency; the ratio shows how close the runner comes to the floor.

Prints, per benchmark and concurrency: calls/s of each, the ratio, and the mean / max requests in
flight counted at the server. Goals (issue 13): >= 0.9x the floor at every concurrency; SPLAT's
mean in flight >= 0.8 x concurrency. Run: ``python benchmarks/bench_llm_throughput.py [--quick]``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _scripted import cooperative_model  # noqa: E402
from llm_server import ScriptedLLMServer  # noqa: E402

from lateralgym.envs import load_sample_items  # noqa: E402
from lateralgym.episodes import read_log, run  # noqa: E402
from lateralgym.episodes._log import StepLine  # noqa: E402

LATENCY_S = 0.1
KEY = "sk-bench-not-a-key"


def _in_flight(server: ScriptedLLMServer, since: int) -> tuple[float, int]:
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


async def _floor(base_url: str, prompt: str, chains: int, chain_length: int, concurrency: int) -> float:
    """Seconds for the bare SDK to make ``chains`` x ``chain_length`` calls, ``concurrency`` chains at once."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(base_url=base_url, api_key=KEY, max_retries=2)  # the SDK default
    gate = asyncio.Semaphore(concurrency)

    async def chain(i: int) -> None:
        async with gate:
            messages = [{"role": "system", "content": prompt}, {"role": "user", "content": f"bench floor {i}"}]
            for _ in range(chain_length):
                reply = await client.chat.completions.create(model="bench", messages=messages, temperature=0)  # type: ignore[arg-type]
                messages.append({"role": "assistant", "content": reply.choices[0].message.content or ""})
                messages.append({"role": "user", "content": "go on"})

    start = time.perf_counter()
    await asyncio.gather(*(chain(i) for i in range(chains)))
    elapsed = time.perf_counter() - start
    await client.close()
    return elapsed


def _lateralgym(
    config: str, server: ScriptedLLMServer, repeats: int, limit: int | None, concurrency: int
) -> tuple[float, int]:
    judge = {"judge": "openai/bench"} if config == "splat" else {}
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = run(
            config,
            player="openai/bench",
            base_url=server.base_url,
            repeats=repeats,
            limit=limit,
            concurrency=concurrency,
            llm_concurrency=concurrency,
            out=tmp,
            use_cache=False,
            progress=False,
            **judge,
        )
        elapsed = time.perf_counter() - start
        assert result.errored == 0, result.first_error
        calls = sum(1 for r in read_log(result.run_dir / "steps.jsonl") if isinstance(r, StepLine))
        calls += sum(len(r.judge_calls) for r in read_log(result.run_dir / "steps.jsonl") if isinstance(r, StepLine))
    return elapsed, calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="concurrency 1, 8 and 64 only, fewer episodes")
    args = parser.parse_args()
    os.environ["OPENAI_API_KEY"] = KEY
    splat_items = load_sample_items("splat")
    teasers = load_sample_items("brainteaser")
    server = ScriptedLLMServer(responder=cooperative_model(splat_items), default_reply="A", latency_s=LATENCY_S)
    server.start()
    levels = (1, 8, 64) if args.quick else (1, 8, 64, 256)
    print(f"server latency {LATENCY_S * 1000:.0f} ms; {os.cpu_count()} CPUs")
    print(
        f"{'benchmark':12} {'c':>4} {'calls':>6} {'floor calls/s':>13} {'LG calls/s':>10} {'ratio':>6} "
        f"{'mean in flight':>14} {'max':>5}"
    )
    for config in ("brainteaser", "splat"):
        for c in levels:
            if config == "brainteaser":
                episodes = max(4 * c, 300) if not args.quick else max(2 * c, 75)
                repeats, limit = -(-episodes // len(teasers)), None
                chain_length = 1
            else:
                episodes = max(c, 40) if not args.quick else max(c // 2, 8)
                repeats, limit = -(-episodes // len(splat_items)), None
                chain_length = 8  # 3 questions and an answer, each judged
            since = len(server._state.spans)
            lg_time, calls = _lateralgym(config, server, repeats, limit, c)
            mean_flight, max_flight = _in_flight(server, since)
            prompt = "x " * 300  # a system prompt of about the player's size
            chains = max(1, calls // chain_length)
            floor_time = asyncio.run(_floor(server.base_url, prompt, chains, chain_length, c))
            floor_rate, lg_rate = chains * chain_length / floor_time, calls / lg_time
            print(
                f"{config:12} {c:4d} {calls:6d} {floor_rate:13.1f} {lg_rate:10.1f} {lg_rate / floor_rate:6.2f} "
                f"{mean_flight:14.1f} {max_flight:5d}"
            )
    server.stop()


if __name__ == "__main__":
    main()
