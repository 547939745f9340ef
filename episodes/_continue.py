"""A resumed episode going on where it stopped: its logged moves re-stepped, its judge's logged
replies given back, the player handed the next turn.

On ``--resume`` an episode with logged steps and no end record is *continued* when its player
can go on mid-episode (``Agent.resumes_mid_episode``: a person). Before the run writes anything,
``continuations`` resets an env with the episode's seed and re-steps each logged move: the player
is not asked, an offline judge (deterministic, free) is asked again, any other judge (a model, a
person) answers from the step's ``judge_replies`` (``_judge_tape.py``). Every observation, reward
and end flag must be the logged one. If any differs (the config or the dataset changed since),
the episode starts again at turn 1, and a one-line note says why. The continued episode keeps
its logged lines and appends its next ones, so the log stays one start, its steps in order and
one end: a resume killed in turn is continued again from everything logged so far.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lateralgym.agents import Agent, PlayedTurn
from lateralgym.envs import EpisodeConfig, Judge, LateralEnv
from lateralgym.episodes._judge_tape import JudgeTape, ReplayMismatch, is_offline_judge, taped
from lateralgym.episodes._log import EpisodeEnd, EpisodeStart, StepLine, Usage, observation_text, read_log
from lateralgym.episodes._options import EpisodeSpec
from lateralgym.episodes._session import EpisodeSession

__all__ = ["Continuation", "continuations", "keeps_judge_replies"]


@dataclass
class Continuation:
    """An episode replayed to its next turn, ready for ``run_episode``."""

    env: LateralEnv
    """Its own env, stepped through the logged turns (its judge taped when ``tape`` is set)."""
    tape: JudgeTape | None
    agent: Agent
    opening: tuple[dict[str, Any], dict[str, Any]]
    """The first observation and info, for the player's ``reset``."""
    last: tuple[dict[str, Any], dict[str, Any]]
    """The observation and info after the last logged turn: what the player acts on next."""
    turns: list[PlayedTurn]
    reward: float
    """The logged turns' rewards, summed."""
    terminated: bool
    truncated: bool
    usage: dict[str, Usage] = field(default_factory=dict)
    """The logged turns' model usage per role (the end record sums the whole episode)."""


def keeps_judge_replies(agent: Agent, env: LateralEnv) -> bool:
    """Whether an episode logs its judge's replies in full: its player can be continued after a
    resume and its judge is not one of the benchmark's offline ones (which a replay asks again)."""
    return agent.resumes_mid_episode and not is_offline_judge(env.judge, env.benchmark)


async def continuations(
    log_path: Path,
    run_dir: Path,
    plan: Sequence[EpisodeSpec],
    config: EpisodeConfig,
    env: LateralEnv,
    judge: Judge,
    factory: Any,
) -> tuple[dict[str, Continuation], list[str]]:
    """The unfinished episodes of a run's log that go on where they stopped, by episode id, and a
    note for each one that could not (it starts again at turn 1).

    ``env`` is the run's first env (its checked items are shared); ``factory`` builds the players.
    """
    if not log_path.exists() or not plan or not factory(plan[0].seed).resumes_mid_episode:
        return {}, []  # a model's or a script's run: its log is not read again
    records: dict[str, list[EpisodeStart | StepLine | EpisodeEnd]] = {}
    for record in read_log(log_path):
        records.setdefault(record.episode_id, []).append(record)
    ready: dict[str, Continuation] = {}
    notes: list[str] = []
    for spec in plan:
        logged = records.get(spec.episode_id, [])
        steps = [r for r in logged if isinstance(r, StepLine) and r.agent == "player"]
        if not steps or any(isinstance(r, EpisodeEnd) for r in logged):
            continue  # not begun, finished, or errored (run again from turn 1)
        agent: Agent = factory(spec.seed)
        if not agent.resumes_mid_episode:
            continue
        starts = [r for r in logged if isinstance(r, EpisodeStart)]
        try:
            if len(starts) != 1:
                raise ReplayMismatch("the log records its start more than once")
            ready[spec.episode_id] = await _replayed(spec, starts[0], steps, run_dir, config, env, judge, agent)
        except ReplayMismatch as exc:
            notes.append(
                f"episode {spec.episode_id} starts again at turn 1: {exc} (was the config, the dataset or the judge "
                "changed since?)"
            )
    return ready, notes


async def _replayed(
    spec: EpisodeSpec,
    start: EpisodeStart,
    steps: list[StepLine],
    run_dir: Path,
    config: EpisodeConfig,
    first: LateralEnv,
    judge: Judge,
    agent: Agent,
) -> Continuation:
    """The episode re-stepped through its logged moves (see the module docstring).

    Raises:
        ReplayMismatch: the env and the log disagree somewhere, naming the turn.
    """
    env = LateralEnv(config, items=first.items, judge=judge)
    tape = taped(judge) if keeps_judge_replies(agent, env) else None
    if tape is not None:
        env.judge = tape  # before reset: the scene keeps the judge it is given
    # re-stepped through a session that logs nothing: the logged lines stay, the run's session appends after them
    session = EpisodeSession(env, spec.model_copy(update={"seed": start.seed}))
    obs, info = session.start()
    if _sha(obs["text"]) != start.observation.sha256:
        raise ReplayMismatch("its first observation is not the logged one")
    opening = (obs, info)
    turns: list[PlayedTurn] = []
    usage: dict[str, Usage] = {}
    reward_sum = 0.0
    terminated = truncated = False
    if tape is not None:
        tape.replaying = True
    for line in steps:
        if env.done or line.step != env.turn + 1:
            raise ReplayMismatch(f"turn {line.step} of the log does not follow the env's turn {env.turn}")
        if tape is not None:
            tape.load(line.judge_replies or [])
        try:
            obs, reward, terminated, truncated, info = await session.astep(line.action)
        except ReplayMismatch as exc:
            raise ReplayMismatch(f"at turn {line.step}, {exc}") from exc
        except Exception as exc:  # noqa: BLE001 - an offline judge asked again failing: the log cannot be replayed
            raise ReplayMismatch(f"at turn {line.step}, the env failed ({type(exc).__name__}: {exc})") from exc
        if tape is not None and tape.unused():
            raise ReplayMismatch(f"at turn {line.step}, the judge is asked less than the log recorded")
        differs = [
            name
            for name, same in (
                ("reply", _sha(obs["text"]) == line.reply.sha256),
                ("reward", reward == line.reward),
                ("end", (terminated, truncated) == (line.terminated, line.truncated)),
            )
            if not same
        ]
        if differs:
            raise ReplayMismatch(f"at turn {line.step} the env's {' and '.join(differs)} is not the logged one")
        reward_sum += reward
        for call in [*([line.llm] if line.llm is not None else []), *line.judge_calls]:
            usage.setdefault(call.role, Usage()).add(call)
        turns.append(PlayedTurn(turn=line.step, action=line.action, reply=observation_text(line.reply, run_dir)))
    if tape is not None:
        tape.replaying = False
    return Continuation(
        env=env,
        tape=tape,
        agent=agent,
        opening=opening,
        last=(obs, info),
        turns=turns,
        reward=reward_sum,
        terminated=terminated,
        truncated=truncated,
        usage=usage,
    )


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
