"""AR-Bench's per-question process reward (``--option reward=dense``), on a release file written for these
tests (``tests/_arbench_release.py``): the oracle's and a random player's runs from the command line, the
reward's numbers step by step, the run's judge deciding the key questions, and the one-line refusal on a
benchmark whose items name no key facts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from _arbench_release import write_release
from llm_server import ScriptedLLMServer

from lateralgym.cli import main
from lateralgym.envs import ConfigError, EpisodeConfig, LateralEnv
from lateralgym.envs.benchmarks.arbench import ARBenchOutcome, load_arbench
from lateralgym.episodes import run

SIXTH = 1 / 6


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_release(tmp_path_factory.mktemp("arbench"))


def _run(release: Path, out: Path, player: str, *extra: str) -> Path:
    code = main(["run", "arbench-sp", "--data", str(release), "--player", player, "--out", str(out),
                 "--no-progress", *extra])  # fmt: skip
    assert code == 0
    (run_dir,) = out.iterdir()
    return run_dir


def _records(run_dir: Path, kind: str) -> list[dict[str, Any]]:
    lines = (run_dir / "steps.jsonl").read_text(encoding="utf-8").splitlines()
    return [r for r in map(json.loads, lines) if r["type"] == kind]


@pytest.fixture(scope="module")
def oracle_run(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(release, tmp_path_factory.mktemp("oracle"), "oracle", "--option", "reward=dense")


def test_the_oracle_logs_a_reward_per_question_and_a_key_question_recall_of_one(oracle_run: Path) -> None:
    summary = json.loads((oracle_run / "summary.json").read_text(encoding="utf-8"))
    episodes = summary["breakdowns"]["by_episode"]
    assert [row["key_question_recall"] for row in episodes] == [1.0, 1.0, 1.0]
    assert summary["headline"]["mean_key_question_recall"] == 1.0
    assert summary["headline"]["key_question_rate"] == 100.0 and summary["headline"]["acc"] == 100.0
    questions = [s for s in _records(oracle_run, "step") if s["action"]["kind"] == "ask"]
    assert len(questions) == 18 and all("process" in s for s in questions)
    first = [s for s in questions if s["item_id"] == "arbench-sp-test-0"]
    assert [s["process"] for s in first] == [{"reward": SIXTH, "covered": [n]} for n in range(6)]
    assert [s["reward"] for s in first] == [SIXTH] * 6  # inside the step's reward (no other shaping here)
    commits = [s for s in _records(oracle_run, "step") if s["action"]["kind"] == "commit"]
    assert commits and not any("process" in s for s in commits)  # explanations earn the sparse reward only


def test_a_key_question_listed_twice_covers_nothing_new_the_second_time_and_is_a_repeat(oracle_run: Path) -> None:
    steps = [s for s in _records(oracle_run, "step") if s["item_id"] == "arbench-sp-test-2"]
    # the story lists "Did his father water the plant every morning?" at 2 and 6: asking it covers both
    assert steps[1]["process"] == {"reward": pytest.approx(2 * SIXTH), "covered": [1, 5]}
    assert steps[5]["process"] == {"reward": pytest.approx(-SIXTH / 2), "covered": [], "repeat_of": 2}
    row = next(r for r in json.loads((oracle_run / "summary.json").read_text())["breakdowns"]["by_episode"]
               if r["episode"] == "arbench-sp-test-2#0")  # fmt: skip
    assert row == {"episode": "arbench-sp-test-2#0", "key_questions": 6, "asked": 6, "key_question_recall": 1.0,
                   "process_reward": pytest.approx(1 - SIXTH / 2), "near_repeats": 1}  # fmt: skip
    end = next(e for e in _records(oracle_run, "episode_end") if e["item_id"] == "arbench-sp-test-2")
    assert end["outcome"]["process"] == {"reward": pytest.approx(1 - SIXTH / 2), "repeats": 1}
    assert end["reward"] == pytest.approx(1 - SIXTH / 2 + 1.0)  # the episode's reward: process plus the solve


def test_a_random_players_recall_is_below_0_3_and_its_repeats_cost(release: Path, tmp_path: Path) -> None:
    run_dir = _run(release, tmp_path, "random", "--option", "reward=dense")
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert summary["headline"]["mean_key_question_recall"] < 0.3
    assert all(row["key_question_recall"] < 0.3 for row in summary["breakdowns"]["by_episode"])
    questions = [s for s in _records(run_dir, "step") if s["action"]["kind"] == "ask"]
    repeats = [s for s in questions if "repeat_of" in s["process"]]
    assert repeats and all(s["process"]["reward"] == pytest.approx(-SIXTH / 2) for s in repeats)
    assert summary["headline"]["mean_process_reward"] < 0


def test_without_the_option_nothing_changes(release: Path, tmp_path: Path) -> None:
    run_dir = _run(release, tmp_path, "oracle")
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    assert "by_episode" not in summary["breakdowns"]
    assert not {"mean_key_question_recall", "mean_process_reward"} & set(summary["headline"])
    assert summary["headline"]["key_question_rate"] == 100.0 and summary["headline"]["rnd"] == 7.0
    assert not any("process" in s for s in _records(run_dir, "step"))
    assert all("process" not in e["outcome"] for e in _records(run_dir, "episode_end"))
    first = [s["reward"] for s in _records(run_dir, "step") if s["item_id"] == "arbench-sp-test-0"]
    assert first == [0.0] * 6 + [1.0]


def test_near_repeats_by_content_words_and_the_gym_reward(release: Path) -> None:
    config = EpisodeConfig.named("arbench-sp").with_options(reward="dense")
    items = load_arbench(release)
    env = LateralEnv(config, items=items)
    env.reset(options={"item_id": items[0].id})
    _, reward, *_ = env.step("ask: Was the keeper dreaming?")
    assert reward == pytest.approx(SIXTH)
    _, reward, *_ = env.step("ask: was THE keeper dreaming")  # the same content words
    assert reward == pytest.approx(-SIXTH / 2) and env.records[-1].process is not None
    assert env.records[-1].process.repeat_of == 1
    _, reward, *_ = env.step("ask: Was it raining at sea?")  # new, and no key question: nothing either way
    assert reward == 0.0
    _, reward, *_ = env.step("ask:")  # an invalid move is not priced
    assert env.records[-1].process is None
    outcome = env.outcome()
    assert isinstance(outcome, ARBenchOutcome) and outcome.process is not None
    assert outcome.process.reward == pytest.approx(SIXTH / 2) and outcome.process.repeats == 1
    assert outcome.key_question_recall == pytest.approx(SIXTH)


def test_the_runs_llm_judge_decides_which_key_questions_a_question_asks(release: Path, tmp_path: Path) -> None:
    def respond(body: dict[str, Any]) -> str:
        system = body["messages"][0]["content"]
        if "key questions" in system and "Hit:" in system:
            # the judge credits the first key question to a paraphrase the word rule would miss
            return "Hit: 1" if "asleep" in body["messages"][-1]["content"] else "Hit: none"
        return "yes"

    server = ScriptedLLMServer(responder=respond).start()
    try:
        config = EpisodeConfig.named("arbench-sp").with_options(reward="dense")
        items = load_arbench(release)[:1]
        env = LateralEnv(config, items=items, judge=_llm_judge(server.base_url, tmp_path))
        env.reset(options={"item_id": items[0].id})
        _, asleep, *_ = env.step("ask: Was the man asleep the whole time?")
        _, dreaming, *_ = env.step("ask: Was the keeper dreaming?")  # a key question word for word: the judge says none
    finally:
        server.stop()
    assert (asleep, dreaming) == (pytest.approx(SIXTH), 0.0)
    assert [r.process.covered for r in env.records if r.process is not None] == [(0,), ()]


def _llm_judge(base_url: str, tmp_path: Path) -> Any:
    from lateralgym.judges import make_judge

    return make_judge("openai/judge", benchmark="arbench-sp", base_url=base_url, cache_dir=tmp_path / "cache")


@pytest.mark.parametrize("benchmark", ["brainteaser", "splat", "riddlesense"])
def test_a_benchmark_without_key_facts_refuses_the_option_in_one_line(
    benchmark: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", benchmark, "--option", "reward=dense", "--limit", "1", "--out", str(tmp_path),
                 "--no-progress"])  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert f"{benchmark} has no per-question process reward" in err and "arbench-sp" in err
    assert not list(tmp_path.iterdir())  # refused before any run directory
    with pytest.raises(ConfigError, match="no per-question process reward"):
        EpisodeConfig.named(benchmark).with_options(reward="dense")


def test_a_misspelt_value_names_the_two_there_are(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["run", "arbench-sp", "--data", str(release), "--option", "reward=dens", "--out", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "'sparse' or 'dense'" in err


def test_the_python_run_takes_the_option_from_the_config(release: Path, tmp_path: Path) -> None:
    config = EpisodeConfig.named("arbench-sp").with_options(reward="dense")
    result = run(config, items=load_arbench(release), player="oracle", out=tmp_path, progress=False)
    assert result.metrics.headline["mean_key_question_recall"] == 1.0
    assert result.metrics.headline["mean_process_reward"] == pytest.approx((3 - SIXTH / 2) / 3)


def test_a_dense_env_passes_the_conformance_and_no_leak_checks(release: Path) -> None:
    from lateralgym.envs.testing import check_scene

    items = load_arbench(release)
    check_scene(lambda: LateralEnv(EpisodeConfig.named("arbench-sp").with_options(reward="dense"), items=items))
