"""MaskablePPO on tool repurposing: train on the train tasks, evaluate on held-out test tasks.

Needs the ``rl`` extra (``pip install 'lateralgym[rl]'``: torch, stable-baselines3, sb3-contrib);
``lateralgym train ppo`` is the command line face of ``train_ppo``.

The policy (``ActionScoringPolicy``) scores every discrete action with one small MLP shared by all
actions, from that action's row of the observation, and ``MaskablePPO`` takes the softmax over the
actions the mask allows. Two inputs (``policy=``): ``features``, ``DiscreteCreativity``'s hand-made
word-overlap features (``ACTION_FEATURES``), and ``text``, ``TextCreativity``'s rows made of sentence
embeddings of the task and of each action's text (no hand-chosen overlap score). Sharing the scorer
makes the policy indifferent to the entity order (drawn anew every episode) and lets what it learns
about one entity slot hold for every slot, so it learns from a few dozen tasks. The critic reads the
scene block and the action rows max-pooled. ``RowLayout`` tells the policy where the rows start and
how wide they are (it is saved with the model, so ``load_policy`` needs nothing else).

Training uses ``training_config`` (the config with shaped rewards), every ``eval_every`` timesteps
the greedy policy plays the test tasks, and at the end the run directory gets ``model.zip``,
``learning_curve.png`` (train return and test gold rate against timesteps) and ``summary.json``
(a ``TrainSummary``), with the untrained policy, a random valid-action policy, the heuristic player
and the best zero-training rule (``baselines.best_rule``) measured on the same test tasks.
"""

from __future__ import annotations

import functools
import json
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import BaseModel, ConfigDict
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.callbacks import BaseCallback
from stable_baselines3.common.monitor import Monitor
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor
from stable_baselines3.common.vec_env import DummyVecEnv
from torch import nn

from lateralgym.envs._benchmark import get_benchmark
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._curriculum import Curriculum, CurriculumEnv, curriculum_for
from lateralgym.envs._errors import ConfigError
from lateralgym.envs.benchmarks.creativity import CreativityEnv
from lateralgym.envs.benchmarks.creativity._options import CreativityOptions
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask
from lateralgym.envs.benchmarks.creativity.rl.affordance import START_FIT_WEIGHT, AffordanceHead, fit_affordance_head
from lateralgym.envs.benchmarks.creativity.rl.baselines import BestRule, best_rule, best_text_rule
from lateralgym.envs.benchmarks.creativity.rl.evaluation import (
    Evaluation,
    evaluate_heuristic,
    evaluate_policy,
    random_policy,
    split_tasks,
    training_config,
)
from lateralgym.envs.benchmarks.creativity.rl.model_file import ModelFileError, read_model
from lateralgym.envs.benchmarks.creativity.rl.text import TextCreativity, TextEncoder, encode_tasks, make_encoder
from lateralgym.envs.benchmarks.creativity.rl.wrappers import ACTION_FEATURES, DiscreteCreativity, PartOrder


def one_thread() -> None:
    """Run torch on one thread: the networks are tiny, and extra threads spin against the envs (and
    anything else on the machine) for the cores; measured 60x slower per layer on a busy 2-core box.
    One thread also sums in one order: with two, a seed's weights differed in their last bits
    (``tests/envs/test_rl_reproducible.py`` checks a seed gives the same bits under other thread settings)."""
    torch.set_num_threads(1)


class RowLayout(BaseFeaturesExtractor):  # type: ignore[misc]  # sb3 is seen as Any (rl extra)
    """The observation as it is (a flat vector), with where its action rows start, their width, how
    many of their columns come from the text, and how the text similarity starts (``text_init``)."""

    def __init__(
        self,
        observation_space: Any,
        scene_size: int,
        row_width: int,
        text_dims: int = 0,
        text_init: float = 0.0,
        afford_dims: int = 0,
        afford_init: float = 0.0,
    ) -> None:
        super().__init__(observation_space, int(observation_space.shape[0]))
        self.scene_size, self.row_width, self.text_dims, self.text_init = scene_size, row_width, text_dims, text_init
        self.afford_dims, self.afford_init = afford_dims, afford_init

    def forward(self, observations: torch.Tensor) -> torch.Tensor:
        return observations


