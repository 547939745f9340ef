"""Looking at items and at runs: ``data show`` and commands given the folder that holds one run."""

from __future__ import annotations

from pathlib import Path

import pytest

from lateralgym.cli import main
from lateralgym.envs import load_sample_items


def test_data_show_prints_the_players_view_then_the_hidden_answer(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(Path(__file__).resolve().parents[2] / "envs" / "data" / "situation_puzzles.jsonl")
    puzzle = load_sample_items("splat")[1]
    assert main(["data", "show", path, "--item", puzzle.id]) == 0
    out = capsys.readouterr().out
    shown, hidden = out.split("hidden from the player")
    assert puzzle.story in shown and puzzle.answer not in shown and puzzle.answer in hidden
    assert main(["data", "show", path, "--random", "3", "--seed", "1"]) == 0
    assert capsys.readouterr().out.count("=== ") == 3
    assert main(["data", "show", path, "--item", "no-such-id"]) == 2
    assert "no item with id 'no-such-id'" in capsys.readouterr().err


def test_report_replay_and_view_accept_the_folder_of_one_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", "riddlesense", "--limit", "2", "--out", str(tmp_path), "--no-progress"]) == 0
    capsys.readouterr()
    for command in (["report"], ["replay", "--quiet"], ["view"]):
        assert main([command[0], str(tmp_path), *command[1:]]) == 0, command
    assert "all observations and rewards match the log" in capsys.readouterr().out
    assert main(["run", "riddlesense", "--limit", "1", "--out", str(tmp_path), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["report", str(tmp_path)]) == 2
    assert "holds 2 runs" in capsys.readouterr().err


def test_resume_accepts_flags_equal_to_the_runs_own(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "splat", "--limit", "2", "--player", "heuristic", "--out", str(tmp_path), "--no-progress"]) == 0
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    capsys.readouterr()
    same = ["run", "splat", "--resume", str(run_dir), "--player", "heuristic", "--limit", "2", "--no-progress"]
    assert main(same) == 0  # what --help shows: the run's own config and flags are fine
    assert main(["run", "--resume", str(run_dir), "--player", "oracle", "--limit", "2"]) == 2
    err = capsys.readouterr().err
    assert "drop --player" in err and "--limit" not in err.split("drop", 1)[1]
