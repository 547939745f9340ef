"""Train/test splits and evaluation of policies on ``DiscreteCreativity``: trained, random and heuristic alike.

Numpy only (no torch): ``benchmarks/bench_rl_training.py``, ``lateralgym train ppo`` and the tests
measure every policy with ``evaluate_policy`` / ``evaluate_heuristic`` on the same tasks and seeds,
so their rates compare.

The split is by gold entity, so a policy is tested on tool-repurposing problems whose answer it
never committed in training: a task's ``split`` field (``"train"``/``"test"``) when the dataset sets
one, otherwise the SHA-256 of the gold entity's snake_case name (variants of one entity share it)
puts about a quarter of the gold entities in ``test`` (``lateralgym.envs.split_tasks``, re-exported here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict

from lateralgym.envs._config import EpisodeConfig, RewardConfig
from lateralgym.envs._datasets import load_config_items
from lateralgym.envs._errors import ConfigError
from lateralgym.envs._splits import Split as Split
from lateralgym.envs.benchmarks.creativity import CreativityEnv
from lateralgym.envs.benchmarks.creativity._player import heuristic_action
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask
from lateralgym.envs.benchmarks.creativity._splits import split_tasks as split_tasks
from lateralgym.envs.benchmarks.creativity._splits import task_split as task_split
from lateralgym.envs.benchmarks.creativity.rl.wrappers import DiscreteCreativity

Policy = Callable[[np.ndarray, np.ndarray, np.random.Generator], int]
"""``act(observation, action_mask, rng) -> action`` of a ``DiscreteCreativity`` policy."""

TRAINING_REWARDS = RewardConfig(correct=1.0, entity_only=0.25, invalid=-0.05, step=0.0, gold_inspection=0.1)
"""The shaped rewards policies train on: partial credit for the right entity and for having inspected
the gold entity (paid at the end, so it marks nothing during the episode), no step cost."""


def load_tasks(config: EpisodeConfig, path: str | None = None) -> list[CreativityTask]:
    """The CreativityBench tasks of ``path``, else of ``config.dataset``, else the shipped sample.

    Raises:
        ConfigError: if the config is not a CreativityBench config.
        DatasetError: if the file cannot be read or holds other items.
    """
    if config.benchmark != "creativity":
        raise ConfigError(f"RL training runs on CreativityBench configs, not {config.benchmark!r}")
    return [task for task in load_config_items(config, path) if isinstance(task, CreativityTask)]


def training_config(config: EpisodeConfig) -> EpisodeConfig:
    """``config`` with the shaped ``TRAINING_REWARDS`` (the evaluation rates do not depend on rewards).

    Raises:
        ConfigError: if the config is not an interactive or static CreativityBench config.
    """
    if config.benchmark != "creativity":
        raise ConfigError(f"RL training runs on CreativityBench configs, not {config.benchmark!r}")
    return config.model_copy(update={"rewards": TRAINING_REWARDS})


class Evaluation(BaseModel):
    """One policy's figures over evaluation episodes (rates in [0, 1])."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    policy: str
    """Which policy played."""
    episodes: int
    """Episodes played."""
    gold_correct_rate: float
    """Share of episodes that committed the gold entity and part."""
    entity_correct_rate: float
    """Share of episodes that committed a part of the gold entity."""
    gold_inspection_rate: float
    """Share of episodes in which the gold entity was inspected."""
    mean_return: float
    """Mean undiscounted return under the config's rewards."""
    mean_turns: float
    """Mean turns per episode."""
    mean_questions: float = 0.0
    """Mean yes/no questions asked per episode (modes that allow them)."""
    invalid_rate: float = 0.0
    """Share of turns spent on invalid actions (the env refused them)."""
    masked_actions: int
    """Actions the policy chose that the action mask ruled out (0 for a mask-respecting policy)."""
    item_ids: list[str]
    """The tasks played, one per task (ids as in the dataset)."""


def _summarise(
    policy: str, outcomes: list[dict[str, Any]], returns: list[float], masked: int, ids: list[str]
) -> Evaluation:
    def rate(key: str) -> float:
        return float(np.mean([bool(o[key]) for o in outcomes]))

    return Evaluation(
        policy=policy,
        episodes=len(outcomes),
        gold_correct_rate=rate("gold_correct"),
        entity_correct_rate=rate("entity_correct"),
        gold_inspection_rate=rate("gold_inspected"),
        mean_return=float(np.mean(returns)),
        mean_turns=float(np.mean([o["turns"] for o in outcomes])),
        mean_questions=float(np.mean([o.get("asks", 0) for o in outcomes])),
        invalid_rate=sum(o.get("invalid_actions", 0) for o in outcomes) / max(1, sum(o["turns"] for o in outcomes)),
        masked_actions=masked,
        item_ids=ids,
    )


def _check(tasks: Sequence[CreativityTask], repeats: int) -> None:
    if not tasks:
        raise ConfigError("no tasks to evaluate on: the split is empty; use a dataset with more gold entities")
    if repeats < 1:
        raise ConfigError(f"repeats must be at least 1, got {repeats}")


def evaluate_policy(
    act: Policy,
    config: EpisodeConfig,
    tasks: Sequence[CreativityTask],
    *,
    name: str,
    repeats: int = 1,
    seed: int = 0,
    wrap: Callable[[CreativityEnv], DiscreteCreativity] = DiscreteCreativity,
) -> Evaluation:
    """Play every task ``repeats`` times (episode seeds ``seed + k``) with a ``DiscreteCreativity`` policy
    (``wrap`` builds the wrapper whose observations it reads: ``TextCreativity`` for a text policy).

    Raises:
        ConfigError: if ``tasks`` is empty or ``repeats`` is below 1.
    """
    _check(tasks, repeats)
    env = wrap(CreativityEnv(config, items=list(tasks)))
    rng = np.random.default_rng(seed)
    outcomes, returns, masked = [], [], 0
    for k in range(repeats * len(tasks)):
        obs, info = env.reset(seed=seed + k, options={"index": k % len(tasks)})
        total, done = 0.0, False
        while not done:
            mask = env.action_masks()
            action = int(act(obs, mask, rng))
            masked += int(not mask[action])
            obs, reward, terminated, truncated, info = env.step(action)
            total += reward
            done = terminated or truncated
        outcomes.append(info["outcome"])
        returns.append(total)
    return _summarise(name, outcomes, returns, masked, [t.id for t in tasks])


def random_policy(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
    """A uniformly random action among the valid ones (the action mask)."""
    return int(rng.choice(np.flatnonzero(mask)))


def evaluate_heuristic(
    config: EpisodeConfig, tasks: Sequence[CreativityTask], *, repeats: int = 1, seed: int = 0, inspections: int = 3
) -> Evaluation:
    """The benchmark's heuristic player (``--player heuristic``) on the same tasks and seeds as ``evaluate_policy``.

    Raises:
        ConfigError: if ``tasks`` is empty or ``repeats`` is below 1.
    """
    _check(tasks, repeats)
    env = CreativityEnv(config, items=list(tasks))
    outcomes, returns = [], []
    for k in range(repeats * len(tasks)):
        _, info = env.reset(seed=seed + k, options={"index": k % len(tasks)})
        total, done = 0.0, False
        while not done:
            _, reward, terminated, truncated, info = env.step(heuristic_action(info, inspections=inspections))
            total += reward
            done = terminated or truncated
        outcomes.append(info["outcome"])
        returns.append(total)
    return _summarise("heuristic", outcomes, returns, 0, [t.id for t in tasks])
