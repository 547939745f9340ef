"""``ChatEnv``: a LateralGym config as a multi-turn chat environment that LLM trainers drive.

It follows the shape of verifiers' multi-turn environments: a dataset of opening prompts
(``dataset``: verifiers' ``prompt`` / ``example_id`` / ``task`` / ``answer`` / ``info`` columns),
per-rollout state (``start``), ``env_response(messages, state)`` that feeds the model's last reply
into ``env.step`` and returns the env's answer as the next user message, ``is_completed`` and a
reward read from the env (``reward``: the episode's summed env reward; ``solved``: the outcome's
success). The chat is the LLM player's: the same system prompt, worked examples and reply parser
(``lateralgym.agents._prompts``, ``read_model_reply``), so a policy trained here plays
``lateralgym run ... --player provider/model`` exactly as it trained.

Each rollout is an ``EpisodeSession`` on its own ``LateralEnv`` (envs hold one episode); the judge is
built once and shared, as the runner does. The player never sees anything the env does not show it.

Example:
    >>> env = ChatEnv(config_name)  # any shipped config, e.g. the first of ``lateralgym configs``
    >>> state = env.start("sp-001", seed=0)
    >>> state.messages[0]["role"], state.messages[-1]["role"]
    ('system', 'user')
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from lateralgym.agents import PromptPlan, Reasoning, conversation_start, prompt_plan, read_model_reply
from lateralgym.envs import ConfigError, EpisodeConfig, Judge, LateralEnv, ModelCall, benchmark_of, load_config_items
from lateralgym.episodes import (
    EpisodeSession,
    EpisodeSpec,
    Rollout,
    RolloutTurn,
    outcome_fields,
    outcome_succeeded,
    plan_episodes,
    turn_from_call,
)
from lateralgym.judges import make_judge

__all__ = ["ChatEnv", "EpisodeState", "Message"]

Message = dict[str, str]
"""A chat message, ``{"role": ..., "content": ...}``."""


@dataclass
class EpisodeState:
    """One rollout in progress: its episode session, its chat so far and what the env paid."""

    session: EpisodeSession
    """The episode (privileged: the policy must not read its env)."""
    plan: PromptPlan
    """The player protocol (reasoning, worked examples) the chat follows."""
    info: dict[str, Any]
    """The env's latest ``info`` (what the reply parser reads)."""
    messages: list[Message]
    """The chat so far: the prompt, then the model's replies and the env's answers."""
    prompt_messages: int
    """How many of ``messages`` are the prompt."""
    item_id: str
    seed: int
    repeat: int = 0
    turns: list[RolloutTurn] = field(default_factory=list)
    """One per move: the action, the env's reward and answer, the reply's token data."""
    done: bool = False
    """The episode ended (terminated, truncated, or an error)."""
    terminated: bool = False
    truncated: bool = False
    error: str | None = None
    """Why the episode stopped early (the model call failed)."""
    final_reply: str = ""
    """The env's answer to the last move (never shown to the model)."""

    @property
    def env(self) -> LateralEnv:
        """The episode's env (privileged: the policy must not read it)."""
        return self.session.env

    @property
    def reward(self) -> float:
        """The episode's env reward so far (the sum over turns)."""
        return sum(turn.reward for turn in self.turns)


