"""``build_kb``: the KB annotation pipeline (paper §4.1, App. C, stages A-H) over the one client layer.

A. entities per scene, semantically de-duplicated (cosine >= 0.85 dropped);
B. partonomy of each entity; C. physical variants and E. state variants of each part;
D./F. composition into at most 8 physical x 6 state entity variants (``_kb_compose``);
G. six affordances per part per (physical, state) part variant; H. assembly, keeping only entities
whose every part has every record (``_kb_assemble``).

Every LLM answer is validated and checkpointed (``ask_json``), so a killed build resumes and a
finished one reruns for free. Entities run concurrently; the client's cap bounds requests in flight.
"""

from __future__ import annotations

import asyncio
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from lateralgym.databuild import (
    DEFAULT_REASK_TEMPERATURE,
    CheckpointStore,
    DataBuildError,
    Embedder,
    JsonForm,
    StageCounters,
    StageProgress,
    ask_json,
    embed_cached,
    make_embedder,
)
from lateralgym.envs._matching import snake
from lateralgym.envs.benchmarks.creativity._schema import Entity, Scene
from lateralgym.envs.benchmarks.creativity.databuild._kb_assemble import EntityDraft, assemble_entity, plan_variants
from lateralgym.envs.benchmarks.creativity.databuild._kb_prompts import (
    affordance_messages,
    entity_messages,
    partonomy_messages,
    physical_messages,
    state_messages,
)
from lateralgym.envs.benchmarks.creativity.databuild._kb_schema import (
    AFFORDANCES_PER_VARIANT,
    EntityCandidate,
    EntityCandidates,
    Partonomy,
    affordance_schema,
    variant_schemas,
)

if TYPE_CHECKING:
    from lateralgym.agents import LLMClient

__all__ = ["KB_FILE", "KB_STAGES", "KBBuildConfig", "KBBuildResult", "build_kb", "run_kb_build"]

M = TypeVar("M", bound=BaseModel)

KB_FILE = "kb.jsonl"
"""The KB a build writes into its output directory (``Entity`` lines, the package's own format)."""
CHECKPOINT_DIR = "checkpoints"
MANIFEST_FILE = "build.json"
KB_STAGES = ("entities", "parts", "physical", "states", "affordances")
"""The LLM stages, in order (A, B, C, E, G); D, F and H are computed."""


class KBBuildConfig(BaseModel):
    """What to build, and how (the ``lateralgym kb build`` options)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scenes: tuple[Scene, ...] = Field(min_length=1)
    """Scenes to populate, in order."""
    entities_per_scene: int = Field(default=50, ge=1, le=2000)
    """Entities kept per scene after de-duplication."""
    model: str
    """The annotating model's spec (``openai/NAME?temperature=...``)."""
    base_url: str | None = None
    """An OpenAI-compatible server for the model (and an API embedder)."""
    embedder: str = "lexical"
    """``lexical``, ``st:[NAME]`` or an embeddings model spec (see ``make_embedder``)."""
    temperature: float = Field(default=0.7, ge=0.0, le=2.0)
    """Sampling temperature of every stage (the paper's 0.7)."""
    concurrency: int = Field(default=16, ge=1, le=1024)
    """Requests in flight at once."""
    dedup_threshold: float = Field(default=0.85, gt=0.0, le=1.0)
    """Entities whose name embedding has at least this cosine with a kept one are dropped (stage A)."""
    max_physical_variants: int = Field(default=8, ge=1)
    """Physical entity variants per entity (stage D)."""
    max_state_combinations: int = Field(default=6, ge=1)
    """State combinations per physical variant (stage F)."""
    entity_rounds: int = Field(default=3, ge=1)
    """Stage A asks again (excluding what it has) until the scene is full or this many rounds were asked."""
    retries: int = Field(default=2, ge=0)
    """Re-asks after an invalid reply, with the validation error."""
    min_variants: int = Field(default=2, ge=1, le=2)
    """Fewest different variants stages C and E accept per part: 2 (the paper's 2-3), or 1 for a trial build,
    whose replies drop a variant repeating an earlier one instead of being re-asked (``TrialPhysicalVariants``)."""
    affordances_per_variant: int = Field(default=AFFORDANCES_PER_VARIANT, ge=1, le=AFFORDANCES_PER_VARIANT)
    """Uses stage G asks per part variant: the paper's six, or fewer for a trial build with a small model."""
    reask_temperature: float = Field(default=DEFAULT_REASK_TEMPERATURE, ge=0.0, le=2.0)
    """Sampling temperature of a re-ask (with a per-attempt seed); the first ask uses ``temperature``."""
    seed: int = 0
    """Seed of the coverage-oriented subsampling (stages D and F)."""
    constrained_json: JsonForm | None = None
    """Send each stage's JSON schema in ``response_format`` in this form (``ask_json``); None: prompts only."""


