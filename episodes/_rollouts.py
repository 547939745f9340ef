"""Rollouts: an episode as the chat the player saw and wrote, with its rewards, for training LLMs.

``Rollout`` is the one record of a played episode for trainers: ``lateralgym export`` rebuilds one
per episode from a run's step log (``rollouts_from_log``), and ``lateralgym.integrations.rollout``
returns one from a live episode. Its ``messages`` are exactly the chat an LLM player sent and
received: the opening messages (system prompt, worked examples: ``EpisodeStart.prompt``), the first
observation, then each reply (``ModelCall.text``) and the env's answer to it as the next user turn.
The env's answer to the last move ends the episode and is never shown to the player: it is kept
apart, in ``final_reply``.

Logs written before ``EpisodeStart.prompt`` existed are rebuilt from the player spec's options
(``prompt_source: rebuilt``) with the prompts of the installed version. Offline players (random,
heuristic, oracle) read no prompt: their rollouts open with the prompt an LLM player would get
under the same config, and their moves are written as actions (``action_to_text``), so their
episodes can seed supervised warm-starts.

Fields whose shape differs from one episode or benchmark to the next (the outcome, the item
metadata, each action) are JSON text, so that every export loads as one table with the
``datasets`` library and reads back unchanged.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from lateralgym.agents import PromptPlan, is_model_spec, opening_messages, prompt_plan
from lateralgym.envs import (
    ConfigError,
    Invalid,
    LateralGymError,
    ModelCall,
    ProcessReward,
    action_to_text,
    get_benchmark,
    parse_action,
)
from lateralgym.episodes._log import STEP_LOG, EpisodeEnd, EpisodeStart, StepLine, observation_text, read_log

__all__ = [
    "ExportError",
    "Rollout",
    "RolloutTurn",
    "outcome_fields",
    "outcome_succeeded",
    "rollouts_from_log",
    "turn_from_call",
]

Message = dict[str, str]
"""A chat message, ``{"role": "system" | "user" | "assistant", "content": ...}``."""


class ExportError(LateralGymError):
    """A run directory cannot be exported (no step log, a prompt that cannot be rebuilt)."""


class RolloutTurn(BaseModel):
    """One move of the player and what the env made of it."""

    model_config = ConfigDict(extra="forbid")

    step: int
    """1-based turn number."""
    action: str
    """The parsed action as JSON text (``kind`` and its fields; ``invalid`` keeps the raw reply)."""
    valid: bool
    """Whether the env accepted the move (an invalid one still costs the turn)."""
    reward: float
    """The env's reward for this move (shaping, and the final reward on the last move)."""
    judge_label: str | None = None
    """The judge's label (yes / no / irrelevant, correct / not yet), when a judge was asked."""
    reply: str
    """The env's answer to the move: the next user message (the last one is ``Rollout.final_reply``)."""
    tokens: list[str] | None = None
    """The reply's completion tokens, when the model was asked for logprobs (``logprobs=true``)."""
    logprobs: list[float] | None = None
    """Each completion token's sampling logprob (parallel to ``tokens``), when asked for."""
    token_ids: list[int] | None = None
    """The completion's token ids, when the server returned them (``token_ids=true`` on vLLM)."""
    process_reward: float | None = None
    """The move's process reward (a question under a benchmark's ``reward: dense``), already inside
    ``reward``; None for a move that earned none. A rollout none of whose moves earned one leaves the
    key out of its JSON."""