TEXT_INIT = 5.0
"""Where a text policy's similarity starts (``ActionScorer``'s ``text_init``): 5 times the encoder's
cosine of the task with the action's text and with its entity's name. Chosen without the test tasks;
``benchmarks/bench_rl_ceiling.py``, fitting the same inputs to the gold answers from this start (its
L2 strength chosen by cross-validation over the train split, by gold entity), ends within noise of
it on held-out tasks: what the answers teach beyond the encoder's similarity shows no gain on unseen
entities. 0 starts from the uniform policy (``--text-init 0``)."""


AFFORD_INIT = TEXT_INIT * START_FIT_WEIGHT
"""Where the weight of the affordance head's log fit starts (``ActionScorer``'s ``afford_init``):
``START_FIT_WEIGHT`` of ``TEXT_INIT``, the ratio chosen on validation splits of the train tasks (a
third of the train gold entities held out; the test tasks played no part)."""


def policy_kwargs(
    env: DiscreteCreativity, text_init: float = TEXT_INIT, afford_init: float = AFFORD_INIT
) -> dict[str, Any]:
    """``MaskablePPO``'s ``policy_kwargs`` for ``env``'s observation layout."""
    width = getattr(env, "row_width", len(ACTION_FEATURES))
    text_dims = getattr(env, "text_dims", 0)
    layout: dict[str, Any] = {"scene_size": env.scene_size, "row_width": width, "text_dims": text_dims}
    if text_dims:
        layout["text_init"] = text_init
    afford_dims = getattr(env, "afford_dims", 0)
    if afford_dims:
        layout["afford_dims"], layout["afford_init"] = afford_dims, afford_init
    return {"features_extractor_class": RowLayout, "features_extractor_kwargs": layout}


class ActionScorer(nn.Module):  # type: ignore[misc]  # torch is seen as Any (rl extra)
    """SB3's ``mlp_extractor`` for ``ActionScoringPolicy``: one logit per action and a critic latent.

    A row's first ``text_dims`` columns (a text policy's products of task and action vectors) enter
    the logit through one linear layer, a weighted similarity learnt over every action at once, which
    cannot memorise one task's answer; the other columns (features, or the row's structure) go
    through a small MLP. Without text columns the whole row goes through the MLP.

    The linear layer starts with every weight ``text_init``: as the products are of L2-normalised
    vectors, its first score is then ``text_init`` times the sum of two cosines (task and action
    text, task and entity name), the encoder's own similarity, which training reweights dimension by
    dimension; 0 starts from the uniform policy. The inputs are the same either way:
    the start is a prior, not a hand-chosen feature.

    With an affordance head, the last ``afford_dims`` text columns (need x offer per category) add
    ``afford_scale * log(sum_c exp(w_c) * column_c)`` to the logit of every row that has them (commit
    rows of revealed parts): a learnt weight per category (``w`` starts at 0) and a learnt scale
    (starts at ``afford_init``), so the policy starts at the cosines plus the head's log fit.
    """

    def __init__(
        self,
        scene_size: int,
        n_actions: int,
        row_width: int,
        hidden: int = 64,
        text_dims: int = 0,
        text_init: float = 0.0,
        afford_dims: int = 0,
        afford_init: float = 0.0,
    ) -> None:
        super().__init__()
        self.scene_size, self.n_actions, self.k, self.text_dims = scene_size, n_actions, row_width, text_dims
        self.text_init, self.afford_dims, self.afford_init = text_init, afford_dims, afford_init
        self.latent_dim_pi, self.latent_dim_vf = n_actions, hidden
        rest = row_width - text_dims
        self.scorer = nn.Sequential(
            nn.Linear(rest, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(), nn.Linear(hidden, 1)
        )
        similarity = text_dims - afford_dims
        self.text = nn.Linear(similarity, 1, bias=False) if similarity else None
        if self.text is not None:
            nn.init.constant_(self.text.weight, text_init)  # the encoder's cosine, scaled (0: uniform)
        self.afford_weights = nn.Parameter(torch.zeros(afford_dims)) if afford_dims else None
        """Log-weights of the head's categories in the fit (0: every category counts once)."""
        self.afford_scale = nn.Parameter(torch.tensor(float(afford_init))) if afford_dims else None
        """The log fit's weight in the logit."""
        critic_in = scene_size + rest + (1 if text_dims else 0)  # the best text score, for a text policy
        self.critic = nn.Sequential(nn.Linear(critic_in, hidden), nn.Tanh(), nn.Linear(hidden, hidden))

    def _rows(self, features: torch.Tensor) -> torch.Tensor:
        return features[:, self.scene_size :].reshape(-1, self.n_actions, self.k)

    def _text_score(self, rows: torch.Tensor) -> torch.Tensor:
        score = torch.zeros(rows.shape[:-1], dtype=rows.dtype, device=rows.device)
        similarity = self.text_dims - self.afford_dims
        if self.text is not None:
            score = score + self.text(rows[..., :similarity]).squeeze(-1)
        if self.afford_weights is not None and self.afford_scale is not None:
            fits = rows[..., similarity : self.text_dims]  # the head's need x offer, per category
            fit = (fits * self.afford_weights.exp()).sum(-1)
            shown = fits.sum(-1) > 0  # commit rows of revealed parts; the rest have no fit
            score = score + torch.where(shown, self.afford_scale * torch.log(fit.clamp_min(1e-8)), 0.0)
        return score

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        """One logit per action, from its row."""
        rows = self._rows(features)
        return self.scorer(rows[..., self.text_dims :]).squeeze(-1) + self._text_score(rows)

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        """The critic's latent from the scene block, the max-pooled rows and the best text score."""
        rows = self._rows(features)
        pooled = rows[..., self.text_dims :].max(dim=1).values
        parts = [features[:, : self.scene_size], pooled]
        if self.text is not None:
            parts.append(self._text_score(rows).max(dim=1, keepdim=True).values)
        return torch.tanh(self.critic(torch.cat(parts, dim=1)))

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)


