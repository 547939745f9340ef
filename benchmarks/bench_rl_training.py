"""RL on tool repurposing, on held-out test tasks: MaskablePPO vs random vs the heuristic player
(and REINFORCE).

Trains ``lateralgym.envs.benchmarks.creativity.rl.ppo.train_ppo`` (MaskablePPO, one action scorer
shared by every action) on the train split of the CreativityBench tasks (split by gold entity), then reports on
the test split, in this one run: the trained greedy policy, a uniformly random valid-action
policy and the heuristic player (``--player heuristic``) on the same tasks and seeds: gold
correct, entity correct and gold-inspection rate, and the ratio of the trained policy's gold rate
to the heuristic's. The numpy REINFORCE learner of
``lateralgym.envs.benchmarks.creativity.rl.reinforce`` is trained on the same train tasks and
reported beside them. Prints the learning curve, timesteps per second and the machine. The goal:
beat the heuristic on the test tasks within 10 minutes on 2 CPU cores.

Needs the rl extra (``pip install -e '.[rl]'``).
Usage: ``python benchmarks/bench_rl_training.py [--timesteps 20000] [--seed 0] [--data PATH] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import numpy as np

from lateralgym.envs import EpisodeConfig
from lateralgym.envs.benchmarks.creativity.rl.evaluation import (
    Evaluation,
    evaluate_policy,
    load_tasks,
    split_tasks,
    training_config,
)
from lateralgym.envs.benchmarks.creativity.rl.ppo import train_ppo
from lateralgym.envs.benchmarks.creativity.rl.reinforce import make_env, train_reinforce


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def row(label: str, result: Evaluation) -> str:
    return (
        f"{label:30} {100 * result.gold_correct_rate:7.1f} {100 * result.entity_correct_rate:7.1f} "
        f"{100 * result.gold_inspection_rate:9.1f} {result.mean_turns:6.1f} {result.episodes:5d}"
    )


def reinforce(config: EpisodeConfig, data: str | None, episodes: int, seed: int) -> tuple[Evaluation, float]:
    tasks = load_tasks(config, data)
    train, test = split_tasks(tasks, "train"), split_tasks(tasks, "test")
    start = time.perf_counter()
    policy, _ = train_reinforce(lambda: make_env(train, max_turns=config.max_turns), episodes, seed=seed)
    seconds = time.perf_counter() - start

    def act(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        return policy.act(obs, rng, greedy=True)

    shaped = training_config(config)
    return evaluate_policy(act, shaped, test, name="reinforce", repeats=2, seed=seed), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--config", default="creativity-interactive", help="CreativityBench config")
    parser.add_argument("--data", help="task file (default: the shipped sample)")
    parser.add_argument("--timesteps", type=int, default=20_000, help="PPO environment steps")
    parser.add_argument("--eval-every", type=int, default=2_500, help="timesteps between test evaluations")
    parser.add_argument("--reinforce-episodes", type=int, default=3000, help="REINFORCE training episodes")
    parser.add_argument("--seed", type=int, default=0, help="seed")
    parser.add_argument("--out", type=Path, help="run directory (default: a temporary one)")
    args = parser.parse_args()

    config = EpisodeConfig.named(args.config)
    tasks = load_tasks(config, args.data)
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-rl-"))
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs visible, load average {os.getloadavg()[0]:.1f}")
    start = time.perf_counter()
    summary = train_ppo(config, tasks, timesteps=args.timesteps, out=out, seed=args.seed, eval_every=args.eval_every)
    wall = time.perf_counter() - start
    print(
        f"MaskablePPO: {summary.timesteps} timesteps in {summary.seconds:.0f} s "
        f"({summary.timesteps_per_second:.0f} timesteps/s), {len(summary.train_items)} train / "
        f"{len(summary.test_items)} test tasks (split by gold entity)"
    )
    print(f"{'timesteps':>10} {'train return':>13} {'train gold':>11} {'test gold':>10} {'test entity':>12}")
    for p in summary.curve:
        ret = "-" if p.train_return is None else f"{p.train_return:.3f}"
        gold = "-" if p.train_gold_rate is None else f"{100 * p.train_gold_rate:.1f}"
        print(f"{p.timesteps:10d} {ret:>13} {gold:>11} {100 * p.test_gold_rate:10.1f} {100 * p.test_entity_rate:12.1f}")

    baseline, reinforce_seconds = reinforce(config, args.data, args.reinforce_episodes, args.seed)
    untrained = summary.curve[0]
    print(f"\n{'policy (test tasks)':30} {'gold%':>7} {'entity%':>7} {'gold-insp%':>9} {'turns':>6} {'eps':>5}")
    print(row("MaskablePPO (greedy)", summary.trained))
    print(row("random valid action", summary.random))
    print(row("heuristic player", summary.heuristic))
    print(row(f"REINFORCE ({reinforce_seconds:.0f} s)", baseline))
    print(
        f"untrained PPO policy (greedy): gold {100 * untrained.test_gold_rate:.1f} %; "
        f"MaskablePPO on its train tasks: gold {100 * summary.trained_on_train.gold_correct_rate:.1f} %"
    )
    heuristic = summary.heuristic.gold_correct_rate
    ratio = summary.trained.gold_correct_rate / heuristic if heuristic else float("inf")
    print(f"\nratio MaskablePPO / heuristic (test gold rate): {ratio:.2f}")
    met = summary.trained.gold_correct_rate > heuristic and wall <= 600
    print(f"goal (beat the heuristic on test tasks within 10 minutes): {'met' if met else 'not met'} ({wall:.0f} s)")
    print(f"artefacts: {out}")


if __name__ == "__main__":
    main()
