"""GRPO trains the shipped small model end to end (opt-in: ``pytest --runllm``, needs ``lateralgym[grpo]``).

Two optimizer steps of ``lateralgym train grpo`` on RiddleSense with ``local/smollm2`` (SmolLM2-135M-Instruct,
dequantised from the package's GGUF into a cache folder), then ``--resume`` for one more step from the
checkpoint it wrote; and the TRL recipe of ``docs/training.md`` run exactly as written there. The checks
are about the plumbing, never the model's skill (two steps teach it nothing): the summary's held-out
figures are the evaluation files' own, the training curve has one point per step across the resume,
the final model loads and plays, and nothing of the held-out split reaches training.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from lateralgym.cli import main
from lateralgym.commands.train import RESUMES
from lateralgym.envs import EpisodeConfig, load_config_items, split_items

pytestmark = pytest.mark.runllm(extra="grpo")

DOCS = Path(__file__).resolve().parents[2] / "docs" / "training.md"


def _cli(out: Path, *extra: str) -> dict[str, object]:
    code = main(
        [
            "train",
            "grpo",
            "--config",
            "riddlesense",
            "--model",
            "local/smollm2",
            "--num-generations",
            "4",
            "--eval-items",
            "3",
            "--save-every",
            "1",
            "--out",
            str(out),
            *extra,
        ]
    )
    assert code == 0
    summary: dict[str, object] = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    return summary


def test_train_grpo_runs_two_steps_then_resumes(tmp_path: Path) -> None:
    out = tmp_path / "grpo"
    first = _cli(out, "--steps", "2")
    assert first["steps"] == 2
    assert len(first["train_reward"]) == 2 and len(first["train_valid"]) == 2  # type: ignore[arg-type]
    assert all(0.0 <= v <= 1.0 for v in first["train_valid"])  # type: ignore[union-attr]
    config = EpisodeConfig.named("riddlesense")
    items = load_config_items(config)
    held_out = {r.id for r in split_items(items, "test")}
    assert set(first["eval_items"]) <= held_out  # type: ignore[arg-type]
    assert not set(first["train_items"]) & held_out  # type: ignore[arg-type]
    for when in ("before", "after"):
        figures = first[f"eval_{when}"]
        played = [json.loads(line) for line in (out / f"eval_{when}.jsonl").read_text(encoding="utf-8").splitlines()]
        assert figures["n"] == len(played) == 3  # type: ignore[index]
        valid = sum(r["valid_moves"] for r in played) / sum(r["moves"] for r in played)
        assert figures["valid_rate"] == pytest.approx(valid)  # type: ignore[index]
        assert figures["reward_mean"] == pytest.approx(sum(r["reward"] for r in played) / 3)  # type: ignore[index]
        low, high = figures["reward_interval"]  # type: ignore[index]
        assert low <= figures["reward_mean"] <= high  # type: ignore[index]
    assert (out / "learning_curve.png").stat().st_size > 10_000
    assert (out / "model" / "config.json").is_file()
    kept = sorted(p.name for p in (out / "checkpoints").glob("checkpoint-*"))
    assert kept == ["checkpoint-2"]  # save_total_limit=1

    resumed = _cli(out, "--steps", "3", "--resume")
    assert resumed["steps"] == 3
    assert resumed["eval_before"] == first["eval_before"]  # the base model's evaluation is kept, not redone
    assert resumed["train_reward"][:2] == first["train_reward"]  # type: ignore[index]
    assert len(resumed["train_reward"]) == 3  # type: ignore[arg-type]

    # The trained folder is a model `load_model` (and so `train grpo --model DIR`) reads back.
    from lateralgym.integrations import load_model

    model, tokenizer = load_model(str(out / "model"))
    reply = tokenizer.decode(model.generate(**tokenizer("Riddle:", return_tensors="pt"), max_new_tokens=3)[0])
    assert reply.startswith("Riddle:")


def test_the_docs_trl_recipe_runs_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = DOCS.read_text(encoding="utf-8")
    blocks = re.findall(r"```py\n(.*?)```", text, flags=re.S)
    recipe = [b for b in blocks if "GRPOTrainer(" in b]
    assert len(recipe) == 1, "docs/training.md should hold one ```py GRPO recipe"
    monkeypatch.chdir(tmp_path)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    namespace: dict[str, object] = {"__name__": "docs_recipe"}
    exec(compile(recipe[0], str(DOCS), "exec"), namespace)  # the docs' own code, run as written
    trainer = namespace["trainer"]
    assert trainer.state.global_step == 2  # type: ignore[attr-defined]
    rewards = [entry["reward"] for entry in trainer.state.log_history if "reward" in entry]  # type: ignore[attr-defined]
    assert rewards and all(0.0 <= r <= 1.0 for r in rewards)  # logged every logging_steps (TRL's default)
    assert (tmp_path / "runs" / "grpo-trl").is_dir()


def test_ctrl_c_mid_training_writes_a_checkpoint_that_resume_continues(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "grpo"
    script = Path(sys.executable).parent / "lateralgym"  # the console script of this environment
    command = [str(script), "train", "grpo", "--config", "riddlesense", "--model", "local/smollm2"]
    command += ["--num-generations", "4", "--eval-items", "2", "--out", str(out)]
    process = subprocess.Popen([*command, "--steps", "20"], stderr=subprocess.PIPE, text=True)
    curve = out / "train_curve.jsonl"
    deadline = time.monotonic() + 900
    while not (curve.is_file() and curve.read_text(encoding="utf-8").strip()) and process.poll() is None:
        assert time.monotonic() < deadline, "no training step ended within 15 minutes"
        time.sleep(1)
    process.send_signal(signal.SIGINT)  # Ctrl-C after the first step
    _, stderr = process.communicate(timeout=600)
    assert process.returncode == 130
    last = stderr.strip().splitlines()[-1]
    assert last == f"lateralgym: interrupted; {RESUMES}"
    checkpoints = [p.name for p in (out / "checkpoints").glob("checkpoint-*")]
    assert len(checkpoints) == 1 and checkpoints[0].startswith("checkpoint-")
    done = int(checkpoints[0].rsplit("-", 1)[1])
    assert done >= 1
    resumed = subprocess.run([*command, "--steps", str(done + 1), "--resume"], capture_output=True, text=True)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["steps"] == done + 1
    assert len(summary["train_reward"]) == done + 1


def test_running_out_of_memory_mid_training_is_one_line(tmp_path: Path) -> None:
    """A real allocation failure: the process's address space is capped (RLIMIT_AS, 6 GiB) so the
    model loads and the held-out evaluation runs, but the first step's logits over eight long
    CreativityBench prompts (about 8 x 3,600 tokens x 49,152 floats) cannot be allocated. torch's CPU
    allocator raises a plain RuntimeError there; the run ends with one line, no traceback, and keeps
    the base model's evaluation (a kernel OOM kill instead would leave the last checkpoint)."""
    import resource
    import subprocess
    import sys

    limit = 6 << 30

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    out = tmp_path / "grpo"
    script = Path(sys.executable).parent / "lateralgym"
    command = [str(script), "train", "grpo", "--config", "creativity-static", "--model", "local/smollm2"]
    command += ["--eval-items", "1", "--num-generations", "8", "--max-completion-length", "8", "--steps", "2"]
    done = subprocess.run([*command, "--out", str(out)], capture_output=True, text=True, preexec_fn=cap)
    assert done.returncode == 2, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1] == (
        "lateralgym: error: out of memory at step 1 (RuntimeError): lower --num-generations or --max-completion-length"
    )
    kept = (out / "eval_before.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(kept) == 1 and json.loads(kept[0])["moves"] == 1
