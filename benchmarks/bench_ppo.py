"""Env steps per second of ``lateralgym train ppo --policy text``, against SB3's MaskablePPO on a constant env.

LateralGym: what ``train_ppo`` trains with ``--policy text``: the train split of the config's tasks
(the shipped sample by default), ``training_envs`` (8 ``Monitor(TextCreativity(CreativityEnv(...)))``
in a ``DummyVecEnv``, lean envs) and ``ppo_model`` (``ActionScoringPolicy``, the same PPO settings),
``learn(--timesteps)`` timed. The text encoder is warmed first, as ``train_ppo`` warms it
(``encode_tasks``: every train and test task's texts in one call); that one-off cost, the number of
distinct texts and the cache's size are printed apart.

Floor: the same ``ppo_model`` (the same network, the same observation and action spaces, seed and
settings) over 8 envs whose observation never changes: the LateralGym side's first observation and
action mask, an episode ending every ``--episode-steps`` steps (default 3, about an untrained
policy's episodes), no info. What SB3 and the network cost with an env that costs nothing.

After one untimed round of 1024 steps on each side (the first ``learn`` of a process pays for first
touches of memory), rounds alternate floor and LateralGym (``--rounds``, default 3), each building its
envs and model afresh; time is CPU time of this process (torch on one thread, as ``train_ppo`` sets; waiting for a
core other jobs hold is not counted) and wall time is printed beside it. Then one more LateralGym
round under cProfile gives the shares of ``learn``: the text encoder (``CachedEncoder.encode``), the
observation rows (``TextCreativity._features``), the env (``LateralEnv.step`` and ``reset``), the
wrapper's whole step and the vector env's step (SB3's copies of observations and infos included).

Goal (issue 39): LateralGym's steps/s >= 0.5x the floor's. The last line is one JSON object with
``lateralgym_steps_per_s``, ``floor_steps_per_s``, ``ratio`` (median of the rounds' ratios; min and
max beside it), the shares, the warm-up and the machine's load.

Needs the rl extra (``pip install -e '.[rl]'``) and, for ``--encoder st:`` (the default, what ``train
ppo --policy text`` uses), the embed extra; ``--encoder lexical`` needs no model.
Usage: ``python benchmarks/bench_ppo.py [--timesteps 4096] [--rounds 3] [--encoder st:|lexical]``.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import statistics
import time
from typing import Any

import gymnasium as gym
import numpy as np
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.vec_env import DummyVecEnv

from lateralgym.envs import EpisodeConfig
from lateralgym.envs.benchmarks.creativity.rl.evaluation import load_tasks, split_tasks, training_config
from lateralgym.envs.benchmarks.creativity.rl.ppo import one_thread, ppo_model, training_envs, wrapper
from lateralgym.envs.benchmarks.creativity.rl.text import encode_tasks, make_encoder

GOAL = 0.5
"""LateralGym's env steps per second at least this share of the floor's."""

N_ENVS = 8
"""Environments per vector env, as ``train_ppo``'s default (``--envs``)."""


class ConstantEnv(gym.Env[np.ndarray, int]):
    """The floor's env: one observation and mask, the same spaces, an episode every ``length`` steps."""

    def __init__(self, observation: np.ndarray, mask: np.ndarray, spaces_of: gym.Env[Any, Any], length: int) -> None:
        self.observation_space = spaces_of.observation_space
        self.action_space = spaces_of.action_space
        self._observation, self._mask, self._length, self._turn = observation, mask, length, 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        self._turn = 0
        return self._observation, {}

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict]:
        self._turn += 1
        return self._observation, 0.0, self._turn >= self._length, False, {}

    def action_masks(self) -> np.ndarray:
        return self._mask