@dataclass
class KBBuildResult:
    """What a build produced."""

    kb_path: Path
    entities: int
    variants: int
    dropped: dict[str, str]
    counters: dict[str, StageCounters]
    embedder: str
    dedup_dropped: dict[str, int] = field(default_factory=dict)
    scene_entities: dict[str, int] = field(default_factory=dict)
    """Entities stage A kept per scene (fewer than asked when its questions failed or ran dry)."""

    def short_scenes(self, wanted: int) -> dict[str, int]:
        """Scenes with fewer than ``wanted`` entities, and how many they have."""
        return {scene: count for scene, count in self.scene_entities.items() if count < wanted}


@dataclass
class _Run:
    config: KBBuildConfig
    client: LLMClient
    embedder: Embedder
    store: CheckpointStore
    progress: StageProgress
    counters: dict[str, StageCounters]

    async def ask(self, stage: str, key: str, messages: list[dict[str, str]], schema: type[M]) -> M | None:
        """``ask_json`` with this build's settings, counted on the stage's progress bar."""
        self.progress.add(stage)
        try:
            return await ask_json(
                self.client,
                stage=stage,
                key=key,
                messages=messages,
                schema=schema,
                store=self.store,
                counters=self.counters[stage],
                temperature=self.config.temperature,
                retries=self.config.retries,
                constrained=self.config.constrained_json,
                reask_temperature=self.config.reask_temperature,
            )
        finally:
            self.progress.done(stage)


async def _scene_entities(run: _Run, scene: Scene) -> tuple[list[EntityCandidate], int]:
    """Stage A for one scene: (kept entities in order, how many near-duplicates were dropped)."""
    wanted = run.config.entities_per_scene
    list_key = f"{scene}|n{wanted}|{run.embedder.name}|{run.config.dedup_threshold}"
    stored = run.store.get("entity_lists", list_key)
    if stored is not None:
        run.counters["entities"].cached += 1  # the list stands for every question that built it
        return [EntityCandidate.model_validate(e) for e in stored["entities"]], int(stored["dropped"])
    kept: list[EntityCandidate] = []
    kept_vectors: list[np.ndarray] = []
    dropped = 0
    answered = True
    for round_index in range(run.config.entity_rounds):
        missing = wanted - len(kept)
        if missing <= 0:
            break
        asked = missing + math.ceil(missing * 0.2)  # a margin for what de-duplication drops
        reply = await run.ask(
            "entities",
            f"{scene}|n{wanted}|r{round_index}",
            entity_messages(scene, asked, [e.name for e in kept]),
            EntityCandidates,
        )
        if reply is None:
            answered = False
            break
        candidates: list[EntityCandidate] = list(reply.entities)
        vectors = await embed_cached(run.embedder, [c.name for c in candidates], run.store)
        slugs = {snake(e.name) for e in kept}
        for candidate, vector in zip(candidates, vectors, strict=True):
            if len(kept) >= wanted:
                break
            duplicate = snake(candidate.name) in slugs or any(
                float(vector @ other) >= run.config.dedup_threshold for other in kept_vectors
            )
            if duplicate or not snake(candidate.name):
                dropped += 1
                continue
            kept.append(candidate)
            kept_vectors.append(vector)
            slugs.add(snake(candidate.name))
    if answered:
        # Only a final list is frozen: one cut short by a failed question is asked again on resume.
        run.store.put("entity_lists", list_key, {"entities": [e.model_dump() for e in kept], "dropped": dropped})
    return kept, dropped


