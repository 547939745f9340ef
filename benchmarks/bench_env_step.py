"""Env step time of each registered LateralGym env, against CartPole-v1's in the same run.

Goal (issue 13): every env's step takes at most 5x CartPole's step time, static CreativityBench
included (there every step ends the episode, so its step time includes the ``reset`` that follows).

Step time is CPU time of this process (``time.process_time``), so waiting for a core other jobs hold
is not counted. The envs and CartPole are timed in alternating short rounds and each keeps its
fastest round (the one least disturbed), so a load that comes and goes during the run falls on both
sides of the ratio. ``--seconds`` sets the CPU time per env (default 2, as much again on CartPole).
"""

from __future__ import annotations

import argparse
import time

import gymnasium

import lateralgym

GOAL = 5.0
"""At most this many times CartPole's step time."""


def steps_per_second(env: gymnasium.Env, actions: list[object], seconds: float) -> float:
    """Steps per CPU second over pre-drawn actions (so drawing 4096-character random texts is not
    timed); an episode that ends is reset, and the reset counts in that step's time."""
    env.reset(seed=0)
    steps, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        for _ in range(100):
            _, _, terminated, truncated, _ = env.step(actions[steps % len(actions)])
            steps += 1
            if terminated or truncated:
                env.reset()
    return steps / (time.process_time() - start)


def drawn_actions(env: gymnasium.Env, n: int = 256) -> list[object]:
    """Random actions from the env's space, plus (for text envs) a mix of well-formed commands."""
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(n)]
    if isinstance(actions[0], str):
        commands = ["inspect: the first thing", "ask: is it heavy?", "commit: a | b | c", "commit: B"]
        actions = [commands[k % len(commands)] if k % 2 else a for k, a in enumerate(actions)]
    return actions


def best_rates(env: gymnasium.Env, baseline: gymnasium.Env, seconds: float, rounds: int = 5) -> tuple[float, float]:
    """The fastest round's steps per second of ``env`` and of ``baseline``, timed alternately."""
    env_actions, baseline_actions = drawn_actions(env), drawn_actions(baseline)
    rates, baseline_rates = [], []
    for _ in range(rounds):
        baseline_rates.append(steps_per_second(baseline, baseline_actions, seconds / rounds))
        rates.append(steps_per_second(env, env_actions, seconds / rounds))
    return max(rates), max(baseline_rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time spent on each env (and as much on CartPole)")
    args = parser.parse_args()
    cartpole = gymnasium.make("CartPole-v1")
    print(f"goal: every env's step time <= {GOAL:g}x CartPole-v1's step time, measured in the same run")
    header = f"{'env':38} {'steps/s':>9} {'step (us)':>10} {'CartPole (us)':>14} {'x CartPole':>11}  goal"
    print(header)
    missed = []
    for env_id in lateralgym.ENV_IDS:
        env = gymnasium.make(env_id)
        rate, baseline = best_rates(env, cartpole, args.seconds)
        times = baseline / rate
        verdict = "met" if times <= GOAL else "NOT MET"
        if times > GOAL:
            missed.append(env_id)
        print(f"{env_id:38} {rate:9.0f} {1e6 / rate:10.1f} {1e6 / baseline:14.1f} {times:10.2f}x  {verdict}")
    print("all envs within the goal" if not missed else f"over the goal: {', '.join(missed)}")


if __name__ == "__main__":
    main()
