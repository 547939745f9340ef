"""What the architecture promises end to end: RiddleSense from the CLI, Unicode text, derived
episode seeds, and a run directory that records what ran."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from lateralgym.cli import main
from lateralgym.envs import (
    DatasetError,
    EpisodeConfig,
    LateralEnv,
    detect_format,
    get_benchmark,
    load_items,
    load_sample_items,
)
from lateralgym.envs.benchmarks.riddlesense import Riddle, load_riddlesense
from lateralgym.envs.testing import check_scene, find_leaks
from lateralgym.episodes import (
    EpisodeStart,
    StepLine,
    episode_seed,
    plan_episodes,
    read_log,
    read_manifest,
    replay,
    run,
)


def only_run(root: Path) -> Path:
    (run_dir,) = [p for p in root.iterdir() if p.is_dir()]
    return run_dir


# -- RiddleSense: one module registered, nothing else touched -----------------------------------


def test_riddlesense_loader_reads_the_official_format(official_data: Path) -> None:
    path = official_data / "riddlesense" / "rs_dev.jsonl"
    assert detect_format(path) == "riddlesense"
    riddles = load_riddlesense(path)
    assert len(riddles) == 10 and all(isinstance(r, Riddle) and len(r.choices) == 5 for r in riddles)
    first = riddles[0]  # answerKey "C" -> index 2
    assert first.label == 2 and first.choices[first.label] == "bottle" and first.concept == "neck"
    assert [type(r) for r in load_items(path)] == [Riddle] * 10


def test_riddlesense_hidden_test_split_is_refused_clearly(official_data: Path) -> None:
    with pytest.raises(DatasetError, match="no answerKey.*rs_dev.jsonl") as caught:
        load_riddlesense(official_data / "riddlesense" / "rs_test_hidden.jsonl")
    assert caught.value.record == "line 1" and caught.value.field == "answerKey"


def test_riddlesense_runs_from_the_cli_oracle_100_random_near_chance(
    official_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = str(official_data / "riddlesense" / "rs_dev.jsonl")
    assert (
        main(
            ["run", "riddlesense", "--data", data, "--player", "oracle", "--out", str(tmp_path / "o"), "--no-progress"]
        )
        == 0
    )
    summary = json.loads((only_run(tmp_path / "o") / "summary.json").read_text())
    assert summary["headline"]["accuracy"] == 100.0
    # Random over the 30 shipped riddles x 40 repeats: 1,200 draws, chance is 20 % (sd ~1.2 %).
    result = run("riddlesense", player="random", repeats=40, out=tmp_path / "r", progress=False)
    assert 15.0 <= result.metrics.headline["accuracy_mean_of_40"] <= 25.0


def test_riddlesense_passes_the_conformance_suite_and_its_view_hides_the_label() -> None:
    riddles = load_sample_items("riddlesense")
    assert len(riddles) == 70
    config = EpisodeConfig.named("riddlesense")
    assert check_scene(lambda: LateralEnv(config, items=riddles)) > 60  # the differential walk ran too


# -- Unicode end to end --------------------------------------------------------------------------


def test_lateval_chinese_oracle_solves_all_and_no_text_is_replaced(official_data: Path, tmp_path: Path) -> None:
    data = official_data / "lateval" / "chinese.json"
    puzzles = load_items(data)
    result = run(
        EpisodeConfig.named("splat").model_copy(update={"dataset": str(data)}),
        player="oracle",
        out=tmp_path,
        progress=False,
    )
    assert result.metrics.headline["acc"] == 100.0 and result.metrics.episodes == len(puzzles)
    log = (result.run_dir / "steps.jsonl").read_text(encoding="utf-8")
    records = list(read_log(result.run_dir / "steps.jsonl"))
    shown = [r.observation.text or "" for r in records if isinstance(r, EpisodeStart)]
    for puzzle in puzzles:
        assert any(puzzle.story in text for text in shown)  # the story reached the player intact
    assert "?" * 3 not in log and "\ufffd" not in log
    answers = [r.action.get("answer") for r in records if isinstance(r, StepLine)]
    assert sorted(answers) == sorted(p.answer for p in puzzles)


def test_non_latin_option_text_survives(tmp_path: Path) -> None:
    pi = Riddle(id="pi", question="Which number starts 3.14?", choices=("π", "e", "φ", "√2", "∞"), label=0)
    env = LateralEnv(EpisodeConfig.named("riddlesense"), items=[pi])
    obs, _ = env.reset(seed=0)
    assert "A. π" in obs["text"] and env.observation_space.contains(obs)
    obs, reward, *_ = env.step("commit: π")  # the option's own text picks it
    assert reward == 1.0


def test_the_leak_check_works_on_chinese_text(official_data: Path) -> None:
    puzzle = load_items(official_data / "lateval" / "chinese.json")[0]
    assert find_leaks(f"提示：{puzzle.answer}", puzzle)
    assert not find_leaks(puzzle.story, puzzle)


# -- Seeds and the run directory -----------------------------------------------------------------


def test_episode_seeds_are_independent_of_order_and_limit_and_differ_between_run_seeds() -> None:
    items = load_sample_items("brainteaser")
    full = {s.episode_id: s.seed for s in plan_episodes(items, seed=0, repeats=2)}
    limited = {s.episode_id: s.seed for s in plan_episodes(items[3:], seed=0, limit=4, repeats=2)}
    assert all(full[k] == v for k, v in limited.items())  # an item keeps its seed whatever --limit is
    other = [s.seed for s in plan_episodes(items, seed=1, repeats=2)]
    assert not set(other) & set(full.values())  # --seed 1 is not --seed 0 shifted by one item
    assert len(set(full.values())) == len(full)
    assert episode_seed(0, "SP-1", 0) != episode_seed(0, "SP-1", 1)


def test_manifest_records_the_seeds_and_replay_uses_them(tmp_path: Path) -> None:
    result = run("creativity-interactive", limit=3, out=tmp_path, progress=False)
    manifest = read_manifest(result.run_dir)
    assert [s.seed for s in manifest.episodes] == [episode_seed(0, s.item_id, 0) for s in manifest.episodes]
    starts = [r for r in read_log(result.run_dir / "steps.jsonl") if isinstance(r, EpisodeStart)]
    assert {s.episode_id: s.seed for s in starts} == {s.episode_id: s.seed for s in manifest.episodes}
    assert all(r.divergence is None for r in replay(result.run_dir))


def test_config_yaml_records_the_player_and_judge_that_ran(tmp_path: Path) -> None:
    assert main(["run", "splat", "--player", "oracle", "--limit", "2", "--out", str(tmp_path), "--no-progress"]) == 0
    run_dir = only_run(tmp_path)
    config = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
    assert (config["player"], config["judge"]) == ("oracle", "reference")
    assert EpisodeConfig.from_file(run_dir / "config.yaml").player == "oracle"


def test_every_benchmark_is_registered_with_its_parts() -> None:
    for name in ("creativity", "brainteaser", "splat", "riddlesense"):
        unit = get_benchmark(name)
        assert unit.name == name and unit.modes and unit.action_forms and unit.data.sample_file
        assert unit.data.sample_items()


def test_an_offline_run_never_imports_the_openai_sdk(tmp_path: Path) -> None:
    """The SDK costs half a second to import: a run with offline players and judges must not pay it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from lateralgym.episodes import run\n"
        f"run('splat', limit=2, out={str(tmp_path)!r}, progress=False)\n"
        "print('openai' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