def part_key(base_id: str, part: str, min_variants: int) -> str:
    """The checkpoint key of a part's stage C, E (and, with ``|pP|sS``, G) answers; a trial build's
    (``min_variants`` 1) are apart, so a paper build in the same directory never reuses them."""
    return f"{base_id}|{part}" + ("|trial" if min_variants == 1 else "")


def affordance_key(base_id: str, part: str, config: KBBuildConfig, physical: int, state: int) -> str:
    """The checkpoint key of stage G's answer for one part variant; one asking fewer than six uses
    (``|aN``) is apart from the paper's."""
    count = config.affordances_per_variant
    suffix = f"|a{count}" if count != AFFORDANCES_PER_VARIANT else ""
    return f"{part_key(base_id, part, config.min_variants)}|p{physical}|s{state}{suffix}"


async def _entity(run: _Run, scene: Scene, candidate: EntityCandidate) -> tuple[list[Entity], str | None]:
    """Stages B-H for one entity: (its variants, or [] and why it was dropped)."""
    base_id = f"{scene}/{snake(candidate.name)}"
    physical_schema, state_schema = variant_schemas(run.config.min_variants)
    partonomy: Partonomy | None = await run.ask("parts", base_id, partonomy_messages(scene, candidate.name), Partonomy)
    if partonomy is None:
        return [], "no valid partonomy"
    parts = partonomy.parts
    physical_replies, state_replies = await asyncio.gather(
        asyncio.gather(
            *(
                run.ask(
                    "physical",
                    part_key(base_id, p.name, run.config.min_variants),
                    physical_messages(candidate.name, p),
                    physical_schema,
                )
                for p in parts
            )
        ),
        asyncio.gather(
            *(
                run.ask(
                    "states",
                    part_key(base_id, p.name, run.config.min_variants),
                    state_messages(candidate.name, p, scene),
                    state_schema,
                )
                for p in parts
            )
        ),
    )
    missing = [
        p.name for p, ph, st in zip(parts, physical_replies, state_replies, strict=True) if ph is None or st is None
    ]
    if missing:
        return [], f"no valid physical or state variants for part(s) {', '.join(missing)}"
    physical = [ph for ph in physical_replies if ph is not None]
    states = [st for st in state_replies if st is not None]
    draft = EntityDraft(
        base_id=base_id, name=candidate.name, scene=scene, parts=parts, physical=physical, states=states
    )
    plan = plan_variants(
        draft,
        max_physical=run.config.max_physical_variants,
        max_states=run.config.max_state_combinations,
        seed=run.config.seed,
    )
    needed = sorted({(i, combo[0][i], combo[1][i]) for combo in plan for i in range(len(parts))})
    count = run.config.affordances_per_variant
    replies = await asyncio.gather(
        *(
            run.ask(
                "affordances",
                affordance_key(base_id, parts[i].name, run.config, p, s),
                affordance_messages(candidate.name, parts[i], physical[i].variants[p], states[i].variants[s], count),
                affordance_schema(count),
            )
            for i, p, s in needed
        )
    )
    affordances = dict(zip(needed, replies, strict=True))
    return assemble_entity(draft, plan, affordances)


