"""The task sampling pipeline (paper §4.2, App. D, stages A-H): a knowledge base in, CreativityBench tasks out.

A  embed and cluster every affordance (``_cluster``);
B  gold strata (scene x size band x level), walked in seeded order until ``per_tier`` golds pass C and D;
C  first-person task text and solution (LLM, or stored); a leak check rejects a text naming the gold
   entity or part;
D  intra-entity check: no other part of the gold entity may be preferable (judge at temperature 0);
E  near and far candidate pools by embedding distance (``_tiers``);
F  every part of every candidate compared with the gold (judge at temperature 0);
G  filter, similar / not similar, tiers similar / mixed / dissimilar x distractor counts (``_tiers``);
H  packaging (``_package``), then a train / test split by gold entity.

LLM stages go through ``ask_json`` and the checkpoint store: a killed build resumes, a rerun costs
nothing. With no client, every LLM answer must already be in the store (an offline rebuild); with
``judge="rules"`` stages D and F use the rule-based comparator (``_tasks_rules``) and store its verdicts
like a model's.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, TypeVar

from pydantic import BaseModel, ValidationError

from lateralgym.databuild import CheckpointStore, DataBuildError, Embedder, StageCounters, ask_json, validation_feedback
from lateralgym.envs import snake
from lateralgym.envs.benchmarks.creativity import AffordanceKB, CreativityTask, Entity, Part
from lateralgym.envs.benchmarks.creativity.databuild._cluster import band_of, cluster_affordances
from lateralgym.envs.benchmarks.creativity.databuild._package import package_task
from lateralgym.envs.benchmarks.creativity.databuild._tasks_inputs import leaked_name
from lateralgym.envs.benchmarks.creativity.databuild._tasks_models import (
    GoldRef,
    PartVerdict,
    TaskBuildConfig,
    TaskText,
    verdicts_schema,
)
from lateralgym.envs.benchmarks.creativity.databuild._tasks_prompts import compare_messages, task_text_messages
from lateralgym.envs.benchmarks.creativity.databuild._tasks_rules import compare_part
from lateralgym.envs.benchmarks.creativity.databuild._tiers import (
    assemble_tiers,
    candidate_pools,
    gold_strata,
    keep_tiers,
    limit_strata,
    split_verdicts,
)

if TYPE_CHECKING:
    from lateralgym.agents import LLMClient

__all__ = ["STAGE_COMPARE", "STAGE_INTRA", "STAGE_TEXT", "TaskBuild", "assign_splits", "build_tasks"]

STAGE_TEXT = "tasks_c_text"
"""Checkpoint stage of stage C (key: the gold's ``GoldRef.key``)."""
STAGE_INTRA = "tasks_d_intra"
"""Checkpoint stage of stage D (key: the gold's key)."""
STAGE_COMPARE = "tasks_f_compare"
"""Checkpoint stage of stage F (key: ``<gold key>|<candidate entity id>``)."""

M = TypeVar("M", bound=BaseModel)


class Progress(Protocol):
    """Where a build reports its work (``StageProgress`` draws a bar per stage)."""

    def add(self, name: str, count: int = 1) -> None:
        """``count`` more questions for stage ``name``."""

    def done(self, name: str, count: int = 1) -> None:
        """``count`` questions of stage ``name`` answered (stored, asked, ruled or given up)."""


@dataclass
class TaskBuild:
    """What a build made and what it counted."""

    tasks: list[CreativityTask]
    """The tasks, sorted by id, each with its split."""
    counters: dict[str, StageCounters]
    """Per LLM stage: calls, cache hits, records written, re-asks, skips, tokens, cost."""
    counts: Counter[str] = field(default_factory=Counter)
    """Pipeline counts: affordances, clusters, gold candidates, golds accepted and rejected (by reason),
    candidates judged and excluded, tiers made and skipped."""

    def summary(self) -> str:
        """A few lines a person reads after a build."""
        c = self.counts
        lines = [
            f"A  {c['affordances']} affordances in {c['clusters']} clusters ({c['banded_clusters']} of size 2-50)",
            f"B  {c['gold_candidates']} gold candidates in {c['strata']} strata; {c['golds_tried']} tried",
            f"C  {c['rejected_text']} without a task text, {c['rejected_leak']} rejected by the leak check",
            f"D  {c['rejected_intra']} rejected: another part of the gold entity is preferable",
            f"E  {c['candidates']} candidate distractors for {c['golds']} golds",
            f"F  {c['unjudged']} candidates without a verdict; G {c['excluded']} excluded (better or ambiguous)",
            f"G  {c['tiers']} tiers kept, {c['skipped_tiers']} skipped (too few similar or dissimilar entities), "
            f"{c['tiers_dropped']} left out (tiers per gold)",
            f"H  {len(self.tasks)} tasks from {c['golds_with_tasks']} golds; test split {c['test_tasks']} tasks",
        ]
        for counters in self.counters.values():
            lines.append(
                f"   {counters.stage}: {counters.calls} calls, {counters.cached} cached, {counters.written} written, "
                f"{counters.retried} re-asked, {counters.invalid_skipped} invalid, {counters.errored} errored"
            )
        return "\n".join(lines)


class _Stages:
    """The answers of stages C, D and F: stored, asked of the model, or (D, F) ruled."""

    def __init__(
        self,
        store: CheckpointStore,
        client: LLMClient | None,
        judge: Literal["llm", "rules"],
        config: TaskBuildConfig,
        progress: Progress | None,
    ) -> None:
        self.store, self.client, self.judge, self.config, self.progress = store, client, judge, config, progress
        self.counters = {s: StageCounters(s) for s in (STAGE_TEXT, STAGE_INTRA, STAGE_COMPARE)}

    def _stored(self, stage: str, key: str, schema: type[M]) -> M | None:
        record = self.store.get(stage, key)
        if record is None:
            return None
        try:
            value = schema.model_validate(record)
        except ValidationError as exc:
            raise DataBuildError(
                f"{self.store.root / stage}.jsonl, key {key!r}: checkpoint does not fit ({validation_feedback(exc)}); "
                "delete that file to rebuild the stage"
            ) from None
        self.counters[stage].cached += 1
        return value

    async def _ask(
        self, stage: str, key: str, schema: type[M], messages: Callable[[], list[dict[str, str]]], temperature: float
    ) -> M | None:
        stored = self._stored(stage, key, schema)
        if stored is not None:
            return stored
        if self.client is None:
            raise DataBuildError(
                f"no stored {stage} answer for {key!r} in {self.store.root}; give --model to ask a model for it"
            )
        return await ask_json(
            self.client,
            stage=stage,
            key=key,
            messages=messages(),
            schema=schema,
            store=self.store,
            counters=self.counters[stage],
            temperature=temperature,
            constrained=self.config.constrained_json,
            reask_temperature=self.config.reask_temperature,
        )

    async def text(self, gold: GoldRef, entity: Entity, part: Part) -> TaskText | None:
        self._add(STAGE_TEXT)
        affordance = part.affordances[gold.index]
        result = await self._ask(
            STAGE_TEXT,
            gold.key,
            TaskText,
            lambda: task_text_messages(entity, part, affordance),
            self.config.text_temperature,
        )
        self._advance(STAGE_TEXT)
        return result

    async def verdicts(
        self, stage: str, key: str, gold: GoldRef, gold_entity: Entity, task: str, entity: Entity, parts: Sequence[Part]
    ) -> list[PartVerdict] | None:
        gold_part = next(p for p in gold_entity.parts if p.name == gold.part)
        affordance = gold_part.affordances[gold.index]
        schema = verdicts_schema(tuple(p.name for p in parts))
        self._add(stage)
        if not parts:
            result: list[PartVerdict] | None = []
        elif self.judge == "rules":
            stored = self._stored(stage, key, schema)
            if stored is None:
                stored = schema(parts=tuple(compare_part(p, gold_part, affordance) for p in parts))
                self.store.put(stage, key, stored.model_dump(mode="json"))
                self.counters[stage].written += 1
            result = list(stored.parts)
        else:
            answer = await self._ask(
                stage,
                key,
                schema,
                lambda: compare_messages(gold_entity, gold_part, affordance, task, entity, tuple(parts)),
                self.config.judge_temperature,
            )
            result = None if answer is None else list(answer.parts)
        self._advance(stage)
        return result

    def _add(self, stage: str) -> None:
        if self.progress is not None:
            self.progress.add(stage)

    def _advance(self, stage: str) -> None:
        if self.progress is not None:
            self.progress.done(stage)


async def build_tasks(
    kb: AffordanceKB,
    *,
    embedder: Embedder,
    store: CheckpointStore,
    config: TaskBuildConfig | None = None,
    client: LLMClient | None = None,
    judge: Literal["llm", "rules"] = "llm",
    only_stored_golds: bool = False,
    progress: Progress | None = None,
) -> TaskBuild:
    """Run stages A-H over ``kb``.

    Args:
        kb: The knowledge base.
        embedder: The embedder of stage A.
        store: The checkpoint store (stage C, D and F answers).
        config: Build settings (default: the paper's).
        client: The model client of the LLM stages; None: every answer must be stored already.
        judge: ``"llm"`` (the model judges stages D and F) or ``"rules"`` (the rule-based comparator).
        only_stored_golds: Restrict gold candidates to affordances with a stored task text (an offline
            build from hand-written seeds).
        progress: Told of each question as it is asked and answered (a bar per stage).

    Raises:
        DataBuildError: An answer is missing offline, or a checkpoint does not fit its stage.
    """
    config = config or TaskBuildConfig()
    stages = _Stages(store, client, judge, config, progress)
    counts: Counter[str] = Counter()
    entities = {e.id: e for e in kb.entities}

    index = await cluster_affordances(
        kb, embedder, diameter=config.diameter, field=config.embed_field, scope=config.cluster_scope, store=store
    )
    counts["affordances"] = len(index.refs)
    counts["clusters"] = len(index.clusters)
    counts["banded_clusters"] = sum(band_of(c.size) is not None for c in index.clusters)
    allowed = None
    if only_stored_golds:
        allowed = {ref for ref in index.refs if store.get(STAGE_TEXT, ref.key) is not None}
    strata = limit_strata(gold_strata(kb, index, config.seed, allowed), config.max_strata)
    counts["strata"] = len(strata)
    counts["gold_candidates"] = sum(len(v) for v in strata.values())

    async def accept(gold: GoldRef) -> tuple[GoldRef, TaskText, list[PartVerdict]] | None:
        entity = entities[gold.entity_id]
        part = next(p for p in entity.parts if p.name == gold.part)
        counts["golds_tried"] += 1
        text = await stages.text(gold, entity, part)
        if text is None:
            counts["rejected_text"] += 1
            return None
        shown = " ".join([text.task, text.recipient.name, *(i.name for i in text.other_items)])
        if leaked_name(shown, entity, part.name) is not None:
            counts["rejected_leak"] += 1
            return None
        others = [p for p in entity.parts if p.name != part.name]
        verdicts = await stages.verdicts(STAGE_INTRA, gold.key, gold, entity, text.task, entity, others)
        if verdicts is None:
            counts["rejected_text"] += 1
            return None
        if any(v.gold_change for v in verdicts):
            counts["rejected_intra"] += 1
            return None
        return gold, text, verdicts

    async def fill(refs: list[GoldRef]) -> list[tuple[GoldRef, TaskText, list[PartVerdict]]]:
        accepted: list[tuple[GoldRef, TaskText, list[PartVerdict]]] = []
        start = 0
        while len(accepted) < config.per_tier and start < len(refs):
            batch = refs[start : start + config.per_tier - len(accepted)]
            start += len(batch)
            accepted += [r for r in await asyncio.gather(*(accept(g) for g in batch)) if r is not None]
        return accepted

    filled = await asyncio.gather(*(fill(refs) for refs in strata.values()))
    golds = sorted((g for group in filled for g in group), key=lambda g: g[0])
    counts["golds"] = len(golds)

    async def judge_gold(gold: GoldRef, text: TaskText) -> list[tuple[Entity, list[PartVerdict]]]:
        near, far = candidate_pools(gold, kb, index, scope=config.distractor_scope, pool_size=config.pool_size)
        counts["candidates"] += len(near) + len(far)
        gold_entity = entities[gold.entity_id]

        async def one(entity: Entity) -> tuple[Entity, list[PartVerdict]] | None:
            key = f"{gold.key}|{entity.id}"
            found = await stages.verdicts(STAGE_COMPARE, key, gold, gold_entity, text.task, entity, entity.parts)
            return None if found is None else (entity, found)

        results = await asyncio.gather(*(one(e) for e in [*near, *far]))
        counts["unjudged"] += sum(r is None for r in results)
        return [r for r in results if r is not None]

    judged = await asyncio.gather(*(judge_gold(gold, text) for gold, text, _ in golds))

    tasks: list[CreativityTask] = []
    used: Counter[tuple[str, int]] = Counter()
    for (gold, text, intra), candidates in zip(golds, judged, strict=True):
        similar, other, excluded = split_verdicts(candidates, config.max_difficulty)
        counts["excluded"] += excluded
        tiers, skipped = assemble_tiers(gold, similar, other, config.counts, config.seed)
        counts["skipped_tiers"] += skipped
        kept = keep_tiers(gold, tiers, config.tiers_per_gold, config.seed, used)
        counts["tiers_dropped"] += len(tiers) - len(kept)
        tiers = kept
        counts["tiers"] += len(tiers)
        counts["golds_with_tasks"] += bool(tiers)
        verdicts = {gold.entity_id: intra, **{e.id: v for e, v in candidates}}
        band = band_of(index.cluster_of[gold].size)
        assert band is not None  # strata hold banded golds only
        for tier in tiers:
            tasks.append(
                package_task(
                    gold=gold,
                    gold_entity=entities[gold.entity_id],
                    text=text,
                    tier=tier,
                    band=band,
                    verdicts=verdicts,
                    seed=config.seed,
                )
            )
    tasks = assign_splits(sorted(tasks, key=lambda t: t.id), config.test_fraction)
    counts["test_tasks"] = sum(t.split == "test" for t in tasks)
    return TaskBuild(tasks=tasks, counters=stages.counters, counts=counts)


def _gold_group(task: CreativityTask) -> str:
    """Tasks whose golds are one entity, or variants of one name in one scene, share a split."""
    return f"{task.scene}/{snake(task.gold.entity)}"


def assign_splits(tasks: Sequence[CreativityTask], test_fraction: float) -> list[CreativityTask]:
    """Each task with its split. Per scene, gold groups (a gold entity and its variants) are taken in SHA-256
    order, each going to test when that brings the scene's test share closer to ``test_fraction``; every
    task of a group shares its split."""
    sizes: Counter[str] = Counter(_gold_group(t) for t in tasks)
    test: set[str] = set()
    for scene in sorted({t.scene for t in tasks}):
        groups = sorted({g for g in sizes if g.startswith(f"{scene}/")}, key=lambda g: _sha(g))
        target = test_fraction * sum(sizes[g] for g in groups)
        placed = 0
        for group in groups:  # a group goes to test when that brings the scene closer to its target
            if abs(placed + sizes[group] - target) < abs(placed - target):
                test.add(group)
                placed += sizes[group]
    return [t.model_copy(update={"split": "test" if _gold_group(t) in test else "train"}) for t in tasks]


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
