"""Roll out a player against a config's env for many episodes, concurrently, into a run directory.

A run directory holds ``config.yaml`` (the resolved config, with the player and judge that ran),
``manifest.json`` (a ``Manifest``: package version, specs, the episode plan with every episode's
seed; no secrets, no git), ``steps.jsonl`` (the step log) and ``summary.json`` (the metrics and
the model usage per role). ``run(..., resume=RUN_DIR)`` finishes a killed run: episodes with an end
record are kept, partial ones are dropped from the log and run again, so every episode is counted
exactly once.

Everything runs on one event loop: the player and the judge (inside ``env.astep``) await their
models directly, so Ctrl-C cancels whatever is in flight at once and ``--llm-concurrency`` bounds
both roles together.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import hashlib
import json
import os
import platform
import re
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field

import lateralgym
from lateralgym.agents import Agent, display_url, player_factory, set_default_concurrency
from lateralgym.envs import ConfigError, EpisodeConfig, Judge, LateralEnv, ModelCall
from lateralgym.envs._datasets import load_config_items
from lateralgym.episodes._log import (
    LOG_SCHEMA_VERSION,
    STEP_LOG,
    EpisodeEnd,
    EpisodeStart,
    StepLine,
    StepLogWriter,
    Usage,
    observation,
    read_log,
)
from lateralgym.judges import make_judge

AgentFactory = Callable[[int], Agent]
"""Builds a fresh player for an episode from the episode's seed."""

MANIFEST = "manifest.json"


class EpisodeSpec(BaseModel):
    """One planned episode."""

    model_config = ConfigDict(frozen=True)

    episode_id: str
    """``<item id>#<repeat>``."""
    item_id: str
    repeat: int
    seed: int
    """Derived from (run seed, item id, repeat): see ``episode_seed``."""


class Manifest(BaseModel):
    """What a run directory's ``manifest.json`` holds (no secrets)."""

    model_config = ConfigDict(extra="ignore")

    run_id: str
    lateralgym_version: str
    log_schema_version: int = LOG_SCHEMA_VERSION
    created: str
    python: str = ""
    platform: str = ""
    config: str
    benchmark: str
    player: str
    """The player spec that ran (credentials removed)."""
    judge: str
    """The judge spec that ran (credentials removed)."""
    dataset: str
    seed: int
    limit: int | None = None
    repeats: int = 1
    concurrency: int = 4
    player_base_url: str | None = None
    judge_base_url: str | None = None
    judge_samples: int | None = None
    """``--judge-samples`` when given (the judge spec's ``samples`` otherwise)."""
    use_cache: bool = True
    episodes: list[EpisodeSpec] = Field(default_factory=list)
    """The plan, every episode with its seed."""


