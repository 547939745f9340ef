"""Zero-training baselines every RL number is reported next to, and intervals over seeds.

``best_rule``: for every per-action feature of ``DiscreteCreativity`` (``ACTION_FEATURES``), the
rule "inspect every entity, then commit the part whose row has the highest value of that feature"
(ties: the lowest action index). It needs no training, so it is the floor a trained policy must
clear: a policy that only learns a one-feature argmax has learnt nothing the features did not say.
The feature is chosen on the *train* tasks and scored on the *test* tasks, never chosen on test.

``seed_interval``: the mean over seeds with a 95 % Student-t interval (per-seed values kept), so a
difference of a point or two between policies is read against the noise of ~244 test episodes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy import stats  # type: ignore[import-untyped]

from lateralgym.envs import EpisodeConfig
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask
from lateralgym.envs.benchmarks.creativity.rl.evaluation import Evaluation, Policy, evaluate_policy
from lateralgym.envs.benchmarks.creativity.rl.wrappers import ACTION_FEATURES

__all__ = ["BestRule", "SeedStats", "best_rule", "rule_policy", "seed_interval"]

COMMIT_FEATURES: tuple[str, ...] = tuple(
    name for name in ACTION_FEATURES if name not in ("is_inspect", "name_rank", "already_inspected")
)
"""The features a commit rule may rank by (the inspect-only columns are 0 on every commit row)."""


def rule_policy(feature: str, *, max_entities: int, max_parts: int) -> Policy:
    """Inspect every entity not yet inspected (until the last turn), then commit the valid commit
    action with the highest ``feature`` (the first such action on a tie).

    Raises:
        ValueError: ``feature`` is not one of ``ACTION_FEATURES``.
    """
    if feature not in ACTION_FEATURES:
        raise ValueError(f"unknown feature {feature!r}; one of {', '.join(ACTION_FEATURES)}")
    column, last = ACTION_FEATURES.index(feature), ACTION_FEATURES.index("last_turn")
    entities, n_actions, k = max_entities, max_entities + max_entities * max_parts, len(ACTION_FEATURES)
    scene = 4 * entities + 2 * entities * max_parts + 1

    def act(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        rows = obs[scene:].reshape(n_actions, k)
        inspect = np.flatnonzero(mask[:entities])
        if inspect.size and rows[0, last] < 0.5:
            return int(inspect[0])
        commits = np.flatnonzero(mask[entities:]) + entities
        if not commits.size:  # nothing to commit yet (no slot in use): any valid action
            return int(np.flatnonzero(mask)[0])
        return int(commits[int(np.argmax(rows[commits, column]))])

    return act


class BestRule(BaseModel):
    """The best one-feature rule: which feature the train tasks chose, and how it did."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    feature: str
    """The feature chosen on the train tasks."""
    train_gold_rates: dict[str, float]
    """Every candidate feature's gold-correct share on the train tasks (what the choice saw)."""
    test: Evaluation
    """The chosen rule on the test tasks."""


def best_rule(
    config: EpisodeConfig,
    train: Sequence[CreativityTask],
    test: Sequence[CreativityTask],
    *,
    max_entities: int,
    max_parts: int,
    repeats: int = 2,
    seed: int = 0,
) -> BestRule:
    """Choose the feature whose rule commits the gold part most often on ``train`` (one episode per
    task, seed 0, the lowest-index feature on a tie), then play it on ``test`` (``repeats`` episodes per
    task from ``seed``)."""
    rates = {
        feature: evaluate_policy(
            rule_policy(feature, max_entities=max_entities, max_parts=max_parts), config, train, name=feature
        ).gold_correct_rate
        for feature in COMMIT_FEATURES
    }
    chosen = max(COMMIT_FEATURES, key=lambda f: (rates[f], -COMMIT_FEATURES.index(f)))
    policy = rule_policy(chosen, max_entities=max_entities, max_parts=max_parts)
    result = evaluate_policy(policy, config, test, name=f"best_rule:{chosen}", repeats=repeats, seed=seed)
    return BestRule(feature=chosen, train_gold_rates=rates, test=result)


class SeedStats(BaseModel):
    """A figure over seeds: mean, 95 % interval, and every seed's value (percent, 0-100)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mean: float
    low: float
    high: float
    per_seed: list[float]


def seed_interval(values: Sequence[float]) -> SeedStats:
    """Mean and 95 % Student-t interval of per-seed values (one seed: the interval is the value)."""
    data = [float(v) for v in values]
    if not data:
        raise ValueError("no seeds to summarise")
    mean = float(np.mean(data))
    if len(data) < 2:
        return SeedStats(mean=mean, low=mean, high=mean, per_seed=data)
    half = float(stats.t.ppf(0.975, len(data) - 1) * np.std(data, ddof=1) / np.sqrt(len(data)))
    return SeedStats(mean=mean, low=mean - half, high=mean + half, per_seed=data)
