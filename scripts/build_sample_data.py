"""Build the shipped CreativityBench sample data from the hand-written KB and task seeds.

Usage::

    python scripts/build_sample_data.py            # writes envs/data/{affordance_kb,creativity_tasks}.jsonl
    python scripts/build_sample_data.py --out DIR  # writes the two files into DIR instead
    python scripts/build_sample_data.py --src DIR  # reads kb_*.jsonl / seeds_*.jsonl from DIR

The build is deterministic: running it again reproduces the shipped files byte for byte.

Inputs (``scripts/sample_data/`` by default)
    ``kb_*.jsonl``: one ``Entity`` per line, ids ``<scene>/<snake_name>/<variant>``.
    ``seeds_*.jsonl``: one ``TaskSeed`` per line: the task text, the gold (entity id, part,
    index of the affordance in that part), the recipient, other scene items and the reference solution.
    Every record is validated; errors name the file, the line and the field.

Outputs
    ``affordance_kb.jsonl``: every entity, sorted by id.
    ``creativity_tasks.jsonl``: one ``CreativityTask`` per seed, sorted by id.

How a seed becomes a task
    Cluster. The cluster of an affordance category is the set of (entity id, part) pairs having an
    affordance of that category. A cluster of fewer than ``CLUSTER_LARGE_FROM`` (10) pairs is recorded
    as ``cluster_size_range = (1, 9)`` (band ``small``), otherwise ``(10, 50)`` (band ``large``).

    Factors. Seeds fall into four cells: level kind (normal = level 0, emergency = 1..5) x cluster band.
    Each cell must hold exactly 12 seeds; the 12 combinations of distractor count (3, 6, 9, 12) x
    distractor similarity (similar, mixed, dissimilar) are dealt to the cell's seeds sorted by id, in
    an order shuffled once per cell, so every one of the 48 combinations occurs exactly once.

    Distractors. Candidates are all KB entities except the gold entity, any entity with an affordance
    of the gold's category (so the gold stays the best choice in its scene) and any entity named like
    the gold. Variants (entities sharing a name) are collapsed to their best-scoring member, so no two
    entities in a scene share a name. A candidate's similarity to the gold is

        score = max over the candidate's parts p of Jaccard(features(p), features(gold part))
                + 0.25 if the candidate belongs to the task's scene

    where ``features(part)`` is the set of the part's affordance categories, the words of its
    affordances' enabling attributes and the words of its material. Candidates are ranked by score
    (ties by id). ``similar`` takes the top k, ``dissimilar`` the bottom k, ``mixed`` draws ceil(k/2) at
    random from the top 2*ceil(k/2) and the rest from the bottom pool of twice their number (each pool
    kept within its half of the ranking). The distractors are shuffled and the gold is inserted at a
    random position.

    Randomness. Every draw uses a numpy ``Generator`` seeded from the SHA-256 of the seed id (not
    Python's salted ``hash``), so the output does not depend on the process or the order of seeds.

    Environment text. "I am in the <scene>. Around me are the <e1>, the <e2>, ... and the <en>.
    Close by, next to the <surface>, I notice the <item 1>, ... and the <item m>." Entities are listed
    in scene order without parts and without marking the gold.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import math
import re
import sys
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lateralgym.envs import (
    AffordanceKB,
    CreativityTask,
    DatasetError,
    Entity,
    GoldAnswer,
    Part,
    ReferenceSolution,
    SamplingFactors,
    SceneItem,
    read_jsonl,
    snake,
    spaced,
)
from lateralgym.envs._errors import validation_message
from lateralgym.envs._schema import CLUSTER_LARGE_FROM, Scene

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SRC = ROOT / "scripts" / "sample_data"
DEFAULT_OUT = ROOT / "envs" / "data"
KB_FILE = "affordance_kb.jsonl"
TASKS_FILE = "creativity_tasks.jsonl"

DISTRACTOR_COUNTS: tuple[int, ...] = (3, 6, 9, 12)
SIMILARITIES: tuple[str, ...] = ("similar", "mixed", "dissimilar")
SMALL_RANGE: tuple[int, int] = (1, CLUSTER_LARGE_FROM - 1)
LARGE_RANGE: tuple[int, int] = (CLUSTER_LARGE_FROM, 50)
SAME_SCENE_BONUS = 0.25
SEEDS_PER_CELL = len(DISTRACTOR_COUNTS) * len(SIMILARITIES)

SURFACES: dict[str, str] = {
    "kitchen": "counter",
    "living_room": "coffee table",
    "bedroom": "dresser",
    "bathroom": "sink",
    "garage": "workbench",
    "home_office": "desk",
    "dining_room": "table",
    "garden": "potting bench",
}
"""Where the scene's loose items are, per scene."""