def timed_learn(envs: DummyVecEnv, layout: Any, timesteps: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of a fresh ``ppo_model`` (rows laid out as ``layout``'s, the text
    wrapper) learning ``timesteps`` on ``envs``."""
    model = ppo_model(envs, layout, seed=0)
    cpu, wall = time.process_time(), time.perf_counter()
    model.learn(total_timesteps=timesteps)
    return time.process_time() - cpu, time.perf_counter() - wall


def shares(stats: pstats.Stats) -> dict[str, float]:
    """Shares of ``learn``'s time spent in (and under) the functions the module docstring names."""
    wanted = {
        "encoder": ("rl/text.py", "encode"),
        "observation_rows": ("rl/text.py", "_features"),
        "env_step": ("envs/_engine.py", "step"),
        "env_reset": ("envs/_engine.py", "reset"),
        "wrapper_step": ("rl/wrappers.py", "step"),
        "wrapper_reset": ("rl/wrappers.py", "reset"),
        "vector_env_step": ("vec_env/dummy_vec_env.py", "step_wait"),
        "learn": ("ppo_mask/ppo_mask.py", "learn"),
    }
    found = dict.fromkeys(wanted, 0.0)
    for (path, _, name), row in stats.stats.items():  # type: ignore[attr-defined]  # pstats keeps its table untyped
        for key, (tail, function) in wanted.items():
            if name == function and path.replace(os.sep, "/").endswith(tail):
                found[key] += row[3]  # cumulative time
    total = found.pop("learn") or 1.0
    return {key: value / total for key, value in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="creativity-interactive", help="a CreativityBench config (train ppo's)")
    parser.add_argument("--data", help="a CreativityBench task file (default: the config's, else the sample)")
    parser.add_argument("--timesteps", type=int, default=4096, help="env steps per round and side (default 4096)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of floor then LateralGym (default 3)")
    parser.add_argument("--encoder", default="st:", help="st: (train ppo's default, the embed extra) or lexical")
    parser.add_argument("--episode-steps", type=int, default=3, help="the floor's episode length (default 3)")
    parser.add_argument("--no-profile", action="store_true", help="skip the profiled round")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    config = EpisodeConfig.named(args.config)
    tasks = load_tasks(config, args.data)
    train, test = split_tasks(tasks, "train"), split_tasks(tasks, "test")
    shaped = training_config(config)
    one_thread()
    encoder = make_encoder(args.encoder)
    cpu = time.process_time()
    distinct = encode_tasks(encoder, [*train, *test])
    warmup = time.process_time() - cpu
    print(
        f"encoder {args.encoder}: {distinct} distinct texts of {len(train) + len(test)} tasks encoded in "
        f"{warmup:.1f} s CPU, {encoder.nbytes / 1e6:.1f} MB of vectors cached"
    )
    wrap = wrapper("text", encoder)

    def lateralgym_envs() -> DummyVecEnv:
        return training_envs(shaped, train, N_ENVS, wrap)

    probe = lateralgym_envs().envs[0].env
    observation, _ = probe.reset(seed=0)
    mask = probe.action_masks()

    def floor_envs() -> DummyVecEnv:
        return DummyVecEnv([lambda: Monitor(ConstantEnv(observation, mask, probe, args.episode_steps))] * N_ENVS)

    timed_learn(floor_envs(), probe, 1024)  # untimed: the first learn on either side pays for first touches
    timed_learn(lateralgym_envs(), probe, 1024)
    print(f"{'round':>5} {'floor steps/s':>13} {'LateralGym steps/s':>18} {'ratio':>6}  (CPU time; wall in brackets)")
    floors, ours, ratios = [], [], []
    for number in range(1, args.rounds + 1):
        floor_cpu, floor_wall = timed_learn(floor_envs(), probe, args.timesteps)
        our_cpu, our_wall = timed_learn(lateralgym_envs(), probe, args.timesteps)
        floors.append(args.timesteps / floor_cpu)
        ours.append(args.timesteps / our_cpu)
        ratios.append(ours[-1] / floors[-1])
        print(
            f"{number:5} {floors[-1]:13.1f} {ours[-1]:18.1f} {ratios[-1]:6.2f}  "
            f"({args.timesteps / floor_wall:.1f} / {args.timesteps / our_wall:.1f})"
        )
    figures: dict[str, Any] = {
        "lateralgym_steps_per_s": statistics.median(ours),
        "floor_steps_per_s": statistics.median(floors),
        "ratio": statistics.median(ratios),
        "ratio_min": min(ratios),
        "ratio_max": max(ratios),
        "goal": GOAL,
        "rounds": args.rounds,
        "timesteps": args.timesteps,
        "encoder": args.encoder,
        "distinct_texts": distinct,
        "warmup_cpu_s": warmup,
        "cache_mb": encoder.nbytes / 1e6,
    }
    if not args.no_profile:
        profiler = cProfile.Profile()
        envs = lateralgym_envs()
        profiler.runcall(timed_learn, envs, probe, args.timesteps)
        figures["shares"] = shares(pstats.Stats(profiler))
        print(
            "shares of learn (profiled round): "
            + ", ".join(f"{k} {100 * v:.1f} %" for k, v in figures["shares"].items())
        )
    figures["load_1min"] = [load_before, os.getloadavg()[0]]
    met = figures["ratio"] >= GOAL
    print(
        f"ratio {figures['ratio']:.2f} (min {figures['ratio_min']:.2f}); goal >= {GOAL}: {'met' if met else 'NOT MET'}"
    )
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
