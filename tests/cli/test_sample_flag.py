"""``lateralgym run --sample N [--seed S]``: a few items that stand for the set, recorded so a resume and
the report know them; ``--limit`` says when its first items cover one group."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lateralgym.cli import main
from lateralgym.envs import get_benchmark


def _played(run_dir: Path) -> list[str]:
    manifest = json.loads((run_dir / "manifest.json").read_text())
    return [episode["item_id"] for episode in manifest["episodes"]]


def test_a_sample_of_20_covers_every_scene_and_at_least_ten_gold_entities(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "creativity-interactive", "--sample", "20", "--seed", "0", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "a")]) == 0
    assert "warning: --limit" not in capsys.readouterr().err  # no warning: the sample is spread
    (run_dir,) = (tmp_path / "a").iterdir()
    tasks = {t.id: t for t in get_benchmark("creativity").data.sample_items()}
    played = [tasks[i] for i in _played(run_dir)]
    assert len(played) == 20
    assert len({t.scene for t in played}) == 8
    assert len({t.gold.entity for t in played}) >= 10
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["options"]["sample"] == 20 and manifest["seed"] == 0
    assert main([*argv, "--out", str(tmp_path / "b")]) == 0  # the same N, seed and data: the same items
    (again,) = (tmp_path / "b").iterdir()
    assert _played(again) == _played(run_dir)
    assert main(["report", str(run_dir)]) == 0
    assert "a sample of 20 (--sample 20, seed 0)" in (run_dir / "report.md").read_text()


def test_a_resume_keeps_the_sample_and_refuses_another(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "splat", "--sample", "6", "--out", str(tmp_path), "--no-progress"]) == 0
    (run_dir,) = tmp_path.iterdir()
    capsys.readouterr()
    assert main(["run", "--resume", str(run_dir), "--sample", "5"]) == 2
    assert "drop --sample" in capsys.readouterr().err
    assert main(["run", "--resume", str(run_dir), "--sample", "6", "--no-progress"]) == 0
    assert len(_played(run_dir)) == 6


def test_a_limit_whose_items_are_one_group_says_so_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "creativity-interactive", "--limit", "20", "--out", str(tmp_path), "--no-progress"]) == 0
    warnings = [line for line in capsys.readouterr().err.splitlines() if "--sample 20" in line]
    assert len(warnings) == 1 and "one scene ('bathroom' of 8)" in warnings[0]
    assert main(["run", "riddlesense", "--limit", "5", "--out", str(tmp_path), "--no-progress"]) == 0
    assert "--sample" not in capsys.readouterr().err  # riddles have no groups to cover


def test_limit_and_sample_together_are_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "splat", "--limit", "3", "--sample", "3", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--limit and --sample both choose the items" in err and len(err.strip().splitlines()) == 1
    assert main(["run", "splat", "--sample", "0", "--out", str(tmp_path)]) == 2
    assert "--sample must be at least 1" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