STOPWORDS = frozenset({"and", "the", "with", "for", "its", "that", "from", "into", "onto", "not", "can"})


class TaskSeed(BaseModel):
    """A hand-written task before distractor sampling."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)

    id: str = Field(min_length=1)
    """Unique task id, e.g. ``garage-pry-01``."""
    scene: Scene
    """Scene of the task; must be the gold entity's scene."""
    gold_entity_id: str
    """KB id of the gold entity."""
    gold_part: str
    """snake_case name of the gold part."""
    gold_affordance_index: int = Field(ge=0)
    """Index of the gold affordance in the part's ``affordances``."""
    task: str = Field(min_length=1)
    """First-person problem statement; never names the gold entity or part."""
    recipient: SceneItem
    """The thing the task is about (``interactable`` true)."""
    other_items: tuple[SceneItem, ...] = ()
    """Other loose items in the scene."""
    solution: ReferenceSolution
    """Four-step reference solution."""


@dataclass(frozen=True)
class Located:
    """A record with the file and line it came from, for error messages."""

    path: Path
    line: int
    record: object


@dataclass(frozen=True)
class Build:
    """The result of a build: the lines of both files and a coverage summary."""

    kb_lines: list[str]
    task_lines: list[str]
    summary: str


def stable_seed(text: str) -> int:
    """A process-independent 64-bit seed from text (SHA-256)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "big")


def words(text: str) -> set[str]:
    """Lower-case content words of a phrase (3+ letters, minus a few stop words)."""
    return {w for w in re.findall(r"[a-z]+", text.lower()) if len(w) >= 3 and w not in STOPWORDS}


def part_features(part: Part) -> frozenset[str]:
    """The similarity features of a part: use categories, enabling-attribute words, material words."""
    features = {f"use:{a.category}" for a in part.affordances}
    for affordance in part.affordances:
        for phrase in affordance.enabling_attributes:
            features |= {f"attr:{w}" for w in words(phrase)}
    features |= {f"material:{w}" for w in words(part.physical.material)}
    return frozenset(features)


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def similarity(candidate: Entity, gold_part: Part, scene: str) -> float:
    """Documented similarity of a candidate entity to the gold part (see the module docstring)."""
    gold = part_features(gold_part)
    best = max(jaccard(part_features(p), gold) for p in candidate.parts)
    return round(best + (SAME_SCENE_BONUS if candidate.scene == scene else 0.0), 9)


def clusters(entities: Iterable[Entity]) -> dict[str, set[tuple[str, str]]]:
    """Category -> set of (entity id, part name) pairs having an affordance of that category."""
    result: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for entity in entities:
        for part in entity.parts:
            for affordance in part.affordances:
                result[affordance.category].add((entity.id, part.name))
    return dict(result)


def cluster_range(size: int) -> tuple[int, int]:
    """The recorded size band of a cluster of ``size`` pairs."""
    bounds = SMALL_RANGE if size < CLUSTER_LARGE_FROM else LARGE_RANGE
    assert bounds[0] <= size <= bounds[1], f"cluster size {size} outside {bounds}"
    return bounds


def has_category(entity: Entity, category: str) -> bool:
    return any(a.category == category for p in entity.parts for a in p.affordances)


def read_located(paths: Sequence[Path], model: type[BaseModel]) -> list[Located]:
    """Validate every line of ``paths`` as ``model``; errors name the file, line and field."""
    located: list[Located] = []
    for path in paths:
        records = read_jsonl(path, model)  # raises DatasetError naming the file, line and field
        lines = path.read_text(encoding="utf-8").splitlines()
        numbers = [n for n, line in enumerate(lines, start=1) if line.strip()]
        located += [Located(path, n, r) for n, r in zip(numbers, records, strict=True)]
    return located


def fail(item: Located, message: str, field: str | None = None) -> DatasetError:
    """A DatasetError naming the record's file, line and field."""
    return DatasetError(item.path, message, record=f"line {item.line}", field=field)


