"""``EpisodeSession``: one episode of a config, owned by one object that every driver steps.

A session holds an env, the episode's identity (an ``EpisodeSpec``: ``episode_id``, item, repeat,
seed), the moves' rewards and model usage, and the writer its records go to. ``start`` resets the
env on the spec's item under its seed and writes the ``episode_start`` record; ``astep`` (or
``step``) plays one move and writes its ``step`` line; ``finish`` writes the ``episode_end`` record
once, with the typed outcome, however the episode ended (``error`` says why it stopped early:
an agent or judge failure, a client that left). Nothing else steps an env and writes a step line:
the runner, the server (``lateralgym serve``), TRL's ``environment_factory``, the verifiers
plugin and the GRPO rollouts all drive sessions, so a served or trained episode is logged exactly
like a run's.

An episode is found by its ``episode_id``, never by its text: two items with the same opening are
two sessions.

``run_episode`` is the runner's driver: a player plays one session to its end. A resumed episode that
goes on where it stopped (``_continue.py``) skips the reset and the start record: its env and player
are handed over at the next turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from lateralgym.agents import Agent, scrub_credentials
from lateralgym.envs import LateralEnv, ModelCall, PlayerQuit
from lateralgym.episodes._log import EpisodeEnd, EpisodeStart, StepLine, Usage, observation
from lateralgym.episodes._options import EpisodeSpec

if TYPE_CHECKING:
    from lateralgym.episodes._continue import Continuation
    from lateralgym.episodes._judge_tape import JudgeTape

__all__ = ["EpisodeSession", "RecordWriter", "SessionStep", "run_episode"]


class RecordWriter(Protocol):
    """Where an episode's records go: the step log, or a Ray worker's list the driver writes."""

    def write(self, record: EpisodeStart | StepLine | EpisodeEnd) -> None: ...

    def sync(self) -> None: ...


class _Discard:
    """A writer that keeps nothing (a session driven without a log: a trainer's rollouts)."""

    def write(self, record: EpisodeStart | StepLine | EpisodeEnd) -> None:
        return None

    def sync(self) -> None:
        return None


SessionStep = tuple[dict[str, Any], float, bool, bool, dict[str, Any]]
"""``(observation, reward, terminated, truncated, info)``, as Gymnasium's ``step`` returns."""


class EpisodeSession:
    """One episode: reset on an item under a seed, moves stepped and logged, one end record.

    Args:
        env: the env the episode runs in (a session borrows it for one episode at a time).
        spec: the episode's identity and seed.
        writer: where its records go (None: nowhere, for drivers that keep no log).
        run_id: the run the records belong to.
        run_dir: the run directory (long observations are stored there by hash; None keeps them inline).
        player: the player's spec, as the start record names it.
        tape: the judge tape of a player who may go on mid-episode after a resume (its replies are
            logged in full); the env's judge must already be this tape.
    """

    def __init__(
        self,
        env: LateralEnv,
        spec: EpisodeSpec,
        *,
        writer: RecordWriter | None = None,
        run_id: str = "",
        run_dir: Path | None = None,
        player: str = "",
        tape: JudgeTape | None = None,
    ) -> None:
        self.env = env
        self.spec = spec
        self.writer: RecordWriter = writer if writer is not None else _Discard()
        self._logged = writer is not None
        """Whether records are written (a session without a writer skips building them)."""
        self.run_id = run_id
        self.run_dir = run_dir
        self.player = player
        self.tape = tape
        self.obs: dict[str, Any] = {}
        """The latest observation (what the player acts on next)."""
        self.info: dict[str, Any] = {}
        self.reward = 0.0
        """The rewards of the moves so far, summed."""
        self.terminated = False
        self.truncated = False
        self.usage: dict[str, Usage] = {}
        """Model usage so far, per role."""
        self.moves: list[tuple[str, bool]] = []
        """Each move's kind (``ask``, ``inspect``, ``commit``, ``invalid``) and whether the env accepted it:
        the session's own, kept after its env goes back to a pool."""
        self.started = False
        self.end: EpisodeEnd | None = None
        """The end record, once ``finish`` wrote it."""

    @property
    def ids(self) -> dict[str, str]:
        """The identity every record of the episode carries."""
        return {"run_id": self.run_id, "episode_id": self.spec.episode_id, "item_id": self.spec.item_id}

    @property
    def done(self) -> bool:
        """Whether the episode is over: it ended by its rules, or ``finish`` was called."""
        return self.terminated or self.truncated or self.end is not None

    def start(self) -> tuple[dict[str, Any], dict[str, Any]]:
        """Reset the env on the spec's item under its seed (``log_start`` then writes the start record).

        Returns:
            The first observation and info.

        Raises:
            ConfigError: the env has no item with the spec's id.
        """
        self.obs, self.info = self.env.reset(seed=self.spec.seed, options={"item_id": self.spec.item_id})
        self.started = True
        return self.obs, self.info

    def log_start(self, *, prompt: list[dict[str, str]] | None = None, first_message: str | None = None) -> None:
        """Write the start record, after ``start`` (a player picks its prompt from the first observation).

        Args:
            prompt: the chat messages an LLM player was given before the first observation.
            first_message: the player's first user message when it is not the observation as written.
        """
        if not self._logged:  # nothing keeps the record: skip hashing the opening
            return
        config, env = self.env.config, self.env
        self.writer.write(
            EpisodeStart(
                **self.ids,
                repeat=self.spec.repeat,
                seed=self.spec.seed,
                config=config.name,
                benchmark=config.benchmark,
                mode=config.mode,
                player=self.player,
                judge=getattr(env.judge, "name", "?"),
                observation=observation(str(self.obs["text"]), self.run_dir),
                meta=env.benchmark.item_meta(env.item),
                prompt=prompt,
                first_message=first_message,
            )
        )

    def resume(
        self,
        last: tuple[dict[str, Any], dict[str, Any]],
        reward: float,
        terminated: bool,
        truncated: bool,
        usage: dict[str, Usage],
    ) -> None:
        """Take over an episode replayed to its next turn (a resumed run): its logged lines stay."""
        self.obs, self.info = last
        self.reward, self.terminated, self.truncated = reward, terminated, truncated
        for role, logged in usage.items():
            self.usage.setdefault(role, Usage()).merge(logged)
        self.started = True

    def count(self, calls: Sequence[ModelCall]) -> None:
        """Add model calls to the episode's usage (a failed player call, a failing judge's calls)."""
        for call in calls:
            self.usage.setdefault(call.role, Usage()).add(call)

    async def astep(self, move: Any, *, llm: ModelCall | None = None) -> SessionStep:
        """Play one move (text, dict or ``Action``, as ``env.step`` takes it) and log its step line.

        Args:
            move: the player's move.
            llm: the player's model call behind the move (counted and logged with the step).

        Raises:
            EpisodeOverError: the episode is over, or was never started.
        """
        self.count([llm] if llm is not None else [])
        before = str(self.obs.get("text", ""))
        obs, reward, terminated, truncated, info = await self.env.astep(move)
        self._stepped(before, obs, reward, terminated, truncated, info, llm)
        return obs, reward, terminated, truncated, info

    def step(self, move: Any, *, llm: ModelCall | None = None) -> SessionStep:
        """``astep`` for synchronous callers (an offline judge is driven in place, others on a shared loop)."""
        self.count([llm] if llm is not None else [])
        before = str(self.obs.get("text", ""))
        obs, reward, terminated, truncated, info = self.env.step(move)
        self._stepped(before, obs, reward, terminated, truncated, info, llm)
        return obs, reward, terminated, truncated, info

    def _stepped(
        self,
        before: str,
        obs: dict[str, Any],
        reward: float,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
        llm: ModelCall | None,
    ) -> None:
        self.obs, self.info = obs, info
        self.reward += reward
        self.terminated, self.truncated = terminated, truncated
        record = self.env.records[-1]
        self.count(record.judge_calls)
        self.moves.append((str(record.action.get("kind", "")), record.valid))
        if not self._logged:  # nothing keeps the line: skip hashing and checking it
            return
        self.writer.write(
            StepLine(
                **self.ids,
                step=record.turn,
                action=record.action,
                valid=record.valid,
                observation=observation(before, self.run_dir),
                reply=observation(str(obs["text"]), self.run_dir),
                reward=reward,
                judge_label=record.judge_label,
                judge_raw=record.judge_raw,
                terminated=terminated,
                truncated=truncated,
                llm=llm,
                judge_calls=list(record.judge_calls),
                judge_replies=(self.tape.take() or None) if self.tape is not None else None,
                process=record.process,
            )
        )

    def fail(self, exc: BaseException) -> str:
        """The one-line reason an exception ends the episode (credentials removed); its model calls counted."""
        self.count(getattr(exc, "calls", ()))
        return scrub_credentials(f"{type(exc).__name__}: {exc}")

    def finish(self, error: str | None = None) -> EpisodeEnd:
        """Write the end record (once; later calls return it): the outcome so far, the summed reward,
        the usage per role, and ``error`` when the episode stopped before its end."""
        if self.end is not None:
            return self.end
        env = self.env
        outcome = env.outcome().model_dump(mode="json") if self.started else None
        self.end = EpisodeEnd(
            **self.ids,
            repeat=self.spec.repeat,
            benchmark=env.config.benchmark,
            outcome=outcome,
            meta=env.benchmark.item_meta(env.item) if self.started else {},
            reward=self.reward,
            terminated=self.terminated,
            truncated=self.truncated,
            error=error,
            usage=self.usage,
        )
        self.writer.write(self.end)
        self.writer.sync()
        return self.end

    @property
    def solution(self) -> str:
        """The item's reference solution, for a person once the episode is over (never a player's observation)."""
        return self.env.benchmark.solution_text(self.env.item)


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
