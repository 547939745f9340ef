"""A real small model (``local/smollm2``: SmolLM2-135M served on 127.0.0.1 by the default runtime) on every
shipped config: wall time, tokens per second and how valid its moves were, per config, with its replies
constrained to the benchmark's action grammar (the default for ``local/`` models) and, with ``--compare``,
as free text too (the papers' protocol), so the difference the constraint makes is measured, not assumed.

Needs ``pip install 'lateralgym[local]'``. Each config plays ``--limit`` items (default 2; one for
CreativityBench, whose prompts alone are thousands of tokens) with every multi-turn mode capped (SPLAT 3
rounds; CreativityBench interactive and explore 4 turns); the model plays, and judges SPLAT. One server
serves every run. The baseline is the server's own speed, measured in the same process by one timed call.

Run: ``python benchmarks/bench_real_llm.py [--limit N] [--config NAME ...] [--compare]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from lateralgym.agents import LLMClient, measure_speed, serving
from lateralgym.envs import SHIPPED_CONFIGS, EpisodeConfig
from lateralgym.episodes import run

PLAYER = "local/smollm2"
SHORT_TURNS = {"multiturn": 3, "interactive": 4, "explore": 4}
"""Turn caps by mode: every multi-turn mode is capped, explore (20 turns) too."""
LONG_PROMPTS = {"creativity": 1}  # items per config where the prompt alone is thousands of tokens


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
    parser.add_argument("--compare", action="store_true", help="also play each config unconstrained (free text)")
    args = parser.parse_args()
    modes = ("grammar", "off") if args.compare else ("grammar",)
    with serving(), tempfile.TemporaryDirectory() as tmp:
        served = LLMClient(PLAYER).local  # one server for every run below
        assert served is not None
        speed = asyncio.run(measure_speed(served.base_url, [{"role": "user", "content": "Tell me about the sea."}]))
        print(
            f"baseline: reads {speed.read_tokens_per_s:.0f}, writes {speed.write_tokens_per_s:.1f} tokens/s "
            f"({served.threads} thread(s), {served.context} tokens of context)\n"
        )
        print(
            f"{'config':24} {'decoding':>8} {'episodes':>8} {'wall s':>7} {'s/call':>6} {'compl tok':>9} "
            f"{'tok/s':>6} {'moves':>5} {'invalid':>7} {'re-ask':>6} {'fallbk':>6}  headline"
        )
        for name in args.config or SHIPPED_CONFIGS:
            config = short(name)
            for mode in modes:
                spec = f"{PLAYER}?constrain={mode}"
                start = time.perf_counter()
                result = run(
                    config,
                    player=spec,
                    judge=PLAYER if config.benchmark == "splat" else None,
                    limit=min(args.limit, LONG_PROMPTS.get(config.benchmark, args.limit)),
                    out=Path(tmp) / "runs",
                    cache_dir=Path(tmp) / "cache",
                    concurrency=1,
                    progress=False,
                )
                wall = time.perf_counter() - start
                summary = json.loads((result.run_dir / "summary.json").read_text())
                usage = summary["llm_usage"]
                calls = sum(u["calls"] for u in usage.values()) or 1
                completion = sum(u["completion_tokens"] for u in usage.values())
                moves = result.moves
                headline = ", ".join(f"{k} {v:.1f}" for k, v in summary["headline"].items() if isinstance(v, float))[
                    :60
                ]
                print(
                    f"{name:24} {mode:>8} {result.ran:>8} {wall:>7.1f} {wall / calls:>6.1f} {completion:>9} "
                    f"{completion / wall:>6.1f} {moves.total:>5} {100 * moves.invalid_rate:>6.1f}% "
                    f"{moves.reasked:>6} {moves.fallback:>6}  {headline}"
                )


if __name__ == "__main__":
    main()
