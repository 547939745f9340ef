"""A JSONL file of CreativityBench tasks validates each repeated entity once and shares the object,
but only when the repeat is the same JSON: anything else is validated (and refused) as usual."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lateralgym.envs import DatasetError, load_sample_items
from lateralgym.envs._samples import read_jsonl
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask


def _write(path: Path, records: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _copies(task: CreativityTask, n: int) -> list[dict[str, object]]:
    base = task.model_dump(mode="json")
    return [{**base, "id": f"{task.id}-copy{i}"} for i in range(n)]


def test_repeated_entities_are_validated_once_and_shared(tmp_path: Path) -> None:
    task = load_sample_items("creativity")[0]
    loaded = read_jsonl(_write(tmp_path / "t.jsonl", _copies(task, 3)), CreativityTask)
    first, second, third = loaded
    assert all(a is b is c for a, b, c in zip(first.entities, second.entities, third.entities, strict=True))
    assert first.entities == task.entities  # the same values as a plain validation


def test_an_entity_repeated_under_its_id_with_other_content_is_not_shared(tmp_path: Path) -> None:
    task = load_sample_items("creativity")[0]
    records = _copies(task, 2)
    changed = json.loads(json.dumps(records[1]))
    changed["entities"][0]["name"] = changed["entities"][0]["name"] + " (renamed)"  # same id, other content
    if changed["entities"][0]["name"].startswith(task.gold.entity):
        changed["gold"]["entity"] = changed["entities"][0]["name"]
    first, second = read_jsonl(_write(tmp_path / "t.jsonl", [records[0], changed]), CreativityTask)
    assert second.entities[0] is not first.entities[0]
    assert second.entities[0].name.endswith("(renamed)")
    assert second.entities[1] is first.entities[1]  # the untouched ones are still shared


def test_an_invalid_repeat_is_refused_naming_its_line_and_field(tmp_path: Path) -> None:
    task = load_sample_items("creativity")[0]
    records = _copies(task, 2)
    broken = json.loads(json.dumps(records[1]))
    broken["entities"][1]["parts"] = []  # an entity needs one part at least
    with pytest.raises(DatasetError) as exc:
        read_jsonl(_write(tmp_path / "t.jsonl", [records[0], broken]), CreativityTask)
    assert "line 2" in str(exc.value) and "entities" in str(exc.value) and "parts" in str(exc.value)
