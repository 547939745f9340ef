"""``lateralgym run ... --dry-run``: what a run would ask of its models, before anything is spent.

The estimate checks the run's ``RunOptions`` as ``run`` does, plans the run exactly as ``run``
would (the same items, ``--limit`` and repeats), builds every episode's first observation and the
player's real opening prompt (system prompt, worked examples, the observation), and counts:

* player calls: at least one per episode, at most ``max_turns``; a later turn resends the whole
  chat, so its prompt is the opening plus ``EXCHANGE_TOKENS`` per earlier turn;
* judge calls (an LLM judge only; multiple choice is graded exactly, with no calls): up to one per
  player move, times its majority-vote ``samples``; each prompt is the judge's instructions plus the
  item and its hidden answer;
* tokens at ``CHARS_PER_TOKEN`` characters a token; completion tokens at the spec's ``max_tokens``
  when set, else ``COMPLETION_TOKENS`` (``COT_COMPLETION_TOKENS`` with ``reasoning=cot``), at most the
  longest reply the benchmark's action grammar admits when the player's replies are constrained;
* cost from the offline price table (``lateralgym.agents._prices``), ``unknown`` for models it lacks.

Nothing is sent, no run directory is made and the cache is not touched.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from lateralgym.envs import EpisodeConfig, LateralEnv, get_benchmark, load_config_items
from lateralgym.episodes._options import RunOptions, plan_episodes
from lateralgym.episodes._roles import build_judge

__all__ = ["DryRun", "RoleEstimate", "dry_run"]

CHARS_PER_TOKEN = 4.0
EXCHANGE_TOKENS = 60
"""Tokens one earlier turn adds to a multi-turn prompt (the model's reply and the env's answer)."""
COMPLETION_TOKENS = 40
COT_COMPLETION_TOKENS = 300
JUDGE_INSTRUCTION_TOKENS = 250
JUDGE_COMPLETION_TOKENS = 5


def _tokens(text: str) -> int:
    return max(1, round(len(text) / CHARS_PER_TOKEN))


class RoleEstimate(BaseModel):
    """One model role's expected use: fewest (every episode ends at once) to most (every turn used)."""

    role: str
    model: str
    calls: tuple[int, int]
    prompt_tokens: tuple[int, int]
    completion_tokens: tuple[int, int]
    cost_usd: tuple[float, float] | None
    """None when the price table has no such model."""
    price: str
    """Where the price came from (``gpt-4o-mini: $0.15 / $0.60 per 1M tokens, list prices of 2025-06``)."""


class DryRun(BaseModel):
    """What a run would do."""

    config: str
    benchmark: str
    mode: str
    episodes: int
    items: int
    repeats: int
    max_turns: int
    player: str
    judge: str
    roles: list[RoleEstimate]
    first_prompt: list[dict[str, str]] = Field(default_factory=list, exclude=True)
    """The LLM player's opening messages of the first episode (a speed probe reads them)."""
    longest_prompt: int = 0
    """Tokens of the longest prompt any model role is sent (a player's at its last turn)."""
    longest_reply: int = 0
    """Tokens of the longest reply any model role may write."""

    def render(self) -> str:
        """Lines for people."""

        def span(pair: tuple[float, float], money: bool = False) -> str:
            def text(value: float) -> str:
                return f"${value:,.4f}" if money else f"{int(value):,}"

            low, high = pair
            return text(low) if low == high else f"{text(low)} - {text(high)}"

        lines = [
            f"dry run of {self.config} ({self.benchmark}, {self.mode}): {self.episodes} episodes = {self.items} items "
            f"x {self.repeats} repeat(s), up to {self.max_turns} turns each; player {self.player}, judge {self.judge}",
            "nothing was sent, no run directory was made",
        ]
        if not self.roles:
            lines.append("no model calls: the player and the judge are offline (no cost)")
        for r in self.roles:
            cost = "unknown (no price for this model)" if r.cost_usd is None else span(r.cost_usd, money=True)
            lines.append(
                f"{r.role} {r.model}: {span(r.calls)} calls, {span(r.prompt_tokens)} prompt + "
                f"{span(r.completion_tokens)} completion tokens, estimated cost {cost}"
            )
            lines.append(f"  price: {r.price}")
        if self.roles and self.max_turns > 1:
            lines.append(
                f"ranges: every episode ending after one turn - every episode using all {self.max_turns}; tokens at "
                f"{CHARS_PER_TOKEN:g} characters a token from the real opening prompts"
            )
        return "\n".join(lines)


def _price_text(model: str) -> tuple[tuple[float, float] | None, str, tuple[float, float] | None]:
    from lateralgym.agents import LOCAL_PROVIDER, PRICES_AS_OF, price_per_million

    if model.startswith(f"{LOCAL_PROVIDER}/"):
        return (0.0, 0.0), "a local model, served on this machine: no cost", (0.0, 0.0)

    entry = price_per_million(model)
    if entry is None:
        return None, f"{model} is not in the offline price table (list prices of {PRICES_AS_OF})", None
    family, per_in, per_out = entry
    text = f"{family}: ${per_in:g} in / ${per_out:g} out per 1M tokens (list prices of {PRICES_AS_OF})"
    return (per_in, per_out), text, (per_in, per_out)


