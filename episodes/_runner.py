"""Roll out a player against a config's env for many episodes, concurrently, into a run directory.

A run directory holds ``config.yaml`` (the resolved config), ``manifest.json`` (package version,
specs, seeds, the episode plan; no secrets, no git), ``steps.jsonl`` (the step log) and
``summary.json`` (the metrics). ``run(..., resume=RUN_DIR)`` finishes a killed run: episodes with
an end record are kept, partial ones are dropped from the log and run again, so every episode is
counted exactly once.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import platform
import re
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict

import lateralgym
from lateralgym.agents import Agent, display_url, player_factory, set_default_concurrency
from lateralgym.envs import ConfigError, EpisodeConfig, Item, Judge, LateralEnv
from lateralgym.envs._datasets import load_config_items
from lateralgym.episodes._log import (
    LOG_SCHEMA_VERSION,
    STEP_LOG,
    EpisodeEnd,
    EpisodeStart,
    LLMBlock,
    StepLine,
    StepLogWriter,
    observation,
    read_log,
)
from lateralgym.judges import make_judge

AgentFactory = Callable[[int], Agent]
"""Builds a fresh player for an episode from the episode's seed."""


class EpisodeSpec(BaseModel):
    """One planned episode."""

    model_config = ConfigDict(frozen=True)

    episode_id: str
    item_id: str
    repeat: int
    seed: int


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
    usage: dict[str, Any] = {}
    """LLM usage of this call (player and judge clients): calls, cache hits, tokens, cost."""


def plan_episodes(items: Sequence[Item], seed: int, limit: int | None = None, repeats: int = 1) -> list[EpisodeSpec]:
    """The first ``limit`` items (all when None) in dataset order, each ``repeats`` times.

    Episode k gets seed ``seed + k``, so the same config, seed and agents give the same episodes.
    """
    chosen = list(items)[: limit if limit is not None else None]
    plan: list[EpisodeSpec] = []
    for item in chosen:
        for r in range(repeats):
            k = len(plan)
            item_id = str(item.id)
            plan.append(EpisodeSpec(episode_id=f"{item_id}#{r}", item_id=item_id, repeat=r, seed=seed + k))
    return plan


def item_meta(item: Item) -> dict[str, Any]:
    """Public metadata of an item for filtering and breakdowns (nothing hidden)."""
    from lateralgym.envs import CreativityTask, MCQPuzzle, SituationPuzzle

    if isinstance(item, CreativityTask):
        f = item.factors
        return {
            "scene": item.scene,
            "cluster_band": f.cluster_band,
            "gold_level": f.gold_level,
            "distractor_count": f.distractor_count,
            "distractor_similarity": f.distractor_similarity,
        }
    if isinstance(item, MCQPuzzle):
        return {"group_id": item.group_id, "kind": item.kind, "variant": item.variant}
    if isinstance(item, SituationPuzzle):
        return {"title": item.title, "difficulty": item.difficulty, "band": item.band}
    return {}


def _env_class(config: EpisodeConfig) -> type[LateralEnv[Any]]:
    from lateralgym.envs import BrainTeaserEnv, CreativityEnv, SplatEnv

    classes: dict[str, type[LateralEnv[Any]]] = {
        "creativity": CreativityEnv,
        "brainteaser": BrainTeaserEnv,
        "splat": SplatEnv,
    }
    return classes[config.benchmark]


