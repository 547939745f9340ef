"""Env step time of each registered LateralGym env, against CartPole-v1's in the same run.

Goal (issue 24): every env's step with valid actions takes at most 5x CartPole's step time, static
CreativityBench included (there every step ends the episode, so its step time includes the ``reset``
that follows).

Step mixes per env, each printed as a ratio to CartPole timed in the same rounds:

* **valid**: the env's own valid moves, step by step. Episodes are first played with the benchmark's
  ``random_action`` (a uniformly random move among the options the env shows that step: its
  entities, choices, questions), sent as the text a player writes (``action_to_text``); every step the
  env did not accept is dropped from the recording. The timed loop replays the recordings, so
  choosing a move is not timed. Each episode starts with ``reset(options={"item_id": ...})`` on its
  recorded item and no seed, as an RL loop resets (Gymnasium reseeds only when given a seed; SB3's
  vector envs pass one on the first reset only) and as the CartPole side resets: the goal compares
  like with like. The share of replayed steps the env accepted is printed (the scene's order is drawn
  afresh without the seed, and the moves name things, not positions: 100 % unless a benchmark's random
  move is refused).
* **seeded**: the same replay with ``reset(seed=...)`` per episode, as ``lateralgym run`` resets (every
  episode reproducible from its seed): Gymnasium's reseed (a new ``SeedSequence`` and ``PCG64``, about
  twice CartPole's step) is in it. Printed for reference; the goal is the valid column.
* **invalid**: text no parser accepts (the rejection path), timed apart.

``--training`` times the env as the RL trainers step it instead (``lateralgym train ppo`` and the
wrappers' evaluations), for each CreativityBench config the wrappers play: the train split's tasks,
the shaped training rewards, episodes of random moves among those the wrapper's mask allows (what an
untrained policy plays), recorded as the env actions the wrapper sends (``Inspect`` / ``Commit``,
typed, no text to parse) and replayed with an unseeded reset on each episode's item, as SB3's vector
envs reset:

* **lean**: the env the wrappers step (``LateralEnv(lean=True)``: the config's scoring rule alone is
  graded, ``info`` carries the outcome's flags and counts): the goal column;
* **full**: the same replay on the env as a run steps it (three rules, the outcome's JSON), for reference;
* **wrapper**: the whole step SB3 makes, ``Monitor(DiscreteCreativity(env)).step`` with its observation
  features and ``action_masks()``, a random move among the masked-in ones drawn from a fixed stream
  (~1 us of it), on the features policy's wrapper; for reference (the text policy's is timed in
  ``bench_ppo.py``).

Step time is CPU time of this process (``time.process_time``), so waiting for a core other jobs hold
is not counted. The env and CartPole are timed in alternating short rounds and each keeps its
fastest round (the one least disturbed), so a load that comes and goes during the run falls on both
sides of the ratio. ``--seconds`` sets the CPU time per env and mix (default 2, as much again on
CartPole).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np

import lateralgym
from lateralgym.envs import action_to_text, get_benchmark

GOAL = 5.0
"""At most this many times CartPole's step time, with valid actions."""

EPISODES = 64
"""Episodes recorded per env (seeds 0..63), replayed in turn."""

INVALID = ["hello there", "commit", "inspect:", "please tell me", "{not json", "ask"]
"""Texts every env refuses: no command, a command without its argument, broken JSON."""

Episode = tuple[int, str, list[Any]]
"""A seed, the item it drew (``item_id``) and the actions played from it."""


def recorded_episodes(env: gymnasium.Env, episodes: int = EPISODES) -> tuple[list[Episode], float]:
    """``episodes`` episodes of the benchmark's random valid moves, as text; and the share the env accepted."""
    rng = np.random.default_rng(0)
    recorded: list[Episode] = []
    sent = accepted = 0
    for seed in range(episodes):
        _, info = env.reset(seed=seed)
        item_id = env.unwrapped.item_id  # type: ignore[attr-defined]
        unit = get_benchmark(str(info["benchmark"]))
        actions: list[Any] = []
        done = False
        while not done:
            action = action_to_text(unit.policies.random_action(info, rng))
            _, _, terminated, truncated, info = env.step(action)
            sent += 1
            if info["valid_action"]:
                accepted += 1
                actions.append(action)
            done = terminated or truncated
        recorded.append((seed, item_id, actions))
    return [episode for episode in recorded if episode[2]], accepted / max(sent, 1)


def _start(env: gymnasium.Env, episode: Episode, seeded: bool) -> None:
    seed, item_id, _ = episode
    if seeded:
        env.reset(seed=seed)
    else:
        env.reset(options={"item_id": item_id})


def replayed_share(env: gymnasium.Env, episodes: list[Episode]) -> float:
    """The share of the recorded moves the env accepts when the recordings are replayed unseeded (untimed)."""
    sent = accepted = 0
    for episode in episodes:
        _start(env, episode, seeded=False)
        for action in episode[2]:
            _, _, terminated, truncated, info = env.step(action)
            sent += 1
            accepted += bool(info["valid_action"])
            if terminated or truncated:
                break
    return accepted / max(sent, 1)


