"""``benchmarks/bench_env_step.py`` times what it says: valid moves, replayed as they were accepted.

The timed loop replays recorded moves with an unseeded reset on each episode's item; the scene's
order is then drawn afresh, so these tests check that every env still accepts every replayed move
(the bench would otherwise time the rejection path), and that the script prints one row per env.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import gymnasium
import pytest
from _bench_script import bench_script

import lateralgym

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "bench_env_step.py"


@pytest.mark.parametrize("env_id", lateralgym.ENV_IDS)
def test_every_replayed_move_is_accepted_without_the_seed(env_id: str) -> None:
    bench = bench_script("bench_env_step")
    env = gymnasium.make(env_id)
    episodes, share = bench.recorded_episodes(env, episodes=12)
    assert episodes and share == 1.0
    assert bench.replayed_share(env, episodes) == 1.0


def test_the_script_prints_a_row_per_env_with_its_ratios() -> None:
    command = [sys.executable, str(SCRIPT), "--seconds", "0.05", "--only", "Splat"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("lateralgym/")]
    assert len(rows) == 1 and rows[0].split()[1] == "100%"
    ratios = [float(cell.rstrip("x")) for cell in rows[0].split() if cell.endswith("x")]
    assert len(ratios) == 3 and all(r > 0 for r in ratios)
