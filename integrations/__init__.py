"""Adapters for LLM trainers: drive LateralGym episodes from a training loop.

* ``ChatEnv``: a config as a verifiers-style multi-turn chat environment (``dataset``, ``start``,
  ``env_response``, ``is_completed``, ``reward``), with the LLM player's own prompts and parser.
* ``rollout(model_client, item, seed, config=...)``: one episode with any OpenAI-compatible client
  (``openai.AsyncOpenAI``) or ``LLMClient``, returned as a ``Rollout`` (the record
  ``lateralgym export`` writes): chat, per-turn and total reward, outcome, token logprobs.
"""

from lateralgym.episodes import Rollout, RolloutTurn
from lateralgym.integrations._chat_env import ChatEnv, EpisodeState, Message
from lateralgym.integrations._rollout import rollout

__all__ = ["ChatEnv", "EpisodeState", "Message", "Rollout", "RolloutTurn", "rollout"]