def replay_rate(env: gymnasium.Env, episodes: list[Episode], seconds: float, seeded: bool = False) -> float:
    """Steps per CPU second replaying ``episodes`` (each from its item, or its seed; the reset counts in the time).

    The clock is read every ~100 steps, as for CartPole (reading it costs ~1 us, a sixth of a
    CartPole step: once per one-step episode it would weigh on the env's side alone)."""
    steps, played, start = 0, 0, time.process_time()
    while time.process_time() - start < seconds:
        target = steps + 100
        while steps < target:  # whole episodes, in turn across rounds
            episode = episodes[played % len(episodes)]
            played += 1
            _start(env, episode, seeded)
            for action in episode[2]:
                _, _, terminated, truncated, _ = env.step(action)
                steps += 1
                if terminated or truncated:
                    break
    return steps / (time.process_time() - start)


def stream_rate(env: gymnasium.Env, actions: list[Any], seconds: float) -> float:
    """Steps per CPU second over ``actions`` in turn; an episode that ends is reset, the reset timed."""
    env.reset(seed=0)
    steps, start = 0, time.process_time()
    while time.process_time() - start < seconds:
        for _ in range(100):
            _, _, terminated, truncated, _ = env.step(actions[steps % len(actions)])
            steps += 1
            if terminated or truncated:
                env.reset()
    return steps / (time.process_time() - start)


def cartpole_actions(env: gymnasium.Env, n: int = 256) -> list[Any]:
    env.action_space.seed(0)
    return [env.action_space.sample() for _ in range(n)]


Rate = Callable[[float], float]
"""Steps per CPU second over about that many CPU seconds."""


def best_rates(run: Rate, baseline: Rate, seconds: float) -> tuple[float, float]:
    """The fastest round's rate of ``run`` and of ``baseline``, timed alternately in 5 rounds."""
    rates, baseline_rates = [], []
    for _ in range(5):
        baseline_rates.append(baseline(seconds / 5))
        rates.append(run(seconds / 5))
    return max(rates), max(baseline_rates)


TRAINING_CONFIGS = ("creativity-interactive", "creativity-static", "creativity-cot")
"""The CreativityBench configs the RL wrappers play (``train ppo --config``; interactive is its default)."""


def training_env(name: str, lean: bool = True) -> gymnasium.Env:
    """The env of ``name`` as ``train ppo`` builds it: the train split, the shaped rewards; ``lean`` or full."""
    from lateralgym.envs import EpisodeConfig
    from lateralgym.envs.benchmarks.creativity import CreativityEnv
    from lateralgym.envs.benchmarks.creativity.rl.evaluation import load_tasks, split_tasks, training_config

    config = EpisodeConfig.named(name)
    train = split_tasks(load_tasks(config), "train")
    return CreativityEnv(training_config(config), items=train, lean=lean)


def training_episodes(env: gymnasium.Env, episodes: int = EPISODES) -> list[Episode]:
    """``episodes`` episodes of random masked-in moves through ``DiscreteCreativity`` (seeds 0..), as the
    env actions the wrapper sent."""
    from lateralgym.envs.benchmarks.creativity.rl.wrappers import DiscreteCreativity

    wrapped = DiscreteCreativity(env)
    rng = np.random.default_rng(0)
    recorded: list[Episode] = []
    for seed in range(episodes):
        wrapped.reset(seed=seed)
        item_id = env.unwrapped.item_id  # type: ignore[attr-defined]
        actions: list[Any] = []
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(wrapped.action_masks())))
            actions.append(wrapped.decode(action))
            _, _, terminated, truncated, _ = wrapped.step(action)
            done = terminated or truncated
        recorded.append((seed, item_id, actions))
    return recorded


def wrapper_rate(env: Any, draws: np.ndarray, seconds: float) -> float:
    """Steps per CPU second of ``Monitor(DiscreteCreativity(...))`` as SB3 steps it: ``action_masks()``,
    then a move among the masked-in ones (``draws``, a fixed stream), then ``step``."""
    steps, start = 0, time.process_time()
    env.reset()
    while time.process_time() - start < seconds:
        for _ in range(100):
            allowed = np.flatnonzero(env.env.action_masks())
            _, _, terminated, truncated, _ = env.step(int(allowed[draws[steps % len(draws)] % len(allowed)]))
            steps += 1
            if terminated or truncated:
                env.reset()
    return steps / (time.process_time() - start)


