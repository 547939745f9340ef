"""What ``lateralgym tasks build`` / ``tasks stats`` and ``scripts/build_sample_data.py`` do.

A build is one typed ``TaskBuildJob`` (where the KB and the output are, who answers, how it runs,
and the pipeline's ``TaskBuildConfig``); the command line builds one from its flags, and
``build_sample`` builds the shipped sample's (``SAMPLE_JOB``) with no argument parsing.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console
from rich.table import Table

from lateralgym.databuild import (
    CheckpointStore,
    DataBuildError,
    Embedder,
    StageProgress,
    counters_table,
    estimate_cost_usd,
    format_cost,
    invalid_reasons,
    make_embedder,
)
from lateralgym.envs import DatasetError, load_items, write_jsonl
from lateralgym.envs.benchmarks.creativity import AffordanceKB, CreativityTask
from lateralgym.envs.benchmarks.creativity.databuild._official import write_official
from lateralgym.envs.benchmarks.creativity.databuild._tasks_inputs import jsonl_files, read_kb, read_seeds
from lateralgym.envs.benchmarks.creativity.databuild._tasks_models import GoldRef, TaskBuildConfig
from lateralgym.envs.benchmarks.creativity.databuild._tasks_pipeline import (
    STAGE_COMPARE,
    STAGE_INTRA,
    STAGE_TEXT,
    TaskBuild,
    build_tasks,
)
from lateralgym.envs.benchmarks.creativity.databuild._tasks_prompts import compare_messages, task_text_messages
from lateralgym.envs.benchmarks.creativity.databuild._tasks_stats import empty_cells, stats_tables
from lateralgym.envs.benchmarks.creativity.databuild._tiers import candidate_pools, gold_strata, limit_strata

__all__ = ["SAMPLE_JOB", "TaskBuildJob", "build_sample", "run_build", "run_stats", "store_seeds", "write_tasks"]

KB_FILE = "affordance_kb.jsonl.gz"
TASKS_FILE = "creativity_tasks.jsonl.gz"
_COMPLETION_TOKENS = {STAGE_TEXT: 350, STAGE_INTRA: 70, STAGE_COMPARE: 70}
"""Expected completion tokens of an answer (stage D and F: per part judged)."""


def _kb_files(source: Path) -> list[Path]:
    if source.is_dir() and sorted(source.glob("kb*.jsonl")):
        return sorted(source.glob("kb*.jsonl"))
    return jsonl_files(source, "*.jsonl")


def store_seeds(store: CheckpointStore, paths: Sequence[Path], kb: AffordanceKB) -> int:
    """Store hand-written seeds as stage C answers; returns how many. A seed that differs from the
    answer already stored for its gold is an error (the store keeps first answers)."""
    seeds = read_seeds(paths, kb)
    for seed in seeds:
        record = seed.task_text().model_dump(mode="json")
        stored = store.get(STAGE_TEXT, seed.gold.key)
        if stored is not None and stored != record:
            raise DataBuildError(
                f"seed {seed.id!r} differs from the task text stored for {seed.gold.key!r} in "
                f"{store.root / STAGE_TEXT}.jsonl; delete that file (or its line) and rerun"
            )
        store.put(STAGE_TEXT, seed.gold.key, record)
    return len(seeds)


def write_tasks(tasks: Sequence[CreativityTask], path: Path, official: bool = False) -> None:
    """Write tasks atomically: our compact JSONL (each entity once, tasks listing ids; gzip when the name
    ends in ``.gz``, with no timestamp, so equal tasks give equal bytes) or the official task JSON."""
    if not official:
        write_jsonl(tasks, path)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    write_official(tasks, partial)
    os.replace(partial, path)


async def _estimate(kb: AffordanceKB, embedder: Embedder, store: CheckpointStore, job: TaskBuildJob) -> Table:
    """Stage A for real (local embedders cost nothing), then the questions stages C, D and F would ask."""
    config = job.config
    from lateralgym.envs.benchmarks.creativity.databuild._cluster import cluster_affordances

    index = await cluster_affordances(
        kb, embedder, diameter=config.diameter, field=config.embed_field, scope=config.cluster_scope, store=store
    )
    allowed = {r for r in index.refs if store.get(STAGE_TEXT, r.key) is not None} if job.only_seeded else None
    strata = limit_strata(gold_strata(kb, index, config.seed, allowed), config.max_strata)
    entities = {e.id: e for e in kb.entities}
    calls = dict.fromkeys((STAGE_TEXT, STAGE_INTRA, STAGE_COMPARE), 0)
    prompt = dict.fromkeys(calls, 0)
    completion = dict.fromkeys(calls, 0)

    def count(stage: str, key: str, messages: list[dict[str, str]], parts: int = 1) -> None:
        if store.get(stage, key) is None:
            calls[stage] += 1
            prompt[stage] += sum(len(m["content"]) for m in messages) // 4
            completion[stage] += _COMPLETION_TOKENS[stage] * parts

    golds: list[GoldRef] = [g for refs in strata.values() for g in refs[: config.per_tier]]
    for gold in golds:
        entity = entities[gold.entity_id]
        part = next(p for p in entity.parts if p.name == gold.part)
        affordance = part.affordances[gold.index]
        count(STAGE_TEXT, gold.key, task_text_messages(entity, part, affordance))
        task = "(the task text)"
        others = tuple(p for p in entity.parts if p.name != part.name)
        if others and job.judge == "llm":
            count(STAGE_INTRA, gold.key, compare_messages(entity, part, affordance, task, entity, others), len(others))
        near, far = candidate_pools(gold, kb, index, scope=config.distractor_scope, pool_size=config.pool_size)
        for candidate in [*near, *far] if job.judge == "llm" else []:
            messages = compare_messages(entity, part, affordance, task, candidate, candidate.parts)
            count(STAGE_COMPARE, f"{gold.key}|{candidate.id}", messages, len(candidate.parts))
    table = Table(title=f"dry run: {len(golds)} golds to try in {len(strata)} strata (more if some are rejected)")
    for column in ("stage", "calls", "prompt tokens", "completion tokens", "cost"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    model = job.model or ""
    for stage in calls:
        cost = estimate_cost_usd(model, prompt[stage], completion[stage], use_litellm=not job.base_url)
        table.add_row(stage, str(calls[stage]), str(prompt[stage]), str(completion[stage]), format_cost(cost))
    return table


class TaskBuildJob(BaseModel):
    """One task build: inputs, output, who answers the LLM stages, how it runs, and the pipeline's settings."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kb: Path
    """The KB: an ``Entity`` JSONL file, or a folder of ``kb*.jsonl``."""
    out: Path
    """The tasks file: ``.jsonl``, ``.jsonl.gz``, or ``.json`` (official)."""
    model: str | None = None
    """Model of the LLM stages (``provider/model[?options]``); None: stored answers only."""
    base_url: str | None = None
    """OpenAI-compatible server of ``model`` (and of an API embedder)."""
    embedder: str = "lexical"
    """``lexical``, ``st:`` (the local MiniLM) or a model."""
    checkpoints: Path | None = None
    """Checkpoint folder (None: ``out``'s name + ``.checkpoints``)."""
    seeds: Path | None = None
    """Hand-written stage C answers: a ``TaskSeed`` JSONL, or a folder of ``seeds*.jsonl``."""
    only_seeded: bool = False
    """Golds only where a task text is stored."""
    judge: Literal["llm", "rules"] = "llm"
    """Stages D and F: the model, or the rule-based comparator."""
    format: Literal["jsonl", "official"] | None = None
    """Output format; None: official for ``.json``, else our JSONL."""
    concurrency: int = Field(default=16, ge=1)
    """Model requests in flight."""
    dry_run: bool = False
    """Print calls, tokens and cost per stage; ask nothing."""
    quiet: bool = False
    """No progress bars."""
    config: TaskBuildConfig = TaskBuildConfig()
    """The pipeline's settings (paper defaults)."""