class ActionScoringPolicy(MaskableActorCriticPolicy):  # type: ignore[misc]  # sb3 is seen as Any (rl extra)
    """``MaskableActorCriticPolicy`` whose action logits come from a scorer shared by every action."""

    def _build_mlp_extractor(self) -> None:
        layout = self.features_extractor
        if isinstance(layout, RowLayout):
            n_actions = int(self.action_space.n)
            self.mlp_extractor = ActionScorer(
                layout.scene_size,
                n_actions,
                layout.row_width,
                text_dims=layout.text_dims,
                text_init=getattr(layout, "text_init", 0.0),  # a model saved before text_init started at 0
                afford_dims=getattr(layout, "afford_dims", 0),  # a model saved before the affordance head
                afford_init=getattr(layout, "afford_init", 0.0),
            )
            return
        n_actions = int(self.action_space.n)  # a model saved before RowLayout: the feature rows
        scene_size = int(self.observation_space.shape[0]) - n_actions * len(ACTION_FEATURES)
        self.mlp_extractor = ActionScorer(scene_size, n_actions, len(ACTION_FEATURES))

    def _build(self, lr_schedule: Any) -> None:
        super()._build(lr_schedule)
        self.action_net = nn.Identity()  # the extractor's actor latent already is one logit per action
        last = self.mlp_extractor.scorer[-1]
        nn.init.orthogonal_(last.weight, gain=0.01)  # start near the uniform policy, as SB3 does
        nn.init.zeros_(last.bias)
        scorer = self.mlp_extractor
        if scorer.text is not None:  # SB3's orthogonal init just overwrote the text layer's start
            nn.init.constant_(scorer.text.weight, scorer.text_init)
        if scorer.afford_weights is not None and scorer.afford_scale is not None:
            nn.init.zeros_(scorer.afford_weights)
            nn.init.constant_(scorer.afford_scale, scorer.afford_init)
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)


