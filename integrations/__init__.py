"""Adapters for LLM trainers: drive LateralGym episodes from a training loop.

* ``ChatEnv``: a config as a verifiers-style multi-turn chat environment (``dataset``, ``start``,
  ``env_response``, ``is_completed``, ``reward``), with the LLM player's own prompts and parser.
* ``rollout(model_client, item, seed, config=...)``: one episode with any OpenAI-compatible client
  (``openai.AsyncOpenAI``) or ``LLMClient``, returned as a ``Rollout`` (the record
  ``lateralgym export`` writes): chat, per-turn and total reward, outcome, token logprobs.
* ``train_grpo(config, model, out, GRPOSettings(...))``: GRPO with TRL's ``GRPOTrainer`` on a
  config's train items, the env's own reward, greedy held-out evaluation before and after
  (``lateralgym train grpo``; the ``grpo`` extra). Its module imports no torch until it trains.
"""

from lateralgym.episodes import Rollout, RolloutTurn
from lateralgym.integrations._chat_env import ChatEnv, EpisodeState, Message
from lateralgym.integrations._grpo import (
    GRPO_INSTALL_HINT,
    GRPOError,
    GRPOSettings,
    GRPOSummary,
    HeldOut,
    episode_stats,
    grpo_missing,
    held_out,
    load_model,
    play_greedy,
    resolve_model,
    train_grpo,
)
from lateralgym.integrations._rollout import rollout

__all__ = [
    "GRPO_INSTALL_HINT",
    "ChatEnv",
    "EpisodeState",
    "GRPOError",
    "GRPOSettings",
    "GRPOSummary",
    "HeldOut",
    "Message",
    "Rollout",
    "RolloutTurn",
    "episode_stats",
    "grpo_missing",
    "held_out",
    "load_model",
    "play_greedy",
    "resolve_model",
    "rollout",
    "train_grpo",
]