async def run_episode(
    spec: EpisodeSpec,
    env: LateralEnv[Any],
    agent: Agent,
    writer: StepLogWriter,
    run_id: str,
    run_dir: Path,
    player: str,
) -> EpisodeEnd:
    """Play one episode, logging every step; an agent failure ends the episode with ``error`` set."""
    config = env.config
    obs, info = env.reset(seed=spec.seed, options={"item_id": spec.item_id})
    meta = item_meta(env.item)
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
    usage: dict[str, Any] = {}
    while not (terminated or truncated):
        if hasattr(agent, "last_llm"):
            agent.last_llm = None  # so a failure below is never blamed on the previous call
        try:
            action = await agent.act_async(obs, info)
        except Exception as exc:  # noqa: BLE001 - a failing agent ends its episode, not the run
            error = f"{type(exc).__name__}: {exc}"
            _count_call(usage, getattr(agent, "last_llm", None))
            break
        llm: LLMBlock | None = getattr(agent, "last_llm", None)
        _count_call(usage, llm)
        before = obs["text"]
        try:
            # in a worker thread: an LLM judge inside the env makes blocking calls
            obs, reward, terminated, truncated, info = await asyncio.to_thread(env.step, action)
        except Exception as exc:  # noqa: BLE001 - a failing judge ends its episode, not the run
            error = f"{type(exc).__name__}: {exc}"
            break
        total += reward
        record = env.records[-1]
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
            )
        )
    outcome = info.get("outcome", {}) if error is None else env.outcome()
    end = EpisodeEnd(
        **ids,
        repeat=spec.repeat,
        benchmark=config.benchmark,
        outcome=outcome,
        meta=meta,
        reward=total,
        turns=len(env.records),
        terminated=terminated,
        truncated=truncated,
        error=error,
        usage=usage,
    )
    writer.write(end)
    writer.sync()
    return end


def _without_credentials(spec: str) -> str:
    """A player or judge spec with any ``user:secret@`` in its URLs removed (for the manifest).

    A run whose server URL carries credentials must be given them again (``--base-url``) to resume.
    """
    return re.sub(r"://[^/@\s?#]+@", "://", spec)


def _count_call(usage: dict[str, Any], llm: LLMBlock | None) -> None:
    """Add one LLM call's tokens, attempts and cost to an episode's usage."""
    if llm is None:
        return
    usage["prompt_tokens"] = usage.get("prompt_tokens", 0) + llm.prompt_tokens
    usage["completion_tokens"] = usage.get("completion_tokens", 0) + llm.completion_tokens
    usage["calls"] = usage.get("calls", 0) + (0 if llm.cache_hit else 1)
    usage["cache_hits"] = usage.get("cache_hits", 0) + int(llm.cache_hit)
    usage["attempts"] = usage.get("attempts", 0) + llm.attempts
    if llm.error:
        usage["failed_calls"] = usage.get("failed_calls", 0) + 1
    if llm.cost_usd is not None:
        usage["cost_usd"] = usage.get("cost_usd", 0.0) + llm.cost_usd


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


def _write_json(path: Path, data: Any) -> None:
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


