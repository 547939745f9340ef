"""One episode played to its end: reset, the player's moves through ``env.astep``, a log record per
step and an end record with the outcome and the model usage per role. A resumed episode that goes on
where it stopped (``_continue.py``) skips the reset and the start record: its env and player are
handed over at the next turn."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Protocol

from lateralgym.agents import Agent, scrub_credentials
from lateralgym.envs import LateralEnv, ModelCall, PlayerQuit
from lateralgym.episodes._continue import Continuation, keeps_judge_replies
from lateralgym.episodes._judge_tape import JudgeTape, taped
from lateralgym.episodes._log import EpisodeEnd, EpisodeStart, StepLine, Usage, observation
from lateralgym.episodes._plan import EpisodeSpec

__all__ = ["RecordWriter", "run_episode"]


class RecordWriter(Protocol):
    """Where an episode's records go: the step log, or a Ray worker's list the driver writes."""

    def write(self, record: EpisodeStart | StepLine | EpisodeEnd) -> None: ...

    def sync(self) -> None: ...


def _add(usage: dict[str, Usage], calls: Sequence[ModelCall]) -> None:
    for call in calls:
        usage.setdefault(call.role, Usage()).add(call)


async def run_episode(
    spec: EpisodeSpec,
    env: LateralEnv,
    agent: Agent,
    writer: RecordWriter,
    run_id: str,
    run_dir: Path | None,
    player: str,
    *,
    continued: Continuation | None = None,
) -> EpisodeEnd:
    """Play one episode, logging every step; an agent or judge failure ends the episode with ``error`` set.

    ``writer`` takes the records (``RecordWriter``); ``run_dir`` None keeps every
    observation inline (a Ray worker's records, which the driver stores). ``continued``: a
    resumed episode replayed to its next turn (``env`` and ``agent`` are then its own).
    """
    if continued is not None:
        return await _played(spec, continued.env, continued.agent, writer, run_id, run_dir, continued.tape, continued)
    tape = taped(env.judge) if keeps_judge_replies(agent, env) else None
    if tape is not None:
        env.judge = tape  # before reset: the scene keeps the judge it is given
    try:
        return await _played(spec, env, agent, writer, run_id, run_dir, tape, None, player=player)
    finally:
        if tape is not None:
            env.judge = tape.inner  # the env is reused by the next episode


async def _played(
    spec: EpisodeSpec,
    env: LateralEnv,
    agent: Agent,
    writer: RecordWriter,
    run_id: str,
    run_dir: Path | None,
    tape: JudgeTape | None,
    continued: Continuation | None,
    player: str = "",
) -> EpisodeEnd:
    """``run_episode`` from its first turn, or from the next turn of ``continued``."""
    config = env.config
    ids = {"run_id": run_id, "episode_id": spec.episode_id, "item_id": spec.item_id}
    total, error = 0.0, None
    terminated = truncated = False
    usage: dict[str, Usage] = {}
    if continued is None:
        obs, info = env.reset(seed=spec.seed, options={"item_id": spec.item_id})
        agent.reset(obs, info, seed=spec.seed)  # before the start record, which logs the prompt it picks
        writer.write(_start(spec, env, agent, ids, obs, run_dir, player))
    else:
        agent.reset(*continued.opening, seed=spec.seed)
        agent.show_played(str(continued.opening[0]["text"]), continued.turns)
        obs, info = continued.last
        total, terminated, truncated = continued.reward, continued.terminated, continued.truncated
        for role, logged in continued.usage.items():
            usage.setdefault(role, Usage()).merge(logged)
    meta = env.benchmark.item_meta(env.item)
    while not (terminated or truncated):
        if hasattr(agent, "last_llm"):
            agent.last_llm = None  # so a failure below is never blamed on the previous call
        try:
            action = await agent.act_async(obs, info)
        except PlayerQuit:
            raise  # a person stopping: the run stops, the episode stays unfinished for --resume
        except Exception as exc:  # noqa: BLE001 - a failing agent ends its episode, not the run
            error = scrub_credentials(f"{type(exc).__name__}: {exc}")
            failed: ModelCall | None = getattr(agent, "last_llm", None)
            _add(usage, [failed] if failed is not None else [])
            break
        llm: ModelCall | None = getattr(agent, "last_llm", None)
        _add(usage, [llm] if llm is not None else [])
        before = obs["text"]
        try:
            obs, reward, terminated, truncated, info = await env.astep(action)
        except PlayerQuit:
            raise  # a person judging stopped: as when a person playing does
        except Exception as exc:  # noqa: BLE001 - a failing judge ends its episode, not the run
            error = scrub_credentials(f"{type(exc).__name__}: {exc}")
            _add(usage, getattr(exc, "calls", ()))
            break
        total += reward
        record = env.records[-1]
        _add(usage, record.judge_calls)
        writer.write(
            StepLine(
                **ids,
                step=record.turn,
                action=record.action,
                valid=record.valid,
                observation=observation(before, run_dir),
                reply=observation(obs["text"], run_dir),
                reward=reward,
                judge_label=record.judge_label,
                judge_raw=record.judge_raw,
                terminated=terminated,
                truncated=truncated,
                llm=llm,
                judge_calls=list(record.judge_calls),
                judge_replies=(tape.take() or None) if tape is not None else None,
            )
        )
    end = EpisodeEnd(
        **ids,
        repeat=spec.repeat,
        benchmark=config.benchmark,
        outcome=env.outcome().model_dump(mode="json"),
        meta=meta,
        reward=total,
        terminated=terminated,
        truncated=truncated,
        error=error,
        usage=usage,
    )
    writer.write(end)
    writer.sync()
    if error is None:  # only a person is shown the verdict and the solution (every other agent ignores it)
        agent.episode_over(str(obs["text"]), end.outcome or {}, env.benchmark.solution_text(env.item))
    return end


def _start(
    spec: EpisodeSpec,
    env: LateralEnv,
    agent: Agent,
    ids: dict[str, str],
    obs: dict[str, Any],
    run_dir: Path | None,
    player: str,
) -> EpisodeStart:
    config = env.config
    return EpisodeStart(
        **ids,
        repeat=spec.repeat,
        seed=spec.seed,
        config=config.name,
        benchmark=config.benchmark,
        mode=config.mode,
        player=player,
        judge=getattr(env.judge, "name", "?"),
        observation=observation(obs["text"], run_dir),
        meta=env.benchmark.item_meta(env.item),
        prompt=agent.prompt_messages(),
        first_message=agent.first_message(str(obs["text"])),
    )
