"""The shipped CreativityBench sample: rebuilt by the task pipeline offline, byte for byte, and what it holds.

``scripts/build_sample_data.py`` runs ``tasks build`` over ``scripts/sample_data`` (KB and seeds) into an
empty checkpoint folder: the seeds are stage C, the rule-based judge answers stages D and F.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from lateralgym.cli import main as cli_main
from lateralgym.databuild import CheckpointStore, DataBuildError
from lateralgym.envs import DatasetError, load_sample_items, sample_path, snake, spaced
from lateralgym.envs.benchmarks.creativity import SCENES, CreativityTask, load_sample_kb, split_tasks
from lateralgym.envs.benchmarks.creativity.databuild import compare_part, empty_cells, write_official
from lateralgym.envs.benchmarks.creativity.databuild._tasks_inputs import read_kb, read_seeds
from lateralgym.envs.benchmarks.creativity.databuild._tasks_models import BANDS
from lateralgym.envs.benchmarks.creativity.databuild._tasks_pipeline import STAGE_TEXT
from lateralgym.envs.benchmarks.creativity.databuild._tasks_run import build_sample, store_seeds

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "scripts" / "sample_data"


@pytest.fixture(scope="module")
def rebuilt(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """(the rebuilt files' folder, its checkpoint folder, the build's summary), built once for the module."""
    root = tmp_path_factory.mktemp("rebuild")
    summary = build_sample(SRC, root / "out", root / "checkpoints")
    return root / "out", root / "checkpoints", summary


@pytest.fixture(scope="module")
def tasks() -> list[CreativityTask]:
    return load_sample_items("creativity")  # type: ignore[return-value]


def test_an_offline_rebuild_reproduces_every_shipped_byte(rebuilt: tuple[Path, Path, str]) -> None:
    """The script's build, over the KB and the seeds into an empty checkpoint folder: the same files, no
    model asked (the seeds are the stage C answers, the rules answer the rest)."""
    out, _, summary = rebuilt
    assert re.search(r"tasks_c_text: 0 calls, \d+ cached", summary), summary
    for stage in ("tasks_d_intra", "tasks_f_compare"):
        assert re.search(rf"{stage}: 0 calls", summary), summary
    assert (out / "affordance_kb.jsonl.gz").read_bytes() == sample_path("kb").read_bytes()
    assert (out / "creativity_tasks.jsonl.gz").read_bytes() == sample_path("creativity").read_bytes()


def test_the_stored_judge_answers_are_the_rule_based_comparators(rebuilt: tuple[Path, Path, str]) -> None:
    """Every 25th stage D and F answer the build stored, recomputed by the rules; every seed is a stage C answer."""
    checkpoints = rebuilt[1]
    kb = read_kb(sorted(SRC.glob("kb_*.jsonl")))
    entities = {e.id: e for e in kb.entities}
    for stage in ("tasks_d_intra", "tasks_f_compare"):
        lines = (checkpoints / f"{stage}.jsonl").read_text(encoding="utf-8").splitlines()
        assert lines
        for line in lines[::25]:
            entry = json.loads(line)
            gold_id, part_name, index = entry["key"].split("|")[0].split("#")
            gold_entity = entities[gold_id]
            gold_part = next(p for p in gold_entity.parts if p.name == part_name)
            judged = entities[entry["key"].split("|")[1]] if "|" in entry["key"] else gold_entity
            parts = [p for p in judged.parts if judged is not gold_entity or p.name != part_name]
            expected = [compare_part(p, gold_part, gold_part.affordances[int(index)]) for p in parts]
            assert entry["record"] == {"parts": [v.model_dump(mode="json") for v in expected]}, entry["key"]
    stored = {
        json.loads(line)["key"]: json.loads(line)["record"] for line in (checkpoints / "tasks_c_text.jsonl").open()
    }
    for seed in read_seeds(sorted(SRC.glob("seeds_*.jsonl")), kb):
        assert stored[seed.gold.key] == seed.task_text().model_dump(mode="json"), seed.id


def test_the_sample_meets_the_targets(tasks: list[CreativityTask]) -> None:
    """Enough distinct tasks to learn from (issue 35): >= 400 entities over the eight scenes, >= 1,200 tasks
    with >= 1,000 distinct task texts over >= 250 gold entities; >= 250 test texts over >= 60 test golds."""
    kb = load_sample_kb()
    assert len({(e.scene, snake(e.name)) for e in kb.entities}) >= 400
    assert {e.scene for e in kb.entities} == set(SCENES)
    assert len(tasks) >= 1200
    assert len({t.task for t in tasks}) >= 1000
    assert len({(t.scene, snake(t.gold.entity)) for t in tasks}) >= 250
    test = split_tasks(tasks, "test")
    assert len({t.task for t in test}) >= 250 and len({(t.scene, snake(t.gold.entity)) for t in test}) >= 60
    golds = Counter((t.scene, t.gold.entity, t.gold.part, t.gold.affordance.action) for t in tasks)
    assert min(golds.values()) >= 2  # each gold in two distractor tiers
    assert empty_cells(tasks) == []
    assert {t.scene for t in tasks} == set(SCENES)


def test_the_first_sample_stays_reachable_by_name(tmp_path: Path) -> None:
    from lateralgym.envs import EpisodeConfig, load_config_items

    config = EpisodeConfig.named("creativity-static").model_copy(update={"dataset": "creativity-v1"})
    first = list(load_config_items(config))
    assert len(first) == 439 and len({t.task for t in first}) == 84  # the figures measured before issue 35
    kb = {e.id for e in load_sample_kb().entities}
    assert all(e.id in kb for t in first for e in t.entities)  # its entities are all in today's KB


def test_the_split_is_by_gold_entity(tasks: list[CreativityTask]) -> None:
    test, train = split_tasks(tasks, "test"), split_tasks(tasks, "train")
    assert len(test) + len(train) == len(tasks) and all(t.split is not None for t in tasks)
    names = {(t.scene, snake(t.gold.entity)) for t in test}
    assert not names & {(t.scene, snake(t.gold.entity)) for t in train}
    assert 0.2 <= len(test) / len(tasks) <= 0.32
    assert {t.scene for t in test} == set(SCENES)


def test_every_task_keeps_the_pipelines_rules(tasks: list[CreativityTask]) -> None:
    kb = {e.id: e for e in load_sample_kb().entities}
    for task in tasks:
        gold = task.entity(task.gold.entity)
        assert gold is not None and kb[gold.id] == gold and gold.scene == task.scene
        assert task.gold.affordance in gold.part(task.gold.part).affordances  # type: ignore[union-attr]
        for phrase in (gold.name, spaced(task.gold.part)):
            assert not re.search(rf"\b{re.escape(phrase)}\b", task.task, re.IGNORECASE), (task.id, phrase)
        assert task.factors.cluster_size_range in BANDS
        assert task.factors.gold_level == task.gold.affordance.level
        assert task.factors.distractor_count == len(task.entities) - 1
        assert len({snake(e.name) for e in task.entities}) == len(task.entities)
        assert all(f"the {e.name}" in task.environment for e in task.entities)
        assert [i.interactable for i in task.items] == [True] + [False] * (len(task.items) - 1)
        judged = {j.entity: j.parts for j in task.judge_output}
        assert set(judged) == {e.name for e in task.entities}
        assert {v.part for v in judged[gold.name]} == {p.name for p in gold.parts} - {task.gold.part}
        similar = 0
        for entity in task.entities:
            verdicts = judged[entity.name]
            assert not any(v.gold_change for v in verdicts), (task.id, entity.name)
            if entity is not gold:
                assert {v.part for v in verdicts} == {p.name for p in entity.parts}
                assert all((v.decision_difficulty or 0) <= 4 for v in verdicts)
                similar += any(v.similar_affordance for v in verdicts)
        count = task.factors.distractor_count
        wanted = {"similar": count, "mixed": -(-count // 2), "dissimilar": 0}[task.factors.distractor_similarity]
        assert similar == wanted, task.id


def test_tasks_stats_prints_both_grids(
    tmp_path: Path, tasks: list[CreativityTask], capsys: pytest.CaptureFixture[str]
) -> None:
    assert empty_cells(tasks) == []  # what `lateralgym tasks stats` reports on the shipped sample
    write_official(tasks[::40], tmp_path / "few.json")
    assert cli_main(["tasks", "stats", str(tmp_path / "few.json")]) == 0
    out = capsys.readouterr().out
    assert "cluster band x gold level" in out and "distractor similarity x count" in out
    assert f"{len(tasks[::40])} tasks" in out and "empty: [" in out


def test_bad_seeds_and_kb_lines_are_named(tmp_path: Path) -> None:
    kb = read_kb(sorted(SRC.glob("kb_*.jsonl")))
    first, second = (SRC / "seeds_a.jsonl").read_text(encoding="utf-8").splitlines()[:2]
    seed = json.loads(second)
    entity = kb.by_id(seed["gold_entity_id"])
    cases = [
        ({"gold_part": "no_such_part"}, "seeds_x.jsonl, record line 2, field 'gold_part'"),
        ({"task": f"Where is my {entity.name}?"}, "seeds_x.jsonl, record line 2, field 'task'"),
        ({"colour": "red"}, "seeds_x.jsonl, record line 2, field 'colour'"),
        ({"gold_affordance_index": 99}, "seeds_x.jsonl, record line 2, field 'gold_affordance_index'"),
    ]
    path = tmp_path / "seeds_x.jsonl"
    for change, expected in cases:
        path.write_text(first + "\n" + json.dumps({**seed, **change}) + "\n", encoding="utf-8")
        with pytest.raises(DatasetError, match=re.escape(expected)):
            read_seeds([path], kb)
    bad_kb = tmp_path / "kb_x.jsonl"
    line = json.loads((SRC / "kb_a.jsonl").read_text(encoding="utf-8").splitlines()[0])
    bad_kb.write_text(json.dumps({**line, "id": "kitchen/flat_id"}) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=re.escape("kb_x.jsonl, record line 1, field 'id'")):
        read_kb([bad_kb])


def test_a_seed_that_changed_since_its_answer_was_stored_is_refused(tmp_path: Path) -> None:
    kb = read_kb(sorted(SRC.glob("kb_*.jsonl")))
    seeds = read_seeds([SRC / "seeds_a.jsonl"], kb)
    changed = seeds[0].model_copy(update={"task": seeds[0].task + " Quickly, please."})
    (tmp_path / "seeds_a.jsonl").write_text(changed.model_dump_json() + "\n", encoding="utf-8")
    with CheckpointStore(tmp_path / "checkpoints") as store:
        store.put(STAGE_TEXT, seeds[0].gold.key, seeds[0].task_text().model_dump(mode="json"))
        with pytest.raises(DataBuildError, match="differs from the task text stored"):
            store_seeds(store, [tmp_path / "seeds_a.jsonl"], kb)


def test_data_stats_prints_texts_golds_and_kinds_of_use_per_split(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["data", "stats", str(sample_path("creativity"))]) == 0
    out = capsys.readouterr().out
    counts = {
        (split, what): int(n)
        for split, what, n in re.findall(
            r"(train|test) split\s+(distinct task texts|gold entities|kinds of use)\s+(\d+)", out
        )
    }
    assert counts[("train", "distinct task texts")] + counts[("test", "distinct task texts")] >= 1000
    assert counts[("train", "gold entities")] + counts[("test", "gold entities")] >= 250  # no gold in both
    assert counts[("test", "distinct task texts")] >= 250 and counts[("test", "gold entities")] >= 60
    assert counts[("test", "kinds of use")] >= 30 and "both the train and the test split" not in out


def test_a_gold_entity_in_both_splits_is_a_defect(tasks: list[CreativityTask]) -> None:
    from lateralgym.envs.benchmarks.creativity._stats import creativity_stats

    one = tasks[0]
    both = [one.model_copy(update={"split": "train"}), one.model_copy(update={"id": one.id + "-b", "split": "test"})]
    block = creativity_stats(both)
    assert block.sections["train split"]["gold entities"] == block.sections["test split"]["gold entities"] == 1
    assert len(block.defects) == 1 and "in both the train and the test split" in block.defects[0]
