"""One episode played to its end by a player: an ``EpisodeSession`` driven by the player's moves.
A resumed episode that goes on where it stopped (``_continue.py``) skips the reset and the start
record: its env and player are handed over at the next turn."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from lateralgym.agents import Agent
from lateralgym.envs import LateralEnv, ModelCall, PlayerQuit
from lateralgym.episodes._log import EpisodeEnd
from lateralgym.episodes._plan import EpisodeSpec
from lateralgym.episodes._session import EpisodeSession, RecordWriter

if TYPE_CHECKING:
    from lateralgym.episodes._continue import Continuation

__all__ = ["RecordWriter", "run_episode"]


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
        session = EpisodeSession(
            continued.env, spec, writer=writer, run_id=run_id, run_dir=run_dir, player=player, tape=continued.tape
        )
        return await _played(session, continued.agent, continued)
    tape = None
    if agent.resumes_mid_episode:  # a person, who may go on mid-episode after a resume: the judge is taped
        from lateralgym.episodes._continue import keeps_judge_replies
        from lateralgym.episodes._judge_tape import taped

        tape = taped(env.judge) if keeps_judge_replies(agent, env) else None
    if tape is not None:
        env.judge = tape  # before reset: the scene keeps the judge it is given
    try:
        session = EpisodeSession(env, spec, writer=writer, run_id=run_id, run_dir=run_dir, player=player, tape=tape)
        return await _played(session, agent, None)
    finally:
        if tape is not None:
            env.judge = tape.inner  # the env is reused by the next episode


async def _played(session: EpisodeSession, agent: Agent, continued: Continuation | None) -> EpisodeEnd:
    """``run_episode`` from its first turn, or from the next turn of ``continued``."""
    error = None
    if continued is None:
        obs, info = session.start()
        agent.reset(obs, info, seed=session.spec.seed)  # before the start record, which logs the prompt it picks
        session.log_start(prompt=agent.prompt_messages(), first_message=agent.first_message(str(obs["text"])))
    else:
        agent.reset(*continued.opening, seed=session.spec.seed)
        agent.show_played(str(continued.opening[0]["text"]), continued.turns)
        session.resume(continued.last, continued.reward, continued.terminated, continued.truncated, continued.usage)
    while not session.done:
        if hasattr(agent, "last_llm"):
            agent.last_llm = None  # so a failure below is never blamed on the previous call
        try:
            action = await agent.act_async(session.obs, session.info)
        except PlayerQuit:
            raise  # a person stopping: the run stops, the episode stays unfinished for --resume
        except Exception as exc:  # noqa: BLE001 - a failing agent ends its episode, not the run
            failed: ModelCall | None = getattr(agent, "last_llm", None)
            session.count([failed] if failed is not None else [])
            error = session.fail(exc)
            break
        llm: ModelCall | None = getattr(agent, "last_llm", None)
        try:
            await session.astep(action, llm=llm)
        except PlayerQuit:
            raise  # a person judging stopped: as when a person playing does
        except Exception as exc:  # noqa: BLE001 - a failing judge ends its episode, not the run
            error = session.fail(exc)
            break
    end = session.finish(error)
    if error is None:  # only a person is shown the verdict and the solution (every other agent ignores it)
        agent.episode_over(str(session.obs["text"]), end.outcome or {}, session.solution)
    return end
