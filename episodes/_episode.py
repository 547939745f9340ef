"""One episode played to its end: reset, the player's moves through ``env.astep``, a log record per
step and an end record with the outcome and the model usage per role."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from lateralgym.agents import Agent, scrub_credentials
from lateralgym.envs import LateralEnv, ModelCall, PlayerQuit
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
) -> EpisodeEnd:
    """Play one episode, logging every step; an agent or judge failure ends the episode with ``error`` set.

    ``writer`` takes the records (``RecordWriter``); ``run_dir`` None keeps every
    observation inline (a Ray worker's records, which the driver stores).
    """
    config = env.config
    obs, info = env.reset(seed=spec.seed, options={"item_id": spec.item_id})
    meta = env.benchmark.item_meta(env.item)
    ids = {"run_id": run_id, "episode_id": spec.episode_id, "item_id": spec.item_id}
    agent.reset(obs, info, seed=spec.seed)  # before the start record, which logs the prompt it picks
    writer.write(
        EpisodeStart(
            **ids,
            repeat=spec.repeat,
            seed=spec.seed,
            config=config.name,
            benchmark=config.benchmark,
            mode=config.mode,
            player=player,
            judge=getattr(env.judge, "name", "?"),
            observation=observation(obs["text"], run_dir),
            meta=meta,
            prompt=agent.prompt_messages(),
            first_message=agent.first_message(str(obs["text"])),
        )
    )
    total, error = 0.0, None
    terminated = truncated = False
    usage: dict[str, Usage] = {}
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
