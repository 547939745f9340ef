"""Broken CreativityBench knowledge: a KB line whose use names no kind of use, a task whose gold part is not
a part of its gold entity. Each gets one line that says where and what to do, and nothing is overwritten."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lateralgym.cli import main as cli_main
from lateralgym.envs import load_sample_items, write_jsonl

KB_SAMPLE = Path(__file__).resolve().parents[2] / "scripts" / "sample_data" / "kb_a.jsonl"


def _one_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize("category", ["", None])
def test_a_kb_use_without_a_kind_of_use_is_refused_and_the_old_tasks_stay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], category: str | None
) -> None:
    lines = KB_SAMPLE.read_text(encoding="utf-8").splitlines()
    entity = json.loads(lines[0])
    use = entity["parts"][1]["affordances"][0]
    if category is None:
        use.pop("category", None)
    else:
        use["category"] = category
    kb = tmp_path / "kb.jsonl"
    kb.write_text("\n".join([json.dumps(entity), *lines[1:]]) + "\n", encoding="utf-8")
    out = tmp_path / "tasks.jsonl"
    out.write_text("earlier tasks\n", encoding="utf-8")
    status = cli_main(["tasks", "build", "--kb", str(kb), "--out", str(out), "--judge", "rules", "--quiet"])
    line = _one_line(capsys.readouterr().err)
    assert status == 2
    assert "line 1" in line and "parts.1.affordances.0.category" in line
    assert f"part {entity['parts'][1]['name']!r}" in line and "names no kind of use" in line and "category" in line
    assert out.read_text(encoding="utf-8") == "earlier tasks\n"


def test_a_task_whose_gold_part_is_not_its_entitys_is_refused_by_every_reader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = load_sample_items("creativity")[0]
    good = write_jsonl([task], tmp_path / "good.jsonl")
    records = [json.loads(line) for line in good.read_text(encoding="utf-8").splitlines()]
    records[-1]["gold"]["part"] = "part_nobody_has"
    bad = tmp_path / "tasks.jsonl"
    bad.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    before = bad.read_bytes()
    for argv in (["data", "stats", str(bad)], ["run", "creativity", "--data", str(bad), "--out", str(tmp_path / "r")]):
        assert cli_main(argv) != 0
        line = _one_line(capsys.readouterr().err)
        assert f"line {len(records)}" in line
        assert "gold part 'part_nobody_has' is not a part of" in line and task.gold.entity in line
    assert bad.read_bytes() == before
    assert not (tmp_path / "r").exists() or not any((tmp_path / "r").rglob("*.jsonl"))
