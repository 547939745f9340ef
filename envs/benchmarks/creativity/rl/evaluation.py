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
from lateralgym.envs._errors import ConfigError
from lateralgym.envs._items import load_config_items
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
    texts: list[str] = []
    """Each task's text, in ``item_ids``' order: distractor variants of one text share it, and intervals
    over tasks resample them together (``task_interval``)."""
    gold_correct: list[bool] = []
    """Each episode's gold-correct result, in the order played (episode ``k`` played task ``k % len(item_ids)``)."""


def _summarise(
    policy: str,
    outcomes: list[dict[str, Any]],
    returns: list[float],
    masked: int,
    ids: list[str],
    texts: list[str] | None = None,
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
        texts=texts or [],
        gold_correct=[bool(o["gold_correct"]) for o in outcomes],
    )


class Interval(BaseModel):
    """A figure in percent with its 95 % interval."""

    model_config = ConfigDict(frozen=True)

    mean: float
    low: float
    high: float


def _clustered(evaluations: Sequence[Evaluation]) -> tuple[list[str], list[np.ndarray]]:
    """(the distinct task texts, each one's episode results pooled over ``evaluations``)."""
    pooled: dict[str, list[bool]] = {}
    for evaluation in evaluations:
        if not evaluation.texts or len(evaluation.texts) != len(evaluation.item_ids):
            raise ConfigError(f"{evaluation.policy}: its evaluation kept no task texts; evaluate it again")
        for k, correct in enumerate(evaluation.gold_correct):
            pooled.setdefault(evaluation.texts[k % len(evaluation.texts)], []).append(correct)
    texts = sorted(pooled)
    return texts, [np.array(pooled[text], dtype=float) for text in texts]


def task_interval(evaluations: Sequence[Evaluation], *, resamples: int = 2000, seed: int = 0) -> Interval:
    """The gold-correct rate (percent) of one policy's evaluations (its seeds, pooled) with a 95 % interval
    from a bootstrap over distinct task texts: a text's episodes (its distractor variants, repeats and
    seeds) are drawn together, so the interval counts how few distinct problems there are, not episodes.

    Raises:
        ConfigError: an evaluation kept no task texts, or there are none.
    """
    texts, groups = _clustered(evaluations)
    if not texts:
        raise ConfigError("no episodes to put an interval on")
    sums = np.array([g.sum() for g in groups])
    counts = np.array([len(g) for g in groups], dtype=float)
    draws = np.random.default_rng(seed).integers(0, len(texts), size=(resamples, len(texts)))
    rates = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    low, high = np.percentile(rates, [2.5, 97.5])
    return Interval(mean=100 * float(sums.sum() / counts.sum()), low=100 * float(low), high=100 * float(high))


def paired_difference(
    first: Sequence[Evaluation], second: Sequence[Evaluation], *, resamples: int = 2000, seed: int = 0
) -> Interval:
    """``first`` minus ``second`` in gold-correct points on the same tasks and seeds, with a 95 % interval
    from a bootstrap over distinct task texts that draws both policies' episodes of a text together
    (so the task-to-task variation both share cancels).

    Raises:
        ConfigError: the two did not play the same tasks (ids, texts and episode counts must match).
    """
    texts_a, groups_a = _clustered(first)
    texts_b, groups_b = _clustered(second)
    if texts_a != texts_b or [len(g) for g in groups_a] != [len(g) for g in groups_b]:
        raise ConfigError("a paired difference needs both policies evaluated on the same tasks, seeds and repeats")
    sums = np.array([a.sum() - b.sum() for a, b in zip(groups_a, groups_b, strict=True)])
    counts = np.array([len(g) for g in groups_a], dtype=float)
    draws = np.random.default_rng(seed).integers(0, len(texts_a), size=(resamples, len(texts_a)))
    diffs = sums[draws].sum(axis=1) / counts[draws].sum(axis=1)
    low, high = np.percentile(diffs, [2.5, 97.5])
    return Interval(mean=100 * float(sums.sum() / counts.sum()), low=100 * float(low), high=100 * float(high))


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
    return _summarise(name, outcomes, returns, masked, [t.id for t in tasks], [t.task for t in tasks])


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
    env = CreativityEnv(config, items=list(tasks), lean=True)  # the figures read the outcome's flags and counts
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
    return _summarise("heuristic", outcomes, returns, 0, [t.id for t in tasks], [t.task for t in tasks])
