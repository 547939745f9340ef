"""Run a run's episodes on Ray actors, with the driver as the only writer of the step log.

Shaped the way RL trainers use Ray (a few long-lived workers each stepping many environments),
not one actor per env: ``actors`` actors (default: one per CPU Ray reports, at most the episodes'
concurrency), each an asyncio actor that plays up to ``ceil(concurrency / actors)`` episodes at
once on its own event loop, with its own env pool, player factory and judge built once from the
run's config and ``RunOptions`` (all a worker is sent, with the items and a judge object if the
caller gave one). An actor returns an episode's records only when the episode has ended; the driver
writes them to ``steps.jsonl`` in one go and fsyncs, so the log never holds a half episode from a
worker, and ``--resume`` (which drops partial episodes) stays exactly-once.

Failure handling: a worker that dies (killed, out of memory, its node lost) is restarted by Ray
(``max_restarts=-1``) and the episodes it had in flight are submitted again, each once a worker
answers a ping (waiting up to ``RESTART_DEADLINE_S`` seconds: a restart under load takes seconds),
up to ``MAX_ATTEMPTS`` worker deaths per episode; a killed driver leaves a log that
``lateralgym run --resume`` finishes.

The LLM concurrency cap (``--llm-concurrency``) is divided among the actors (each caps its own
process at ``ceil(cap / actors)``), so the cluster as a whole keeps to it. API keys are read from
each worker's environment (a local Ray inherits the driver's); they are never shipped in Ray's
runtime environment, which Ray stores. The LLM response cache is a directory per machine.

Everything here needs the ``ray`` extra (``pip install 'lateralgym[ray]'``); the import happens
only when ``--backend ray`` is chosen.
"""

from __future__ import annotations

import asyncio
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lateralgym.envs import ConfigError, EpisodeConfig, Judge, LateralEnv, get_benchmark, item_table
from lateralgym.episodes._log import INLINE_LIMIT, EpisodeEnd, EpisodeStart, Observation, StepLine, observation
from lateralgym.episodes._options import EpisodeSpec, RunOptions

MAX_ATTEMPTS = 3
"""How many times the worker playing an episode may die under it before the episode is logged as errored
(a worker that is restarting costs no attempt: see ``RESTART_DEADLINE_S``)."""
RESTART_DEADLINE_S = 120.0
"""How long an episode whose worker died waits for a worker to answer again (Ray restarts a dead one;
on a busy machine that takes seconds), before the run gives up on it."""
_PING_TIMEOUT_S = 10.0

Record = EpisodeStart | StepLine | EpisodeEnd


class RayBackendError(ConfigError):
    """Ray is not installed, or the cluster cannot be reached; the message says what to do."""


def _ray() -> Any:
    try:
        import ray
    except ImportError:  # pragma: no cover - depends on the extra
        raise RayBackendError(
            "--backend ray needs Ray: pip install 'lateralgym[ray]' (or drop --backend ray to run locally)"
        ) from None
    return ray


class _ListWriter:
    """Collects one episode's records in the worker (the driver writes them)."""

    def __init__(self) -> None:
        self.records: list[Record] = []

    def write(self, record: Record) -> None:
        self.records.append(record)

    def sync(self) -> None:
        """Nothing to make durable here: the driver fsyncs when it writes the episode."""


class EpisodeWorker:
    """The body of a Ray actor: plays episodes of one run, many at once, on the actor's event loop."""

    def __init__(
        self, config: EpisodeConfig, options: RunOptions, run_id: str, items: Sequence[Any], judge: Judge | None
    ) -> None:
        import lateralgym.envs  # noqa: F401 - the package's import registers every benchmark and env id in the worker
        from lateralgym.agents import safe_spec, set_default_concurrency
        from lateralgym.episodes._roles import build_judge, build_player

        if options.llm_concurrency is not None:
            set_default_concurrency(options.llm_concurrency, adaptive=options.adaptive_concurrency)
        self.config = config
        self.items = item_table(get_benchmark(config.benchmark), items)  # checked and indexed once per worker
        self.judge: Judge = judge if judge is not None else build_judge(config, options)
        self.factory = build_player(config, options, self.items)
        self.player_label = safe_spec(str(options.player))
        self.run_id = run_id
        self.free: list[LateralEnv] = []

    def pid(self) -> int:
        """The worker's process id (tests kill it to check that its episodes are run again)."""
        return os.getpid()

    async def episode(self, spec: EpisodeSpec) -> list[Record]:
        """Play one episode to its end and return its records, in order."""
        from lateralgym.episodes._session import run_episode

        env = self.free.pop() if self.free else LateralEnv(self.config, items=self.items, judge=self.judge)
        writer = _ListWriter()
        try:
            await run_episode(spec, env, self.factory(spec.seed), writer, self.run_id, None, self.player_label)
        finally:
            self.free.append(env)
        return writer.records


def _stored(record: Record, run_dir: Path) -> Record:
    """A worker's record with its large observations moved into the run directory, as a local run stores them."""
    updates: dict[str, Observation] = {}
    for name in ("observation", "reply"):
        obs = getattr(record, name, None)
        if isinstance(obs, Observation) and obs.text is not None and len(obs.text) > INLINE_LIMIT:
            updates[name] = observation(obs.text, run_dir)
    return record.model_copy(update=updates) if updates else record