class CurvePoint(BaseModel):
    """One point of the learning curve."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    timesteps: int
    """Environment steps trained so far."""
    train_return: float | None
    """Mean return of the last (up to 100) training episodes; None before the first ends."""
    train_gold_rate: float | None
    """Gold-correct share of those training episodes (sampled actions)."""
    test_gold_rate: float
    """Gold-correct share of the greedy policy on the test tasks."""
    test_entity_rate: float
    """Entity-correct share of the greedy policy on the test tasks."""
    curriculum: dict[str, dict[str, float]] | None = None
    """Per difficulty level: the curriculum's moving average of train success, its chance at the next
    draw and its episodes so far (``Curriculum.state``); None in runs before the curriculum."""


class TrainSummary(BaseModel):
    """What ``train_ppo`` did and reached (``summary.json``)."""

    model_config = ConfigDict(extra="forbid")

    config: str
    """The config trained on (its name)."""
    policy: str = "features"
    """The policy's input: ``features`` (word-overlap features) or ``text`` (sentence embeddings)."""
    encoder: str | None = None
    """The text policy's encoder (``st:`` the MiniLM, ``lexical``); None for ``features``."""
    part_order: str = "file"
    """How part slots were filled (``DiscreteCreativity``'s ``part_order``; runs before it: ``file``)."""
    text_init: float | None = None
    """The text policy's starting similarity scale (``ActionScorer``); None for ``features``."""
    affordance_categories: list[str] | None = None
    """The text policy's affordance head's categories (``affordance_head.npz``); None without a head."""
    seed: int
    """The training seed."""
    timesteps: int
    """Environment steps trained."""
    seconds: float
    """Wall-clock training time (evaluations included)."""
    timesteps_per_second: float
    """Training throughput."""
    train_items: list[str]
    """Ids of the training tasks."""
    test_items: list[str]
    """Ids of the held-out test tasks (no gold entity of them is a gold entity in training)."""
    curve: list[CurvePoint]
    """The learning curve."""
    untrained: Evaluation | None = None
    """The policy before training (greedy) on the test tasks: with ``trained``, the before/after of
    exploration (gold-inspection rate, turns, invalid moves) as well as of success."""
    trained: Evaluation
    """The trained (greedy) policy on the test tasks."""
    trained_on_train: Evaluation
    """The trained (greedy) policy on the training tasks."""
    random: Evaluation
    """A uniformly random valid-action policy on the test tasks."""
    heuristic: Evaluation
    """The heuristic player on the test tasks."""
    best_rule: BestRule | None = None
    """The best zero-training one-feature rule (chosen on the train tasks) on the test tasks."""
    text_rule: BestRule | None = None
    """A text policy's zero-training text rule (``baselines.best_text_rule``) on the test tasks."""
    curriculum: str = "uniform"
    """How training episodes drew their task: ``uniform`` (the env's own draw) or ``adaptive``
    (``lateralgym.envs.Curriculum`` over ``CreativityData.level_of``); each episode is in ``curriculum.jsonl``."""


def greedy(model: MaskablePPO | MaskableActorCriticPolicy) -> Any:
    """The trained model (or its policy) as an ``rl_eval.Policy``: its most likely action among the masked-in ones."""

    def act(obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator) -> int:
        action, _ = model.predict(obs, action_masks=mask, deterministic=True)
        return int(action)

    return act


class _Evaluator(BaseCallback):  # type: ignore[misc]  # sb3 is seen as Any (rl extra)
    def __init__(self, every: int, evaluate: Any, progress: Any, curriculum: Curriculum | None = None) -> None:
        super().__init__()
        self.every, self.evaluate, self.progress, self.curriculum = every, evaluate, progress, curriculum
        self.next_at = 0
        self.gold: deque[bool] = deque(maxlen=100)
        self.curve: list[CurvePoint] = []

    def _on_step(self) -> bool:
        for info in self.locals["infos"]:
            if "outcome" in info:
                self.gold.append(bool(info["outcome"]["gold_correct"]))
        if self.progress is not None:
            self.progress(self.num_timesteps)
        if self.num_timesteps >= self.next_at:
            self.point()
            self.next_at = self.num_timesteps + self.every
        return True

    def point(self) -> None:
        result: Evaluation = self.evaluate()
        returns = [float(e["r"]) for e in self.model.ep_info_buffer]
        self.curve.append(
            CurvePoint(
                timesteps=int(self.num_timesteps),
                train_return=float(np.mean(returns)) if returns else None,
                train_gold_rate=float(np.mean(self.gold)) if self.gold else None,
                test_gold_rate=result.gold_correct_rate,
                test_entity_rate=result.entity_correct_rate,
                curriculum=self.curriculum.state() if self.curriculum is not None else None,
            )
        )


Wrap = Callable[[CreativityEnv], DiscreteCreativity]
"""Builds the wrapper whose observations a policy reads (``DiscreteCreativity`` or a ``TextCreativity``)."""


