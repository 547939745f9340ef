"""Playing a run's plan: the episodes without an end record yet, on this process's event loop or
on Ray workers (``_ray.py``), with the progress bar, the stop after too many errors in a row
(``FailureWatch``) and the summary written at the end.

``roll_out`` takes one ``RollOut`` (what ``run_async`` set up) and returns the ``RunResult``. An
episode a person left under way goes on from its last logged move (``_continue.py``); the other
unfinished and errored episodes lose their lines and run again from turn 1. On a
stop, a failure (a full disk) or Ctrl-C every episode still running is cancelled before the log
is closed, so none writes after it.

Failures are loud (``FailureWatch``): an API outage, a wrong key or a setting the server refuses makes
every episode end in an error, and a person watching the bar should not have to open the log to see
it. The first episode to fail in a new way (``HTTP 401``, ``connection``, ``timeout``, a crash of a
given type) is printed on stderr at once, later ones of that kind only counted; after ``stop_after``
episodes in a row end in an error the run stops, its unfinished episodes kept for ``--resume``.
"""

from __future__ import annotations

import asyncio
import re
import sys
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from pydantic import BaseModel, ConfigDict

from lateralgym.agents import safe_spec, scrub_credentials
from lateralgym.envs import EpisodeConfig, Judge, LateralEnv, benchmark_of
from lateralgym.episodes._log import STEP_LOG, EpisodeEnd, EpisodeStart, StepLine, StepLogWriter, Usage, read_log
from lateralgym.episodes._metrics import LogScorer, Moves, MovesTally, UsageTally
from lateralgym.episodes._options import STOP_AFTER_ERRORS, EpisodeSpec, RunOptions
from lateralgym.episodes._roles import AgentFactory
from lateralgym.episodes._rundir import SUMMARY, write_json
from lateralgym.episodes._session import run_episode

if TYPE_CHECKING:
    from lateralgym.episodes._continue import Continuation

__all__ = ["FailureWatch", "RollOut", "RunResult", "error_kind", "roll_out"]

_SHOWN_CHARS = 300
_HTTP = re.compile(r"\bHTTP (\d{3})\b")
_CLIENT_KIND = re.compile(r"(?:retries exhausted|not retried): (timeout|connection|tls|malformed|config|error)\b")
_EXCEPTION = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*)(?::|$)")


def error_kind(message: str) -> str:
    """The kind of an episode's error, from its logged message: ``HTTP 401``, ``connection``, ``tls``,
    ``timeout``, ``malformed`` (the LLM client's words), else the exception's type name."""
    http = _HTTP.search(message)
    if http is not None:
        return f"HTTP {http.group(1)}"
    client = _CLIENT_KIND.search(message)
    if client is not None:
        return client.group(1)
    exception = _EXCEPTION.match(message.strip())
    return exception.group(1) if exception is not None else "error"


class FailureWatch:
    """Watches episode ends: prints each new kind of error, and says when the run should stop.

    Args:
        stop_after: Stop after this many errored episodes in a row (None or 0: never).
        stream: Where the lines go (default: stderr at the time of writing, so a live progress
            bar can redirect it).
    """

    def __init__(self, stop_after: int | None = STOP_AFTER_ERRORS, stream: TextIO | None = None) -> None:
        self.stop_after = stop_after or None
        self.stream = stream
        self.kinds: dict[str, int] = {}
        """Each kind of error seen, with its count."""
        self.in_a_row = 0
        self.finished = 0
        """Episodes that ended (an end record written) in this call."""
        self.errored = 0
        self.stopped: str | None = None
        """Why the run stopped early (None: it did not)."""

    def _say(self, line: str) -> None:
        print(line, file=self.stream if self.stream is not None else sys.stderr, flush=True)

    def episode_ended(self, end: EpisodeEnd) -> bool:
        """Count an ended episode; True when the run should stop now."""
        self.finished += 1
        if end.error is None:
            self.in_a_row = 0
            return False
        self.errored += 1
        self.in_a_row += 1
        kind = error_kind(end.error)
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if self.kinds[kind] == 1:
            shown = " ".join(end.error.split())[:_SHOWN_CHARS]
            self._say(
                f"lateralgym: episode {end.episode_id} ended in an error ({kind}; later errors of this kind are "
                f"counted, not shown): {shown}"
            )
        if self.stop_after is not None and self.in_a_row >= self.stop_after and self.stopped is None:
            self.stopped = (
                f"{self.in_a_row} episodes in a row ended in an error, so the run stopped early; the unfinished "
                "episodes are kept for --resume"
            )
            self._say(f"lateralgym: {self.stopped}")
            return True
        return False

    def summary(self) -> str:
        """The errors seen by kind, e.g. ``HTTP 401 x 12, timeout x 1`` (empty when none)."""
        return ", ".join(f"{kind} x {count}" for kind, count in self.kinds.items())