class RayExecutor:
    """Starts (or joins) Ray, creates the workers, and runs episodes on them for the driver."""

    def __init__(
        self,
        config: EpisodeConfig,
        options: RunOptions,
        run_id: str,
        items: Sequence[Any],
        *,
        judge: Judge | None = None,
        concurrency: int,
    ) -> None:
        """Start or join Ray (``options.ray_address``) and make ``options.ray_actors`` workers, each
        with its share of ``concurrency`` episodes and of ``options.llm_concurrency`` requests."""
        ray = _ray()
        address = options.ray_address
        if not ray.is_initialized():
            try:
                if address:
                    ray.init(address=address, log_to_driver=False, configure_logging=False)
                else:  # a local Ray on this machine only: no dashboard, no outside address
                    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
                    ray.init(
                        include_dashboard=False,
                        _node_ip_address="127.0.0.1",
                        log_to_driver=False,
                        configure_logging=False,
                    )
            except (ConnectionError, RuntimeError, ValueError) as exc:
                where = f"at {address}" if address else "locally"
                raise RayBackendError(f"cannot start or reach Ray {where}: {exc}") from exc
            self._owns_ray = True
        else:
            self._owns_ray = False
        cpus = int(ray.cluster_resources().get("CPU", 1))
        count = max(1, min(options.ray_actors or cpus, concurrency))
        per_actor = math.ceil(concurrency / count)
        llm = options.llm_concurrency
        options = options.merge(llm_concurrency=None if llm is None else max(1, math.ceil(llm / count)))
        worker = ray.remote(EpisodeWorker)
        # held for the run's life: a restarted worker is built again from the same object
        self._items_ref = ray.put(list(items))
        self.names = [f"lateralgym-{run_id}-{i}" for i in range(count)]
        """The actors' names (``ray.get_actor(name)``), for looking at a run's workers."""
        self.actors = [
            worker.options(
                name=name, max_restarts=-1, max_task_retries=0, max_concurrency=per_actor + 1, num_cpus=0
            ).remote(config, options, run_id, self._items_ref, judge)
            for name in self.names
        ]
        self.slots = asyncio.Semaphore(count * per_actor)
        self._next = 0
        self.restarted = 0
        """Episodes submitted again because their worker died."""

    async def episode(self, spec: EpisodeSpec, run_dir: Path) -> list[Record]:
        """An episode's records from some worker (large observations stored in ``run_dir``).

        A worker dying mid-episode costs the episode a new attempt, on a worker that answers again
        (Ray restarts the dead one); after ``MAX_ATTEMPTS`` deaths the last error is raised. A worker
        that is restarting (``ActorUnavailableError``) costs no attempt: the episode waits for a
        worker to answer, up to ``RESTART_DEADLINE_S`` seconds, however busy the machine.
        """
        from ray.exceptions import ActorUnavailableError, RayActorError

        async with self.slots:
            deaths = 0
            deadline: float | None = None  # from the first failure: the episode's window to find a worker
            actor = self._pick()
            while True:
                try:
                    records: list[Record] = await actor.episode.remote(spec)
                    return [_stored(r, run_dir) for r in records]
                except ActorUnavailableError:  # restarting, or not reachable yet: nothing was played
                    pass
                except RayActorError:  # ActorDiedError too: the worker died while it played the episode
                    deaths += 1
                    if deaths == MAX_ATTEMPTS:
                        raise
                self.restarted += 1
                deadline = deadline if deadline is not None else time.monotonic() + RESTART_DEADLINE_S
                actor = await self._answering(deadline)

    def _pick(self) -> Any:
        actor = self.actors[self._next % len(self.actors)]
        self._next += 1
        return actor

    async def _answering(self, deadline: float) -> Any:
        """The next worker (round robin) that answers a ping: Ray's own sign that it is alive again,
        after a restart. Waits, pinging every worker in turn with a growing pause, until ``deadline``.

        Raises:
            RayBackendError: no worker answered before the deadline.
        """
        from ray.exceptions import RayActorError

        pause = 0.1
        while True:
            for _ in self.actors:
                actor = self._pick()
                left = deadline - time.monotonic()
                if left <= 0:
                    raise RayBackendError(
                        f"no Ray worker answered within {RESTART_DEADLINE_S:.0f} s of a worker dying (Ray could not "
                        "restart it: out of memory or a lost node?); finish the run later with --resume"
                    )
                try:
                    await asyncio.wait_for(actor.pid.remote(), timeout=min(_PING_TIMEOUT_S, left))
                    return actor
                except (TimeoutError, RayActorError):
                    continue
            await asyncio.sleep(min(pause, max(0.0, deadline - time.monotonic())))
            pause = min(pause * 2, 2.0)

    def shutdown(self) -> None:
        """Stop the workers, and Ray itself when this executor started it."""
        ray = _ray()
        for actor in self.actors:
            ray.kill(actor)
        if self._owns_ray:
            ray.shutdown()
