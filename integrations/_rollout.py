"""``rollout(model_client, item, seed)``: play one LateralGym episode with any chat model, for any trainer.

The model client is ``lateralgym.agents.LLMClient`` or anything with an OpenAI-compatible
``chat.completions.create`` coroutine (``openai.AsyncOpenAI`` pointed at vLLM, SGLang, a trainer's
own server). Each reply goes into ``env.step`` through ``ChatEnv`` (the LLM player's prompts and
reply parser), the env's answer comes back as the next user message, and the finished episode is
returned as a ``Rollout``: the chat, per-turn and total env reward, ``solved``, the outcome and,
when the request asked for them (``sampling={"logprobs": True}``, or ``logprobs=true`` in an
``LLMClient``'s spec), each reply's tokens and logprobs.

Example:
    >>> import asyncio, openai  # doctest: +SKIP
    >>> client = openai.AsyncOpenAI(base_url="http://127.0.0.1:8000/v1", api_key="none")  # doctest: +SKIP
    >>> result = asyncio.run(rollout(client, item_id, seed=0, config=config_name, model="qwen"))  # doctest: +SKIP
    >>> result.reward, result.solved, result.messages[-1]["content"]  # doctest: +SKIP
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import openai

from lateralgym.agents import (
    LLMCallError,
    LLMClient,
    LLMConfigError,
    MalformedReplyError,
    normalise_reply,
    scrub_credentials,
)
from lateralgym.envs import ConfigError, EpisodeConfig, ModelCall, benchmark_of
from lateralgym.episodes import Rollout
from lateralgym.integrations._chat_env import ChatEnv, Message

__all__ = ["rollout"]


async def rollout(
    model_client: Any,
    item: Any,
    seed: int = 0,
    config: EpisodeConfig | str | ChatEnv | None = None,
    *,
    model: str | None = None,
    sampling: Mapping[str, Any] | None = None,
    repeat: int = 0,
    use_cache: bool = False,
) -> Rollout:
    """Play one episode of ``item`` under ``seed`` with ``model_client`` and return it as a ``Rollout``.

    Args:
        model_client: An ``LLMClient`` or any client with an OpenAI-compatible async
            ``chat.completions.create`` (``openai.AsyncOpenAI``).
        item: An item id of the config's dataset, or an item object (then ``config=None`` takes the
            shipped config named after its benchmark).
        seed: The episode's seed (``env.reset(seed=...)``).
        config: An ``EpisodeConfig``, a shipped config name or path, or a ``ChatEnv`` (reuse one
            across many rollouts: it loads the data and builds the judge once).
        model: The model name to request (needed for an OpenAI-style client; an ``LLMClient``
            uses its spec's).
        sampling: Request parameters sent with every call (``temperature``, ``max_tokens``,
            ``logprobs``, ``extra_body``, ...).
        repeat: The repeat index recorded in the rollout's ``episode_id``.
        use_cache: Let an ``LLMClient`` answer from its response cache (off: RL wants fresh samples).

    Returns:
        The rollout; when a model call fails for good, it ends there with ``error`` set.

    Raises:
        ConfigError: A bad config, item or judge; or an item id given without a config.
        LLMConfigError: An OpenAI-style client without ``model``.
    """
    if isinstance(config, ChatEnv):
        env = config
    elif isinstance(item, str):
        if config is None:
            raise ConfigError("an item id needs config= (the config whose dataset holds it)")
        env = ChatEnv(config)
    else:
        env = ChatEnv.for_item(item, config)
    item_id = item if isinstance(item, str) else benchmark_of(item).item_id(item)
    state = env.start(item_id, seed, repeat=repeat)
    params = dict(sampling or {})
    while not state.done:
        try:
            call = await _complete(model_client, state.messages, model, params, use_cache)
        except (LLMCallError, openai.OpenAIError, MalformedReplyError) as exc:
            env.fail(state, scrub_credentials(f"{type(exc).__name__}: {exc}"))
            break
        await env.step(state, call)
    return env.rollout(state, player=_player_name(model_client, model))


async def _complete(
    client: Any, messages: list[Message], model: str | None, params: dict[str, Any], use_cache: bool
) -> ModelCall:
    """One chat call through either kind of client, as a ``ModelCall``."""
    if isinstance(client, LLMClient):
        return await client.complete(messages, role="player", use_cache=use_cache, **params)
    if model is None:
        raise LLMConfigError("rollout with an OpenAI-style client needs model='<the served model name>'")
    started = time.monotonic()
    response = await client.chat.completions.create(model=model, messages=messages, **params)
    call = normalise_reply(response, model)
    return call.model_copy(update={"latency_s": time.monotonic() - started})


def _player_name(client: Any, model: str | None) -> str:
    if isinstance(client, LLMClient):
        return client.spec.name
    return model or type(client).__name__
