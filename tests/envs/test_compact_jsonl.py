"""Our compact CreativityBench JSONL: each entity written once (an ``{"entity": {...}}`` line), tasks
listing entity ids. It loads to the same tasks as the embedded form, and hostile files are refused
with one-line errors naming the line, the task and the id."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from lateralgym.envs import (
    DatasetError,
    detect_format,
    jsonl_lines,
    load_items,
    load_sample_items,
    read_jsonl,
    write_jsonl,
)
from lateralgym.envs.benchmarks.creativity import CreativityTask


@pytest.fixture(scope="module")
def tasks() -> list[CreativityTask]:
    return load_sample_items("creativity")[:40]  # type: ignore[return-value]


def _lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _write_lines(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_the_compact_and_the_embedded_forms_load_to_equal_tasks(tmp_path: Path, tasks: list[CreativityTask]) -> None:
    compact = write_jsonl(tasks, tmp_path / "compact.jsonl")
    embedded = tmp_path / "embedded.jsonl"
    embedded.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    from_compact, from_embedded = load_items(compact), load_items(embedded)
    assert list(from_compact) == list(from_embedded) == tasks
    assert detect_format(compact) == detect_format(embedded) == "jsonl"
    assert compact.stat().st_size < 0.7 * embedded.stat().st_size  # each entity written once, not per task


def test_each_entity_is_written_once_and_tasks_list_ids(tmp_path: Path, tasks: list[CreativityTask]) -> None:
    records = _lines(write_jsonl(tasks, tmp_path / "t.jsonl"))
    definitions = [r["entity"] for r in records if list(r) == ["entity"]]
    written = [r for r in records if "gold" in r]
    ids = [d["id"] for d in definitions]  # type: ignore[index]
    assert len(ids) == len(set(ids)) == len({e.id for t in tasks for e in t.entities})
    assert records[: len(definitions)] == [{"entity": d} for d in definitions]  # definitions come first
    assert [r["entities"] for r in written] == [[e.id for e in t.entities] for t in tasks]
    loaded = read_jsonl(tmp_path / "t.jsonl", CreativityTask)
    by_id = {e.id: e for t in loaded for e in t.entities}
    assert all(e is by_id[e.id] for t in loaded for e in t.entities)  # one object per entity


def test_a_gzipped_compact_file_is_byte_stable_and_loads(tmp_path: Path, tasks: list[CreativityTask]) -> None:
    first = write_jsonl(tasks, tmp_path / "a.jsonl.gz").read_bytes()
    assert write_jsonl(tasks, tmp_path / "b.jsonl.gz").read_bytes() == first
    assert list(load_items(tmp_path / "a.jsonl.gz")) == tasks


def test_an_unknown_entity_id_names_the_line_the_task_and_the_id(tmp_path: Path, tasks: list[CreativityTask]) -> None:
    records = _lines(write_jsonl(tasks[:2], tmp_path / "t.jsonl"))
    task = records[-1]
    task["entities"] = [*task["entities"][:-1], "kitchen/no_such_thing/9"]  # type: ignore[index]
    path = _write_lines(tmp_path / "t.jsonl", records)
    with pytest.raises(DatasetError) as exc:
        load_items(path)
    message = str(exc.value)
    assert "\n" not in message
    assert f"line {len(records)}" in message and str(task["id"]) in message
    assert "kitchen/no_such_thing/9" in message and "entities[" in message


def test_an_entity_used_before_its_definition_is_refused(tmp_path: Path, tasks: list[CreativityTask]) -> None:
    records = _lines(write_jsonl(tasks[:1], tmp_path / "t.jsonl"))
    moved = [records[-1], *records[:-1]]
    with pytest.raises(DatasetError, match="no earlier"):
        read_jsonl(_write_lines(tmp_path / "t.jsonl", moved), CreativityTask)


def test_an_entity_defined_twice_with_other_content_is_refused(tmp_path: Path, tasks: list[CreativityTask]) -> None:
    records = _lines(write_jsonl(tasks[:1], tmp_path / "t.jsonl"))
    again = json.loads(json.dumps(records[0]))
    again["entity"]["name"] = "something else"
    with pytest.raises(DatasetError) as exc:
        read_jsonl(_write_lines(tmp_path / "t.jsonl", [records[0], again, *records[1:]]), CreativityTask)
    assert "defined twice" in str(exc.value) and "line 2" in str(exc.value) and "also on line 1" in str(exc.value)
    # The same definition repeated (two files joined) is harmless.
    assert read_jsonl(_write_lines(tmp_path / "u.jsonl", [records[0], *records]), CreativityTask) == tasks[:1]


def test_an_invalid_entity_definition_names_its_line_and_field(tmp_path: Path, tasks: list[CreativityTask]) -> None:
    records = _lines(write_jsonl(tasks[:1], tmp_path / "t.jsonl"))
    records[1]["entity"]["parts"] = []  # type: ignore[index]
    with pytest.raises(DatasetError) as exc:
        load_items(_write_lines(tmp_path / "t.jsonl", records))
    assert "line 2" in str(exc.value) and "entity.parts" in str(exc.value)


def test_a_definition_is_data_never_code(tmp_path: Path, tasks: list[CreativityTask]) -> None:
    records = _lines(write_jsonl(tasks[:1], tmp_path / "t.jsonl"))
    records[0]["entity"]["__class__"] = "os.system"  # type: ignore[index]
    with pytest.raises(DatasetError, match="entity.__class__"):
        load_items(_write_lines(tmp_path / "t.jsonl", records))


def test_the_writer_refuses_two_entities_under_one_id(tasks: list[CreativityTask]) -> None:
    first = tasks[0]
    renamed = first.entities[0].model_copy(update={"name": first.entities[0].name + " (other)"})
    other = first.model_copy(update={"id": first.id + "-b", "entities": (renamed, *first.entities[1:])})
    with pytest.raises(DatasetError, match=f"share the id {first.entities[0].id}"):
        list(jsonl_lines([first, other]))


def test_repeated_judge_verdicts_are_validated_once_and_equal_a_plain_validation(
    tmp_path: Path, tasks: list[CreativityTask]
) -> None:
    copies = [t.model_copy(update={"id": f"{t.id}-copy"}) for t in tasks]
    loaded = read_jsonl(write_jsonl([*tasks, *copies], tmp_path / "t.jsonl"), CreativityTask)
    assert loaded == [*tasks, *copies]
    first, again = loaded[0], loaded[len(tasks)]
    assert all(a is b for a, b in zip(first.judge_output, again.judge_output, strict=True))
    assert [CreativityTask.model_validate(t.model_dump()) for t in loaded[:3]] == loaded[:3]


def test_a_gzipped_file_streams_lines_holding_a_line_separator(tmp_path: Path, tasks: list[CreativityTask]) -> None:
    task = tasks[0].model_copy(update={"task": tasks[0].task + " \u2028 and more"})
    path = write_jsonl([task], tmp_path / "t.jsonl.gz")
    assert "\u2028" in gzip.decompress(path.read_bytes()).decode("utf-8")  # written raw, as pydantic writes JSON
    assert load_items(path)[0].task == task.task


def test_a_repeat_that_differs_only_in_json_type_is_validated_and_refused(
    tmp_path: Path, tasks: list[CreativityTask]
) -> None:
    """``true == 1`` in Python, but a strict field refuses ``true``: a repeat is reused only when equal
    type for type, so the second copy is validated, and refused, as it would be on its own."""
    task = next(t for t in tasks if any(p.decision_difficulty for j in t.judge_output for p in j.parts))
    records = _lines(write_jsonl([task, task.model_copy(update={"id": task.id + "-b"})], tmp_path / "t.jsonl"))
    judged = records[-1]["judge_output"]
    entry, part = next(
        (e, p)
        for e in judged  # type: ignore[attr-defined]
        for p in e["parts"]
        if p["decision_difficulty"] == 1 or p["similar_affordance"] is True
    )
    if part["decision_difficulty"] == 1:
        part["decision_difficulty"] = True
    else:
        part["similar_affordance"] = 1
    with pytest.raises(DatasetError) as exc:
        read_jsonl(_write_lines(tmp_path / "t.jsonl", records), CreativityTask)
    assert f"line {len(records)}" in str(exc.value) and "judge_output" in str(exc.value)
    assert entry["entity"]
