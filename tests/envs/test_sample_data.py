"""The shipped sample datasets, and the script that builds the CreativityBench ones.

The shipped files are read through the public loaders (``load_sample_kb``, ``load_sample_items``), so a
broken package-data setup fails here too. ``scripts/build_sample_data.py`` is checked twice: on a small
synthetic KB written into ``tmp_path`` (rules and error messages) and on the real inputs (the shipped
files must be reproducible byte for byte).
"""

from __future__ import annotations

import itertools
import json
import re
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from lateralgym.envs import (
    SCENES,
    AffordanceKB,
    CreativityTask,
    Entity,
    MCQPuzzle,
    SituationPuzzle,
    load_sample_items,
    load_sample_kb,
    read_jsonl,
    sample_path,
    snake,
    spaced,
)

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "build_sample_data.py"
COUNTS = (3, 6, 9, 12)
SIMILARITIES = ("similar", "mixed", "dissimilar")
LEVEL_KINDS = ("normal", "emergency")
BANDS = ("small", "large")
LARGE_CATEGORIES = ("weigh_down", "pry", "wipe", "scoop", "prop_open")


def run_build(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def cluster_sizes(kb: AffordanceKB) -> dict[str, int]:
    pairs: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for entity in kb.entities:
        for part in entity.parts:
            for affordance in part.affordances:
                pairs[affordance.category].add((entity.id, part.name))
    return {category: len(members) for category, members in pairs.items()}


def categories_of(entity: Entity) -> set[str]:
    return {a.category for p in entity.parts for a in p.affordances}


def names_phrase(phrase: str, text: str) -> bool:
    return re.search(rf"\b{re.escape(phrase.lower())}\b", text.lower()) is not None


def check_task_rules(tasks: list[CreativityTask], kb: AffordanceKB) -> None:
    """Rules every built task obeys, on shipped or synthetic data."""
    sizes = cluster_sizes(kb)
    kb_ids = {e.id: e for e in kb.entities}
    for task in tasks:
        gold_entity = task.entity(task.gold.entity)
        assert gold_entity is not None
        gold_part = gold_entity.part(task.gold.part)
        assert gold_part is not None
        category = task.gold.affordance.category
        assert category
        assert task.gold.affordance in gold_part.affordances
        assert kb_ids[gold_entity.id] == gold_entity
        assert gold_entity.scene == task.scene
        distractors = [e for e in task.entities if e is not gold_entity]
        assert task.factors.distractor_count == len(task.entities) - 1 == len(distractors)
        for entity in distractors:
            assert category not in categories_of(entity), (task.id, entity.id, category)
            assert kb_ids[entity.id] == entity
        assert len({snake(e.name) for e in task.entities}) == len(task.entities)
        assert not names_phrase(gold_entity.name, task.task), (task.id, gold_entity.name)
        assert not names_phrase(spaced(gold_part.name), task.task), (task.id, gold_part.name)
        size = sizes[category]
        low, high = task.factors.cluster_size_range
        assert low <= size <= high, (task.id, category, size, (low, high))
        assert (low, high) == ((1, 9) if size < 10 else (10, 50))
        assert task.factors.gold_level == task.gold.affordance.level
        for entity in task.entities:
            assert f"the {entity.name}" in task.environment
        assert sum(item.interactable for item in task.items) >= 1


def combinations(tasks: list[CreativityTask]) -> Counter[tuple[int, str, str, str]]:
    return Counter(
        (t.factors.distractor_count, t.factors.distractor_similarity, t.factors.level_kind, t.factors.cluster_band)
        for t in tasks
    )


ALL_COMBOS = set(itertools.product(COUNTS, SIMILARITIES, LEVEL_KINDS, BANDS))


# --- synthetic inputs -------------------------------------------------------------------------------


def synthetic_entity(i: int) -> dict[str, object]:
    """Entity i: part ``grip`` has two large-category uses (levels 0 and 2), part ``shell`` one small use."""
    scene = SCENES[i % len(SCENES)]
    name = "gadget 0" if i == 1 else f"gadget {i}"  # entities 0 and 1 are variants of one name
    material = ["oak wood", "steel", "rubber", "glass"][i % 4]
    physical = {"material": material, "shape": "round", "size": "small"}
    state = {"visibility": "visible", "condition": "intact"}

    def use(category: str, level: int) -> dict[str, object]:
        return {
            "action": f"do {category}",
            "category": category,
            "level": level,
            "enabling_attributes": [["rigid", "flat", "heavy", "soft"][(i + level) % 4]],
        }

    grip = [use(LARGE_CATEGORIES[i % 5], 0), use(LARGE_CATEGORIES[(i + 1) % 5], 2)]
    shell = [use(f"small_{i % 8}", 0 if i % 2 == 0 else (i // 2) % 5 + 1)]
    return {
        "id": f"{scene}/gadget_{i}/{i}",
        "name": name,
        "scene": scene,
        "parts": [
            {"name": "grip", "physical": physical, "state": state, "affordances": grip},
            {"name": "shell", "physical": physical, "state": state, "affordances": shell},
        ],
    }


def synthetic_seed(n: int, entity: dict[str, object], part: str, index: int) -> dict[str, object]:
    return {
        "id": f"seed-{n:02d}",
        "scene": entity["scene"],
        "gold_entity_id": entity["id"],
        "gold_part": part,
        "gold_affordance_index": index,
        "task": "I need to fix the wobbly thing before guests arrive.",
        "recipient": {"name": "wobbly thing", "description": "it wobbles", "interactable": True},
        "other_items": [{"name": "paper napkin", "description": "", "interactable": False}],
        "solution": {
            "prepare_recipient": "a",
            "prepare_use_condition": "b",
            "prepare_environment_condition": "NA",
            "apply_affordance": "c",
        },
    }


def write_synthetic(src: Path) -> tuple[list[dict[str, object]], list[dict[str, object]]]:
    """48 entities over 8 scenes and 48 seeds, 12 per (level kind x band) cell, split over two files each."""
    entities = [synthetic_entity(i) for i in range(48)]
    golds = [(k, "grip", 0) for k in range(2, 14)]  # normal, large
    golds += [(k, "grip", 1) for k in range(14, 26)]  # emergency (level 2), large
    golds += [(k, "shell", 0) for k in range(2, 26, 2)]  # normal, small
    golds += [(k, "shell", 0) for k in range(1, 25, 2)]  # emergency, small
    seeds = [synthetic_seed(n, entities[k], part, index) for n, (k, part, index) in enumerate(golds)]
    src.mkdir(parents=True, exist_ok=True)
    for name, records in (("kb", entities), ("seeds", seeds)):
        half = len(records) // 2
        for suffix, chunk in (("a", records[:half]), ("b", records[half:])):
            (src / f"{name}_{suffix}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in chunk))
    return entities, seeds


def test_synthetic_build_covers_every_combination_and_is_deterministic(tmp_path: Path) -> None:
    write_synthetic(tmp_path / "src")
    first = run_build("--src", str(tmp_path / "src"), "--out", str(tmp_path / "one"))
    assert first.returncode == 0, first.stderr
    assert "48 of 48 covered" in first.stdout
    second = run_build("--src", str(tmp_path / "src"), "--out", str(tmp_path / "two"))
    assert second.returncode == 0, second.stderr
    for name in ("affordance_kb.jsonl", "creativity_tasks.jsonl"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "two" / name).read_bytes()

    entities = read_jsonl(tmp_path / "one" / "affordance_kb.jsonl", Entity)
    assert [e.id for e in entities] == sorted(e.id for e in entities) and len(entities) == 48
    kb = AffordanceKB(entities=tuple(entities))
    tasks = read_jsonl(tmp_path / "one" / "creativity_tasks.jsonl", CreativityTask)
    assert [t.id for t in tasks] == sorted(t.id for t in tasks) and len(tasks) == 48
    assert combinations(tasks) == Counter(ALL_COMBOS)
    check_task_rules(tasks, kb)
    # the two variants named "gadget 0" never meet in one scene
    assert all(sum(e.name == "gadget 0" for e in t.entities) <= 1 for t in tasks)
    task = tasks[0]
    assert task.environment.startswith(f"I am in the {spaced(task.scene)}. Around me are the ")
    assert "the wobbly thing and the paper napkin." in task.environment


def test_similar_distractors_score_higher_than_dissimilar(tmp_path: Path) -> None:
    sys.path.insert(0, str(SCRIPT.parent))
    try:
        import build_sample_data as script
    finally:
        sys.path.remove(str(SCRIPT.parent))
    write_synthetic(tmp_path / "src")
    assert run_build("--src", str(tmp_path / "src"), "--out", str(tmp_path / "out")).returncode == 0
    tasks = read_jsonl(tmp_path / "out" / "creativity_tasks.jsonl", CreativityTask)
    mean_score: dict[str, list[float]] = defaultdict(list)
    for task in tasks:
        gold = task.entity(task.gold.entity)
        assert gold is not None
        part = gold.part(task.gold.part)
        assert part is not None
        scores = [script.similarity(e, part, task.scene) for e in task.entities if e is not gold]
        mean_score[task.factors.distractor_similarity].append(sum(scores) / len(scores))
    averages = {tier: sum(v) / len(v) for tier, v in mean_score.items()}
    assert averages["similar"] > averages["mixed"] > averages["dissimilar"], averages
    assert script.stable_seed("garage-pry-01") == 0xEFFA3D574975213E  # SHA-256 based, not hash()


@pytest.mark.parametrize(
    ("which", "index", "change", "expected"),
    [
        ("seeds", 5, {"gold_part": "handle"}, "seeds_a.jsonl, record line 6, field 'gold_part'"),
        ("seeds", 30, {"gold_affordance_index": 7}, "seeds_b.jsonl, record line 7, field 'gold_affordance_index'"),
        ("seeds", 2, {"task": "My Gadget 4 is useless here."}, "seeds_a.jsonl, record line 3, field 'task'"),
        ("seeds", 3, {"colour": "red"}, "seeds_a.jsonl, record line 4, field 'colour'"),
        ("kb", 1, {"scene": "attic"}, "kb_a.jsonl, record line 2, field 'scene'"),
        ("kb", 40, {"id": "garage/gadget_x"}, "kb_b.jsonl, record line 17, field 'id'"),
    ],
)
def test_bad_input_errors_name_file_line_and_field(
    tmp_path: Path, which: str, index: int, change: dict[str, object], expected: str
) -> None:
    entities, seeds = write_synthetic(tmp_path / "src")
    records = entities if which == "kb" else seeds
    records[index] = {**records[index], **change}
    half = len(records) // 2
    (tmp_path / "src" / f"{which}_a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[:half]))
    (tmp_path / "src" / f"{which}_b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records[half:]))
    result = run_build("--src", str(tmp_path / "src"), "--out", str(tmp_path / "out"))
    assert result.returncode == 1
    assert expected in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_a_cell_without_exactly_twelve_seeds_is_refused(tmp_path: Path) -> None:
    _, seeds = write_synthetic(tmp_path / "src")
    (tmp_path / "src" / "seeds_b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in seeds[24:-1]))
    result = run_build("--src", str(tmp_path / "src"), "--out", str(tmp_path / "out"))
    assert result.returncode == 1
    assert "cell (level emergency, cluster small) has 11 seeds, needs exactly 12" in result.stderr


# --- the shipped affordance KB and CreativityBench tasks --------------------------------------------


@pytest.fixture(scope="module")
def kb() -> AffordanceKB:
    return load_sample_kb()


@pytest.fixture(scope="module")
def tasks() -> list[CreativityTask]:
    items = load_sample_items("creativity")
    assert all(isinstance(t, CreativityTask) for t in items)
    return items  # type: ignore[return-value]


def filled(model: object) -> int:
    fields = model.model_dump()  # type: ignore[attr-defined]
    return sum(1 for name, value in fields.items() if name != "description" and value.strip())


def test_kb_size_scenes_parts_and_attributes(kb: AffordanceKB) -> None:
    assert len(kb.entities) >= 40
    assert {e.scene for e in kb.entities} == set(SCENES)
    for entity in kb.entities:
        assert 1 <= len(entity.parts) <= 8, entity.id
        assert entity.id.startswith(f"{entity.scene}/")
        for part in entity.parts:
            assert filled(part.physical) >= 3, (entity.id, part.name)
            assert filled(part.state) >= 2, (entity.id, part.name)
            assert part.affordances, (entity.id, part.name)
            for affordance in part.affordances:
                assert affordance.category == snake(affordance.category) != ""
                assert affordance.action


def test_kb_levels_variants_and_clusters(kb: AffordanceKB) -> None:
    levels = {a.level for e in kb.entities for p in e.parts for a in p.affordances}
    assert 0 in levels
    assert len(levels - {0}) >= 3, levels
    by_name: dict[str, set[str]] = defaultdict(set)
    for entity in kb.entities:
        by_name[snake(entity.name)].add(entity.id)
    assert any(len(ids) >= 2 for ids in by_name.values()), "no variants (same name, distinct ids)"
    sizes = cluster_sizes(kb)
    assert min(sizes[c] for c in LARGE_CATEGORIES) >= 10, {c: sizes.get(c) for c in LARGE_CATEGORIES}
    assert all(size <= 50 for size in sizes.values())


def test_kb_file_is_sorted_by_id(kb: AffordanceKB) -> None:
    ids = [e.id for e in kb.entities]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)


def test_tasks_cover_every_sampling_combination(tasks: list[CreativityTask]) -> None:
    assert len(tasks) >= 48
    assert len({t.id for t in tasks}) == len(tasks)
    found = combinations(tasks)
    assert set(found) == ALL_COMBOS, sorted(ALL_COMBOS - set(found))
    assert {t.factors.gold_level for t in tasks} >= {0, 1, 2, 3}
    assert {t.scene for t in tasks} == set(SCENES)


def test_tasks_gold_is_the_best_choice_and_is_never_named(tasks: list[CreativityTask], kb: AffordanceKB) -> None:
    check_task_rules(tasks, kb)


def test_build_script_reproduces_the_shipped_files(tmp_path: Path) -> None:
    result = run_build("--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    assert "48 of 48 covered" in result.stdout
    assert (tmp_path / "affordance_kb.jsonl").read_bytes() == sample_path("kb").read_bytes()
    assert (tmp_path / "creativity_tasks.jsonl").read_bytes() == sample_path("creativity").read_bytes()


# --- BrainTeaser and situation puzzles --------------------------------------------------------------


def test_brainteaser_groups() -> None:
    puzzles = load_sample_items("brainteaser")
    assert all(isinstance(p, MCQPuzzle) for p in puzzles)
    groups: dict[str, list[MCQPuzzle]] = defaultdict(list)
    for puzzle in puzzles:
        assert isinstance(puzzle, MCQPuzzle)
        groups[puzzle.group_id].append(puzzle)
    assert len(groups) >= 20
    assert len({p.id for p in puzzles}) == len(puzzles)
    for group_id, members in groups.items():
        assert sorted(p.variant for p in members) == ["context", "original", "semantic"], group_id
        assert len({p.kind for p in members}) == 1, group_id
        for puzzle in members:
            assert len(set(puzzle.choices)) == len(puzzle.choices), puzzle.id
    assert {p.kind for p in puzzles} == {"sentence", "word"}
    assert any(p.choices[p.label] == "None of above." for p in puzzles)


def test_situation_puzzles() -> None:
    puzzles = load_sample_items("splat")
    assert all(isinstance(p, SituationPuzzle) for p in puzzles)
    assert len(puzzles) >= 30
    assert len({p.id for p in puzzles}) == len(puzzles)
    bands = Counter(p.band for p in puzzles)  # type: ignore[union-attr]
    assert set(bands) == {"easy", "medium", "hard"}, bands
    for puzzle in puzzles:
        assert isinstance(puzzle, SituationPuzzle)
        assert puzzle.story and puzzle.answer and puzzle.difficulty is not None
