"""How an LLM player opens an episode: the protocol chosen from ``info``, and the opening messages.

The texts themselves belong to the benchmarks (``Benchmark.prompts.system_prompt``,
``Benchmark.prompts.worked_examples``), written in our own words after each paper's set-up;
``conversation_start`` assembles them, and the player then feeds each env reply back as the next
user message.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from lateralgym.envs import ConfigError, PromptRequest, get_benchmark

__all__ = [
    "PromptPlan",
    "Reasoning",
    "conversation_start",
    "first_message",
    "opening_messages",
    "prompt_plan",
    "system_prompt",
]

Reasoning = Literal["direct", "cot"]

_ENV_FORMS_ACCEPTED = (
    "The environment's own command forms (shown after 'Allowed actions:') are accepted too, "
    "but prefer the format above."
)

_GENERIC = """\
You are playing a reasoning game. Read each message and reply with one action in the form the \
message asks for.
"""


class PromptPlan(BaseModel):
    """Which protocol a player follows in an episode, decided from ``info`` at its start."""

    model_config = ConfigDict(frozen=True)

    benchmark: str | None
    """The registered benchmark (``None``: unknown; a generic prompt is used)."""
    mode: str | None
    """The config's mode: ``static``, ``cot``, ``interactive``, ``mcq``, ``multiturn``."""
    reasoning: Reasoning
    """``cot`` asks for reasoning before the answer; ``direct`` asks for the answer alone."""
    few_shot: bool
    """Whether worked examples precede the first observation (where the benchmark has them)."""
    shots: int | None = None
    """How many worked examples (``None``: all the benchmark has, or all in ``demonstrations``)."""
    demonstrations: str | None = None
    """A file of worked examples in the benchmark's format; ``None``: the benchmark's own."""
    layout: str | None = None
    """The prompt layout the config chose (``info["public"]["layout"]``); None: the benchmark's only one."""

    def request(self) -> PromptRequest:
        """What the benchmark is asked for."""
        return PromptRequest(
            mode=self.mode,
            reasoning=self.reasoning,
            few_shot=self.few_shot,
            shots=self.shots,
            demonstrations=self.demonstrations,
            layout=self.layout,
        )


def prompt_plan(
    info: dict[str, Any],
    *,
    reasoning: Reasoning | None = None,
    few_shot: bool = False,
    shots: int | None = None,
    demonstrations: str | None = None,
) -> PromptPlan:
    """The protocol for an episode: ``reasoning=None`` follows the config (``cot`` mode -> ``cot``)."""
    mode = info.get("mode")
    chosen: Reasoning = reasoning if reasoning is not None else ("cot" if mode == "cot" else "direct")
    benchmark = info.get("benchmark")
    public = info.get("public")
    layout = public.get("layout") if isinstance(public, dict) else None
    return PromptPlan(
        benchmark=benchmark,
        mode=mode,
        reasoning=chosen,
        few_shot=few_shot,
        shots=shots,
        demonstrations=demonstrations,
        layout=layout if isinstance(layout, str) else None,
    )


def system_prompt(plan: PromptPlan) -> str:
    """The benchmark's system prompt for a protocol (a generic one for an unknown benchmark)."""
    try:
        benchmark = get_benchmark(str(plan.benchmark))
    except ConfigError:
        return _GENERIC
    request = plan.request()
    text = benchmark.prompts.system_prompt(request)
    return f"{text}{_ENV_FORMS_ACCEPTED}" if benchmark.prompts.shows_env_forms(request) else text


def conversation_start(
    plan: PromptPlan, observation_text: str, system: str | None = None, *, aux: str | None = None
) -> list[dict[str, str]]:
    """The opening messages: the system prompt, any worked examples, then the first observation.

    Args:
        plan: The protocol.
        observation_text: The env's first observation text (the brief).
        system: A system prompt replacing the built-in one.
        aux: An auxiliary prompt (elicitation, ``lateralgym.agents._aux``) put after the
            system prompt, as its last part, so it precedes every worked example and the task.

    Raises:
        ConfigError: The benchmark cannot give the worked examples asked for (too many, a bad file).
    """
    first = {"role": "user", "content": first_message(plan, observation_text)}
    return [*opening_messages(plan, system, aux=aux), first]


def first_message(plan: PromptPlan, observation_text: str) -> str:
    """The first user message: the first observation, laid out as the benchmark's chosen layout asks
    (``Benchmark.prompts.first_message``: a paper's worked examples may sit inside it)."""
    try:
        benchmark = get_benchmark(str(plan.benchmark))
    except ConfigError:
        return observation_text
    return benchmark.prompts.first_message(plan.request(), observation_text)


def opening_messages(plan: PromptPlan, system: str | None = None, *, aux: str | None = None) -> list[dict[str, str]]:
    """What precedes the first observation: the system prompt (with ``aux`` as its last part) and any
    worked examples.

    Raises:
        ConfigError: The benchmark cannot give the worked examples asked for (too many, a bad file).
    """
    content = system if system is not None else system_prompt(plan)
    if aux:
        content = f"{content.rstrip()}\n\n{aux}\n"
    messages = [{"role": "system", "content": content}]
    try:
        benchmark = get_benchmark(str(plan.benchmark))
    except ConfigError:  # an unknown benchmark: no examples (a bad few-shot request still raises)
        benchmark = None
    if benchmark is not None:
        messages += benchmark.prompts.worked_examples(plan.request())
    return messages