class RunResult(BaseModel):
    """Where a run is and what it measured."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    run_dir: Path
    run_id: str
    planned: int
    ran: int
    """Episodes run in this call (the rest were done before a resume)."""
    metrics: Any
    """``RunMetrics`` of all finished episodes."""
    usage: dict[str, Usage] = {}
    """Model usage of the whole run per role (``player``, ``judge``), summed from the step log."""


def episode_seed(run_seed: int, item_id: str, repeat: int) -> int:
    """An episode's seed from (run seed, item id, repeat), through ``numpy.random.SeedSequence``.

    Runs with different seeds draw unrelated streams (not the same stream shifted by one item),
    and an item keeps its seed whatever ``--limit`` or the dataset's order is.
    """
    digest = hashlib.sha256(item_id.encode("utf-8")).digest()
    entropy = [run_seed & 0xFFFFFFFF, run_seed >> 32 & 0xFFFFFFFF, *np.frombuffer(digest[:16], dtype=np.uint32)]
    state = np.random.SeedSequence([int(x) for x in entropy], spawn_key=(repeat,)).generate_state(1, np.uint32)
    return int(state[0])


def plan_episodes(items: Sequence[Any], seed: int, limit: int | None = None, repeats: int = 1) -> list[EpisodeSpec]:
    """The first ``limit`` items (all when None) in dataset order, each ``repeats`` times, each
    episode with its own seed (``episode_seed``)."""
    chosen = list(items)[: limit if limit is not None else None]
    plan: list[EpisodeSpec] = []
    for item in chosen:
        item_id = str(item.id)
        for r in range(repeats):
            plan.append(
                EpisodeSpec(episode_id=f"{item_id}#{r}", item_id=item_id, repeat=r, seed=episode_seed(seed, item_id, r))
            )
    return plan


def _add(usage: dict[str, Usage], calls: Sequence[ModelCall]) -> None:
    for call in calls:
        usage.setdefault(call.role, Usage()).add(call)


async def run_episode(
    spec: EpisodeSpec,
    env: LateralEnv,
    agent: Agent,
    writer: StepLogWriter,
    run_id: str,
    run_dir: Path,
    player: str,
) -> EpisodeEnd:
    """Play one episode, logging every step; an agent or judge failure ends the episode with ``error`` set."""
    config = env.config
    obs, info = env.reset(seed=spec.seed, options={"item_id": spec.item_id})
    meta = env.benchmark.item_meta(env.item)
    ids = {"run_id": run_id, "episode_id": spec.episode_id, "item_id": spec.item_id}
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
        )
    )
    agent.reset(obs, info, seed=spec.seed)
    total, error = 0.0, None
    terminated = truncated = False
    usage: dict[str, Usage] = {}
    while not (terminated or truncated):
        if hasattr(agent, "last_llm"):
            agent.last_llm = None  # so a failure below is never blamed on the previous call
        try:
            action = await agent.act_async(obs, info)
        except Exception as exc:  # noqa: BLE001 - a failing agent ends its episode, not the run
            error = f"{type(exc).__name__}: {exc}"
            failed: ModelCall | None = getattr(agent, "last_llm", None)
            _add(usage, [failed] if failed is not None else [])
            break
        llm: ModelCall | None = getattr(agent, "last_llm", None)
        _add(usage, [llm] if llm is not None else [])
        before = obs["text"]
        try:
            obs, reward, terminated, truncated, info = await env.astep(action)
        except Exception as exc:  # noqa: BLE001 - a failing judge ends its episode, not the run
            error = f"{type(exc).__name__}: {exc}"
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
    return end


def without_credentials(spec: str) -> str:
    """A player or judge spec with any ``user:secret@`` in its URLs removed (for the manifest).

    A run whose server URL carries credentials must be given them again (``--base-url``) to resume.
    """
    return re.sub(r"://[^/@\s?#]+@", "://", spec)


def finished_episodes(log_path: Path) -> set[str]:
    """Episode ids that ended without an error; errored ones (an API outage) are run again on resume."""
    if not log_path.exists():
        return set()
    return {r.episode_id for r in read_log(log_path) if isinstance(r, EpisodeEnd) and r.error is None}


def drop_partial_episodes(log_path: Path) -> int:
    """Rewrite the log without the lines of episodes that never ended or ended in an error
    (atomically), so that resuming runs them afresh. Returns the number of lines dropped."""
    if not log_path.exists():
        return 0
    done = finished_episodes(log_path)
    kept = [r.model_dump_json(exclude_none=True) for r in read_log(log_path) if r.episode_id in done]
    raw_lines = sum(1 for line in log_path.read_text(encoding="utf-8").splitlines() if line.strip())
    dropped = raw_lines - len(kept)
    if dropped:
        tmp = log_path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
        os.replace(tmp, log_path)
    return dropped


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (a temporary file, then a rename)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def new_run_dir(root: Path, config_name: str) -> tuple[Path, str]:
    """A fresh ``root/<config>-<timestamp>-<random>`` directory and its run id."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    run_id = f"{config_name}-{stamp}-{secrets.token_hex(3)}"
    path = root / run_id
    path.mkdir(parents=True, exist_ok=False)
    return path, run_id


