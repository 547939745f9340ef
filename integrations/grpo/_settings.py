"""GRPO's settings, errors and figures: what a run is told and what it reports (``summary.json``)."""

from __future__ import annotations

import importlib.util
import math
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from lateralgym.envs import LateralGymError

__all__ = [
    "GRPO_INSTALL_HINT",
    "EpisodeFigures",
    "GRPOError",
    "GRPOSettings",
    "GRPOSummary",
    "HeldOut",
    "StepFigures",
    "ProblemInterval",
    "grpo_missing",
    "mean_interval",
    "wilson",
]

GRPO_INSTALL_HINT = "pip install 'lateralgym[grpo]'"


_NEEDS = ("torch", "trl", "transformers", "accelerate", "datasets")


class GRPOError(LateralGymError):
    """Training cannot start or go on (a missing extra, a model that does not load, no train items,
    out of memory); the message says what to do, and a checkpoint already written is kept."""


def grpo_missing() -> str | None:
    """What to install for GRPO, or None when everything is there."""
    missing = [name for name in _NEEDS if importlib.util.find_spec(name) is None]
    return f"GRPO needs {', '.join(missing)}: {GRPO_INSTALL_HINT}" if missing else None


class GRPOSettings(BaseModel):
    """How a GRPO run trains and evaluates (defaults: the settings measured on 2 CPU cores)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    steps: int = Field(default=40, ge=1)
    """Optimizer steps."""
    learning_rate: float = Field(default=5e-6, gt=0)
    """Constant learning rate (2e-5 collapsed SmolLM2's replies into words that are no option)."""
    beta: float = Field(default=0.0, ge=0)
    """KL coefficient against the starting model (0: no reference model is kept, half the memory)."""
    num_generations: int = Field(default=8, ge=2)
    """Completions (episodes) per prompt: GRPO's group, whose rewards are compared."""
    prompts_per_step: int = Field(default=1, ge=1)
    """Items per optimizer step (the batch is ``num_generations * prompts_per_step``)."""
    max_completion_length: int = Field(default=32, ge=1)
    """Tokens the model may write per move."""
    temperature: float = Field(default=1.0, gt=0)
    """Sampling temperature of the training rollouts."""
    eval_max_new_tokens: int = Field(default=64, ge=1)
    """Tokens per move in the greedy held-out evaluation."""
    eval_items: int | None = Field(default=None, ge=1)
    """Held-out items evaluated, spread evenly over the test split (None: every test item of the config)."""
    valid_shaping: float = Field(default=0.0, ge=0)
    """Weight of a reward for the share of moves the parser could read (0: the env's reward alone)."""
    threads: int = Field(default=2, ge=1)
    """torch threads (2 on an idle 2-core machine was 1.7x faster than 1)."""
    seed: int = 0
    rollout: Literal["text", "tools"] = "text"
    """``text``: the LLM player's prompts, each reply read by its parser (any chat model). ``tools``: TRL's
    ``environment_factory`` (``lateralgym.integrations.trl``), each move a tool call (a chat template
    with tool calling; a ChatML tokenizer without one is given TRL's Qwen 2.5 template)."""
    curriculum: Literal["uniform", "adaptive"] = "uniform"
    """Which train prompts each step draws (``lateralgym.envs.Curriculum``): ``uniform`` (TRL's shuffled
    order) or ``adaptive`` (difficulty levels whose recent mean reward is near 0.5 come most often; the
    benchmark's ``DataPart.level_of``; text rollouts)."""
    save_every: int = Field(default=10, ge=1)
    """Steps between checkpoints (each holds the model and the optimizer state: ~1.5 GB for 135M)."""


class EpisodeFigures(BaseModel):
    """One episode's figures (each held-out episode is a line of ``eval_before.jsonl`` / ``eval_after.jsonl``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    item_id: str = ""
    problem: str = ""
    """The problem the item poses, shared by its variants (``DataPart.problem_of``): intervals over items
    draw one problem's variants together."""
    reward: float
    """The episode's env reward, summed over its moves."""
    moves: int
    valid_moves: int
    """Moves the env accepted (parsed, allowed)."""
    questions: int
    """Yes/no questions asked (``ask`` moves)."""
    success: bool
    """The outcome counts as a success (``Outcome.succeeded``)."""
    outcome_flags: dict[str, bool] = Field(default_factory=dict)
    """The outcome's true/false fields (whatever the benchmark records: a gold part inspected, a commit made)."""
    messages: list[dict[str, Any]] = Field(default_factory=list)
    """The model's turns and the env's answers, after the prompt."""


class StepFigures(BaseModel):
    """One optimizer step's rollouts (a line of ``train_curve.jsonl``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    step: int
    reward: float
    """Mean env reward of the step's rollouts."""
    valid: float
    """Mean share of readable, allowed moves in them."""
    seconds: float
    levels: dict[str, int] = Field(default_factory=dict)
    """The step's rollouts per difficulty level (``DataPart.level_of``; empty without levels)."""


class ProblemInterval(BaseModel):
    """A held-out figure (or the difference of two models' on the same items) with its 95 % interval from
    a bootstrap over the problems the items pose (``lateralgym.integrations.grpo._heldout``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mean: float
    low: float
    high: float
    problems: int
    """Distinct problems the items pose (what the bootstrap draws)."""
    items: int


class HeldOut(BaseModel):
    """Greedy play on the held-out items (rates 0-1, intervals 95 %)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int
    """Episodes played (one per held-out item)."""
    reward_mean: float
    reward_interval: tuple[float, float]
    """Wilson interval when every reward is 0 or 1, else a normal interval of the mean (over episodes)."""
    reward_over_problems: ProblemInterval | None = None
    """The mean reward with a bootstrap interval over problems (a problem's variants drawn together)."""
    valid_rate: float
    """Share of the model's moves the env accepted (parsed, allowed)."""
    valid_interval: tuple[float, float]
    valid_over_problems: ProblemInterval | None = None
    """The valid-move share with a bootstrap interval over problems."""
    success_rate: float
    """Share of episodes whose outcome succeeded (``Outcome.succeeded``)."""
    success_interval: tuple[float, float]
    questions_per_episode: float
    """Yes/no questions asked per episode (multi-turn benchmarks)."""
    invalid_rate: float
    """Share of the model's moves the env refused (1 - ``valid_rate``)."""
    mean_turns: float
    outcome_rates: dict[str, float] = Field(default_factory=dict)
    """For each true/false field of the benchmark's outcome, the share of episodes where it holds
    (a gold part inspected, a commit made): whatever the benchmark records."""


class GRPOSummary(BaseModel):
    """What ``train_grpo`` did and measured (``summary.json``)."""

    model_config = ConfigDict(extra="forbid")

    config: str
    benchmark: str
    model: str
    """The model spec trained (``local/smollm2``, a folder)."""
    settings: GRPOSettings
    train_items: list[str]
    eval_items: list[str]
    """The held-out items evaluated (test split)."""
    steps: int
    """Optimizer steps done (resumed runs count from the start)."""
    seconds: float
    """Training wall time of this call (evaluations excluded)."""
    seconds_per_step: float | None
    eval_before: HeldOut
    """The starting model: the base model, or ``init``'s."""
    eval_after: HeldOut
    paired: dict[str, ProblemInterval] = Field(default_factory=dict)
    """After minus before on the same items (``reward``, ``valid``), with intervals over problems."""
    init: str | None = None
    """The checkpoint folder training started from (``--init``; None: the base model)."""
    train_reward: list[float]
    """Mean reward of each step's rollouts."""
    train_valid: list[float]
    """Share of readable moves in each step's rollouts."""
    multi_turn: bool
    """Whether episodes were driven through ``rollout_func`` (more than one move)."""
    chat_template: str = "the model's own"
    """The chat template the model was trained with (``--rollout tools`` may give a ChatML model TRL's)."""
    versions: dict[str, str]
    checkpoint: str
    """The final model's folder (``lateralgym run --player`` can serve it with a local server)."""


def wilson(k: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_interval(values: Sequence[float]) -> tuple[float, float]:
    if all(v in (0.0, 1.0) for v in values):
        return wilson(sum(values), len(values))
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1))
    half = 1.959963984540054 * sd / math.sqrt(len(values))
    return (mean - half, mean + half)
