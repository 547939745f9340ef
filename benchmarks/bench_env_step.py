"""Env steps per second for each registered LateralGym env, against CartPole-v1 in the same run."""

from __future__ import annotations

import time

import gymnasium

import lateralgym


def steps_per_second(env: gymnasium.Env, seconds: float = 2.0) -> float:
    env.action_space.seed(0)
    env.reset(seed=0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, _ = env.step(env.action_space.sample())
        steps += 1
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def main() -> None:
    baseline = steps_per_second(gymnasium.make("CartPole-v1"))
    print(f"{'env':42} {'steps/s':>12} {'vs CartPole':>12}")
    print(f"{'CartPole-v1 (baseline)':42} {baseline:12.0f} {1.0:12.3f}")
    for env_id in lateralgym.ENV_IDS:
        rate = steps_per_second(gymnasium.make(env_id))
        print(f"{env_id:42} {rate:12.0f} {rate / baseline:12.3f}")


if __name__ == "__main__":
    main()
