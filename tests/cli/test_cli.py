"""The ``lateralgym`` command, run in-process and as a real subprocess."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lateralgym.cli import main
from lateralgym.envs import SHIPPED_CONFIGS


@pytest.mark.parametrize("config", SHIPPED_CONFIGS)
def test_run_every_shipped_config_offline(config: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", config, "--limit", "6", "--out", str(tmp_path), "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "Run directory:" in out and "6 episodes run" in out
    (run_dir,) = tmp_path.iterdir()
    assert {p.name for p in run_dir.iterdir()} >= {"config.yaml", "manifest.json", "steps.jsonl", "summary.json"}
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["episodes"] == 6


def test_oracle_run_scores_100(tmp_path: Path) -> None:
    from lateralgym.episodes import run

    # a sample spread over scenes and gold entities (the whole shipped sample took two minutes)
    result = run("creativity-interactive", player="oracle", out=tmp_path, progress=False, sample=200)
    assert result.metrics.headline["gold_correct_rate"] == 100.0
    assert 150 <= result.ran <= 250


def _run_oracle_on(path: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> str:
    argv = ["run", "brainteaser", "--data", str(path), "--player", "oracle", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    return capsys.readouterr().out


def test_run_on_official_data_file(official_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A release file in its own format: the generated EMNLP sentence puzzles (4 groups x 3 variants)."""
    assert "12 episodes run" in _run_oracle_on(official_data / "brainteaser" / "sentence_puzzle.npy", tmp_path, capsys)


def test_data_stats(official_data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "stats", str(official_data / "splat" / "puzzles.xlsx")]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^dataset\s+items\s+9$", out, re.MULTILINE)
    for band in ("easy", "medium", "hard"):
        assert re.search(rf"^band\s+{band}\s+3$", out, re.MULTILINE), band


def test_run_and_stats_on_the_real_samples(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Extra check on the real release samples in ../shared/data (skipped without them)."""
    assert "12 episodes run" in _run_oracle_on(shared_data / "brainteaser" / "sentence_puzzle.npy", tmp_path, capsys)
    assert main(["data", "stats", str(shared_data / "splat" / "puzzles.xlsx")]) == 0
    out = capsys.readouterr().out
    assert "9" in out and "easy" in out and "hard" in out


def test_errors_are_one_clear_line(official_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x", "story": "s"}\n')
    assert main(["data", "stats", str(broken)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lateralgym: error:") and "broken.jsonl" in err and "line 1" in err and "answer" in err
    assert main(["run", "nope"]) == 2
    assert "unknown config 'nope'" in capsys.readouterr().err
    assert (
        main(["run", "splat", "--data", str(official_data / "brainteaser" / "SP-train.npy"), "--out", str(tmp_path)])
        == 2
    )
    assert "pick a config for this benchmark" in capsys.readouterr().err


def test_help_explains_commands() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "lateralgym.cli", "--help"], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    for word in ("run", "replay", "view", "report", "compare", "data", "offline"):
        assert word in out
    run_help = subprocess.run(
        [sys.executable, "-m", "lateralgym.cli", "run", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "--resume" in run_help and "--concurrency" in run_help and "brainteaser" in run_help


def test_console_script_runs_offline_without_keys(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    exe = Path(sys.executable).with_name("lateralgym")
    proc = subprocess.run(
        [str(exe), "run", "splat", "--limit", "3", "--out", str(tmp_path), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Acc" in proc.stdout or "acc" in proc.stdout


def test_configs_says_how_to_run_a_benchmark_without_a_shipped_config() -> None:
    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "twenty_questions.py"
    done = subprocess.run(  # a new process: the imported benchmark stays out of this one's registry
        [sys.executable, "-m", "lateralgym.cli", "configs", "--import", str(example)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "(lateralgym run macgyver --data FILE)" in out  # a built-in: no --import
    assert "(lateralgym run --import FILE twenty-questions --data FILE)" in out  # a file of one's own