async def run_async(
    config: EpisodeConfig,
    *,
    player: str | None = None,
    judge: Judge | str | None = None,
    items: Sequence[Item] | None = None,
    agent_factory: AgentFactory | None = None,
    limit: int | None = None,
    repeats: int = 1,
    concurrency: int = 4,
    out: str | Path = "runs",
    resume: str | Path | None = None,
    progress: bool = True,
    base_url: str | None = None,
    judge_base_url: str | None = None,
    judge_samples: int = 1,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    llm_concurrency: int | None = None,
) -> RunResult:
    """Run ``limit`` items x ``repeats`` episodes of ``config``; see ``run``."""
    from lateralgym.episodes._metrics import compute_metrics
    from lateralgym.episodes._progress import RunProgress

    manifest: dict[str, Any] = {}
    if resume is not None:
        run_dir = Path(resume)
        manifest_path = run_dir / "manifest.json"
        if not manifest_path.exists():
            raise ConfigError(f"{run_dir} is not a run directory (no manifest.json); pass the directory a run created")
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        # a resumed run continues exactly as it was started: same config, player, judge and plan
        config = EpisodeConfig.from_file(run_dir / "config.yaml")
        player, judge, run_id = manifest["player"], manifest["judge"], manifest["run_id"]
        base_url = base_url or manifest.get("player_base_url")
        judge_base_url = judge_base_url or manifest.get("judge_base_url")
        judge_samples = manifest.get("judge_samples", judge_samples)
        use_cache = manifest.get("use_cache", use_cache)
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
    env_class = _env_class(config)
    env_class(config, items=items, judge=judge_obj)  # fail now (e.g. a judge for another benchmark), not mid-run
    if resume is not None:
        plan = [EpisodeSpec.model_validate(s) for s in manifest["episodes"]]
    else:
        plan = plan_episodes(items, config.seed, limit, repeats)
    if not plan:
        raise ConfigError("nothing to run: the dataset is empty or --limit is 0")
    if resume is None:
        # created only now, so a run that fails to set up leaves no empty directory behind
        run_dir, run_id = new_run_dir(Path(out), config.name)
        (run_dir / "config.yaml").write_text(yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False))
        manifest = {
            "run_id": run_id,
            "lateralgym_version": lateralgym.__version__,
            "log_schema_version": LOG_SCHEMA_VERSION,
            "created": dt.datetime.now(dt.UTC).isoformat(),
            "python": platform.python_version(),
            "platform": platform.platform(),
            "config": config.name,
            "benchmark": config.benchmark,
            "player": _without_credentials(player),
            "judge": _without_credentials(getattr(judge_obj, "name", str(judge))),
            "dataset": config.dataset or "sample",
            "seed": config.seed,
            "limit": limit,
            "repeats": repeats,
            "concurrency": concurrency,
            "player_base_url": display_url(base_url),
            "judge_base_url": display_url(judge_base_url or base_url),
            "judge_samples": judge_samples,
            "use_cache": use_cache,
            "episodes": [s.model_dump() for s in plan],
        }
        _write_json(run_dir / "manifest.json", manifest)
    log_path = run_dir / STEP_LOG
    drop_partial_episodes(log_path)
    done = finished_episodes(log_path)
    todo = [s for s in plan if s.episode_id not in done]
    semaphore = asyncio.Semaphore(max(1, concurrency))
    writer = StepLogWriter(log_path)
    bar = RunProgress(total=len(plan), done=len(done), label=config.name, enabled=progress)

    async def one(spec: EpisodeSpec) -> None:
        async with semaphore:
            env = env_class(config, items=items, judge=judge_obj)
            end = await run_episode(
                spec, env, factory(spec.seed), writer, run_id, run_dir, _without_credentials(player)
            )
            bar.advance(end)

    try:
        with bar:
            await asyncio.gather(*(one(spec) for spec in todo))
    finally:
        writer.close()
    metrics = compute_metrics(read_log(log_path))
    usage = {
        "player": _usage_of(getattr(factory, "client", None)),
        "judge": _usage_of(getattr(judge_obj, "client", None)),
    }
    summary = {**metrics.model_dump(mode="json"), "llm_usage_this_call": usage}
    _write_json(run_dir / "summary.json", summary)
    return RunResult(run_dir=run_dir, run_id=run_id, planned=len(plan), ran=len(todo), metrics=metrics, usage=usage)


def _usage_of(client: Any) -> dict[str, Any] | None:
    """Token, call and cost totals of an LLM client (None for offline agents and judges)."""
    if client is None:
        return None
    return client.usage.summary().model_dump(mode="json")  # type: ignore[no-any-return]


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
        judge_samples: LLM judge: majority vote over this many samples.
        cache_dir: LLM response cache (default ``.lateralgym-cache/llm``).
        use_cache: read and write the LLM response cache (reruns and replays then cost nothing).
        llm_concurrency: process-wide cap on LLM requests in flight (default 8), players and judges.

    Returns:
        The run directory, counts and metrics.
    """
    cfg = config if isinstance(config, EpisodeConfig) else EpisodeConfig.named(config)
    return asyncio.run(run_async(cfg, **kwargs))