class RunResult(BaseModel):
    """Where a run is and what it measured."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    run_dir: Path
    run_id: str
    planned: int
    ran: int
    """Episodes run in this call (the rest were done before a resume)."""
    errored: int = 0
    """Episodes run in this call that ended with an error (all of ``ran``: nothing worked)."""
    first_error: str | None = None
    """The error that ended the first of those episodes, for a one-line diagnosis."""
    error_kinds: dict[str, int] = {}
    """Errored episodes of this call by kind of error (``HTTP 401``, ``connection``, ...)."""
    stopped: str | None = None
    """Why the run stopped before its plan was done (errored episodes in a row), None when it did not."""
    metrics: Any
    """``RunMetrics`` of all finished episodes."""
    usage: dict[str, Usage] = {}
    """Model usage of the whole run per role (``player``, ``judge``), summed from the step log."""
    moves: Moves = Moves()
    """How valid the player's moves were (``summary.json``'s ``moves``)."""


@dataclass(frozen=True)
class RollOut:
    """Everything a roll-out plays with, set up by ``run_async`` (which holds the directory's lock)."""

    config: EpisodeConfig
    options: RunOptions
    """Resolved: the player and judge that run, the servers, the cache and the LLM cap applied."""
    plan: list[EpisodeSpec]
    run_dir: Path
    run_id: str
    items: Sequence[Any]
    envs: list[LateralEnv]
    """At least one, built on ``items`` with ``judge``; more are made for episodes in flight."""
    judge: Judge
    judge_obj: Judge | None
    """The caller's judge object, sent as is to Ray workers (None: each builds the spec's)."""
    factory: AgentFactory
    watch: FailureWatch


async def roll_out(job: RollOut) -> RunResult:
    """Run the plan's episodes that have no end record yet into ``job.run_dir`` (locked by the
    caller), here or, with ``backend="ray"``, on Ray workers (``episodes/_ray.py``)."""
    from lateralgym.episodes._progress import RunProgress

    log_path = job.run_dir / STEP_LOG
    if job.options.backend == "ray":  # no player there goes on mid-episode (a person plays here)
        done = _resumed(log_path, keep=set())
        return await _roll_out_ray(job, [s for s in job.plan if s.episode_id not in done], done)
    continuing: dict[str, Continuation] = {}
    if log_path.exists():  # a resumed run: a person's episode left under way goes on (``_continue``)
        from lateralgym.episodes._continue import continuations

        continuing, notes = await continuations(
            log_path, job.run_dir, job.plan, job.config, job.envs[0], job.judge, job.factory
        )
        for note in notes:
            print(note, flush=True)
    # A new run's log is tallied as it is written; a resumed one's is read back at the end.
    tallies = None if log_path.exists() else _Tallies()
    # Before the log is opened for appending: an episode that cannot go on loses its lines first.
    done = _resumed(log_path, keep=set(continuing))
    todo = [s for s in job.plan if s.episode_id not in done]
    # The first env's checked, indexed items: each further env costs nothing per item.
    envs = job.envs + [
        LateralEnv(job.config, items=job.envs[0].items, judge=job.judge)
        for _ in range(min(job.options.concurrency, len(todo)) - 1)
    ]
    free: asyncio.Queue[LateralEnv] = asyncio.Queue()
    for env in envs:
        free.put_nowait(env)
    writer = StepLogWriter(log_path, on_write=tallies.add if tallies is not None else None)
    clients = (getattr(job.factory, "client", None), getattr(job.judge, "client", None))
    meters = list({id(c.usage): c.usage for c in clients if c is not None}.values())
    bar = RunProgress(
        total=len(job.plan), done=len(done), label=job.config.name, enabled=job.options.progress, meters=meters
    )
    errors: list[str] = []
    player = safe_spec(str(job.options.player))

    async def play(spec: EpisodeSpec) -> EpisodeEnd:
        env = await free.get()  # an env per episode in flight, reused: building one indexes every item
        if job.watch.stopped:
            # The episode that gave this env back stopped the run; this one was woken before the stop
            # cancelled it, and must not send a request: it stays for the resume.
            free.put_nowait(env)
            raise _Stopped
        try:
            continued = continuing.pop(spec.episode_id, None)
            agent = continued.agent if continued is not None else job.factory(spec.seed)
            return await run_episode(spec, env, agent, writer, job.run_id, job.run_dir, player, continued=continued)
        finally:
            free.put_nowait(env)

    try:
        await _play_all(todo, play, bar, errors, job.watch)
    finally:
        writer.close()
        # Release the model clients' connections on this loop, before asyncio.run closes it.
        clients = (getattr(job.factory, "client", None), getattr(job.judge, "client", None))
        for client in {id(c): c for c in clients if c}.values():
            await client.aclose()
    return _finish(job, todo, errors, tallies)


async def _roll_out_ray(job: RollOut, todo: list[EpisodeSpec], done: set[str]) -> RunResult:
    """``_roll_out`` on Ray workers: they play, this process alone writes the log (an episode at a time)."""
    from lateralgym.episodes._progress import RunProgress
    from lateralgym.episodes._ray import RayExecutor

    writer = StepLogWriter(job.run_dir / STEP_LOG)
    bar = RunProgress(total=len(job.plan), done=len(done), label=job.config.name, enabled=job.options.progress)
    errors: list[str] = []
    cache_dir = job.options.cache_dir
    executor = RayExecutor(
        job.config,
        # a relative cache directory would land in each worker's own working directory
        job.options.merge(cache_dir=cache_dir.resolve() if cache_dir is not None else None),
        job.run_id,
        job.items,
        judge=job.judge_obj,
        concurrency=min(job.options.concurrency, max(1, len(todo))),
    )
    by_id = {str(item.id): item for item in job.items}

    async def play(spec: EpisodeSpec) -> EpisodeEnd:
        try:
            records = await executor.episode(spec, job.run_dir)
        except Exception as exc:  # noqa: BLE001 - its workers kept dying: logged as errored, rerun on resume
            item = by_id[spec.item_id]
            records = [
                EpisodeEnd(
                    run_id=job.run_id,
                    episode_id=spec.episode_id,
                    item_id=spec.item_id,
                    repeat=spec.repeat,
                    benchmark=job.config.benchmark,
                    meta=benchmark_of(item).item_meta(item),
                    error=scrub_credentials(f"{type(exc).__name__}: {exc}"),
                )
            ]
        for record in records:
            writer.write(record)
        writer.sync()
        end = records[-1]
        assert isinstance(end, EpisodeEnd)
        return end

    try:
        await _play_all(todo, play, bar, errors, job.watch)
    finally:
        writer.close()
        executor.shutdown()
    return _finish(job, todo, errors)


def _resumed(log_path: Path, keep: set[str]) -> set[str]:
    """The episodes of a resumed run's log that ended without an error, after the lines of the others
    are moved out to a ``steps.discarded-<time>.jsonl`` (but those of ``keep``, which go on where they
    stopped), which is said; none for a new run."""
    if not log_path.exists():
        return set()
    from lateralgym.episodes._resume import discarded_note, drop_partial_episodes, finished_episodes

    note = discarded_note(drop_partial_episodes(log_path, keep=keep))
    if note is not None:
        print(note, flush=True)
    return finished_episodes(log_path)


def _finish(job: RollOut, todo: list[EpisodeSpec], errors: list[str], tallies: _Tallies | None = None) -> RunResult:
    """Compute the metrics (from ``tallies`` of the records written, or from the log read back), write
    ``summary.json`` and ``report.md`` (every table, no figures) and say where the run is."""
    if tallies is None or tallies.broken:
        tallies = _Tallies()
        for record in read_log(job.run_dir / STEP_LOG):  # one pass over the log for all three
            tallies.scorer.add(record)
            tallies.usage.add(record)
            tallies.moves.add(record)
    metrics = tallies.scorer.result()
    usage = tallies.usage.totals()
    moves = tallies.moves.totals()
    summary = {
        **metrics.model_dump(mode="json"),
        "moves": moves.model_dump(),
        "llm_usage": {role: u.model_dump() for role, u in usage.items()},
    }
    write_json(job.run_dir / SUMMARY, summary)
    from lateralgym.episodes._report import write_report

    write_report(job.run_dir, metrics, usage, moves, plots=False)  # every table; `lateralgym report` adds figures
    watch = job.watch
    return RunResult(
        run_dir=job.run_dir,
        run_id=job.run_id,
        planned=len(job.plan),
        ran=watch.finished if watch.stopped else len(todo),
        errored=len(errors),
        first_error=errors[0] if errors else None,
        error_kinds=dict(watch.kinds),
        stopped=watch.stopped,
        metrics=metrics,
        usage=usage,
        moves=moves,
    )


class _Tallies:
    """The metrics, model usage and moves of a new run's log, taken as its records are written, so the
    end of the run need not read the log back (its biggest cost after the episodes: a short run's
    every line parsed again). An end record is taken as it reads back from its line (what the log
    holds: no ``None`` fields, floats as JSON has them); the others are read only for ids, the mode
    and the moves' flags, which the line holds as they are. Any failure here drops the tallies: the
    log is then read back, as for a resumed run, and the failure met there."""

    def __init__(self) -> None:
        self.scorer: LogScorer = LogScorer()
        self.usage = UsageTally()
        self.moves = MovesTally()
        self.broken = False

    def add(self, record: EpisodeStart | StepLine | EpisodeEnd, line: str) -> None:
        if self.broken:
            return
        try:
            if isinstance(record, EpisodeEnd):
                record = EpisodeEnd.model_validate_json(line)
            self.scorer.add(record)
            self.usage.add(record)
            self.moves.add(record)
        except Exception:  # noqa: BLE001 - the read-back at the end reports it
            self.broken = True


class _Stopped(Exception):
    """Raised inside the roll-out when ``FailureWatch`` says stop."""


async def _play_all(
    todo: list[EpisodeSpec],
    play: Callable[[EpisodeSpec], Awaitable[EpisodeEnd]],
    bar: Any,
    errors: list[str],
    watch: FailureWatch,
) -> None:
    """Play every episode of ``todo`` at once (``play`` bounds how many really run), counting errors,
    advancing the bar and stopping when ``watch`` says so. On a stop, a failure (a full disk) or
    Ctrl-C, every episode still running is cancelled before this returns, so none writes after the
    caller closes the log."""

    async def one(spec: EpisodeSpec) -> None:
        end = await play(spec)
        if end.error is not None:
            errors.append(end.error)
        bar.advance(end)
        if watch.episode_ended(end):
            raise _Stopped

    tasks = [asyncio.ensure_future(one(spec)) for spec in todo]
    try:
        with bar:
            await asyncio.gather(*tasks)
    except _Stopped:
        pass  # the episodes still running are cancelled below; resume runs them
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
