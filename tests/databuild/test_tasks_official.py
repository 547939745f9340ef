"""The official task JSON writer: what it writes, our official loader reads back (both directions)."""

from __future__ import annotations

import json
from pathlib import Path

from lateralgym.envs import detect_format, load_sample_items, snake
from lateralgym.envs.benchmarks.creativity import CreativityTask, load_creativitybench
from lateralgym.envs.benchmarks.creativity.databuild import official_task, write_official


def _sample(n: int = 24) -> list[CreativityTask]:
    tasks: list[CreativityTask] = load_sample_items("creativity")  # type: ignore[assignment]
    return tasks[:: max(1, len(tasks) // n)]


def test_written_tasks_read_back_with_everything_the_format_holds(tmp_path: Path) -> None:
    tasks = _sample()
    write_official(tasks, tmp_path / "tasks.json")
    assert detect_format(tmp_path / "tasks.json") == "creativitybench"
    loaded = load_creativitybench(tmp_path / "tasks.json")
    assert len(loaded) == len(tasks)
    for ours, back in zip(tasks, loaded, strict=True):
        assert (back.id, back.scene, back.task, back.environment) == (ours.id, ours.scene, ours.task, ours.environment)
        assert back.gold == ours.gold  # the affordance with its category, level and conditions
        assert back.solution == ours.solution and back.items == ours.items
        assert back.factors == ours.factors and back.split == ours.split
        assert back.judge_output == ours.judge_output
        assert [e.name for e in back.entities] == [e.name for e in ours.entities]
        for entity, original in zip(back.entities, ours.entities, strict=True):
            assert entity.id == f"{ours.scene}/{snake(original.name)}"  # the format keeps names, not our ids
            assert [p.name for p in entity.parts] == [p.name for p in original.parts]
            for part, source in zip(entity.parts, original.parts, strict=True):
                assert part.physical.description == source.physical.render()
                assert "[gold part]" not in part.physical.description + part.state.description


def test_the_writer_is_a_fixpoint_of_read_then_write(tmp_path: Path) -> None:
    first = tmp_path / "first.json"
    write_official(_sample(), first)
    second = tmp_path / "second.json"
    write_official(load_creativitybench(first), second)
    assert second.read_bytes() == first.read_bytes()


def test_the_release_layout_and_the_gold_marker(tmp_path: Path) -> None:
    task = _sample(1)[0]
    record = official_task(task)
    assert list(record) == [
        "task_id",
        "scenario",
        "setting",
        "sampled_entity_count",
        "golds",
        "entities",
        "items",
        "environment",
        "task",
        "solution",
        "split",
    ]
    assert (
        record["setting"]["difficulty"]
        == {"similar": "difficult", "mixed": "medium", "dissimilar": "low"}[task.factors.distractor_similarity]
    )
    gold = next(e for e in record["entities"] if e["name"] == task.gold.entity)
    assert f"{task.gold.part} [gold part]: physical — " in gold["description"]
    assert task.gold.part not in gold["judge_output"]
    assert sum("[gold part]" in e["description"] for e in record["entities"]) == 1
    level = record["golds"][0]["gold_affordance"]["level"]
    assert level == ("Normal" if task.gold.affordance.level == 0 else f"Emergency {task.gold.affordance.level}")
    verdict = next(iter(gold["judge_output"].values()), None)
    if verdict is not None:
        assert verdict["similar_affordance"] in ("Yes", "No") and verdict["gold_change"] == "No"
    json.dumps(record, ensure_ascii=False)  # plain JSON all the way down


def test_the_real_release_sample_keeps_its_judge_output(shared_data: Path) -> None:
    """On the release's own sample (skipped without ../shared/data): judge outputs load per entity."""
    task = load_creativitybench(shared_data / "creativitybench" / "sample_tasks.json")[0]
    assert {j.entity for j in task.judge_output} == {e.name for e in task.entities}
    gold = next(j for j in task.judge_output if j.entity == task.gold.entity)
    assert task.gold.part not in {v.part for v in gold.parts}
