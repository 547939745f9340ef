"""The training-speed benchmarks and what they rest on (the benchmark scripts need the rl extra).

* ``encode_tasks`` encodes every text a text policy's episodes meet: after it the encoder's cache
  never grows, whatever the episodes reveal.
* ``bench_ppo.py`` ends with one JSON line: LateralGym's and the floor's steps/s, their ratio, the
  profiled shares, the encoder's warm-up.
* ``bench_env_step.py --training`` prints a row per training config (lean, full and wrapper steps
  against CartPole) and ends with one JSON line.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lateralgym.envs import EpisodeConfig, load_sample_items, write_jsonl
from lateralgym.envs.benchmarks.creativity import CreativityEnv
from lateralgym.envs.benchmarks.creativity.rl.evaluation import split_tasks
from lateralgym.envs.benchmarks.creativity.rl.text import TextCreativity, encode_tasks, make_encoder, task_texts

TASKS = load_sample_items("creativity")
HAVE_RL = importlib.util.find_spec("sb3_contrib") is not None and importlib.util.find_spec("torch") is not None
needs_rl = pytest.mark.skipif(not HAVE_RL, reason="the rl extra is not installed (pip install -e '.[rl]')")
ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["creativity-interactive", "creativity-static"])
def test_encoding_the_tasks_first_leaves_nothing_for_the_episodes(name: str) -> None:
    tasks = TASKS[:30]
    encoder = make_encoder("lexical", dim=16)
    distinct = encode_tasks(encoder, tasks)
    assert distinct == encoder.cached == len({text for task in tasks for text in task_texts(task)})
    assert encoder.nbytes == distinct * 16 * 4
    env = TextCreativity(CreativityEnv(EpisodeConfig.named(name), items=tasks), encoder)
    rng = np.random.default_rng(0)
    for seed in range(60):
        env.reset(seed=seed)
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(int(rng.choice(np.flatnonzero(env.action_masks()))))
            done = terminated or truncated
    assert encoder.cached == distinct


@needs_rl
def test_the_ppo_benchmark_ends_with_one_json_line(tmp_path: Path) -> None:
    data = write_jsonl([*split_tasks(TASKS, "train")[:16], *split_tasks(TASKS, "test")[:6]], tmp_path / "tasks.jsonl")
    command = [sys.executable, str(ROOT / "benchmarks" / "bench_ppo.py"), "--data", str(data)]
    command += ["--encoder", "lexical", "--timesteps", "64", "--rounds", "1"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["lateralgym_steps_per_s"] > 0 and report["floor_steps_per_s"] > 0
    assert report["ratio"] == pytest.approx(report["lateralgym_steps_per_s"] / report["floor_steps_per_s"])
    assert report["ratio_min"] <= report["ratio"] <= report["ratio_max"] and report["goal"] == 0.5
    assert report["distinct_texts"] > 0 and report["encoder"] == "lexical"
    shares = report["shares"]
    assert set(shares) == {
        "encoder",
        "observation_rows",
        "env_step",
        "env_reset",
        "wrapper_step",
        "wrapper_reset",
        "vector_env_step",
    }
    assert all(0.0 <= share <= 1.0 for share in shares.values())
    assert 0.0 < shares["encoder"] <= shares["observation_rows"]  # the encoder is asked while the rows are built
    assert len(report["load_1min"]) == 2


@needs_rl
def test_the_step_benchmark_times_the_training_env(tmp_path: Path) -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "bench_env_step.py"), "--training", "--seconds", "0.05"]
    done = subprocess.run([*command, "--only", "interactive"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("creativity-")]
    assert len(rows) == 1 and rows[0].split()[0] == "creativity-interactive" and rows[0].split()[1] == "100%"
    ratios = [float(cell.rstrip("x")) for cell in rows[0].split() if cell.endswith("x")]
    assert len(ratios) == 3 and all(r > 0 for r in ratios)
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    row = figures["training"]["creativity-interactive"]
    assert {"lean_x", "full_x", "wrapper_x", "cartpole_us", "steps_per_episode"} <= set(row)
    assert figures["goal"] == 5.0
