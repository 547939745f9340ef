"""Env steps per second for each registered LateralGym env, against CartPole-v1 in the same run."""

from __future__ import annotations

import time

import gymnasium

import lateralgym


def steps_per_second(env: gymnasium.Env, actions: list[object], seconds: float = 2.0) -> float:
    """Steps per second over pre-drawn actions (so drawing 4096-character random texts is not timed)."""
    env.reset(seed=0)
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        _, _, terminated, truncated, _ = env.step(actions[steps % len(actions)])
        steps += 1
        if terminated or truncated:
            env.reset()
    return steps / (time.perf_counter() - start)


def drawn_actions(env: gymnasium.Env, n: int = 256) -> list[object]:
    """Random actions from the env's space, plus (for text envs) a mix of well-formed commands."""
    env.action_space.seed(0)
    actions = [env.action_space.sample() for _ in range(n)]
    if isinstance(actions[0], str):
        commands = ["inspect: the first thing", "ask: is it heavy?", "commit: a | b | c", "commit: B"]
        actions = [commands[k % len(commands)] if k % 2 else a for k, a in enumerate(actions)]
    return actions


def main() -> None:
    cartpole = gymnasium.make("CartPole-v1")
    baseline = steps_per_second(cartpole, drawn_actions(cartpole))
    print(f"{'env':42} {'steps/s':>12} {'vs CartPole':>12}")
    print(f"{'CartPole-v1 (baseline)':42} {baseline:12.0f} {1.0:12.3f}")
    for env_id in lateralgym.ENV_IDS:
        env = gymnasium.make(env_id)
        rate = steps_per_second(env, drawn_actions(env))
        print(f"{env_id:42} {rate:12.0f} {rate / baseline:12.3f}")


if __name__ == "__main__":
    main()