class Rollout(BaseModel):
    """One episode as a training example (see the module docstring)."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = ""
    """The run the episode belongs to (empty for a live ``rollout``)."""
    episode_id: str
    """``<item id>#<repeat>``."""
    item_id: str
    group_id: str
    """Rollouts of one item share it (GRPO groups): the item id."""
    repeat: int = 0
    seed: int
    """The episode's seed (``env.reset(seed=...)``)."""
    config: str
    benchmark: str
    mode: str
    player: str
    """The player spec (no credentials)."""
    judge: str
    messages: list[Message]
    """The chat in order: system, worked examples, the first observation, then assistant and user
    turns; it ends with the player's last reply."""
    prompt_messages: int
    """How many of ``messages`` open the episode (system, worked examples, first observation): the
    prompt; the rest is the completion."""
    prompt_source: Literal["logged", "rebuilt", "live"]
    """``logged``: the opening messages come from the step log; ``rebuilt``: from the player spec
    (older logs) or, for offline players, the prompt an LLM player would get; ``live``: a rollout."""
    turns: list[RolloutTurn] = Field(default_factory=list)
    rewards: list[float] = Field(default_factory=list)
    """Per-turn rewards (``turns[i].reward``)."""
    reward: float
    """The episode's total reward (the sum of ``rewards``)."""
    solved: bool
    """Whether the outcome counts as a success (``Outcome.succeeded``)."""
    outcome: str
    """The benchmark's typed outcome as JSON text (``{}`` when the episode never started), without
    the judges' free text (``Outcome.judge_prose``): typed fields only, fit to show a policy."""
    judge_notes: str = "{}"
    """The judges' free text about the episode (an LLM judge's comment), as JSON text by outcome
    path; it may discuss the hidden answer, so it is kept apart from ``outcome`` and never a
    training input."""
    meta: str = "{}"
    """The item's public metadata as JSON text."""
    final_reply: str = ""
    """The env's answer to the last move (its verdict), which the player never reads."""
    terminated: bool = False
    truncated: bool = False
    error: str | None = None
    """Why the episode could not finish (an API failure); such rollouts are left out of exports
    unless asked for."""

    @model_serializer(mode="wrap")
    def _without_sparse_process(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # A run without process rewards keeps the columns it always had; one with them gives every
        # turn the key (null where a move earned none), so the export stays one table.
        data: dict[str, Any] = handler(self)
        if self.process_rewards is None:
            for turn in data.get("turns", []):
                if isinstance(turn, dict):
                    turn.pop("process_reward", None)
        return data

    @property
    def process_rewards(self) -> list[float] | None:
        """Each turn's process reward (0 for a move that earned none, an explanation), or None when no
        turn has one (a run without ``reward: dense``)."""
        if all(turn.process_reward is None for turn in self.turns):
            return None
        return [turn.process_reward or 0.0 for turn in self.turns]

    @property
    def prompt(self) -> list[Message]:
        """The opening messages."""
        return self.messages[: self.prompt_messages]

    @property
    def completion(self) -> list[Message]:
        """Everything after the prompt: the player's replies and the env's answers, in order."""
        return self.messages[self.prompt_messages :]


def turn_from_call(
    step: int,
    action: dict[str, Any],
    valid: bool,
    reward: float,
    reply: str,
    judge_label: str | None,
    call: ModelCall | None,
    process: ProcessReward | None = None,
) -> RolloutTurn:
    """A turn from a step's facts, the player's model call (its token data, when any) and the move's
    process reward (when it earned one)."""
    return RolloutTurn(
        step=step,
        action=json.dumps(action, ensure_ascii=False, sort_keys=True),
        valid=valid,
        reward=reward,
        judge_label=judge_label,
        reply=reply,
        tokens=call.tokens if call is not None else None,
        logprobs=call.logprobs if call is not None else None,
        token_ids=call.token_ids if call is not None else None,
        process_reward=process.reward if process is not None else None,
    )


def outcome_succeeded(benchmark: str, outcome: dict[str, Any] | None) -> bool:
    """``Outcome.succeeded`` of a logged outcome; False when it is absent or partial (an errored episode)."""
    if not outcome:
        return False
    try:
        return bool(get_benchmark(benchmark).metrics.outcome_of(outcome).succeeded())
    except (ConfigError, ValueError):
        return False


def outcome_fields(benchmark: str, outcome: dict[str, Any] | None) -> dict[str, str]:
    """A ``Rollout``'s ``outcome`` (typed fields) and ``judge_notes`` (the judges' free text, split off
    by ``Outcome.split_judge_prose``), each as JSON text."""
    kept: dict[str, Any] = dict(outcome or {})
    notes: dict[str, Any] = {}
    try:
        kept, notes = get_benchmark(benchmark).outcome_type.split_judge_prose(kept)
    except ConfigError:  # a benchmark no longer installed: it declared no judge prose here
        pass
    return {
        "outcome": json.dumps(kept, ensure_ascii=False, sort_keys=True),
        "judge_notes": json.dumps(notes, ensure_ascii=False, sort_keys=True),
    }


def rollouts_from_log(run_dir: str | Path) -> Iterator[Rollout]:
    """Every finished episode of a run as a ``Rollout``, in the order the episodes ended.

    Episodes without an end record (still running, or killed) are skipped; errored episodes are
    yielded with ``error`` set.

    Raises:
        ExportError: ``run_dir`` has no step log, or an old log's LLM prompt cannot be rebuilt.
        LogError: a line of the log is not a record.
    """
    run_dir = Path(run_dir)
    log = run_dir / STEP_LOG
    if not log.is_file():
        raise ExportError(f"{run_dir}: no {STEP_LOG}; give a run directory that `lateralgym run` wrote")
    from lateralgym.episodes._manifest import read_run

    read_run(run_dir)  # imports a benchmark of the user's own that the run's config names
    starts: dict[str, EpisodeStart] = {}
    steps: dict[str, list[StepLine]] = {}
    for record in read_log(log):
        key = record.episode_id
        if isinstance(record, EpisodeStart):
            starts[key], steps[key] = record, []  # a rerun (resume) starts the episode afresh
        elif isinstance(record, StepLine):
            if record.agent == "player" and key in steps:
                steps[key].append(record)
        elif key in starts:
            yield _rollout(run_dir, starts.pop(key), steps.pop(key), record)


def _rollout(run_dir: Path, start: EpisodeStart, lines: Sequence[StepLine], end: EpisodeEnd) -> Rollout:
    opening, source = _opening(start)
    first = start.first_message or observation_text(start.observation, run_dir)
    messages: list[Message] = [*opening, {"role": "user", "content": first}]
    turns: list[RolloutTurn] = []
    for n, line in enumerate(lines):
        if n:  # the env's answer to the previous move, as the player read it
            messages.append({"role": "user", "content": observation_text(line.observation, run_dir)})
        messages.append({"role": "assistant", "content": _reply_text(line)})
        reply = observation_text(line.reply, run_dir)
        turns.append(
            turn_from_call(
                line.step, line.action, line.valid, line.reward, reply, line.judge_label, line.llm, line.process
            )
        )
    return Rollout(
        run_id=start.run_id,
        episode_id=start.episode_id,
        item_id=start.item_id,
        group_id=start.item_id,
        repeat=start.repeat,
        seed=start.seed,
        config=start.config,
        benchmark=start.benchmark,
        mode=start.mode,
        player=start.player,
        judge=start.judge,
        messages=messages,
        prompt_messages=len(opening) + 1,
        prompt_source=source,
        turns=turns,
        rewards=[t.reward for t in turns],
        reward=end.reward,
        solved=outcome_succeeded(end.benchmark, end.outcome),
        **outcome_fields(end.benchmark, end.outcome),
        meta=json.dumps(end.meta, ensure_ascii=False, sort_keys=True),
        final_reply=turns[-1].reply if turns else "",
        terminated=end.terminated,
        truncated=end.truncated,
        error=end.error,
    )


def _reply_text(line: StepLine) -> str:
    """What the player wrote: the model's reply, or an offline player's action as text."""
    if line.llm is not None:
        return line.llm.text
    action = parse_action(line.action)
    return action.raw if isinstance(action, Invalid) else action_to_text(action)


def _opening(start: EpisodeStart) -> tuple[list[Message], Literal["logged", "rebuilt"]]:
    """The messages before the first observation: logged, or rebuilt from the player spec."""
    if start.prompt is not None:
        return [dict(m) for m in start.prompt], "logged"
    info = {"benchmark": start.benchmark, "mode": start.mode}
    system: str | None = None
    plan: PromptPlan = prompt_plan(info)
    if is_model_spec(start.player):
        from lateralgym.agents import PLAYER_OPTIONS, LLMError, ModelSpec

        try:
            options = ModelSpec.parse(start.player).role_options(PLAYER_OPTIONS, role="player")
        except LLMError as exc:
            raise ExportError(f"episode {start.episode_id}: cannot rebuild the player's prompt: {exc}") from None
        few_shot = options.get("few_shot", False)
        plan = prompt_plan(
            info,
            reasoning=options.get("reasoning"),
            few_shot=bool(few_shot),
            shots=None if isinstance(few_shot, bool) else few_shot,
            demonstrations=options.get("demos"),
        )
        system = options.get("system_prompt")
    try:
        return opening_messages(plan, system), "rebuilt"
    except ConfigError as exc:
        raise ExportError(
            f"episode {start.episode_id}: cannot rebuild the player's prompt ({exc}); "
            "rerun with this version, whose log records it"
        ) from None