def wrapper(
    policy: str,
    encoder: str | TextEncoder = "st:",
    dim: int | None = None,
    part_order: PartOrder = "shuffled",
    head: AffordanceHead | None = None,
) -> Wrap:
    """The wrapper of a policy input: ``features`` or ``text`` (with one shared, cached encoder: a
    spec, or an encoder already made; ``head`` adds an affordance head's columns).

    Raises:
        ConfigError: an unknown policy input or part order.
        DataBuildError: ``text`` with the ``st:`` encoder and no ``embed`` extra (the message says what to install).
    """
    if part_order not in ("shuffled", "file"):
        raise ConfigError(f"--part-order is 'shuffled' or 'file', got {part_order!r}")
    if policy == "features":
        return functools.partial(DiscreteCreativity, part_order=part_order)
    if policy == "text":
        shared = make_encoder(encoder, dim=dim) if isinstance(encoder, str) else encoder
        return functools.partial(TextCreativity, encoder=shared, part_order=part_order, head=head)
    raise ConfigError(f"--policy is 'features' or 'text', got {policy!r}")


def gold_success(info: dict[str, Any]) -> float:
    """An ended episode's success for the curriculum: 1 when it committed the gold part."""
    return float(bool(info.get("outcome", {}).get("gold_correct", False)))


def training_envs(
    config: EpisodeConfig,
    train: Sequence[CreativityTask],
    n_envs: int,
    wrap: Wrap = DiscreteCreativity,
    curriculum: Curriculum | None = None,
) -> DummyVecEnv:
    """``n_envs`` monitored wrapped envs drawing episodes from ``train`` only (masks through
    ``env_method("action_masks")``, as ``MaskablePPO`` asks); with a ``curriculum`` (over ``train`` in
    its order, shared by the envs) each env's resets go through a ``CurriculumEnv``."""

    def make() -> Any:
        env: Any = wrap(CreativityEnv(config, items=list(train)))
        if curriculum is not None:
            env = CurriculumEnv(env, curriculum, gold_success)
        return Monitor(env)

    return DummyVecEnv([make] * n_envs)


def ppo_model(
    envs: Any, layout: DiscreteCreativity, *, seed: int = 0, text_init: float = TEXT_INIT, weight_decay: float = 0.0
) -> MaskablePPO:
    """``MaskablePPO`` with ``ActionScoringPolicy`` and ``train_ppo``'s settings over ``envs`` (a vector
    env), the policy's rows laid out as ``layout``'s (a wrapper of the kind the envs hold)."""
    return MaskablePPO(
        ActionScoringPolicy,
        envs,
        policy_kwargs={
            **policy_kwargs(layout, text_init, text_init * START_FIT_WEIGHT),
            **(
                {"optimizer_class": torch.optim.AdamW, "optimizer_kwargs": {"weight_decay": weight_decay}}
                if weight_decay
                else {}
            ),
        },
        n_steps=128,
        batch_size=256,
        n_epochs=4,
        learning_rate=1e-3,
        ent_coef=0.01,
        gamma=0.99,
        seed=seed,
        device="cpu",
        verbose=0,
    )


