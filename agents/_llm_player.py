"""``LLMPlayer``: a language model playing any LateralGym benchmark through ``LLMClient``.

The player keeps the chat of the episode: the protocol's system prompt (and worked examples, when
few-shot), the env's first observation, then each of its own replies followed by the env's answer
as the next user message. A new episode starts a new chat: at ``reset``, or, for loops that never
call it, when ``info`` shows turn 0 or another item. Every reply is parsed into an action by
``lateralgym.agents._parsing``; an unreadable reply becomes ``Invalid`` (the env answers it and
counts the turn). What each call produced (raw text, parsed action, tokens, latency, cache hit,
cost, error) is left in ``last_llm`` for the episode runner to log.

Example:
    >>> client = LLMClient("openai/qwen", base_url="http://127.0.0.1:8000/v1")  # doctest: +SKIP
    >>> player = LLMPlayer(client, reasoning="cot", temperature=0.0)  # doctest: +SKIP
    >>> player = LLMPlayer.from_spec("openai/qwen?base_url=http://127.0.0.1:8000/v1&few_shot=1")  # doctest: +SKIP
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl

from pydantic import BaseModel, ConfigDict

from lateralgym.agents._base import Agent
from lateralgym.agents._llm_client import Completion, LLMCallError, LLMClient
from lateralgym.agents._llm_errors import LLMConfigError
from lateralgym.agents._parsing import parse_reply
from lateralgym.agents._prompts import PromptPlan, Reasoning, conversation_start, prompt_plan
from lateralgym.envs import Action, Invalid

__all__ = [
    "PLAYER_SPEC_OPTIONS",
    "LLMCallRecord",
    "LLMPlayer",
    "is_model_spec",
    "parse_player_spec",
    "split_player_spec",
]


class LLMCallRecord(BaseModel):
    """What one LLM call of a player produced: the ``llm`` block of a step-log line."""

    model_config = ConfigDict(extra="forbid")

    model: str | None = None
    """Model spec (no key)."""
    raw_text: str | None = None
    """The model's reply as received."""
    parsed_action: dict[str, Any] | None = None
    """The action parsed from it."""
    prompt_tokens: int = 0
    """Prompt tokens reported by the server (of the original call, on a cache hit)."""
    completion_tokens: int = 0
    """Completion tokens reported by the server (of the original call, on a cache hit)."""
    latency_s: float = 0.0
    """Seconds the call took, retries and backoff included."""
    cache_hit: bool = False
    """Whether the reply came from the on-disk cache."""
    cost_usd: float | None = None
    """None when the price is unknown."""
    attempts: int = 1
    """Requests sent: 1 plus retries; 0 on a cache hit."""
    error: str | None = None
    """Set when the call failed or the reply could not be parsed."""

    @classmethod
    def of_completion(cls, model: str, completion: Completion, **fields: Any) -> LLMCallRecord:
        """The record of a call that returned ``completion``, plus ``fields``.

        Token counts, latency, cache hit, cost and attempts come from ``completion``; ``fields``
        give ``raw_text``, ``parsed_action`` and ``error``.
        """
        return cls(model=model, **completion.model_dump(include=_COMPLETION_FIELDS), **fields)


_COMPLETION_FIELDS = {"prompt_tokens", "completion_tokens", "latency_s", "cache_hit", "cost_usd", "attempts"}
"""What a call record copies from the client's ``Completion`` (its ``model`` and ``error`` mean other things)."""


