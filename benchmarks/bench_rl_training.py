"""REINFORCE on the sample CreativityBench tasks: learning curve and final policy against baselines.

Trains ``lateralgym.envs.rl``'s linear softmax policy on the interactive env with shaped rewards
(``shaped_config``: 6 turns), prints the training curve, then evaluates the trained policy and two
baselines measured in the same run: a uniformly random valid-action player (``theta = 0``,
sampled) and the untrained policy (``theta = 0``, greedy). Greedy runs play each task once; sampled
runs play each task ``--samples`` times.

Usage: ``python benchmarks/bench_rl_training.py [--episodes 3000] [--every 500] [--seed 0]``.
"""

from __future__ import annotations

import argparse
import time
from typing import cast

import numpy as np

from lateralgym.envs import CreativityEnv
from lateralgym.envs.rl import FEATURES, Evaluation, LinearSoftmaxPolicy, evaluate, make_env, train_reinforce


def row(label: str, result: Evaluation) -> str:
    return (
        f"{label:34} {result.mean_return:8.3f} {result.gold_correct_rate:8.3f} "
        f"{result.entity_correct_rate:8.3f} {result.mean_inspections:8.2f} {result.episodes:6d}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=3000, help="training episodes")
    parser.add_argument("--every", type=int, default=500, help="learning-curve window (episodes)")
    parser.add_argument("--lr", type=float, default=1.0, help="policy-gradient step size")
    parser.add_argument("--seed", type=int, default=0, help="seed of the learner's generator")
    parser.add_argument("--samples", type=int, default=10, help="sampled evaluation episodes per task")
    args = parser.parse_args()

    env = make_env()
    n_tasks = len(cast(CreativityEnv, env.unwrapped).items)
    start = time.perf_counter()
    policy, history = train_reinforce(make_env, args.episodes, lr=args.lr, seed=args.seed)
    seconds = time.perf_counter() - start
    rate = args.episodes / seconds
    print(f"trained {args.episodes} episodes on {n_tasks} tasks in {seconds:.1f} s ({rate:.0f} episodes/s)")
    print(f"{'episodes':>10} {'mean return':>12} {'gold rate':>10}   (sampled policy, last {args.every} episodes)")
    returns, gold = np.array(history.returns), np.array(history.gold_correct)
    for end in range(args.every, args.episodes + 1, args.every):
        window = slice(end - args.every, end)
        print(f"{end:10d} {returns[window].mean():12.3f} {gold[window].mean():10.3f}")
    print("theta: " + ", ".join(f"{name}={w:+.2f}" for name, w in zip(FEATURES, policy.theta, strict=True)))

    zero = LinearSoftmaxPolicy.for_env(env)
    sampled = args.samples * n_tasks
    trained = evaluate(policy, env)
    random = evaluate(zero, env, sampled, greedy=False, seed=args.seed)
    print(f"\n{'policy':34} {'return':>8} {'gold':>8} {'entity':>8} {'inspect':>8} {'eps':>6}")
    print(row("trained (greedy)", trained))
    print(row("trained (sampled)", evaluate(policy, env, sampled, greedy=False, seed=args.seed)))
    print(row("random valid action (theta=0)", random))
    print(row("untrained greedy (theta=0)", evaluate(zero, env)))
    print(
        f"\nratio trained/random: return {trained.mean_return / random.mean_return:.2f}, "
        f"gold rate {trained.gold_correct_rate / max(random.gold_correct_rate, 1e-9):.2f}"
    )


if __name__ == "__main__":
    main()