def training_rows(seconds: float, baseline: Rate, only: str | None) -> dict[str, dict[str, float]]:
    """Print one row per training config (lean, full and wrapper steps against CartPole); return the figures."""
    from stable_baselines3.common.monitor import Monitor

    from lateralgym.envs.benchmarks.creativity.rl.wrappers import DiscreteCreativity

    print(
        f"goal: a CreativityBench env step as `train ppo` steps it (lean) <= {GOAL:g}x CartPole-v1's, measured "
        "in the same run (both sides reset unseeded)"
    )
    print(
        f"{'config (training)':24} {'valid %':>7} {'steps/ep':>8} {'lean (us)':>9} {'x CartPole':>10} "
        f"{'full (us)':>9} {'x CartPole':>10} {'wrapper (us)':>12} {'x CartPole':>10} {'CartPole (us)':>13}  goal"
    )
    figures: dict[str, dict[str, float]] = {}
    for name in TRAINING_CONFIGS:
        if only and only not in name:
            continue
        lean, full = training_env(name), training_env(name, lean=False)
        episodes = training_episodes(lean)
        share = replayed_share(lean, episodes)
        per_episode = sum(len(e[2]) for e in episodes) / len(episodes)
        lean_rate, base_lean = best_rates(functools.partial(replay_rate, lean, episodes), baseline, seconds)
        full_rate, base_full = best_rates(functools.partial(replay_rate, full, episodes), baseline, seconds)
        monitored = Monitor(DiscreteCreativity(training_env(name)))
        monitored.reset(seed=0)
        draws = np.random.default_rng(1).integers(0, 1 << 30, size=4096)
        wrapped, base_wrapped = best_rates(functools.partial(wrapper_rate, monitored, draws), baseline, seconds)
        row = {
            "lean_us": 1e6 / lean_rate,
            "lean_x": base_lean / lean_rate,
            "full_us": 1e6 / full_rate,
            "full_x": base_full / full_rate,
            "wrapper_us": 1e6 / wrapped,
            "wrapper_x": base_wrapped / wrapped,
            "cartpole_us": 1e6 / base_lean,
            "steps_per_episode": per_episode,
        }
        figures[name] = row
        print(
            f"{name:24} {100 * share:6.0f}% {per_episode:8.1f} {row['lean_us']:9.1f} {row['lean_x']:9.2f}x "
            f"{row['full_us']:9.1f} {row['full_x']:9.2f}x {row['wrapper_us']:12.1f} {row['wrapper_x']:9.2f}x "
            f"{row['cartpole_us']:13.1f}  {'met' if row['lean_x'] <= GOAL else 'NOT MET'}"
        )
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="CPU time on each env and mix (as much on CartPole)")
    parser.add_argument("--only", metavar="TEXT", help="only the env ids (configs, with --training) containing TEXT")
    parser.add_argument(
        "--training",
        action="store_true",
        help="time CreativityBench as the RL trainers step it (lean env, typed moves; the rl extra): see the docstring",
    )
    args = parser.parse_args()
    cartpole = gymnasium.make("CartPole-v1")
    moves = cartpole_actions(cartpole)

    def baseline(seconds: float) -> float:
        return stream_rate(cartpole, moves, seconds)

    if args.training:
        before = os.getloadavg()
        figures = training_rows(args.seconds, baseline, args.only)
        load = (before[0], os.getloadavg()[0])
        missed = [name for name, row in figures.items() if row["lean_x"] > GOAL]
        print("all within the goal (lean)" if not missed else f"over the goal: {', '.join(missed)}")
        print(json.dumps({"training": figures, "goal": GOAL, "load_1min": load}))
        return

    print(
        f"goal: every env's step time with valid actions <= {GOAL:g}x CartPole-v1's, measured in the same run "
        "(both sides reset unseeded; the seeded column resets as `lateralgym run` does)"
    )
    print(
        f"{'env':38} {'valid %':>7} {'steps/ep':>8} {'valid (us)':>10} {'x CartPole':>10} "
        f"{'seeded (us)':>11} {'x CartPole':>10} {'invalid (us)':>12} {'x CartPole':>10} {'CartPole (us)':>13}  goal"
    )
    missed = []
    for env_id in lateralgym.ENV_IDS:
        if args.only and args.only not in env_id:
            continue
        env = gymnasium.make(env_id)
        episodes, _ = recorded_episodes(env)
        share = replayed_share(env, episodes)
        per_episode = sum(len(e[2]) for e in episodes) / max(len(episodes), 1)
        valid, base_valid = best_rates(functools.partial(replay_rate, env, episodes), baseline, args.seconds)
        seeded, base_seeded = best_rates(
            functools.partial(replay_rate, env, episodes, seeded=True), baseline, args.seconds
        )
        invalid, base_invalid = best_rates(functools.partial(stream_rate, env, INVALID), baseline, args.seconds)
        valid_x, seeded_x, invalid_x = base_valid / valid, base_seeded / seeded, base_invalid / invalid
        if valid_x > GOAL:
            missed.append(env_id)
        print(
            f"{env_id:38} {100 * share:6.0f}% {per_episode:8.1f} {1e6 / valid:10.1f} {valid_x:9.2f}x "
            f"{1e6 / seeded:11.1f} {seeded_x:9.2f}x {1e6 / invalid:12.1f} {invalid_x:9.2f}x {1e6 / base_valid:13.1f}  "
            f"{'met' if valid_x <= GOAL else 'NOT MET'}"
        )
    print("all envs within the goal (valid actions)" if not missed else f"over the goal: {', '.join(missed)}")


if __name__ == "__main__":
    main()