def check_entities(located: list[Located]) -> list[Entity]:
    """Rules beyond the schema: id shape, scene in id, snake_case categories, unique ids."""
    seen: dict[str, Located] = {}
    for item in located:
        entity = item.record
        assert isinstance(entity, Entity)
        scene, _, rest = entity.id.partition("/")
        if scene != entity.scene or rest.count("/") != 1:
            raise fail(item, f"id {entity.id!r} must read '{entity.scene}/<snake_name>/<variant>'", "id")
        for i, part in enumerate(entity.parts):
            if not part.affordances:
                raise fail(item, f"part {part.name!r} has no affordance", f"parts.{i}.affordances")
            for j, affordance in enumerate(part.affordances):
                if not affordance.category or snake(affordance.category) != affordance.category:
                    raise fail(
                        item,
                        f"category must be non-empty snake_case, got {affordance.category!r}",
                        f"parts.{i}.affordances.{j}.category",
                    )
        if entity.id in seen:
            first = seen[entity.id]
            raise fail(item, f"duplicate id {entity.id!r} (also {first.path.name} line {first.line})", "id")
        seen[entity.id] = item
    return [item.record for item in located]  # type: ignore[misc]


def check_seeds(located: list[Located], kb: AffordanceKB) -> None:
    """Rules beyond the schema: the gold exists, lives in the seed's scene and is not named in the task."""
    seen: dict[str, Located] = {}
    ids = {e.id for e in kb.entities}
    for item in located:
        seed = item.record
        assert isinstance(seed, TaskSeed)
        if seed.id in seen:
            first = seen[seed.id]
            raise fail(item, f"duplicate id {seed.id!r} (also {first.path.name} line {first.line})", "id")
        seen[seed.id] = item
        if seed.gold_entity_id not in ids:
            raise fail(item, f"no entity {seed.gold_entity_id!r} in the KB", "gold_entity_id")
        entity = kb.by_id(seed.gold_entity_id)
        if entity.scene != seed.scene:
            raise fail(item, f"the gold entity is in {entity.scene!r}, the seed in {seed.scene!r}", "scene")
        part = next((p for p in entity.parts if p.name == seed.gold_part), None)
        if part is None:
            parts = [p.name for p in entity.parts]
            raise fail(item, f"{entity.id!r} has no part {seed.gold_part!r}; its parts: {parts}", "gold_part")
        if seed.gold_affordance_index >= len(part.affordances):
            raise fail(item, f"part {part.name!r} has {len(part.affordances)} affordances", "gold_affordance_index")
        if not seed.recipient.interactable:
            raise fail(item, "the recipient must be interactable", "recipient.interactable")
        for phrase in (entity.name, spaced(part.name)):
            if re.search(rf"\b{re.escape(phrase.lower())}\b", seed.task.lower()):
                raise fail(item, f"the task text names the gold ({phrase!r})", "task")


