"""LateralGym configs as a verifiers v1 plugin, id ``lateralgym-env`` (the ``verifiers`` extra).

verifiers 0.4 finds a plugin by importing the module its id names (``lateralgym-env`` ->
``lateralgym_env``, which this package installs) and taking the one ``Taskset``, ``Env`` and
``Harness`` its ``__all__`` lists. Here:

* ``LateralTaskset``: the episodes ``lateralgym run`` plans for a config (its items in dataset order,
  the same seeds), each a task whose prompt is the LLM player's chat: system prompt, worked
  examples, first observation. Its settings are taskset options (``--env.taskset.config CONFIG``,
  ``--env.taskset.split test``, ``--env.taskset.data FILE``, ``--env.taskset.imports my_game.py``).
* ``LateralEnv``: plays a task's episode through ``ChatEnv`` (the LLM player's reply parser and an
  ``EpisodeSession``): each model reply is one move, the env's answer is the next user message, until
  the episode ends or the seat's ``max_turns`` does. Its reward is the env's (``env_reward``: the
  episode's summed reward, what ``lateralgym run`` reports per episode); ``solved``, ``turns`` and
  ``invalid_moves`` are metrics.
* ``ChatHarness``: the model seat, one chat request a move through verifiers' interception endpoint,
  in-process (no container, no download).

Evaluate a config with verifiers' own CLI against any OpenAI-compatible server::

    vf-eval lateralgym-env --env.taskset.config CONFIG -m MODEL --client.base-url URL/v1 \\
        --client.api-key-var OPENAI_API_KEY -n 20 --no-push -o outputs
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from typing import Any, Literal, cast

import httpx
import verifiers.v1 as vf
from openai import AsyncOpenAI
from pydantic import model_validator
from verifiers.v1.dialects.chat import message_to_wire

from lateralgym.envs import SHIPPED_CONFIGS, EpisodeConfig, LateralGymError, load_benchmark, split_items
from lateralgym.episodes import outcome_succeeded, plan_episodes
from lateralgym.integrations._chat_env import ChatEnv

__all__ = [
    "ChatHarness",
    "ChatHarnessConfig",
    "LateralEnvConfig",
    "LateralTask",
    "LateralTaskData",
    "LateralTaskset",
    "LateralTasksetConfig",
    "LateralVerifiersEnv",
]


class LateralTasksetConfig(vf.TasksetConfig):  # type: ignore[misc]
    """Which LateralGym episodes the taskset holds (each a taskset option: ``--env.taskset.NAME``)."""

    config: str = SHIPPED_CONFIGS[0]
    """A shipped config, a YAML/TOML config file, or a benchmark's name (default: the first shipped config)."""
    data: str | None = None
    """A dataset file in place of the config's (an official release or LateralGym JSONL)."""
    split: Literal["train", "test"] | None = None
    """Only the items of this split (None: all)."""
    seed: int | None = None
    """The run seed the episodes' seeds derive from (None: the config's), as ``lateralgym run --seed``."""
    imports: list[str] = []
    """Benchmarks of your own to import first (``.py`` files or modules), as ``lateralgym run --import``."""
    reasoning: Literal["cot", "direct"] | None = None
    """The LLM player's reasoning option (None: the config's mode decides)."""
    few_shot: bool = False
    """Worked examples before the first observation, where the benchmark has them."""

    @model_validator(mode="after")
    def _known(self) -> LateralTasksetConfig:
        """A config that does not resolve is refused here, in one line, before any episode is built."""
        try:
            _chat_env(self.config, self.data, self.seed, tuple(self.imports), self.reasoning, self.few_shot)
        except LateralGymError as exc:
            raise ValueError(str(exc)) from None
        return self


class LateralTaskData(vf.TaskData):  # type: ignore[misc]
    """One episode: the item and seed ``lateralgym run`` would play it with."""

    item_id: str
    seed: int
    repeat: int = 0


@functools.cache
def _chat_env(
    config: str, data: str | None, seed: int | None, imports: tuple[str, ...], reasoning: str | None, few_shot: bool
) -> ChatEnv:
    """The chat env of a taskset's settings, built once a process (it loads the data and the judge)."""
    for source in imports:
        load_benchmark(source)
    episode = EpisodeConfig.named(config, imports=imports)
    updates: dict[str, Any] = {}
    if data is not None:
        updates["dataset"] = data
    if seed is not None:
        updates["seed"] = seed
    if updates:
        episode = EpisodeConfig.from_dict({**episode.model_dump(), **updates}, source="the verifiers taskset")
    return ChatEnv(episode, reasoning=reasoning, few_shot=few_shot)  # type: ignore[arg-type]


