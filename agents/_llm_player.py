"""``LLMPlayer``: a language model playing any LateralGym benchmark through ``LLMClient``.

The player keeps the chat of the episode: the protocol's system prompt (and worked examples, when
few-shot), the env's first observation, then each of its own replies followed by the env's answer
as the next user message. A new episode starts a new chat: at ``reset``, or, for loops that never
call it, when ``info`` shows turn 0 or another item. Every reply is parsed into an action by
``lateralgym.agents._parsing``; an unreadable reply becomes ``Invalid`` (the env answers it and
counts the turn). Each call's ``ModelCall`` (role ``player``: raw text, parsed action, tokens,
latency, cache hit, cost, error) is left in ``last_llm`` for the episode runner to log.

Example:
    >>> client = LLMClient("openai/qwen", base_url="http://127.0.0.1:8000/v1")  # doctest: +SKIP
    >>> player = LLMPlayer(client, reasoning="cot", temperature=0.0)  # doctest: +SKIP
    >>> player = LLMPlayer.from_spec("openai/qwen?base_url=http://127.0.0.1:8000/v1&few_shot=1")  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from lateralgym.agents._aux import AUX_OPTIONS, DEFAULT_AUX_PUZZLES, DEFAULT_AUX_SEED, AuxVariant, aux_prompt
from lateralgym.agents._constraint import Constraint, ConstraintMode, default_constraint, parse_constrain, rejection
from lateralgym.agents._llm_client import LLMCallError, LLMClient
from lateralgym.agents._llm_errors import LLMConfigError
from lateralgym.agents._llm_spec import ModelSpec, OptionParser, flag
from lateralgym.agents._parsing import read_model_reply
from lateralgym.agents._players import Agent
from lateralgym.agents._prompts import (
    PromptPlan,
    Reasoning,
    conversation_start,
    first_message,
    opening_messages,
    prompt_plan,
)
from lateralgym.envs import Action, ConfigError, Invalid, ModelCall, get_benchmark

__all__ = ["PLAYER_OPTIONS", "LLMPlayer"]


def _reasoning(value: str) -> str:
    if value not in ("direct", "cot"):
        raise ValueError(f"expected 'direct' or 'cot', got {value!r}")
    return value


def _few_shot(value: str) -> bool | int:
    """``true``/``false`` (``1``/``0``, ...), or how many worked examples: a whole number from 2."""
    try:
        return flag(value)
    except ValueError:
        pass
    if value.strip().isdigit() and int(value) >= 2:
        return int(value)
    raise ValueError(f"expected true/false or a number of worked examples (2, 4, 6, 8), got {value!r}")


def _reasks(value: str) -> int:
    if not value.strip().isdigit() or int(value) > MAX_REASKS:
        raise ValueError(f"expected a whole number of format re-asks from 0 to {MAX_REASKS}, got {value!r}")
    return int(value)


MAX_REASKS = 3
"""The most format re-asks a player option may ask for."""

PLAYER_OPTIONS: dict[str, OptionParser] = {
    "few_shot": _few_shot,
    "reasoning": _reasoning,
    "system_prompt": str,
    "demos": str,
    "reasks": _reasks,
    "fallback": flag,
    "constrain": parse_constrain,
    **AUX_OPTIONS,
}
"""Role options a player spec may carry besides the generation settings (see ``ModelSpec.role_options``):
``few_shot`` (true/false, or how many worked examples), ``reasoning`` (direct/cot), ``system_prompt``
(usually as an override), ``demos`` (a file of worked examples in the benchmark's own format),
``reasks`` (format re-asks after an unparsable reply; default: the config's, else the benchmark's), ``fallback``
(true/false: read a reply still unparsable with the benchmark's fallback; default true), ``constrain``
(``grammar``, ``json_schema`` or ``off``, or a fallback list such as ``json_schema,off``: decode the reply under
the benchmark's action grammar, ``lateralgym.agents._constraint``; default ``grammar`` for ``local/`` models,
``off`` otherwise) and the elicitation options ``aux`` (a run directory), ``aux_puzzles``, ``aux_variant``
and ``aux_seed`` (``lateralgym.agents._aux``)."""


class LLMPlayer(Agent):
    """A player backed by a language model (see the module docstring).

    Args:
        client: The client of the model to play with.
        system_prompt: Replaces the protocol's built-in system prompt.
        few_shot: Show worked examples before the puzzle (where the benchmark has them; the others
            ignore it): ``True`` for all of them, or how many (a paper may use
            2, 4, 6 or 8 from its ``demonstration.npy``; the shipped examples are three).
        demos: A file of worked examples in the benchmark's format (e.g. the official
            ``demonstration.npy``) used instead of the shipped ones; it needs ``few_shot``.
        reasoning: ``"cot"`` asks for step-by-step reasoning before the answer, ``"direct"`` for
            the answer alone; ``None`` follows the config (its ``cot`` mode means ``"cot"``).
        temperature: Sampling temperature sent with every request (``None``: the client's).
        max_tokens: Completion-token cap sent with every request (``None``: the client's).
        seed: Sampling seed sent with every request (``None``: the client's), and the seed of the
            player's own ``rng``. Servers that ignore seeds stay non-deterministic.
        reasks: Format re-asks after an unparsable reply, before the benchmark's fallback reading
            (``None``: the config's ``reasks``, else the benchmark's default, ``Benchmark.prompts.player_reasks``).
            Each is one more request in the same chat; the record counts them (``format_reasks``).
        fallback: Read a reply still unparsable after the re-asks with the benchmark's fallback
            (``Benchmark.prompts.fallback_action``; e.g. a question sentence as a question, else the reply as an
            explanation attempt), recorded in ``ModelCall.fallback``; ``False``: it is an invalid move.
        aux: A run directory whose log gives the auxiliary prompt (its benchmark's ``aux_prompt``), added to the
            system prompt of every episode; ``None``: none.
        aux_puzzles: How many of that run's puzzles the auxiliary prompt shows (``m``; default 1, as the paper).
        aux_seed: The seed the ``m`` puzzles are drawn at random with (default 0); ``"first"``: the run's first.
        aux_variant: ``data`` (questions and answers, the paper's †) or ``reasoning`` (with the
            player's reasoning before each question, the paper's *).
        constrain: Decode every reply under the benchmark's action grammar (``Benchmark.prompts.action_grammar``):
            the modes to use in order (``("grammar",)``, ``("json_schema", "off")``: fall back when the
            server refuses), or a ``Constraint`` shared by the players of a run; ``None``: ``grammar`` for
            a ``local/`` model, ``off`` otherwise. Each record says what its reply was decoded under
            (``ModelCall.constrained``).
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
        few_shot: bool | int = False,
        demos: str | os.PathLike[str] | None = None,
        reasoning: Reasoning | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        seed: int | None = None,
        reasks: int | None = None,
        fallback: bool = True,
        aux: str | os.PathLike[str] | None = None,
        aux_puzzles: int = DEFAULT_AUX_PUZZLES,
        aux_variant: AuxVariant = "data",
        aux_seed: int | str = DEFAULT_AUX_SEED,
        constrain: Constraint | Sequence[ConstraintMode] | None = None,
        episode_seed: int | None = None,
    ) -> None:
        super().__init__(seed if seed is not None else episode_seed)
        if reasks is not None and not 0 <= reasks <= MAX_REASKS:
            raise LLMConfigError(f"reasks must be a whole number from 0 to {MAX_REASKS}, got {reasks!r}")
        if reasoning not in (None, "direct", "cot"):
            raise LLMConfigError(f"reasoning must be 'direct', 'cot' or None, got {reasoning!r}")
        if not isinstance(few_shot, bool) and few_shot < 1:
            raise LLMConfigError(f"few_shot must be true/false or a number of worked examples, got {few_shot!r}")
        if demos is not None and not few_shot:
            raise LLMConfigError("demos=PATH needs few_shot: few_shot=true for every example in it, or a number (2-8)")
        if demos is not None and not os.path.isfile(demos):
            raise LLMConfigError(f"demos: no file {os.fspath(demos)!r}; give the path of demonstration.npy")
        self.client = client
        self.name = client.spec.name
        self.system_prompt = system_prompt
        self.few_shot = few_shot
        self.demos = None if demos is None else os.fspath(demos)
        self.reasoning: Reasoning | None = reasoning
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed
        self.episode_seed = episode_seed
        self.reasks = reasks
        self.fallback = fallback
        if not isinstance(constrain, Constraint):
            constrain = Constraint(tuple(constrain) if constrain is not None else default_constraint(client.spec))
        self.constraint = constrain
        """What every request is decoded under (shared by the players of a run: a fallback is for all)."""
        self.aux = None if aux is None else aux_prompt(aux, puzzles=aux_puzzles, variant=aux_variant, seed=aux_seed)
        """The auxiliary prompt text (``None``: none), built once from the run's log."""
        self.last_llm: ModelCall | None = None
        """The latest call (role ``player``, ``parsed_action`` set, ``error`` when it failed or its
        reply was unparsable); ``None`` before the first call of an episode."""
        self._plan: PromptPlan | None = None
        self._messages: list[dict[str, str]] = []
        self._item: Any = None  # info["item"] of the episode the chat belongs to

    def __repr__(self) -> str:
        return f"LLMPlayer({self.name!r}, reasoning={self.reasoning!r}, few_shot={self.few_shot})"

    @classmethod
    def from_spec(
        cls, spec: str | ModelSpec, *, cache_dir: str | os.PathLike[str] | None = None, **overrides: Any
    ) -> LLMPlayer:
        """Build a player from a model spec (see ``ModelSpec.parse``).

        Generation settings (``temperature``, ``max_tokens``, ``seed``, ``base_url``, ...) go to the
        client, which sends them with every request; ``PLAYER_OPTIONS`` go to the player.

        Args:
            spec: ``provider/model`` with optional ``?name=value&...``, or a parsed spec.
            cache_dir: The client's response cache directory (default: the client's).
            **overrides: Settings or player options that win over the spec's (``None`` ignored).

        Raises:
            LLMConfigError: A malformed spec, an unknown option or a missing API key.
        """
        model = ModelSpec.parse(spec, **overrides)
        options = model.role_options(PLAYER_OPTIONS, role="player")
        return cls(LLMClient(model, cache_dir=cache_dir), **options)

    @property
    def messages(self) -> list[dict[str, str]]:
        """The episode's chat so far (a copy): system prompt, examples, observations and replies."""
        return [dict(m) for m in self._messages]

    @property
    def plan(self) -> PromptPlan | None:
        """The protocol of the current episode, once known."""
        return self._plan

    def prompt_messages(self) -> list[dict[str, str]] | None:
        """The system prompt and any worked examples this episode's chat opens with (after ``reset``)."""
        return None if self._plan is None else opening_messages(self._plan, self.system_prompt, aux=self.aux)

    def first_message(self, observation_text: str) -> str | None:
        """The first user message when the benchmark's layout composes it from the observation (after ``reset``)."""
        if self._plan is None:
            return None
        message = first_message(self._plan, observation_text)
        return None if message == observation_text else message

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
        """Ask the model for the next move and parse it (re-asking for the format when unreadable).

        Raises:
            LLMCallError: The call failed for good (``last_llm.error`` says why).
        """
        request: list[dict[str, str]] | Action = self._request(observation, info)
        calls: list[ModelCall] = []
        while isinstance(request, list):
            mode = self.constraint.mode
            try:
                call = await self.client.complete(
                    request, role="player", cache_tag=self._cache_tag(), **self._params(info, mode)
                )
            except LLMCallError as exc:
                if self._fell_back(exc, mode):
                    continue
                self._record_failure(exc, calls)
                raise
            request = self._accept(request, call, info, calls, mode)
        return request

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        """``act_async`` for synchronous code.

        Raises:
            LLMCallError: The call failed for good (``last_llm.error`` says why).
        """
        request: list[dict[str, str]] | Action = self._request(observation, info)
        calls: list[ModelCall] = []
        while isinstance(request, list):
            mode = self.constraint.mode
            try:
                call = self.client.complete_sync(
                    request, role="player", cache_tag=self._cache_tag(), **self._params(info, mode)
                )
            except LLMCallError as exc:
                if self._fell_back(exc, mode):
                    continue
                self._record_failure(exc, calls)
                raise
            request = self._accept(request, call, info, calls, mode)
        return request

    # -- internals -------------------------------------------------------------------------------

    def _start_episode(self, info: dict[str, Any]) -> None:
        self._messages = []
        shots = None if isinstance(self.few_shot, bool) else self.few_shot
        self._plan = prompt_plan(
            info, reasoning=self.reasoning, few_shot=bool(self.few_shot), shots=shots, demonstrations=self.demos
        )
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
            return conversation_start(self._plan, text, self.system_prompt, aux=self.aux)
        return [*self._messages, {"role": "user", "content": text}]

    def _cache_tag(self) -> str | None:
        return None if self.episode_seed is None else f"episode-seed:{self.episode_seed}"

    def _params(self, info: dict[str, Any], mode: ConstraintMode) -> dict[str, Any]:
        params: dict[str, Any] = {"temperature": self.temperature, "max_tokens": self.max_tokens, "seed": self.seed}
        params = {name: value for name, value in params.items() if value is not None}
        if mode != "off":
            unit = _unit(info)
            reasoning = self._plan.reasoning if self._plan is not None else None
            params.update(
                self.constraint.request_params(unit.prompts.action_grammar(info, reasoning) if unit else None)
            )
        return params

    def _fell_back(self, exc: LLMCallError, mode: ConstraintMode) -> bool:
        """Whether a constrained request the server refused is to be sent again under the fallback mode."""
        if mode == "off":
            return False
        reason = rejection(exc)
        return reason is not None and self.constraint.fall_back(mode, reason)

    def _constrained(self, info: dict[str, Any], mode: ConstraintMode) -> ConstraintMode | None:
        """The mode a reply was decoded under (None: free text, or the benchmark states no grammar)."""
        if mode == "off":
            return None
        unit = _unit(info)
        reasoning = self._plan.reasoning if self._plan is not None else None
        return mode if unit is not None and unit.prompts.action_grammar(info, reasoning) is not None else None

    def _accept(
        self,
        request: list[dict[str, str]],
        call: ModelCall,
        info: dict[str, Any],
        calls: list[ModelCall],
        mode: ConstraintMode = "off",
    ) -> Action | list[dict[str, str]]:
        """The move in ``call``'s reply, or the next request: a format re-ask after an unparsable
        reply while re-asks are left (``calls`` holds the episode turn's earlier calls)."""
        if call.error is not None:  # a client that returns failures as values: raise all the same
            self.last_llm = _merged([*calls, call])
            raise LLMCallError(
                call.error,
                model=self.name,
                status=None,
                attempts=call.attempts,
                retryable=False,
                kind="error",
                calls=(call,),
            )
        text = call.text
        reasoning = self._plan.reasoning if self._plan is not None else None
        action, error = read_model_reply(text, info, reasoning, call.finish_reason)
        replied = [*request, {"role": "assistant", "content": text}]
        self._messages = replied
        unit = _unit(info)
        fallback = None
        if isinstance(action, Invalid) and unit is not None and text.strip():
            if len(calls) < self._reasks(unit, info):
                calls.append(call)
                assert self._plan is not None
                return [
                    *replied,
                    {"role": "user", "content": unit.prompts.reask_text(action.reason, self._plan.request())},
                ]
            read = unit.prompts.fallback_action(text, info) if self.fallback else None
            if read is not None:
                action, fallback, error = read, read.kind, None
        update = {
            "parsed_action": action.model_dump(exclude_none=True),
            "error": error,
            "fallback": fallback,
            "constrained": self._constrained(info, mode),
        }
        self.last_llm = _merged([*calls, call]).model_copy(update=update)
        return action

    def _reasks(self, unit: Any, info: dict[str, Any]) -> int:
        """The player's own re-asks, else the config's (``info["reasks"]``), else the benchmark's."""
        if self.reasks is not None:
            return self.reasks
        configured = info.get("reasks")
        return int(configured) if isinstance(configured, int) else int(unit.prompts.player_reasks)

    def _record_failure(self, exc: LLMCallError, calls: list[ModelCall]) -> None:
        fallback = ModelCall(role="player", model=self.name, attempts=exc.attempts, error=str(exc))
        self.last_llm = _merged([*calls, exc.calls[-1] if exc.calls else fallback])


def _unit(info: dict[str, Any]) -> Any:
    """The episode's benchmark, or ``None`` when ``info`` names none that is registered."""
    try:
        return get_benchmark(str(info.get("benchmark")))
    except ConfigError:
        return None


def _merged(calls: list[ModelCall]) -> ModelCall:
    """One record for a move's calls: the last call, with the earlier (re-asked) ones' costs added."""
    last = calls[-1]
    if len(calls) == 1:
        return last
    costs = [c.cost_usd for c in calls]
    return last.model_copy(
        update={
            "prompt_tokens": sum(c.prompt_tokens for c in calls),
            "completion_tokens": sum(c.completion_tokens for c in calls),
            "latency_s": sum(c.latency_s for c in calls),
            "attempts": sum(c.attempts for c in calls),
            "cost_usd": None if any(c is None for c in costs) else sum(c for c in costs if c is not None),
            "cache_hit": all(c.cache_hit for c in calls),
            "format_reasks": len(calls) - 1,
            "unparsed_replies": tuple(c.text for c in calls[:-1]),
        }
    )