SAMPLE_JOB: dict[str, Any] = {
    "only_seeded": True,
    "judge": "rules",
    "embedder": "lexical",
    "quiet": True,
    "config": TaskBuildConfig(
        embed_field="category", cluster_scope="scene", distractor_scope="kb", per_tier=100, tiers_per_gold=2
    ),
}
"""The settings of LateralGym's shipped sample (``scripts/build_sample_data.py``: see its docstring)."""


def run_build(job: TaskBuildJob, console: Console | None = None) -> int:
    """``lateralgym tasks build``; returns the exit status."""
    console = console or Console()
    kb = read_kb(_kb_files(job.kb))
    checkpoints = job.checkpoints or job.out.with_name(job.out.name + ".checkpoints")
    embedder = make_embedder(job.embedder, base_url=job.base_url)
    with CheckpointStore(checkpoints) as store:
        if job.seeds is not None:
            store_seeds(store, jsonl_files(job.seeds, "seeds*.jsonl"), kb)
        if job.dry_run:
            console.print(asyncio.run(_estimate(kb, embedder, store, job)))
            return 0
        client = None
        if job.model:
            from lateralgym.agents import LLMClient

            client = LLMClient(job.model, base_url=job.base_url, concurrency=job.concurrency, use_cache=False)
        elif job.judge == "llm" and not job.only_seeded:
            raise DataBuildError("give --model for the LLM stages, or --judge rules --only-seeded to build offline")
        with StageProgress(enabled=not job.quiet) as progress:
            kept: list[TaskBuild] = []
            asyncio.run(
                _keep(
                    build_tasks(
                        kb,
                        embedder=embedder,
                        store=store,
                        config=job.config,
                        client=client,
                        judge=job.judge,
                        only_stored_golds=job.only_seeded,
                        progress=progress,
                    ),
                    kept,
                )
            )
            build = kept[0]
    console.print(build.summary())  # also when nothing came of it: the counts say which stage gave out
    console.print(counters_table(build.counters.values()))
    for line in invalid_reasons(build.counters.values()):
        console.print(line, markup=False, highlight=False)
    if not build.tasks:
        raise DataBuildError(
            "the build made no task (see the counts above); grow the KB, or lower --per-tier or --distractor-counts"
        )
    official = job.format == "official" or (job.format is None and job.out.suffix == ".json")
    write_tasks(build.tasks, job.out, official=official)
    console.print(f"wrote {len(build.tasks)} tasks to {job.out} (checkpoints in {checkpoints})")
    return 0