def pick_distractors(
    seed: TaskSeed,
    gold: Entity,
    gold_part: Part,
    category: str,
    kb: AffordanceKB,
    count: int,
    similarity_tier: str,
    rng: np.random.Generator,
) -> list[Entity]:
    """Distractors for one task (see the module docstring for the rules)."""
    candidates = [
        e
        for e in kb.entities
        if e.id != gold.id and snake(e.name) != snake(gold.name) and not has_category(e, category)
    ]
    ranked = sorted(candidates, key=lambda e: (-similarity(e, gold_part, seed.scene), e.id))
    unique: list[Entity] = []
    names: set[str] = set()
    for entity in ranked:  # keep the best-scoring variant of each name
        if snake(entity.name) not in names:
            names.add(snake(entity.name))
            unique.append(entity)
    if len(unique) < count:
        raise ValueError(
            f"only {len(unique)} distractor candidates for {count} distractors "
            f"(entities with a {category!r} affordance are excluded)"
        )
    if similarity_tier == "similar":
        return unique[:count]
    if similarity_tier == "dissimilar":
        return unique[-count:]
    top_n = math.ceil(count / 2)
    bottom_n = count - top_n
    n = len(unique)
    cut = min(max(n // 2, top_n), n - bottom_n)  # the top pool lies before the cut, the bottom after it
    top_pool = unique[: min(2 * top_n, cut)]
    bottom_pool = unique[max(cut, n - 2 * bottom_n) :]
    top = [top_pool[i] for i in sorted(rng.choice(len(top_pool), size=top_n, replace=False))]
    bottom = [bottom_pool[i] for i in sorted(rng.choice(len(bottom_pool), size=bottom_n, replace=False))]
    return top + bottom


def join_the(names: Sequence[str]) -> str:
    """``the a, the b and the c``."""
    phrases = [f"the {n}" for n in names]
    return phrases[0] if len(phrases) == 1 else ", ".join(phrases[:-1]) + " and " + phrases[-1]


def environment_text(scene: str, entities: Sequence[Entity], items: Sequence[SceneItem]) -> str:
    """First-person description of the surroundings; names entities, never parts, never marks the gold."""
    text = f"I am in the {spaced(scene)}. Around me are {join_the([e.name for e in entities])}."
    if items:
        text += f" Close by, next to the {SURFACES[scene]}, I notice {join_the([i.name for i in items])}."
    return text


def assign_factors(seeds: list[tuple[TaskSeed, str, str]], seeds_origin: str) -> dict[str, tuple[int, str]]:
    """Deal the 12 (count, similarity) combinations to each (level kind, band) cell of 12 seeds."""
    cells: dict[tuple[str, str], list[str]] = defaultdict(list)
    for seed, kind, band in seeds:
        cells[(kind, band)].append(seed.id)
    combos = list(itertools.product(DISTRACTOR_COUNTS, SIMILARITIES))
    assignment: dict[str, tuple[int, str]] = {}
    for kind, band in itertools.product(("normal", "emergency"), ("small", "large")):
        ids = sorted(cells.get((kind, band), []))
        if len(ids) != SEEDS_PER_CELL:
            raise DatasetError(
                seeds_origin,
                f"cell (level {kind}, cluster {band}) has {len(ids)} seeds, needs exactly {SEEDS_PER_CELL}: {ids}",
            )
        order = np.random.default_rng(stable_seed(f"cell/{kind}/{band}")).permutation(len(combos))
        for seed_id, index in zip(ids, order, strict=True):
            assignment[seed_id] = combos[int(index)]
    return assignment


def build(src: Path) -> Build:
    """Validate the inputs in ``src`` and build both output files in memory."""
    kb_paths = sorted(src.glob("kb_*.jsonl"))
    seed_paths = sorted(src.glob("seeds_*.jsonl"))
    if not kb_paths or not seed_paths:
        raise DatasetError(src, "expected kb_*.jsonl and seeds_*.jsonl files in this folder")
    entities = check_entities(read_located(kb_paths, Entity))
    kb = AffordanceKB(entities=tuple(sorted(entities, key=lambda e: e.id)))
    seed_items = read_located(seed_paths, TaskSeed)
    check_seeds(seed_items, kb)
    seeds: list[TaskSeed] = [item.record for item in seed_items]  # type: ignore[misc]
    where = {seed.id: item for seed, item in zip(seeds, seed_items, strict=True)}

    cluster_pairs = clusters(kb.entities)
    sizes = {category: len(pairs) for category, pairs in cluster_pairs.items()}
    for category, size in sizes.items():
        if size > LARGE_RANGE[1]:
            raise DatasetError(src, f"category {category!r} has {size} pairs, above {LARGE_RANGE[1]}")

    cells: list[tuple[TaskSeed, str, str]] = []
    golds: dict[str, tuple[Entity, Part, int]] = {}
    for seed in seeds:
        entity = kb.by_id(seed.gold_entity_id)
        part = next(p for p in entity.parts if p.name == seed.gold_part)
        affordance = part.affordances[seed.gold_affordance_index]
        band = "large" if sizes[affordance.category] >= CLUSTER_LARGE_FROM else "small"
        cells.append((seed, "normal" if affordance.level == 0 else "emergency", band))
        golds[seed.id] = (entity, part, seed.gold_affordance_index)
    assignment = assign_factors(cells, ", ".join(p.name for p in seed_paths))

    tasks: list[CreativityTask] = []
    for seed in sorted(seeds, key=lambda s: s.id):
        entity, part, index = golds[seed.id]
        affordance = part.affordances[index]
        count, tier = assignment[seed.id]
        origin = where[seed.id]
        rng = np.random.default_rng(stable_seed(seed.id))
        try:
            distractors = pick_distractors(seed, entity, part, affordance.category, kb, count, tier, rng)
            scene_entities = [distractors[int(i)] for i in rng.permutation(len(distractors))]
            scene_entities.insert(int(rng.integers(0, len(scene_entities) + 1)), entity)
            items = (seed.recipient, *seed.other_items)
            tasks.append(
                CreativityTask(
                    id=seed.id,
                    scene=seed.scene,
                    task=seed.task,
                    environment=environment_text(seed.scene, scene_entities, items),
                    entities=tuple(scene_entities),
                    items=items,
                    gold=GoldAnswer(entity=entity.name, part=part.name, affordance=affordance),
                    solution=seed.solution,
                    factors=SamplingFactors(
                        cluster_size_range=cluster_range(sizes[affordance.category]),
                        gold_level=affordance.level,
                        distractor_count=count,
                        distractor_similarity=tier,  # type: ignore[arg-type]
                    ),
                )
            )
        except ValidationError as exc:
            field, message = validation_message(exc)
            raise fail(origin, message, field) from exc
        except ValueError as exc:
            raise fail(origin, str(exc)) from exc

    # judge_output (a release's comparisons with the gold) is optional and never generated here
    kb_lines = [e.model_dump_json(exclude_defaults=False, exclude={"judge_output"}) for e in kb.entities]
    task_lines = [
        t.model_dump_json(exclude_defaults=False, exclude={"entities": {"__all__": {"judge_output"}}}) for t in tasks
    ]
    return Build(kb_lines, task_lines, summarise(kb, tasks, sizes))


def summarise(kb: AffordanceKB, tasks: Sequence[CreativityTask], sizes: dict[str, int]) -> str:
    """A human-readable coverage summary."""
    lines = [f"KB: {len(kb.entities)} entities, {sum(len(e.parts) for e in kb.entities)} parts"]
    lines.append(
        "  per scene: " + ", ".join(f"{s} {n}" for s, n in sorted(Counter(e.scene for e in kb.entities).items()))
    )
    levels = Counter(a.level for e in kb.entities for p in e.parts for a in p.affordances)
    lines.append("  affordances per level: " + ", ".join(f"{k}: {v}" for k, v in sorted(levels.items())))
    variants = Counter(snake(e.name) for e in kb.entities)
    lines.append("  variant names: " + (", ".join(sorted(n for n, c in variants.items() if c > 1)) or "none"))
    by_size = sorted(sizes.items(), key=lambda item: (-item[1], item[0]))
    lines.append(
        "  clusters (pairs, * = large): "
        + ", ".join(f"{c} {n}{'*' if n >= CLUSTER_LARGE_FROM else ''}" for c, n in by_size)
    )
    lines.append(f"Tasks: {len(tasks)}")
    scenes = Counter(t.scene for t in tasks)
    lines.append("  per scene: " + ", ".join(f"{s} {n}" for s, n in sorted(scenes.items())))
    lines.append(
        "  per gold level: "
        + ", ".join(f"{k}: {v}" for k, v in sorted(Counter(t.factors.gold_level for t in tasks).items()))
    )
    lines.append(
        "  per gold category: "
        + ", ".join(f"{k} {v}" for k, v in sorted(Counter(t.gold.affordance.category for t in tasks).items()))
    )
    combos = Counter(
        (t.factors.level_kind, t.factors.cluster_band, t.factors.distractor_count, t.factors.distractor_similarity)
        for t in tasks
    )
    lines.append(f"  combinations level kind x band x count x similarity: {len(combos)} of 48 covered")
    for kind, band in itertools.product(("normal", "emergency"), ("small", "large")):
        row = " ".join(f"{n}/{s[:3]}:{combos[(kind, band, n, s)]}" for n in DISTRACTOR_COUNTS for s in SIMILARITIES)
        lines.append(f"    {kind:9} {band:5} {row}")
    return "\n".join(lines)


def write(result: Build, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, lines in ((KB_FILE, result.kb_lines), (TASKS_FILE, result.task_lines)):
        (out / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--src",
        type=Path,
        default=DEFAULT_SRC,
        help="folder with kb_*.jsonl and seeds_*.jsonl (default: scripts/sample_data)",
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="folder to write the two JSONL files to (default: envs/data)"
    )
    args = parser.parse_args(argv)
    try:
        result = build(args.src)
    except DatasetError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    write(result, args.out)
    print(result.summary)
    print(f"wrote {args.out / KB_FILE} and {args.out / TASKS_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
