"""``benchmarks/bench_llm_throughput.py --items FILE``: any BrainTeaser file of an official format,
each item played once by LateralGym and by the floors, a ratio and the load for every round."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "bench_llm_throughput.py"


def _puzzle(group: int, suffix: str, question: str) -> dict[str, object]:
    """One record as the EMNLP release spells it (``distrator``, sic)."""
    return {
        "id": f"SP-{group}{suffix}",
        "question": f"{question} (group {group})",
        "answer": "The answer.",
        "distrator1": "A distractor.",
        "distrator2": "Another distractor.",
        "distrator(unsure)": "None of above.",
        "label": 1,
        "choice_list": ["A distractor.", "The answer.", "Another distractor.", "None of above."],
        "choice_order": [1, 0, 2, 3],
    }


def _release_file(path: Path, groups: int) -> Path:
    records = [
        _puzzle(g, suffix, question)
        for g in range(groups)
        for suffix, question in (("", "Why?"), ("_SR", "How come?"), ("_CR", "What happened?"))
    ]
    array = np.empty(len(records), dtype=object)
    array[:] = records
    np.save(path, array, allow_pickle=True)
    return path


def _bench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost"}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args], capture_output=True, text=True, check=False, env=env, timeout=600
    )


@pytest.mark.slow
def test_a_release_file_is_played_once_by_each_side_every_round(tmp_path: Path) -> None:
    items = _release_file(tmp_path / "sentence_puzzle.npy", groups=2)
    done = _bench(f"--items={items}", "--latency-ms=5", "--concurrency=4", "--rounds=2")
    assert done.returncode == 0, done.stderr[-2000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["items"] == str(items.resolve()) and figures["latency_s"] == pytest.approx(0.005)
    (level,) = figures["levels"]
    assert level["workload"] == "brainteaser" and level["c"] == 4 and level["calls"] == 6
    assert (
        len(level["vs_sharded_rounds"])
        == len(level["load_per_round"])
        == len(level["cpu_per_call_vs_sharded_rounds"])
        == 2
    )
    assert all(ratio > 0 for ratio in level["vs_sharded_rounds"])
    assert "(6, each once)" in done.stdout and "vs sharded per round:" in done.stdout


def test_items_must_be_a_file_and_brainteaser(tmp_path: Path) -> None:
    missing = _bench(f"--items={tmp_path / 'none.npy'}", "--concurrency=4", "--rounds=1")
    assert missing.returncode != 0 and "no such file" in missing.stderr
    items = _release_file(tmp_path / "sentence_puzzle.npy", groups=1)
    other = _bench(f"--items={items}", "--workloads=splat", "--rounds=1")
    assert other.returncode != 0 and "--workloads brainteaser" in other.stderr
    garbled = tmp_path / "garbled.npy"
    garbled.write_bytes(b"not a numpy file")
    bad = _bench(f"--items={garbled}", "--concurrency=4", "--rounds=1")
    assert bad.returncode != 0 and bad.stderr.startswith(f"--items {garbled}: ") and "Traceback" not in bad.stderr
