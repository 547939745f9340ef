"""Runner throughput (episodes/s, with the step log) against a bare env loop in the same run."""

from __future__ import annotations

import tempfile
import time

import lateralgym
from lateralgym.agents import HeuristicAgent
from lateralgym.episodes import run


def bare_loop(config: str) -> float:
    env = lateralgym.make(config)
    agent = HeuristicAgent(seed=0)
    start = time.perf_counter()
    for item in env.items:
        obs, info = env.reset(seed=0, options={"item_id": str(item.id)})
        agent.reset(obs, info, seed=0)
        while not env.done:
            obs, _, _, _, info = env.step(agent.act(obs, info))
    return len(env.items) / (time.perf_counter() - start)


def main() -> None:
    print(f"{'config':24} {'bare ep/s':>10} {'run c=1':>10} {'run c=8':>10} {'ratio c=8/bare':>15}")
    for config in ("creativity-interactive", "brainteaser", "splat"):
        bare = bare_loop(config)
        rates = []
        for concurrency in (1, 8):
            with tempfile.TemporaryDirectory() as tmp:
                start = time.perf_counter()
                result = run(config, player="heuristic", out=tmp, concurrency=concurrency, progress=False)
                rates.append(result.ran / (time.perf_counter() - start))
        print(f"{config:24} {bare:10.1f} {rates[0]:10.1f} {rates[1]:10.1f} {rates[1] / bare:15.3f}")


if __name__ == "__main__":
    main()
