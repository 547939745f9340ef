"""``train ppo --curriculum adaptive``: the flag reaches the trainer, each episode's level is logged."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

from lateralgym.envs import get_benchmark, load_sample_items
from lateralgym.envs.benchmarks.creativity.rl.evaluation import split_tasks

HAVE_RL = importlib.util.find_spec("sb3_contrib") is not None and importlib.util.find_spec("torch") is not None

TASKS = load_sample_items("creativity")


@pytest.mark.skipif(not HAVE_RL, reason="the rl extra is not installed (pip install -e '.[rl]')")
def test_an_adaptive_run_logs_each_episodes_level_and_the_levels_state(tmp_path: Path) -> None:
    from lateralgym.envs.benchmarks.creativity.rl.ppo import TrainSummary

    out = tmp_path / "run"
    command = [sys.executable, "-m", "lateralgym.cli", "train", "ppo", "--config", "creativity-interactive"]
    command += ["--timesteps", "256", "--eval-every", "128", "--eval-repeats", "1", "--envs", "4"]
    command += ["--curriculum", "adaptive", "--out", str(out)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "adaptive curriculum, recent train gold rate per level" in proc.stdout
    summary = TrainSummary.model_validate(json.loads((out / "summary.json").read_text(encoding="utf-8")))
    assert summary.curriculum == "adaptive"
    train = {t.id: t for t in split_tasks(TASKS, "train")}
    level_of = get_benchmark("creativity").data.level_of
    episodes = [json.loads(line) for line in (out / "curriculum.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(episodes) > 8 and [e["episode"] for e in episodes] == list(range(len(episodes)))
    assert all(e["item"] in train and e["level"] == level_of(train[e["item"]]) for e in episodes)
    assert {e["success"] for e in episodes[:-4]} <= {0.0, 1.0}  # the last few may be cut off by the end
    state = summary.curve[-1].curriculum
    assert state is not None and sum(s["draws"] for s in state.values()) == len(episodes)
    assert sum(s["chance"] for s in state.values()) == pytest.approx(1.0)


def test_a_benchmark_without_levels_gets_one_line(tmp_path: Path) -> None:
    """``train grpo --curriculum adaptive`` on a config whose items have no levels: refused before any model loads."""
    pytest.importorskip("trl", reason="the grpo extra is not installed (pip install -e '.[grpo]')")
    command = [sys.executable, "-m", "lateralgym.cli", "train", "grpo", "--config", "riddlesense"]
    command += ["--model", str(tmp_path / "no-model"), "--curriculum", "adaptive", "--out", str(tmp_path / "run")]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert proc.returncode != 0
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "--curriculum adaptive needs items of at least two difficulty levels" in lines[0]
