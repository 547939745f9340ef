"""``benchmarks/bench_llm_warmstart.py --merge``: seeds run side by side, summed up as one run.

Each seed of the warm start is an hour or more of a CPU core, so seeds run as separate processes, each
with its own ``--out`` folder. ``--merge`` reads those folders (nothing is trained) and prints the table
and the JSON line of one run: every seed's row as measured, and each held-out item's GRPO reward averaged
over the seeds, paired on the same items with the random player, the heuristic and the base model.

The chance level (the random player) is each item's reward averaged over 20 draws, not one draw.

The folders here are written by the test in the script's own layout (``results.json``, ``base_eval.jsonl``,
``sft-N/`` and ``grpo-N/eval_after.jsonl``), with episodes of the config's real held-out items (the random
player's, rewards set by the test), so no model is loaded.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from _bench_script import bench_script

CONFIG, ITEMS, DISTRACTORS = "creativity-static-graded", 8, 3


@pytest.fixture(scope="module")
def bench() -> Any:
    return bench_script("bench_llm_warmstart")


@pytest.fixture(scope="module")
def random_episodes(bench: Any) -> list[Any]:
    config, _, test = bench.held_out_items(CONFIG, ITEMS, DISTRACTORS)
    return list(bench.offline_players(config, test)["random"])


def test_the_chance_level_is_each_items_mean_over_many_random_draws(bench: Any, random_episodes: list[Any]) -> None:
    """One draw a held-out item made a noisy bar (0.095 on 100 items where 20 draws give 0.143)."""
    config, _, test = bench.held_out_items(CONFIG, ITEMS, DISTRACTORS)
    draws = [bench.offline(config, test, "random", seed) for seed in range(bench.OFFLINE_SEEDS)]
    assert any(a.reward != b.reward for a, b in zip(draws[0], draws[1], strict=True))  # the draws vary
    for k, episode in enumerate(random_episodes):
        assert episode.item_id == draws[0][k].item_id
        assert episode.reward == pytest.approx(sum(d[k].reward for d in draws) / bench.OFFLINE_SEEDS)
    assert {e.reward for e in random_episodes} - {0.0, 0.25, 1.0}  # averages, not one draw's rewards


def _episodes(template: list[Any], rewards: list[float]) -> str:
    lines = [r.model_copy(update={"reward": x}).model_dump_json() for r, x in zip(template, rewards, strict=True)]
    return "".join(line + "\n" for line in lines)


def _run_folder(root: Path, seed: int, template: list[Any], grpo: list[float], **overrides: Any) -> Path:
    """A finished run of one seed, as the script leaves it (base model: 0 on every item)."""
    folder = root / f"run-{seed}"
    (folder / f"sft-{seed}").mkdir(parents=True)
    (folder / f"grpo-{seed}").mkdir()
    (folder / "base_eval.jsonl").write_text(_episodes(template, [0.0] * len(template)), encoding="utf-8")
    (folder / f"sft-{seed}" / "eval_after.jsonl").write_text(_episodes(template, grpo), encoding="utf-8")
    (folder / f"grpo-{seed}" / "eval_after.jsonl").write_text(_episodes(template, grpo), encoding="utf-8")
    cell = {"mean": sum(grpo) / len(grpo), "low": 0.0, "high": 1.0, "problems": 1, "items": len(grpo)}
    figure = {"reward": cell, "valid": cell}
    # Figures as a stale script left them: the merge computes every figure again from the episodes.
    row = {"sft": figure, "grpo": figure, "paired": {}, "seconds_per_step": {"sft": 1.0}, "goal_met": False}
    results = {
        "config": CONFIG,
        "model": "local/smollm2",
        "eval_items": ITEMS,
        "pool": {"items": 550, "max_distractors": DISTRACTORS},
        "seeds": {str(seed): row},
    }
    results.update(overrides)
    (folder / "results.json").write_text(json.dumps(results), encoding="utf-8")
    return folder


def _merge(bench: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *folders: Path) -> Any:
    monkeypatch.setattr(sys, "argv", ["bench_llm_warmstart.py", "--merge", *map(str, folders)])
    bench.main()
    return json.loads(capsys.readouterr().out.strip().splitlines()[-1])


def test_merged_seeds_average_each_item_and_pair_it_with_chance(
    bench: Any, random_episodes: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    n = len(random_episodes)
    first = [1.0 if k % 2 else 0.0 for k in range(n)]
    second = [0.25] * n
    folders = [_run_folder(tmp_path, 0, random_episodes, first), _run_folder(tmp_path, 1, random_episodes, second)]
    result = _merge(bench, monkeypatch, capsys, *folders)
    assert set(result["seeds"]) == {"0", "1"}
    assert result["goal_met_seeds"] == 2  # both seeds' GRPO above the base model's 0 on every problem
    assert result["seeds"]["1"]["grpo"]["reward"]["mean"] == pytest.approx(0.25)
    assert result["seeds"]["1"]["paired"]["grpo-base"]["reward"]["low"] == pytest.approx(0.25)
    assert result["seeds"]["0"]["seconds_per_step"] == {"sft": 1.0}
    assert result["merged"] == [str(f) for f in folders]
    mean = (sum(first) + sum(second)) / (2 * n)
    random_mean = sum(r.reward for r in random_episodes) / n
    assert result["chance"]["random"]["reward"]["mean"] == pytest.approx(random_mean)
    for stage in ("sft", "grpo"):  # the test's SFT and GRPO episodes carry the same rewards
        over = result["over_seeds"][stage]
        assert over["seeds"] == 2
        assert over["reward"]["mean"] == pytest.approx(mean)
        assert over["reward"]["low"] <= mean <= over["reward"]["high"]
        assert over["minus_random"]["mean"] == pytest.approx(mean - random_mean)
        assert over["minus_base"]["mean"] == pytest.approx(mean)


def test_a_run_stopped_after_sft_merges_its_sft_alone(
    bench: Any, random_episodes: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    rewards = [1.0] * len(random_episodes)
    folders = [_run_folder(tmp_path, seed, random_episodes, rewards) for seed in (0, 1)]
    results = json.loads((folders[1] / "results.json").read_text(encoding="utf-8"))
    del results["seeds"]["1"]["grpo"]  # as --grpo-steps 0 (or a run stopped during GRPO) leaves it
    (folders[1] / "results.json").write_text(json.dumps(results), encoding="utf-8")
    result = _merge(bench, monkeypatch, capsys, *folders)
    assert result["over_seeds"]["sft"]["seeds"] == 2
    assert "grpo" not in result["over_seeds"]  # one seed's GRPO: no average to take


def test_merging_refuses_a_seed_twice_another_set_up_or_an_unfinished_stage(
    bench: Any, random_episodes: list[Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    rewards = [0.5] * len(random_episodes)
    one = _run_folder(tmp_path / "a", 0, random_episodes, rewards)
    again = _run_folder(tmp_path / "b", 0, random_episodes, rewards)
    other = _run_folder(tmp_path / "c", 1, random_episodes, rewards, eval_items=ITEMS + 1)
    unfinished = _run_folder(tmp_path / "d", 2, random_episodes, rewards)
    older = _run_folder(tmp_path / "e", 3, random_episodes, rewards)
    (older / "results.json").write_text(json.dumps({"config": CONFIG, "seeds": {}}), encoding="utf-8")
    (unfinished / "grpo-2" / "eval_after.jsonl").unlink()
    cases = {
        (one, again): "seed 0 is in two of the folders",
        (one, other): "differ in config, model, eval_items, pool",
        (one, unfinished): "was its stage finished?",
        (one, tmp_path): "no readable results.json",
        (one, older): "results.json has no model, eval_items, pool: not written by",
    }
    for folders, message in cases.items():
        with pytest.raises(SystemExit) as stop:
            _merge(bench, monkeypatch, capsys, *folders)
        assert message in str(stop.value)
        assert "\n" not in str(stop.value)