class LLMPlayer(Agent):
    """A player backed by a language model (see the module docstring).

    Args:
        client: The client of the model to play with.
        system_prompt: Replaces the protocol's built-in system prompt.
        few_shot: Show worked examples before the puzzle (BrainTeaser; the other benchmarks have
            none, and ignore it).
        reasoning: ``"cot"`` asks for step-by-step reasoning before the answer, ``"direct"`` for
            the answer alone; ``None`` follows the config (its ``cot`` mode means ``"cot"``).
        temperature: Sampling temperature sent with every request (``None``: the client's).
        max_tokens: Completion-token cap sent with every request (``None``: the client's).
        seed: Sampling seed sent with every request (``None``: the client's), and the seed of the
            player's own ``rng``. Servers that ignore seeds stay non-deterministic.
        episode_seed: The seed of the episode being played (``reset(seed=...)`` replaces it).
            It tags every call's cache entry and is never sent: repeats of an item under other
            seeds are asked afresh, while a rerun with the same seeds is answered from the cache.
            ``None``: equal requests share one entry.
    """

    def __init__(
        self,
        client: LLMClient,
        *,
        system_prompt: str | None = None,
        few_shot: bool = False,
        reasoning: Reasoning | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        episode_seed: int | None = None,
    ) -> None:
        super().__init__(seed if seed is not None else episode_seed)
        if reasoning not in (None, "direct", "cot"):
            raise LLMConfigError(f"reasoning must be 'direct', 'cot' or None, got {reasoning!r}")
        self.client = client
        self.name = client.spec.name
        self.system_prompt = system_prompt
        self.few_shot = few_shot
        self.reasoning: Reasoning | None = reasoning
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.episode_seed = episode_seed
        self.last_llm: LLMCallRecord | None = None
        """What the latest call produced; ``None`` before the first call of an episode."""
        self._plan: PromptPlan | None = None
        self._messages: list[dict[str, str]] = []
        self._item: Any = None  # info["item"] of the episode the chat belongs to

    def __repr__(self) -> str:
        return f"LLMPlayer({self.name!r}, reasoning={self.reasoning!r}, few_shot={self.few_shot})"

    @classmethod
    def from_spec(cls, spec: str, *, cache_dir: str | os.PathLike[str] | None = None, **overrides: Any) -> LLMPlayer:
        """Build a player from a spec string (see ``parse_player_spec``).

        Args:
            spec: ``provider/model`` with optional ``?option=value&...``.
            cache_dir: The client's response cache directory (default: the client's).
            **overrides: Options that win over the spec's (same names as ``PLAYER_SPEC_OPTIONS``).

        Raises:
            LLMConfigError: A malformed spec, an unknown option or a missing API key.
        """
        name, client_fields, options = split_player_spec(spec, **overrides)
        client = LLMClient(name, cache_dir=cache_dir, **client_fields)
        return cls(client, **options)

    @property
    def messages(self) -> list[dict[str, str]]:
        """The episode's chat so far (a copy): system prompt, examples, observations and replies."""
        return [dict(m) for m in self._messages]

    @property
    def plan(self) -> PromptPlan | None:
        """The protocol of the current episode, once known."""
        return self._plan

    def reset(self, observation: dict[str, Any], info: dict[str, Any], seed: int | None = None) -> None:
        """Forget the previous episode's chat and pick the protocol from ``info``.

        ``seed``, when given, also becomes the ``episode_seed`` that tags the cache entries.
        """
        super().reset(observation, info, seed)
        if seed is not None:
            self.episode_seed = seed
        self._start_episode(info)
        self.last_llm = None

    async def act_async(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        """Ask the model for the next move and parse it.

        Raises:
            LLMCallError: The call failed for good (``last_llm.error`` says why).
        """
        request = self._request(observation, info)
        started = time.monotonic()
        try:
            completion = await self.client.complete(request, cache_tag=self._cache_tag(), **self._params())
        except LLMCallError as exc:
            self._record_failure(exc, started)
            raise
        return self._accept(request, completion, info)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        """``act_async`` for synchronous code.

        Raises:
            LLMCallError: The call failed for good (``last_llm.error`` says why).
        """
        request = self._request(observation, info)
        started = time.monotonic()
        try:
            completion = self.client.complete_sync(request, cache_tag=self._cache_tag(), **self._params())
        except LLMCallError as exc:
            self._record_failure(exc, started)
            raise
        return self._accept(request, completion, info)

    # -- internals -------------------------------------------------------------------------------

    def _start_episode(self, info: dict[str, Any]) -> None:
        self._messages = []
        self._plan = prompt_plan(info, reasoning=self.reasoning, few_shot=self.few_shot)
        self._item = info.get("item")

    def _request(self, observation: dict[str, Any], info: dict[str, Any]) -> list[dict[str, str]]:
        """The messages to send: the opening ones on the first move, else the chat plus the reply."""
        text = str(observation.get("text", ""))
        # A loop that skips reset (PettingZoo's often do) must not carry one episode's chat into
        # the next: turn 0, or another item, starts afresh.
        new_item = "item" in info and info["item"] != self._item
        if self._plan is None or info.get("turn") == 0 or new_item:
            self._start_episode(info)
        if not self._messages:
            assert self._plan is not None
            return conversation_start(self._plan, text, self.system_prompt)
        return [*self._messages, {"role": "user", "content": text}]

    def _cache_tag(self) -> str | None:
        return None if self.episode_seed is None else f"episode-seed:{self.episode_seed}"

    def _params(self) -> dict[str, Any]:
        params = {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed}
        return {name: value for name, value in params.items() if value is not None}

    def _accept(self, request: list[dict[str, str]], completion: Completion, info: dict[str, Any]) -> Action:
        if completion.error is not None:  # a client that returns failures as values: raise all the same
            self.last_llm = LLMCallRecord.of_completion(self.name, completion, error=completion.error)
            raise LLMCallError(
                completion.error,
                model=self.name,
                status=None,
                attempts=completion.attempts,
                retryable=False,
                kind="error",
            )
        text = completion.text
        reasoning = self._plan.reasoning if self._plan is not None else None
        action = parse_reply(text, info.get("benchmark"), info.get("public") or {}, info.get("mode"), reasoning)
        error = None
        if isinstance(action, Invalid):
            if completion.finish_reason == "length":
                action = action.model_copy(
                    update={"reason": f"{action.reason} (the reply was cut off at the token limit)"}
                )
            error = f"unparsable reply: {action.reason}"
        self._messages = [*request, {"role": "assistant", "content": text}]
        self.last_llm = LLMCallRecord.of_completion(
            self.name, completion, raw_text=text, parsed_action=action.model_dump(exclude_none=True), error=error
        )
        return action

    def _record_failure(self, exc: LLMCallError, started: float) -> None:
        self.last_llm = LLMCallRecord(
            model=self.name,
            latency_s=time.monotonic() - started,
            attempts=exc.attempts,
            error=str(exc),
        )


# -- spec strings --------------------------------------------------------------------------------

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _flag(value: str) -> bool:
    word = value.strip().lower()
    if word in _TRUE | _FALSE:
        return word in _TRUE
    raise ValueError(f"expected true/false, got {value!r}")


def _reasoning(value: str) -> str:
    if value not in ("direct", "cot"):
        raise ValueError(f"expected 'direct' or 'cot', got {value!r}")
    return value


_CLIENT_OPTIONS: dict[str, Callable[[str], Any]] = {
    "base_url": str,
    "api_key_env": str,
    "timeout": float,
    "max_retries": int,
}
_PLAYER_OPTIONS: dict[str, Callable[[str], Any]] = {
    "few_shot": _flag,
    "reasoning": _reasoning,
    "temperature": float,
    "max_tokens": int,
    "seed": int,
}
PLAYER_SPEC_OPTIONS: tuple[str, ...] = (*_PLAYER_OPTIONS, *_CLIENT_OPTIONS)
"""Options a player spec string may carry after ``?``."""


def is_model_spec(spec: str) -> bool:
    """Whether a player spec names a model (``provider/model[?options]``) rather than an offline player."""
    name = spec.partition("?")[0]
    provider, sep, model = name.partition("/")
    return bool(sep and provider.strip() and model.strip())


def split_player_spec(spec: str, **overrides: Any) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """``(model name, client fields, player options)`` of a spec string.

    Client fields (``base_url``, ``api_key_env``, ``timeout``, ``max_retries``) go to
    ``LLMClient``; the rest (and ``system_prompt``) to ``LLMPlayer``. ``overrides`` win over the
    spec's options; a ``None`` override is ignored.

    Raises:
        LLMConfigError: A malformed spec, or an unknown option in the spec or the overrides.
    """
    name, options = parse_player_spec(spec)
    unknown = sorted(set(overrides) - set(PLAYER_SPEC_OPTIONS) - {"system_prompt"})
    if unknown:
        raise LLMConfigError(
            f"unknown player option(s) {', '.join(unknown)}; options are {', '.join(PLAYER_SPEC_OPTIONS)}"
        )
    options.update({k: v for k, v in overrides.items() if v is not None})
    client_fields = {k: options.pop(k) for k in _CLIENT_OPTIONS if k in options}
    return name, client_fields, options


def parse_player_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """Split ``provider/model?opt=value&...`` into the model name and typed options.

    Options: ``few_shot`` (true/false), ``reasoning`` (direct/cot), ``temperature``, ``max_tokens``,
    ``seed``, ``base_url``, ``api_key_env`` (the *name* of the key's variable), ``timeout``,
    ``max_retries``. For example
    ``openai/qwen?base_url=http://127.0.0.1:8000/v1&reasoning=cot&temperature=0``.

    Raises:
        LLMConfigError: Not a model name, an unknown or repeated option, a bad value, or an
            attempt to pass a key (keys are read from environment variables only).
    """
    name, _, query = spec.strip().partition("?")
    if not is_model_spec(name):
        raise LLMConfigError(f"player spec {spec.split('?')[0]!r} is not a model name: use 'provider/model[?options]'")
    options: dict[str, Any] = {}
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=True) if query else []
    except ValueError:
        raise LLMConfigError(f"player spec {name!r}: options must be written 'name=value&name=value'") from None
    converters = {**_PLAYER_OPTIONS, **_CLIENT_OPTIONS}
    for key, value in pairs:
        if "key" in key.lower() and key != "api_key_env":
            # Never echo the value: it may be a secret.
            raise LLMConfigError(
                f"player spec {name!r}: API keys cannot go in a spec; set an environment variable "
                "and name it with api_key_env=VARIABLE"
            )
        if key not in converters:
            raise LLMConfigError(
                f"player spec {name!r}: unknown option {key!r}; options are {', '.join(PLAYER_SPEC_OPTIONS)}"
            )
        if key in options:
            raise LLMConfigError(f"player spec {name!r}: option {key!r} is given twice")
        try:
            options[key] = converters[key](value)
        except ValueError as exc:
            raise LLMConfigError(f"player spec {name!r}: option {key!r}: {exc}") from None
    return name, options