async def build_kb(
    config: KBBuildConfig,
    out: Path,
    *,
    client: LLMClient,
    embedder: Embedder,
    progress: StageProgress | None = None,
) -> KBBuildResult:
    """Run stages A-H into ``out`` (checkpoints in ``out/checkpoints``, the KB in ``out/kb.jsonl``).

    Args:
        config: What to build.
        out: The output directory; an existing build there is resumed.
        client: The annotating model's client (its cap bounds requests in flight).
        embedder: The embedder of stage A's de-duplication.
        progress: Progress bars to draw on (none by default).

    Raises:
        DataBuildError: Another build holds ``out``, or a checkpoint is unreadable.
    """
    progress = progress if progress is not None else StageProgress(enabled=False)
    counters = {stage: StageCounters(stage) for stage in KB_STAGES}
    for stage in KB_STAGES:
        progress.stage(stage)
    with CheckpointStore(out / CHECKPOINT_DIR) as store:
        run = _Run(config, client, embedder, store, progress, counters)
        scene_lists = await asyncio.gather(*(_scene_entities(run, scene) for scene in config.scenes))
        jobs = [(scene, c) for scene, (kept, _) in zip(config.scenes, scene_lists, strict=True) for c in kept]
        results = await asyncio.gather(*(_entity(run, scene, c) for scene, c in jobs))
    entities: list[Entity] = []
    dropped: dict[str, str] = {}
    for (scene, candidate), (variants, reason) in zip(jobs, results, strict=True):
        if reason is not None:
            dropped[f"{scene}/{snake(candidate.name)}"] = reason
        entities.extend(variants)
    kb_path = out / KB_FILE
    _write_atomic(kb_path, "".join(e.model_dump_json() + "\n" for e in entities))
    result = KBBuildResult(
        kb_path=kb_path,
        entities=len(jobs) - len(dropped),
        variants=len(entities),
        dropped=dropped,
        counters=counters,
        embedder=embedder.name,
        dedup_dropped={scene: d for scene, (_, d) in zip(config.scenes, scene_lists, strict=True)},
        scene_entities={scene: len(kept) for scene, (kept, _) in zip(config.scenes, scene_lists, strict=True)},
    )
    _write_atomic(out / MANIFEST_FILE, json.dumps(_manifest(config, result), indent=2, sort_keys=True) + "\n")
    return result


def _manifest(config: KBBuildConfig, result: KBBuildResult) -> dict[str, Any]:
    from lateralgym.agents import display_url, safe_spec

    settings = config.model_dump()
    # Credentials (in the URL, or a spec's ?base_url=) never reach a file.
    settings.update(
        base_url=display_url(config.base_url), model=safe_spec(config.model), embedder=safe_spec(config.embedder)
    )
    return {
        "settings": settings,
        "entities_kept": result.entities,
        "entity_variants": result.variants,
        "dropped": result.dropped,
        "dedup_dropped": result.dedup_dropped,
        "scene_entities": result.scene_entities,
        "embedder": result.embedder,
        "stages": {name: c.as_dict() for name, c in result.counters.items()},
    }


def _write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a killed build never leaves half a KB."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w", encoding="utf-8") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    partial.replace(path)


async def run_kb_build(
    config: KBBuildConfig, out: Path, *, progress: StageProgress | None = None, cache_dir: Path | None = None
) -> KBBuildResult:
    """``build_kb`` with the client and embedder the config names (what ``lateralgym kb build`` runs).

    Raises:
        DataBuildError: A bad model or embedder spec, a locked directory or an unreadable checkpoint.
    """
    from lateralgym.agents import LLMClient, LLMConfigError

    try:
        # The checkpoint store is the build's cache: the client's own response cache would only
        # duplicate it (and keep invalid replies too).
        client = LLMClient(
            config.model, base_url=config.base_url, concurrency=config.concurrency, use_cache=False, cache_dir=cache_dir
        )
    except LLMConfigError as exc:
        raise DataBuildError(str(exc)) from None
    embedder = make_embedder(config.embedder, base_url=config.base_url)
    try:
        return await build_kb(config, out, client=client, embedder=embedder, progress=progress)
    finally:
        await client.aclose()


def scene_list(text: str) -> tuple[str, ...]:
    """``kitchen,garage`` -> ``("kitchen", "garage")`` (validated by ``KBBuildConfig``)."""
    return tuple(name.strip() for name in text.split(",") if name.strip())