def train_ppo(
    config: EpisodeConfig,
    tasks: Sequence[CreativityTask],
    *,
    timesteps: int,
    out: Path,
    seed: int = 0,
    eval_every: int = 10_000,
    eval_repeats: int = 2,
    n_envs: int = 8,
    progress: Any = None,
    policy: str = "features",
    encoder: str = "st:",
    weight_decay: float = 0.0,
    part_order: PartOrder = "shuffled",
    text_init: float = TEXT_INIT,
    affordance_head: bool = False,
    curriculum: str = "uniform",
) -> TrainSummary:
    """Train ``MaskablePPO`` with ``ActionScoringPolicy`` on the train split, evaluating on the test split.

    Args:
        config: a CreativityBench config (trained with ``training_config``'s shaped rewards).
        tasks: every task; ``split_tasks`` divides them by gold entity.
        timesteps: environment steps to train.
        out: the run directory (created): ``model.zip``, ``learning_curve.png``, ``summary.json``.
        seed: seeds PPO, the envs and the evaluations.
        eval_every: timesteps between two evaluations on the test tasks.
        eval_repeats: evaluation episodes per test task (seeds ``seed``, ``seed + 1``, ...).
        n_envs: parallel environments (one process).
        progress: called with the timesteps done after every vector step (e.g. a progress bar).
        policy: the policy's input: ``features`` (word-overlap features) or ``text`` (``TextCreativity``).
        encoder: the text policy's sentence encoder (``st:``, the ``embed`` extra's MiniLM; ``lexical``).
        weight_decay: AdamW's decoupled weight decay (0: Adam, as before).
        part_order: how part slots are filled (``DiscreteCreativity``): ``shuffled`` per episode, or ``file``.
        text_init: the text policy's starting similarity scale (``ActionScorer``; 0 starts uniform).
        affordance_head: give the text policy an ``affordance.AffordanceHead`` fitted on the train
            split only (saved as ``affordance_head.npz``); its log fit starts at ``AFFORD_INIT``.
        curriculum: how training episodes draw their task (``lateralgym.envs.Curriculum``): ``uniform``
            (the env's own seeded draw, as without a curriculum) or ``adaptive`` (difficulty levels whose
            recent gold rate is near 0.5 come most often); each episode's level and success go to
            ``curriculum.jsonl``, the levels' state to every curve point.

    Raises:
        ConfigError: if a split is empty, a count is below 1, or the config is not CreativityBench's
            (``CurriculumError``: an unknown curriculum, or ``adaptive`` over tasks of one level).
    """
    if timesteps < 1 or eval_every < 1 or n_envs < 1:
        raise ConfigError("timesteps, eval_every and n_envs must be at least 1")
    train, test = split_tasks(tasks, "train"), split_tasks(tasks, "test")
    if not train or not test:
        raise ConfigError(
            f"the train/test split of {len(tasks)} tasks has {len(train)} train and {len(test)} test tasks; "
            "use a dataset with more gold entities"
        )
    if affordance_head and policy != "text":
        raise ConfigError("--affordance-head reads the text encoder's vectors: use it with --policy text")
    shaped = training_config(config)
    sampler = curriculum_for(get_benchmark(config.benchmark), train, curriculum, seed=seed)
    one_thread()  # before the encoder's first torch op: every sum in one order, whatever the machine's cores
    head = None
    if policy == "text":
        shared = make_encoder(encoder)
        encode_tasks(shared, [*train, *test])  # in batches, once: the episodes then find every text cached
        try:
            head = fit_affordance_head(train, test, shared) if affordance_head else None
        except ValueError as error:
            raise ConfigError(f"cannot fit the affordance head: {error}") from error
        wrap = wrapper(policy, shared, part_order=part_order, head=head)
    else:
        wrap = wrapper(policy, encoder, part_order=part_order)
    plain = wrapper("features", part_order=part_order)
    envs = training_envs(shaped, train, n_envs, wrap, sampler)
    layout = envs.envs[0].env  # under the Monitor: the curriculum's wrapper, then the policy's
    model = ppo_model(envs, layout.env, seed=seed, text_init=text_init, weight_decay=weight_decay)

    def on_test(name: str = "trained") -> Evaluation:
        return evaluate_policy(greedy(model), shaped, test, name=name, repeats=eval_repeats, seed=seed, wrap=wrap)

    untrained = on_test("untrained")
    evaluator = _Evaluator(eval_every, on_test, progress, sampler)
    start = time.perf_counter()
    model.learn(total_timesteps=timesteps, callback=evaluator)
    evaluator.point()
    seconds = time.perf_counter() - start
    out.mkdir(parents=True, exist_ok=True)
    model.save(out / "model.zip")
    if head is not None:
        head.save(out / "affordance_head.npz")
    write_draws(out / "curriculum.jsonl", sampler, train)
    options = shaped.options_as(CreativityOptions)
    summary = TrainSummary(
        config=config.name,
        policy=policy,
        encoder=encoder if policy == "text" else None,
        part_order=part_order,
        text_init=text_init if policy == "text" else None,
        affordance_categories=list(head.categories) if head is not None else None,
        curriculum=sampler.mode,
        seed=seed,
        timesteps=int(model.num_timesteps),
        seconds=seconds,
        timesteps_per_second=model.num_timesteps / seconds,
        train_items=[t.id for t in train],
        test_items=[t.id for t in test],
        curve=evaluator.curve,
        untrained=untrained,
        trained=on_test(),
        trained_on_train=evaluate_policy(greedy(model), shaped, train, name="trained", seed=seed, wrap=wrap),
        random=evaluate_policy(
            random_policy, shaped, test, name="random", repeats=2 * eval_repeats, seed=seed, wrap=plain
        ),
        heuristic=evaluate_heuristic(shaped, test, repeats=eval_repeats, seed=seed),
        best_rule=best_rule(
            shaped,
            train,
            test,
            max_entities=options.max_entities,
            max_parts=options.max_parts,
            repeats=eval_repeats,
            seed=seed,
            wrap=plain,
        ),
        text_rule=(
            best_text_rule(shaped, train, test, wrap=wrap, repeats=eval_repeats, seed=seed)  # type: ignore[arg-type]  # wrap builds a TextCreativity here
            if policy == "text"
            else None
        ),
    )
    (out / "summary.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    plot_curve(summary, out / "learning_curve.png")
    return summary


def write_draws(path: Path, curriculum: Curriculum, train: Sequence[CreativityTask]) -> None:
    """``curriculum.jsonl``: one line per training episode in the order they began (``episode``, the
    task's ``item`` id, its ``level``, its ``success``: 1 gold, 0 not, null if cut off by the end)."""
    lines = [
        json.dumps({"episode": n, "item": train[d.index].id, "level": d.level, "success": d.success})
        for n, d in enumerate(curriculum.draws)
    ]
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def load_policy(path: Path) -> Any:
    """A saved ``model.zip`` as an ``evaluation.Policy`` (greedy), for the wrapper it was trained on.

    Nothing in the file is unpickled (SB3's ``load`` would run a crafted file's code): the policy is
    built from our own classes with the plain settings ``model_file.read_model`` reads, and gets the
    file's weights (tensors only).

    Raises:
        ModelFileError: the file is not a policy ``train_ppo`` saved (one line naming it).
    """
    from gymnasium import spaces

    one_thread()
    saved = read_model(Path(path))
    kwargs: dict[str, Any] = {}
    if saved.layout is not None:
        kwargs = {"features_extractor_class": RowLayout, "features_extractor_kwargs": saved.layout}
    observations = spaces.Box(-np.inf, np.inf, shape=(saved.observation_size,), dtype=np.float32)
    try:
        policy = ActionScoringPolicy(observations, spaces.Discrete(saved.n_actions), lambda _: 0.0, **kwargs)
        policy.load_state_dict(saved.weights)
    except (RuntimeError, ValueError) as exc:  # weights of another shape than the settings say
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ModelFileError(Path(path), f"its weights do not fit its settings ({first[:200]})") from exc
    policy.set_training_mode(False)
    return greedy(policy)


def plot_curve(summary: TrainSummary, path: Path) -> None:
    """Write the learning curve: train return and test gold rate (with the heuristic's) against timesteps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [p.timesteps for p in summary.curve]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    top.plot(steps, [np.nan if p.train_return is None else p.train_return for p in summary.curve], marker=".")
    top.set_ylabel("train return (mean of last 100)")
    top.set_title(
        f"MaskablePPO ({summary.policy}{' + affordance head' if summary.affordance_categories else ''}) on "
        f"{summary.config}: {len(summary.train_items)} train / "
        f"{len(summary.test_items)} test tasks"
    )
    bottom.plot(steps, [100 * p.test_gold_rate for p in summary.curve], marker=".", label="trained (greedy)")
    bottom.axhline(100 * summary.heuristic.gold_correct_rate, color="tab:orange", ls="--", label="heuristic")
    if summary.best_rule is not None:
        rule = summary.best_rule
        bottom.axhline(100 * rule.test.gold_correct_rate, color="tab:red", ls="-.", label=f"best rule ({rule.feature})")
    if summary.text_rule is not None:
        text = summary.text_rule
        label = f"text rule ({text.feature})"
        bottom.axhline(100 * text.test.gold_correct_rate, color="tab:green", ls="-.", label=label)
    bottom.axhline(100 * summary.random.gold_correct_rate, color="tab:gray", ls=":", label="random")
    bottom.set_ylabel("test gold correct (%)")
    bottom.set_xlabel("timesteps")
    bottom.legend(loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