def chat_env_of(settings: LateralTasksetConfig) -> ChatEnv:
    """The ``ChatEnv`` a taskset's settings name."""
    return _chat_env(
        settings.config,
        settings.data,
        settings.seed,
        tuple(settings.imports),
        settings.reasoning,
        settings.few_shot,
    )


class LateralTask(vf.Task[LateralTaskData, vf.State, vf.TaskConfig]):  # type: ignore[misc]
    """One episode's scoring: the env's reward, and whether it was solved."""

    @vf.reward(weight=1.0)  # type: ignore[untyped-decorator]
    async def env_reward(self, trace: vf.Trace) -> float:
        """The episode's summed env reward (the config's ``rewards``), as ``lateralgym run`` logs it."""
        return float(trace.info.get("env_reward", 0.0))

    @vf.metric  # type: ignore[untyped-decorator]
    async def solved(self, trace: vf.Trace) -> float:
        """1 when the outcome counts as a success (``Outcome.succeeded``)."""
        return float(trace.info.get("solved", 0.0))

    @vf.metric  # type: ignore[untyped-decorator]
    async def turns(self, trace: vf.Trace) -> float:
        """Moves played."""
        return float(trace.info.get("turns", 0))

    @vf.metric  # type: ignore[untyped-decorator]
    async def invalid_moves(self, trace: vf.Trace) -> float:
        """Moves the env could not read or did not allow."""
        return float(trace.info.get("invalid_moves", 0))


class LateralTaskset(vf.Taskset[LateralTask, LateralTasksetConfig]):  # type: ignore[misc]
    """The episodes of a LateralGym config (see the module docstring)."""

    def load(self) -> Iterator[LateralTask]:
        chat = chat_env_of(self.config)
        items = list(chat.items) if self.config.split is None else split_items(chat.items, self.config.split)
        for spec in plan_episodes(items, chat.config.seed):
            state = chat.start(spec.item_id, spec.seed, repeat=spec.repeat)
            system = [m["content"] for m in state.messages if m["role"] == "system"]
            prompt = [m for m in state.messages if m["role"] != "system"]
            yield LateralTask(
                LateralTaskData(
                    name=spec.episode_id,
                    prompt=prompt,
                    system_prompt=system[0] if system else None,
                    item_id=spec.item_id,
                    seed=spec.seed,
                    repeat=spec.repeat,
                ),
                self.config.task,
            )


class LateralEnvConfig(vf.EnvConfig):  # type: ignore[misc]
    """One seat, ``player``, run on this machine (verifiers' default runtime is a remote sandbox)."""

    player: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())


class LateralVerifiersEnv(vf.Env[LateralEnvConfig]):  # type: ignore[misc]
    """Plays a task's episode: each model reply is a move, the env's answer the next user message."""

    async def run(self, task: LateralTask, agents: Any) -> None:
        chat = chat_env_of(self.taskset.config)
        state = chat.start(task.data.item_id, task.data.seed, repeat=task.data.repeat)
        async with agents.player.interaction(task) as interaction:
            segment = await interaction.turn()
            while not segment.terminated:
                answer = await chat.step(state, segment.last_reply or "")
                if state.done or not answer:
                    break
                segment = await interaction.turn(answer[0]["content"])
            outcome = state.env.outcome().model_dump(mode="json")
            interaction.trace.info.update(
                env_reward=state.reward,
                solved=float(outcome_succeeded(chat.config.benchmark, outcome)),
                turns=len(state.turns),
                invalid_moves=sum(not turn.valid for turn in state.turns),
                episode_id=state.session.spec.episode_id,
            )


_TIMEOUT = httpx.Timeout(600.0, connect=120.0)
"""One move's request: the SDK's 10 minutes to answer, and two minutes to connect."""


class ChatHarnessConfig(vf.HarnessConfig):  # type: ignore[misc]
    """No settings: the model, endpoint and sampling come from verifiers."""


class ChatHarness(vf.Harness[ChatHarnessConfig]):  # type: ignore[misc]
    """The model seat: one chat request per move through the rollout's interception endpoint."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self, ctx: Any, trace: Any, runtime: Any, endpoint: str, secret: str, mcp_urls: Any, data: Any, **_: Any
    ) -> Any:
        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        else:
            messages += [m if isinstance(m, dict) else message_to_wire(m) for m in prompt or []]
        # The endpoint is verifiers' own interception server in this process: on a busy machine its loop can
        # take longer than the SDK's 5 s default to accept a connection, which is load, not a dead server.
        client = AsyncOpenAI(base_url=endpoint, api_key=secret, max_retries=0, timeout=_TIMEOUT)
        try:
            response = await client.chat.completions.create(model=ctx.model, messages=cast(Any, messages))
        finally:
            await client.close()
        return vf.ProgramResult(0, response.choices[0].message.content or "", "")
