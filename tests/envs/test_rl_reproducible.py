"""A seed reproduces: the same seed gives bit-identical policies and figures under other thread settings.

Each run is a separate process (``python -c CHILD``), as on another machine: one with one OpenMP/BLAS
thread, the other with two and a CPU-busy process beside it. Both train ``MaskablePPO`` for a few
hundred timesteps on a small task file with the same seed, and both fit the affordance head over the
``lexical`` encoder (no MiniLM needed); each prints a SHA-256 of every saved weight (the policy's
tensors from ``model.zip``, the head's arrays) and of the summary's figures (wall-clock times left
out). The features policy, and the text policy with the head, must match to the bit. Needs the rl
extra (torch, sb3-contrib); the head's check alone needs neither.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lateralgym.envs import load_sample_items, write_jsonl
from lateralgym.envs.benchmarks.creativity.rl.evaluation import split_tasks

HAVE_RL = importlib.util.find_spec("sb3_contrib") is not None and importlib.util.find_spec("torch") is not None
needs_rl = pytest.mark.skipif(not HAVE_RL, reason="the rl extra is not installed (pip install -e '.[rl]')")

CHILD = r"""
import hashlib, json, sys
from pathlib import Path

import numpy as np

from lateralgym.envs import EpisodeConfig
from lateralgym.envs.benchmarks.creativity.rl.affordance import fit_affordance_head
from lateralgym.envs.benchmarks.creativity.rl.evaluation import load_tasks, split_tasks
from lateralgym.envs.benchmarks.creativity.rl.text import make_encoder

kind, data, out = sys.argv[1], sys.argv[2], Path(sys.argv[3])
config = EpisodeConfig.named("creativity-interactive")
tasks = load_tasks(config, data)
found = {}
if kind == "head":
    head = fit_affordance_head(split_tasks(tasks, "train"), split_tasks(tasks, "test"), make_encoder("lexical"))
    head.save(out / "head.npz")
    with np.load(out / "head.npz") as arrays:
        for name in sorted(arrays.files):
            found[name] = hashlib.sha256(np.ascontiguousarray(arrays[name]).tobytes()).hexdigest()
else:
    from lateralgym.envs.benchmarks.creativity.rl.model_file import read_model
    from lateralgym.envs.benchmarks.creativity.rl.ppo import train_ppo

    summary = train_ppo(
        config, tasks, timesteps=256, out=out, seed=7, eval_every=128, eval_repeats=1, n_envs=2,
        policy=kind, encoder="lexical", affordance_head=kind == "text",
    )
    for name, tensor in sorted(read_model(out / "model.zip").weights.items()):
        found[name] = hashlib.sha256(tensor.detach().cpu().numpy().tobytes()).hexdigest()
    figures = summary.model_dump(exclude={"seconds", "timesteps_per_second"})
    found["summary"] = hashlib.sha256(json.dumps(figures, sort_keys=True).encode()).hexdigest()
    found["test_gold_rate"] = summary.trained.gold_correct_rate
print(json.dumps(found, sort_keys=True))
"""

BUSY = "import time\nend = time.monotonic() + 300\nwhile time.monotonic() < end:\n    pass\n"


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tasks = load_sample_items("creativity")
    chosen = [*split_tasks(tasks, "train")[:24], *split_tasks(tasks, "test")[:8]]
    return write_jsonl(chosen, tmp_path_factory.mktemp("repro") / "tasks.jsonl")


def _run(kind: str, data: Path, out: Path, threads: int, busy: bool) -> dict[str, object]:
    """The child's hashes, run with ``threads`` OpenMP/BLAS threads (and a busy process beside it)."""
    out.mkdir(parents=True)
    env = {**os.environ, "PYTHONHASHSEED": str(threads)}  # a different string hash order too
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(threads)
    spinner = subprocess.Popen([sys.executable, "-c", BUSY]) if busy else None
    try:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, kind, str(data), str(out)],
            capture_output=True,
            text=True,
            timeout=900,
            env=env,
        )
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()
    assert done.returncode == 0, done.stderr[-3000:]
    found: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def test_the_affordance_heads_fit_is_bit_identical_under_other_thread_settings(data: Path, tmp_path: Path) -> None:
    quiet = _run("head", data, tmp_path / "one", threads=1, busy=False)
    loaded = _run("head", data, tmp_path / "two", threads=2, busy=True)
    assert quiet and quiet == loaded


@needs_rl
@pytest.mark.parametrize("policy", ["features", "text"])
def test_a_ppo_seed_is_bit_identical_under_other_thread_settings(data: Path, tmp_path: Path, policy: str) -> None:
    """``text`` reads the ``lexical`` encoder with the affordance head (``--affordance-head``)."""
    quiet = _run(policy, data, tmp_path / "one", threads=1, busy=False)
    loaded = _run(policy, data, tmp_path / "two", threads=2, busy=True)
    assert len(quiet) > 3 and quiet == loaded