def read_manifest(run_dir: Path) -> Manifest:
    """A run directory's manifest.

    Raises:
        ConfigError: the directory has no (readable) manifest.
    """
    path = run_dir / MANIFEST
    if not path.exists():
        raise ConfigError(f"{run_dir} is not a run directory (no {MANIFEST}); pass the directory a run created")
    return Manifest.model_validate_json(path.read_text(encoding="utf-8"))


def usage_from_log(log_path: Path) -> dict[str, Usage]:
    """Model usage per role over every episode end of a step log (the last record of each episode)."""
    latest: dict[str, EpisodeEnd] = {}
    if log_path.exists():
        for record in read_log(log_path):
            if isinstance(record, EpisodeEnd):
                latest[record.episode_id] = record
    totals: dict[str, Usage] = {}
    for end in latest.values():
        for role, usage in end.usage.items():
            totals.setdefault(role, Usage()).merge(usage)
    return totals


async def run_async(
    config: EpisodeConfig,
    *,
    player: str | None = None,
    judge: Judge | str | None = None,
    items: Sequence[Any] | None = None,
    agent_factory: AgentFactory | None = None,
    limit: int | None = None,
    repeats: int = 1,
    concurrency: int = 4,
    out: str | Path = "runs",
    resume: str | Path | None = None,
    progress: bool = True,
    base_url: str | None = None,
    judge_base_url: str | None = None,
    judge_samples: int | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    llm_concurrency: int | None = None,
) -> RunResult:
    """Run ``limit`` items x ``repeats`` episodes of ``config``; see ``run``."""
    from lateralgym.episodes._metrics import compute_metrics
    from lateralgym.episodes._progress import RunProgress

    manifest: Manifest | None = None
    if resume is not None:
        run_dir = Path(resume)
        manifest = read_manifest(run_dir)
        # a resumed run continues exactly as it was started: same config, player, judge and plan
        config = EpisodeConfig.from_file(run_dir / "config.yaml")
        player, judge, run_id = manifest.player, manifest.judge, manifest.run_id
        base_url = base_url or manifest.player_base_url
        judge_base_url = judge_base_url or manifest.judge_base_url
        judge_samples = manifest.judge_samples
        use_cache = manifest.use_cache
    if llm_concurrency is not None:
        set_default_concurrency(llm_concurrency)
    player = player or config.player
    if player == "human":
        concurrency, progress = 1, False  # one person, one episode at a time; no bar redrawn over the prompt
    if items is None:
        items = load_config_items(config)
    if judge is None or isinstance(judge, str):
        judge_obj = make_judge(
            judge or config.judge,
            benchmark=config.benchmark,
            base_url=judge_base_url or base_url,
            cache_dir=cache_dir,
            use_cache=use_cache,
            samples=judge_samples,
        )
    else:
        judge_obj = judge
    factory = agent_factory or player_factory(
        player, items, base_url=base_url, cache_dir=cache_dir, use_cache=use_cache
    )
    judge_name = without_credentials(getattr(judge_obj, "name", str(judge)))
    # config.yaml tells the truth: the player and judge that actually run.
    config = config.model_copy(update={"player": without_credentials(player), "judge": judge_name})
    slots = max(1, concurrency)
    envs = [LateralEnv(config, items=items, judge=judge_obj)]  # fail now (e.g. a wrong judge), not mid-run
    if manifest is not None:
        plan = list(manifest.episodes)
    else:
        plan = plan_episodes(items, config.seed, limit, repeats)
    if not plan:
        raise ConfigError("nothing to run: the dataset is empty or --limit is 0")
    if manifest is None:
        # created only now, so a run that fails to set up leaves no empty directory behind
        run_dir, run_id = new_run_dir(Path(out), config.name)
        (run_dir / "config.yaml").write_text(
            yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True), encoding="utf-8"
        )
        manifest = Manifest(
            run_id=run_id,
            lateralgym_version=lateralgym.__version__,
            created=dt.datetime.now(dt.UTC).isoformat(),
            python=platform.python_version(),
            platform=platform.platform(),
            config=config.name,
            benchmark=config.benchmark,
            player=without_credentials(player),
            judge=judge_name,
            dataset=config.dataset or "sample",
            seed=config.seed,
            limit=limit,
            repeats=repeats,
            concurrency=concurrency,
            player_base_url=display_url(base_url),
            judge_base_url=display_url(judge_base_url or base_url),
            judge_samples=judge_samples,
            use_cache=use_cache,
            episodes=plan,
        )
        write_json(run_dir / MANIFEST, manifest.model_dump(mode="json"))
    log_path = run_dir / STEP_LOG
    drop_partial_episodes(log_path)
    done = finished_episodes(log_path)
    todo = [s for s in plan if s.episode_id not in done]
    envs += [LateralEnv(config, items=items, judge=judge_obj) for _ in range(min(slots, len(todo)) - 1)]
    free: asyncio.Queue[LateralEnv] = asyncio.Queue()
    for env in envs:
        free.put_nowait(env)
    writer = StepLogWriter(log_path)
    bar = RunProgress(total=len(plan), done=len(done), label=config.name, enabled=progress)

    async def one(spec: EpisodeSpec) -> None:
        env = await free.get()  # an env per episode in flight, reused: building one indexes every item
        try:
            end = await run_episode(spec, env, factory(spec.seed), writer, run_id, run_dir, without_credentials(player))
        finally:
            free.put_nowait(env)
        bar.advance(end)

    try:
        with bar:
            await asyncio.gather(*(one(spec) for spec in todo))
    finally:
        writer.close()
        # Release the model clients' connections on this loop, before asyncio.run closes it.
        for client in {
            id(c): c for c in (getattr(factory, "client", None), getattr(judge_obj, "client", None)) if c
        }.values():
            await client.aclose()
    metrics = compute_metrics(read_log(log_path))
    usage = usage_from_log(log_path)
    summary = {**metrics.model_dump(mode="json"), "llm_usage": {role: u.model_dump() for role, u in usage.items()}}
    write_json(run_dir / "summary.json", summary)
    return RunResult(run_dir=run_dir, run_id=run_id, planned=len(plan), ran=len(todo), metrics=metrics, usage=usage)