class ChatEnv:
    """A LateralGym config as a chat environment for LLM trainers (see the module docstring).

    Args:
        config: An ``EpisodeConfig``, a shipped config name or a YAML/TOML path.
        items: The items to play (default: the config's dataset or the sample data).
        judge: The judge (default: the one the config names, built once).
        reasoning: ``cot`` / ``direct`` as the LLM player's option (``None``: the config's mode decides).
        few_shot: Worked examples before the first observation (where the benchmark has them), as the player's option.
        system_prompt: Replaces the benchmark's system prompt.
        demos: A file of worked examples in the benchmark's format; needs ``few_shot``.

    Raises:
        ConfigError: A bad config, dataset or judge.
    """

    def __init__(
        self,
        config: EpisodeConfig | str,
        *,
        items: Sequence[Any] | None = None,
        judge: Judge | None = None,
        reasoning: Reasoning | None = None,
        few_shot: bool | int = False,
        system_prompt: str | None = None,
        demos: str | None = None,
    ) -> None:
        self.config = config if isinstance(config, EpisodeConfig) else EpisodeConfig.named(config)
        given = items if items is not None else load_config_items(self.config)
        self.judge = judge if judge is not None else make_judge(self.config.judge, benchmark=self.config.benchmark)
        self.reasoning: Reasoning | None = reasoning
        self.few_shot = few_shot
        self.system_prompt = system_prompt
        self.demos = demos
        # A wrong item type or judge fails here; the env's checked, indexed items make each rollout's env cheap.
        self.items = LateralEnv(self.config, items=given, judge=self.judge).items

    @classmethod
    def for_item(cls, item: Any, config: EpisodeConfig | str | None = None, **options: Any) -> ChatEnv:
        """A chat env over one item object; ``config=None`` takes the shipped config named after its benchmark."""
        if config is None:
            name = benchmark_of(item).name
            try:
                config = EpisodeConfig.named(name)
            except ConfigError:
                raise ConfigError(f"no shipped config is named {name!r}: give config= for this item") from None
        return cls(config, items=[item], **options)

    def dataset(self, limit: int | None = None, repeats: int = 1, *, sample: int | None = None) -> list[dict[str, Any]]:
        """The opening prompt of each episode to play (all items, the first ``limit`` or a ``sample`` as
        ``lateralgym run`` draws it), in verifiers' dataset columns.

        Rows: ``prompt`` (system, worked examples, first observation), ``example_id`` (the item's
        index: GRPO groups), ``task`` (the config name), ``answer`` (empty: the env grades) and
        ``info`` (JSON text: ``item_id``, ``seed``, ``repeat``). Seeds are those ``lateralgym run``
        gives the same items (``episode_seed``).
        """
        rows: list[dict[str, Any]] = []
        groups: dict[str, int] = {}
        for spec in plan_episodes(self.items, self.config.seed, limit, repeats, sample=sample):
            state = self.start(spec.item_id, spec.seed, repeat=spec.repeat)
            rows.append(
                {
                    "prompt": state.messages,
                    "example_id": groups.setdefault(spec.item_id, len(groups)),
                    "task": self.config.name,
                    "answer": "",
                    "info": json.dumps({"item_id": spec.item_id, "seed": spec.seed, "repeat": spec.repeat}),
                }
            )
        return rows

    def start(self, item_id: str | None = None, seed: int = 0, *, repeat: int = 0) -> EpisodeState:
        """Reset a fresh env on ``item_id`` (``None``: the first item) under ``seed``; the state holds the prompt.

        Raises:
            ConfigError: No item has that id, or the worked examples asked for cannot be given.
        """
        env = LateralEnv(self.config, items=self.items, judge=self.judge)
        key = item_id if item_id is not None else env.benchmark.item_id(self.items[0])
        spec = EpisodeSpec(episode_id=f"{key}#{repeat}", item_id=key, repeat=repeat, seed=seed)
        session = EpisodeSession(env, spec)
        obs, info = session.start()
        shots = None if isinstance(self.few_shot, bool) else self.few_shot
        plan = prompt_plan(
            info, reasoning=self.reasoning, few_shot=bool(self.few_shot), shots=shots, demonstrations=self.demos
        )
        messages = conversation_start(plan, str(obs["text"]), self.system_prompt)
        return EpisodeState(
            session=session,
            plan=plan,
            info=info,
            messages=messages,
            prompt_messages=len(messages),
            item_id=key,
            seed=seed,
            repeat=repeat,
        )

    async def step(self, state: EpisodeState, reply: str | ModelCall) -> list[Message]:
        """Play the model's reply: parse it as the LLM player does, step the env, extend the chat.

        Args:
            state: The rollout.
            reply: The model's reply text, or its ``ModelCall`` (its tokens and logprobs are kept).

        Returns:
            The env's answer as the next user message, or ``[]`` once the episode is over.

        Raises:
            EpisodeOverError: The episode is already over.
        """
        call = reply if isinstance(reply, ModelCall) else None
        text = reply.text if isinstance(reply, ModelCall) else reply
        action, _ = read_model_reply(text, state.info, state.plan.reasoning, call.finish_reason if call else None)
        obs, reward, terminated, truncated, info = await state.session.astep(action, llm=call)
        record = state.env.records[-1]
        answer = str(obs["text"])
        state.turns.append(
            turn_from_call(
                record.turn, record.action, record.valid, reward, answer, record.judge_label, call, record.process
            )
        )
        state.messages.append({"role": "assistant", "content": text})
        state.info, state.terminated, state.truncated = info, terminated, truncated
        state.done = terminated or truncated
        if state.done:
            state.final_reply = answer
            return []
        message = {"role": "user", "content": answer}
        state.messages.append(message)
        return [dict(message)]

    async def env_response(self, messages: Sequence[Message], state: EpisodeState) -> list[Message]:
        """verifiers' hook: the model's last message (``messages[-1]``, an assistant turn) goes into
        ``env.step``; the env's answer comes back as the next user message (``[]`` when it is over)."""
        if not messages or messages[-1].get("role") != "assistant":
            raise ConfigError("env_response needs the model's reply as the last message (role 'assistant')")
        return await self.step(state, str(messages[-1].get("content") or ""))

    def is_completed(self, messages: Sequence[Message], state: EpisodeState) -> bool:
        """verifiers' hook: whether the episode is over."""
        return state.done

    def fail(self, state: EpisodeState, error: str) -> None:
        """End the rollout with an error (the model call failed); it counts as unsolved."""
        state.error, state.done = error, True

    def reward(self, state: EpisodeState) -> float:
        """The reward of a rollout: the env's rewards summed over its turns (the config's ``rewards``)."""
        return state.reward

    def solved(self, state: EpisodeState) -> bool:
        """Whether the rollout's outcome counts as a success (``Outcome.succeeded``)."""
        return outcome_succeeded(self.config.benchmark, state.env.outcome().model_dump(mode="json"))

    def rollout(self, state: EpisodeState, *, player: str = "policy") -> Rollout:
        """The finished (or failed) rollout as a ``Rollout``, the record ``lateralgym export`` writes."""
        outcome = state.env.outcome().model_dump(mode="json")
        meta = state.env.benchmark.item_meta(state.env.item)
        return Rollout(
            episode_id=f"{state.item_id}#{state.repeat}",
            item_id=state.item_id,
            group_id=state.item_id,
            repeat=state.repeat,
            seed=state.seed,
            config=self.config.name,
            benchmark=self.config.benchmark,
            mode=self.config.mode,
            player=player,
            judge=getattr(self.judge, "name", "?"),
            messages=[dict(m) for m in state.messages],
            prompt_messages=state.prompt_messages,
            prompt_source="live",
            turns=list(state.turns),
            rewards=[turn.reward for turn in state.turns],
            reward=state.reward,
            solved=outcome_succeeded(self.config.benchmark, outcome),
            **outcome_fields(self.config.benchmark, outcome),
            meta=json.dumps(meta, ensure_ascii=False, sort_keys=True),
            final_reply=state.final_reply,
            terminated=state.terminated,
            truncated=state.truncated,
            error=state.error,
        )
