"""Zero-training baselines every RL number is reported next to, and intervals over seeds.

``best_rule``: for every per-action feature of ``DiscreteCreativity`` (``ACTION_FEATURES``), the
rule "inspect every entity, then commit the part whose row has the highest value of that feature"
(ties: the lowest action index). It needs no training, so it is the floor a trained policy must
clear: a policy that only learns a one-feature argmax has learnt nothing the features did not say.
The feature is chosen on the *train* tasks and scored on the *test* tasks, never chosen on test.

``best_text_rule``: the same for a text policy's inputs (``TextCreativity``): inspect every entity,
then commit the action whose row says the encoder finds its text closest to the task's (the sum of
the ``t * a`` columns is the cosine of the task and the part's text; of the ``t * e`` columns, of the
task and the entity's name; or both added, which is where a text policy started at the encoder's
cosine begins, ``ppo.ActionScorer``'s ``text_init`` aside).
With an affordance head (``affordance.AffordanceHead``) the candidates also include the head's log
fit of need and offer (``affordance_fit``) and the cosines plus ``START_FIT_WEIGHT`` times it
(``cosines_plus_fit``, where such a text policy starts). It is what the text policy's rows give with
no training, so a text policy that beats only ``best_rule`` may have learnt nothing the encoder (and
its head) did not already say.

``seed_interval``: the mean over seeds with a 95 % Student-t interval (per-seed values kept), so a
difference of a point or two between policies is read against the noise of ~244 test episodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict
from scipy import stats  # type: ignore[import-untyped]

from lateralgym.envs import EpisodeConfig
from lateralgym.envs.benchmarks.creativity import CreativityEnv
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask
from lateralgym.envs.benchmarks.creativity.rl.affordance import START_FIT_WEIGHT
from lateralgym.envs.benchmarks.creativity.rl.evaluation import Evaluation, Policy, evaluate_policy
from lateralgym.envs.benchmarks.creativity.rl.text import TextCreativity
from lateralgym.envs.benchmarks.creativity.rl.wrappers import ACTION_FEATURES, DiscreteCreativity

__all__ = [
    "AFFORDANCE_SCORES",
    "TEXT_SCORES",
    "BestRule",
    "SeedStats",
    "best_rule",
    "best_text_rule",
    "rule_policy",
    "seed_interval",
    "text_rule_policy",
    "text_scores",
]

TEXT_SCORES: tuple[str, ...] = ("part_cosine", "entity_cosine", "entity_plus_part_cosine")
"""What a text rule ranks commits by (see the module docstring)."""

AFFORDANCE_SCORES: tuple[str, ...] = ("affordance_fit", "cosines_plus_fit")
"""The text scores of rows with an affordance head's columns: the log fit alone, and the cosines
plus ``START_FIT_WEIGHT`` times the log fit (where the text policy starts)."""


def text_scores(env: TextCreativity) -> tuple[str, ...]:
    """The text scores ``env``'s rows give (``TEXT_SCORES``, plus ``AFFORDANCE_SCORES`` with a head)."""
    return TEXT_SCORES + (AFFORDANCE_SCORES if env.afford_dims else ())


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

    def rows(obs: np.ndarray) -> np.ndarray:
        return obs[scene:].reshape(n_actions, k)

    return _inspect_then_commit(entities, lambda obs: rows(obs)[:, column], lambda obs: bool(rows(obs)[0, last] >= 0.5))