async def _keep(work: Coroutine[Any, Any, TaskBuild], into: list[TaskBuild]) -> None:
    """Await ``work`` into ``into`` rather than return it: ``asyncio.run``'s Ctrl-C handler holds the main
    task, and on the way out Python 3.11's ``signal`` module formats that task's repr, its result
    included; a build's tasks and verdicts took tens of seconds to format."""
    into.append(await work)


def run_stats(path: Path, console: Console | None = None) -> int:
    """``lateralgym tasks stats``: the tables, then the empty cells; returns 0."""
    console = console or Console()
    tasks = list(load_items(path))
    if not all(isinstance(t, CreativityTask) for t in tasks):
        raise DatasetError(path, "holds no CreativityBench tasks; give a task file")
    for table in stats_tables(tasks):
        console.print(table)
    empty = empty_cells(tasks)
    console.print("every (band x level) and (similarity x count) cell is populated" if not empty else f"empty: {empty}")
    return 0


def build_sample(src: Path, out: Path, checkpoints: Path) -> str:
    """Rebuild the shipped sample from ``src`` into ``out`` (``scripts/build_sample_data.py``); returns a summary."""
    job = TaskBuildJob(kb=src, seeds=src, checkpoints=checkpoints, out=out / TASKS_FILE, **SAMPLE_JOB)
    console = Console(record=True, width=120, file=open(os.devnull, "w"))  # noqa: SIM115
    run_build(job, console)
    kb = read_kb(_kb_files(src))
    write_jsonl(kb.entities, out / KB_FILE)
    return console.export_text()
