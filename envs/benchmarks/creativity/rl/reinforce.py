"""A numpy-only REINFORCE learner for ``DiscreteCreativity``: proof that a policy can learn tool repurposing.

The policy is a softmax over the *valid* discrete actions with logits ``theta . phi(s, a)``. Valid
means: inspecting an entity slot in use (re-inspecting is legal but wastes a turn, which a feature
exposes) or committing a part of a revealed entity (committing an unrevealed part commits a
placeholder, always wrong, so those actions are masked along with empty slots). ``phi`` is a
compact vector per action built only from the wrapper's observation vector (see ``FEATURES``), so
one ``theta`` of nine numbers plays every task.

Training is Monte-Carlo policy gradient: the reward-to-go minus a baseline (a running mean of
episode returns) times ``grad log pi``, averaged over small batches of episodes, with every random
draw (task choice and action samples) from one ``np.random.default_rng(seed)``.

``shaped_config`` is the interactive config the example trains on: 6 turns, a step cost, partial
credit for the right entity and a penalty for invalid actions. With ``theta = 0`` the policy is a
uniformly random valid-action player when sampled, and "inspect slot 0 every turn" when greedy
(the lowest index wins ties). It needs no torch; ``benchmarks/bench_rl_training.py`` reports it
beside MaskablePPO (``lateralgym.envs.benchmarks.creativity.rl.ppo``), which does better on held-out tasks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import numpy as np

from lateralgym.envs._config import EpisodeConfig, RewardConfig
from lateralgym.envs.benchmarks.creativity import CreativityEnv
from lateralgym.envs.benchmarks.creativity.rl.wrappers import DiscreteCreativity

FEATURES: tuple[str, ...] = (
    "inspect_name_overlap",  # the entity name's task overlap, divided by the largest in the scene
    "inspect_already_inspected",  # re-inspecting wastes a turn
    "commit",  # commit-vs-inspect bias (one bias suffices: softmax ignores what all actions share)
    "commit_part_overlap",  # the part attributes' task overlap, divided by the largest revealed one
    "commit_best_part",  # the best-overlapping revealed part
    "commit_best_in_entity",  # the best-overlapping part of its entity
    "commit_name_overlap",  # the entity name's (normalised) task overlap
    "commit_turn",  # turn fraction: commit-vs-inspect as the budget runs down
    "commit_last_turn",  # the last turn: commit now or get nothing
)
"""Names of the per-action features, in ``theta`` order."""


def shaped_config(max_turns: int = 6) -> EpisodeConfig:
    """``creativity-interactive`` with ``max_turns`` turns and shaped rewards for RL."""
    rewards = RewardConfig(correct=1.0, entity_only=0.25, invalid=-0.05, step=-0.01)
    base = EpisodeConfig.named("creativity-interactive")
    return base.model_copy(update={"name": "creativity-interactive-rl", "max_turns": max_turns, "rewards": rewards})


def make_env(items: Sequence[Any] | None = None, max_turns: int = 6) -> DiscreteCreativity:
    """A ``DiscreteCreativity`` env on ``shaped_config`` (default items: the sample tasks)."""
    return DiscreteCreativity(CreativityEnv(shaped_config(max_turns), items=items))


def _normalised(values: np.ndarray, where: np.ndarray) -> np.ndarray:
    top = float(values[where].max()) if where.any() else 0.0
    return np.where(where, values / top, 0.0) if top > 0 else np.zeros_like(values)


class LinearSoftmaxPolicy:
    """Softmax over valid actions with logits ``theta . phi(s, a)`` (see the module docstring).

    Args:
        n_entities: the wrapper's ``E`` (entity slots).
        n_parts: the wrapper's ``P`` (part slots per entity).
        max_turns: the episode's turn budget (for the last-turn feature).
        theta: initial weights, one per name in ``FEATURES``; None starts at zero.
    """

    def __init__(self, n_entities: int, n_parts: int, max_turns: int, theta: np.ndarray | None = None) -> None:
        self.E, self.P, self.max_turns = n_entities, n_parts, max_turns
        self.theta = np.zeros(len(FEATURES)) if theta is None else np.asarray(theta, dtype=np.float64).copy()
        if self.theta.shape != (len(FEATURES),):
            raise ValueError(f"theta needs {len(FEATURES)} weights (one per FEATURES name), got {self.theta.shape}")

    @classmethod
    def for_env(cls, env: DiscreteCreativity, theta: np.ndarray | None = None) -> LinearSoftmaxPolicy:
        """A policy sized for ``env``."""
        return cls(env.E, env.P, env.max_turns, theta)

    def features(self, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(phi, mask)``: ``(E + E*P, len(FEATURES))`` action features and the valid-action mask."""
        E, P = self.E, self.P
        in_use, inspected = obs[:E] > 0.5, obs[E : 2 * E]
        turn = float(obs[2 * E])
        name = _normalised(obs[2 * E + 1 : 3 * E + 1], in_use)
        start = 4 * E + 1  # skip the revealed-entity block: the part mask says the same per part
        revealed = (obs[start : start + E * P].reshape(E, P) > 0.5) & in_use[:, None]
        overlap = obs[start + E * P : start + 2 * E * P].reshape(E, P)
        part = _normalised(overlap, revealed)
        best = revealed & (part == 1.0)
        row_top = np.where(revealed, overlap, -1.0).max(axis=1, keepdims=True)
        best_in_entity = revealed & (overlap == row_top) & (row_top > 0)
        last = turn * self.max_turns >= self.max_turns - 1 - 1e-6

        phi = np.zeros((E + E * P, len(FEATURES)))
        phi[:E, 0] = name
        phi[:E, 1] = inspected
        commit = phi[E:].reshape(E, P, len(FEATURES))  # a view: writes land in phi
        commit[..., 2] = 1.0
        commit[..., 3] = part
        commit[..., 4] = best
        commit[..., 5] = best_in_entity
        commit[..., 6] = name[:, None]
        commit[..., 7] = turn
        commit[..., 8] = float(last)
        return phi, np.concatenate([in_use, revealed.ravel()])

    def probabilities(self, phi: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Action probabilities: softmax of ``phi @ theta`` over valid actions, 0 elsewhere."""
        logits = np.where(mask, phi @ self.theta, -np.inf)
        weights = np.exp(logits - logits.max())
        return cast(np.ndarray, weights / weights.sum())

    def act(self, obs: np.ndarray, rng: np.random.Generator, greedy: bool = False) -> int:
        """Sample an action (or the most likely one, lowest index on ties, when ``greedy``)."""
        phi, mask = self.features(obs)
        probs = self.probabilities(phi, mask)
        return int(np.argmax(probs)) if greedy else int(rng.choice(len(probs), p=probs))


@dataclass
class TrainingHistory:
    """Per training episode: the return and whether the gold (entity, part) was committed."""

    returns: list[float] = field(default_factory=list)
    """Undiscounted return of each episode, in training order."""
    gold_correct: list[bool] = field(default_factory=list)
    """Whether each episode committed the gold entity and part."""


@dataclass(frozen=True)
class Evaluation:
    """Means over evaluation episodes."""

    mean_return: float
    """Mean undiscounted return (shaped rewards included)."""
    gold_correct_rate: float
    """Share of episodes that committed the gold entity and part."""
    entity_correct_rate: float
    """Share of episodes that committed a part of the gold entity."""
    mean_inspections: float
    """Mean number of distinct entities inspected."""
    episodes: int
    """Episodes played."""


def train_reinforce(
    env_factory: Callable[[], DiscreteCreativity],
    episodes: int,
    lr: float = 1.0,
    seed: int = 0,
    baseline_rate: float = 0.05,
    batch_size: int = 4,
) -> tuple[LinearSoftmaxPolicy, TrainingHistory]:
    """Train a ``LinearSoftmaxPolicy`` from ``theta = 0`` by REINFORCE; the same seed gives the same ``theta``.

    Args:
        env_factory: builds the env (e.g. ``make_env``); each episode resets it on a task drawn
            with a seed from the learner's generator.
        episodes: training episodes.
        lr: step size of the policy-gradient ascent.
        seed: seed of ``np.random.default_rng`` (task draws and action samples).
        baseline_rate: step size of the running-mean-return baseline.
        batch_size: episodes whose gradients are averaged into one update (less variance).

    Raises:
        ValueError: if ``episodes`` is negative or ``batch_size`` is below 1.
    """
    if episodes < 0 or batch_size < 1:
        raise ValueError(f"need episodes >= 0 and batch_size >= 1, got {episodes} and {batch_size}")
    env = env_factory()
    policy = LinearSoftmaxPolicy.for_env(env)
    rng = np.random.default_rng(seed)
    history = TrainingHistory()
    baseline = 0.0
    step = np.zeros_like(policy.theta)
    for episode in range(episodes):
        obs, info = env.reset(seed=int(rng.integers(2**31)))
        scores: list[np.ndarray] = []
        rewards: list[float] = []
        done = False
        while not done:
            phi, mask = policy.features(obs)
            probs = policy.probabilities(phi, mask)
            action = int(rng.choice(len(probs), p=probs))
            scores.append(phi[action] - probs @ phi)  # grad of log pi(action) for a linear softmax
            obs, reward, terminated, truncated, info = env.step(action)
            rewards.append(reward)
            done = terminated or truncated
        to_go = np.cumsum(rewards[::-1])[::-1]
        for score, ret in zip(scores, to_go, strict=True):
            step += (ret - baseline) * score
        if (episode + 1) % batch_size == 0 or episode + 1 == episodes:
            in_batch = (episode % batch_size) + 1  # the last batch may be partial
            policy.theta += lr * step / in_batch
            step[:] = 0.0
        baseline += baseline_rate * (float(to_go[0]) - baseline)
        history.returns.append(float(to_go[0]))
        history.gold_correct.append(bool(info["outcome"]["gold_correct"]))
    return policy, history


def evaluate(
    policy: LinearSoftmaxPolicy,
    env: DiscreteCreativity,
    episodes: int | None = None,
    greedy: bool = True,
    seed: int = 0,
) -> Evaluation:
    """Play ``episodes`` episodes (default: one per task), episode ``k`` on task ``k mod n_tasks``.

    ``greedy`` plays the most likely action; otherwise actions are sampled from ``seed``'s generator.

    Raises:
        ValueError: if ``episodes`` is below 1.
    """
    n_tasks = len(cast(CreativityEnv, env.unwrapped).items)
    episodes = n_tasks if episodes is None else episodes
    if episodes < 1:
        raise ValueError(f"evaluate needs at least one episode, got {episodes}")
    rng = np.random.default_rng(seed)
    returns, gold, entity, inspections = [], [], [], []
    for k in range(episodes):
        obs, info = env.reset(seed=seed + k, options={"index": k % n_tasks})
        total, done = 0.0, False
        while not done:
            obs, reward, terminated, truncated, info = env.step(policy.act(obs, rng, greedy))
            total += reward
            done = terminated or truncated
        outcome = info["outcome"]
        returns.append(total)
        gold.append(outcome["gold_correct"])
        entity.append(outcome["entity_correct"])
        inspections.append(outcome["inspections"])
    return Evaluation(
        mean_return=float(np.mean(returns)),
        gold_correct_rate=float(np.mean(gold)),
        entity_correct_rate=float(np.mean(entity)),
        mean_inspections=float(np.mean(inspections)),
        episodes=episodes,
    )