def _inspect_then_commit(
    entities: int, score: Callable[[np.ndarray], np.ndarray], last_turn: Callable[[np.ndarray], bool]
) -> Policy:
    """Inspect every entity not yet inspected (until the last turn), then commit the valid commit
    action ``score`` ranks highest (the first on a tie); ``score(obs)`` gives one value per action."""

    def act(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        inspect = np.flatnonzero(mask[:entities])
        if inspect.size and not last_turn(obs):
            return int(inspect[0])
        commits = np.flatnonzero(mask[entities:]) + entities
        if not commits.size:  # nothing to commit yet (no slot in use): any valid action
            return int(np.flatnonzero(mask)[0])
        return int(commits[int(np.argmax(score(obs)[commits]))])

    return act


def text_rule_policy(score: str, env: TextCreativity, fit_weight: float = START_FIT_WEIGHT) -> Policy:
    """Inspect everything, then commit the argmax of a text score (``text_scores(env)``) of ``env``'s
    rows (``cosines_plus_fit`` weighs the head's log fit by ``fit_weight``).

    Raises:
        ValueError: ``score`` is not one of ``text_scores(env)``.
    """
    if score not in text_scores(env):
        raise ValueError(f"unknown text score {score!r}; one of {', '.join(text_scores(env))}")
    d, width, start = env.encoder.dim, env.row_width, env.scene_size
    last = env.text_dims + 5  # the row's last-turn flag (TEXT_FLAGS)
    weights = np.zeros(2 * d)  # the part text's columns, then the entity name's
    weights[:d] = score in ("part_cosine", "entity_plus_part_cosine", "cosines_plus_fit")
    weights[d:] = score in ("entity_cosine", "entity_plus_part_cosine", "cosines_plus_fit")
    fit_weight = {"affordance_fit": 1.0, "cosines_plus_fit": fit_weight}.get(score, 0.0)

    def rows(obs: np.ndarray) -> np.ndarray:
        return obs[start:].reshape(-1, width)

    def ranked(obs: np.ndarray) -> np.ndarray:
        block = rows(obs)
        value = block[:, : 2 * d] @ weights
        if fit_weight:
            fit = block[:, 2 * d : env.text_dims].sum(axis=1)
            value = value + fit_weight * np.where(fit > 0, np.log(np.maximum(fit, 1e-8)), -np.inf)
        return np.asarray(value)

    return _inspect_then_commit(env.E, ranked, lambda obs: bool(rows(obs)[0, last] >= 0.5))


class BestRule(BaseModel):
    """The best one-feature (or text-score) rule: which one the train tasks chose, and how it did."""

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
    wrap: Callable[[CreativityEnv], DiscreteCreativity] = DiscreteCreativity,
) -> BestRule:
    """Choose the feature whose rule commits the gold part most often on ``train`` (one episode per
    task, seed 0, the lowest-index feature on a tie), then play it on ``test`` (``repeats`` episodes per
    task from ``seed``). ``wrap`` builds the (features) wrapper, with the policy's part order."""
    rates = {
        feature: evaluate_policy(
            rule_policy(feature, max_entities=max_entities, max_parts=max_parts), config, train, name=feature, wrap=wrap
        ).gold_correct_rate
        for feature in COMMIT_FEATURES
    }
    chosen = max(COMMIT_FEATURES, key=lambda f: (rates[f], -COMMIT_FEATURES.index(f)))
    policy = rule_policy(chosen, max_entities=max_entities, max_parts=max_parts)
    result = evaluate_policy(policy, config, test, name=f"best_rule:{chosen}", repeats=repeats, seed=seed, wrap=wrap)
    return BestRule(feature=chosen, train_gold_rates=rates, test=result)


def best_text_rule(
    config: EpisodeConfig,
    train: Sequence[CreativityTask],
    test: Sequence[CreativityTask],
    *,
    wrap: Callable[[CreativityEnv], TextCreativity],
    repeats: int = 2,
    seed: int = 0,
) -> BestRule:
    """``best_rule`` over ``text_scores`` on a text policy's rows (``wrap`` builds its ``TextCreativity``)."""
    probe = wrap(CreativityEnv(config, items=list(train[:1])))
    scores = text_scores(probe)
    rates = {
        score: evaluate_policy(text_rule_policy(score, probe), config, train, name=score, wrap=wrap).gold_correct_rate
        for score in scores
    }
    chosen = max(scores, key=lambda f: (rates[f], -scores.index(f)))
    policy = text_rule_policy(chosen, probe)
    result = evaluate_policy(policy, config, test, name=f"text_rule:{chosen}", repeats=repeats, seed=seed, wrap=wrap)
    return BestRule(feature=chosen, train_gold_rates=rates, test=result)


class SeedStats(BaseModel):
    """A figure over seeds: mean, 95 % interval, and every seed's value (percent, 0-100)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mean: float
    low: float
    high: float
    per_seed: list[float]


def seed_interval(values: Sequence[float], bounds: tuple[float, float] | None = None) -> SeedStats:
    """Mean and 95 % Student-t interval of per-seed values (one seed: the interval is the value),
    the interval clipped to ``bounds`` when given (a rate in percent cannot pass 100, however few seeds)."""
    data = [float(v) for v in values]
    if not data:
        raise ValueError("no seeds to summarise")
    mean = float(np.mean(data))
    if len(data) < 2:
        return SeedStats(mean=mean, low=mean, high=mean, per_seed=data)
    half = float(stats.t.ppf(0.975, len(data) - 1) * np.std(data, ddof=1) / np.sqrt(len(data)))
    low, high = mean - half, mean + half
    if bounds is not None:
        low, high = max(low, bounds[0]), min(high, bounds[1])
    return SeedStats(mean=mean, low=low, high=high, per_seed=data)
