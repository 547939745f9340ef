"""Adapters for LLM trainers: drive LateralGym episodes from a training loop.

* ``ChatEnv``: a config as a verifiers-style multi-turn chat environment (``dataset``, ``start``,
  ``env_response``, ``is_completed``, ``reward``), with the LLM player's own prompts and parser.
* ``rollout(model_client, item, seed, config=...)``: one episode with any OpenAI-compatible client
  (``openai.AsyncOpenAI``) or ``LLMClient``, returned as a ``Rollout`` (the record
  ``lateralgym export`` writes): chat, per-turn and total reward, outcome, token logprobs.
* ``serve`` (``lateralgym serve``: an OpenEnv server), ``trl`` (TRL's ``environment_factory``) and
  ``verifiers`` (the ``lateralgym-env`` plugin): public modules, each imported only when used.
* ``train_grpo(config, model, out, GRPOSettings(...))``: GRPO with TRL's ``GRPOTrainer`` on a
  config's train items, the env's own reward, greedy held-out evaluation before and after
  (``lateralgym train grpo``; the ``grpo`` extra). Its module imports no torch until it trains.
* ``train_sft(config, model, out, SFTSettings(...))``: a warm start with TRL's ``SFTTrainer`` on the
  oracle's train-split moves, written through the player's prompts and parser; its run folder is a
  checkpoint ``train_grpo(..., init=FOLDER)`` continues from (``lateralgym train sft``).
"""

from lateralgym.episodes import Rollout, RolloutTurn
from lateralgym.integrations._chat_env import ChatEnv, EpisodeState, Message
from lateralgym.integrations._rollout import rollout
from lateralgym.integrations.grpo import (
    GRPO_INSTALL_HINT,
    EpisodeFigures,
    GRPOError,
    GRPOSettings,
    GRPOSummary,
    HeldOut,
    SFTSettings,
    SFTSummary,
    StepFigures,
    episode_figures,
    grpo_missing,
    held_out,
    load_model,
    play_greedy,
    resolve_model,
    train_grpo,
    train_sft,
)

__all__ = [
    "GRPO_INSTALL_HINT",
    "ChatEnv",
    "EpisodeState",
    "EpisodeFigures",
    "GRPOError",
    "GRPOSettings",
    "GRPOSummary",
    "HeldOut",
    "Message",
    "Rollout",
    "RolloutTurn",
    "SFTSettings",
    "SFTSummary",
    "StepFigures",
    "episode_figures",
    "grpo_missing",
    "held_out",
    "load_model",
    "play_greedy",
    "resolve_model",
    "rollout",
    "train_grpo",
    "train_sft",
]