def run(config: EpisodeConfig | str, **kwargs: Any) -> RunResult:
    """Run episodes of ``config`` (an ``EpisodeConfig``, a shipped config name or a YAML path).

    Keyword Args:
        player: player spec (default ``config.player``): ``random``, ``heuristic``, ``oracle``, ``human``,
            or a model ``provider/model[?options]``.
        judge: a judge or judge spec (default ``config.judge``).
        items: items to run on (default ``config.dataset`` or the sample data).
        agent_factory: builds a player from a seed (overrides ``player``'s construction).
        limit: run only the first ``limit`` items.
        repeats: run each item this many times (SPLAT reports best-of-R).
        concurrency: episodes in flight at once.
        out: directory under which the run directory is created (default ``runs``).
        resume: a run directory to finish instead of starting a new run.
        progress: show a progress bar.
        base_url: OpenAI-compatible server for an LLM player (and judge, unless ``judge_base_url``).
        judge_base_url: OpenAI-compatible server for an LLM judge.
        judge_samples: LLM judge: majority vote over this many samples (wins over the spec's ``samples``).
        cache_dir: LLM response cache (default ``.lateralgym-cache/llm``).
        use_cache: read and write the LLM response cache (reruns and replays then cost nothing).
        llm_concurrency: cap on LLM requests in flight (default 8), players and judges together.

    Returns:
        The run directory, counts, metrics and model usage per role.
    """
    cfg = config if isinstance(config, EpisodeConfig) else EpisodeConfig.named(config)
    return asyncio.run(run_async(cfg, **kwargs))