def _estimate(
    role: str, model: str, calls: tuple[int, int], prompt: tuple[int, int], completion: tuple[int, int]
) -> RoleEstimate:
    rates, text, _ = _price_text(model)
    cost = None
    if rates is not None:
        cost = (
            (prompt[0] * rates[0] + completion[0] * rates[1]) / 1_000_000,
            (prompt[1] * rates[0] + completion[1] * rates[1]) / 1_000_000,
        )
    return RoleEstimate(
        role=role,
        model=model,
        calls=calls,
        prompt_tokens=prompt,
        completion_tokens=completion,
        cost_usd=cost,
        price=text,
    )


def dry_run(
    config: EpisodeConfig,
    options: RunOptions | None = None,
    *,
    items: Sequence[Any] | None = None,
    **settings: Any,
) -> DryRun:
    """Estimate a run's model calls, tokens and cost without sending anything (see the module docstring).

    Args:
        config: the config the run would run.
        options: the run's settings (``RunOptions``), checked as ``run`` checks them; the estimate
            reads ``player``, ``judge``, ``judge_samples``, ``limit``, ``sample`` and ``repeats``.
        items: items to run on (default ``config.dataset`` or the sample data).
        **settings: ``RunOptions`` fields merged into ``options``.

    Raises:
        ConfigError: a bad config or setting (as ``run`` would raise them).
        DatasetError: the dataset cannot be read.
    """
    from lateralgym.agents import ModelSpec, is_model_spec

    options = (options or RunOptions()).merge(**settings).with_config(config)
    player, judge, repeats = str(options.player), str(options.judge), options.repeats
    items = load_config_items(config) if items is None else items
    plan = plan_episodes(items, config.seed, options.limit, repeats, sample=options.sample)
    benchmark = get_benchmark(config.benchmark)
    if not is_model_spec(judge):  # built as the run builds it (a model judge's key is the run's to need)
        build_judge(config, options)
    env = LateralEnv(config, items=items)  # the offline default judge: only first observations are needed
    turns = config.max_turns
    openings: list[int] = []
    replies: list[int] = []
    judge_prompts: list[int] = []
    first_prompt: list[dict[str, str]] = []
    spec = ModelSpec.parse(player) if is_model_spec(player) else None
    if spec is not None:
        from lateralgym.agents import PLAYER_OPTIONS, conversation_start, default_constraint, prompt_plan

        wanted = spec.role_options(PLAYER_OPTIONS, role="player")
        reply = spec.max_tokens or (COT_COMPLETION_TOKENS if wanted.get("reasoning") == "cot" else COMPLETION_TOKENS)
        constrained = (wanted.get("constrain") or default_constraint(spec))[0] != "off"
    by_id = {str(item.id): item for item in items}  # the ids plan_episodes uses
    for episode in plan:
        observation, info = env.reset(seed=episode.seed, options={"item_id": episode.item_id})
        if spec is not None:
            few_shot = wanted.get("few_shot", False)
            shots = None if isinstance(few_shot, bool) else few_shot
            chosen = prompt_plan(
                info,
                reasoning=wanted.get("reasoning"),
                few_shot=bool(few_shot),
                shots=shots,
                demonstrations=wanted.get("demos"),
            )
            messages = conversation_start(chosen, str(observation["text"]), wanted.get("system_prompt"))
            openings.append(sum(_tokens(m["content"]) for m in messages))
            first_prompt = first_prompt or messages
            grammar = benchmark.prompts.action_grammar(info, chosen.reasoning) if constrained else None
            # A constrained reply is as long as its grammar allows at most.
            replies.append(reply if grammar is None else min(reply, math.ceil(grammar.max_chars() / CHARS_PER_TOKEN)))
        hidden = benchmark.solution_text(by_id[episode.item_id])
        judge_prompts.append(JUDGE_INSTRUCTION_TOKENS + _tokens(str(observation["text"])) + _tokens(hidden))
    roles: list[RoleEstimate] = []
    longest_prompt = longest_reply = 0
    if spec is not None and openings:
        longest_prompt = max(openings) + EXCHANGE_TOKENS * (turns - 1)
        longest_reply = max(replies)
    if spec is not None:
        fewest = sum(openings)
        most = sum(turns * o + EXCHANGE_TOKENS * turns * (turns - 1) // 2 for o in openings)
        calls = (len(plan), len(plan) * turns)
        written = (sum(replies), sum(replies) * turns)
        roles.append(_estimate("player", spec.name, calls, (fewest, most), written))
    if is_model_spec(judge) and benchmark.judging.llm_judge is not None:
        judge_spec = ModelSpec.parse(judge)
        samples = options.judge_samples or int(judge_spec.options.get("samples", "1") or 1)
        reply = judge_spec.max_tokens or JUDGE_COMPLETION_TOKENS
        calls = (len(plan) * samples, len(plan) * turns * samples)
        fewest = sum(judge_prompts) * samples
        most = sum(turns * p for p in judge_prompts) * samples
        roles.append(_estimate("judge", judge_spec.name, calls, (fewest, most), (calls[0] * reply, calls[1] * reply)))
        longest_prompt = max(longest_prompt, max(judge_prompts, default=0))
        longest_reply = max(longest_reply, reply)
    return DryRun(
        config=config.name,
        benchmark=config.benchmark,
        mode=config.mode,
        episodes=len(plan),
        items=len({e.item_id for e in plan}),
        repeats=repeats,
        max_turns=turns,
        first_prompt=first_prompt,
        longest_prompt=longest_prompt,
        longest_reply=longest_reply,
        player=player,
        judge=judge,
        roles=roles,
    )
