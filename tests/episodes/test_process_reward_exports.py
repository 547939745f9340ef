"""Per-question process rewards (AR-Bench's ``reward: dense``) in what trainers read: the rollouts rebuilt
from a log, the ``jsonl``, ``trl`` and ``verifiers`` exports (their own columns, only in a run that has
them), a live ``ChatEnv`` rollout and TRL's ``environment_factory``; on the release file of
``tests/_arbench_release.py``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from _arbench_release import write_release

from lateralgym.agents._llm_usage import import_litellm
from lateralgym.envs import EpisodeConfig
from lateralgym.envs.benchmarks.arbench import ARBenchPuzzle, load_arbench
from lateralgym.episodes import StepLine, export_run, read_log, rollouts_from_log, run
from lateralgym.integrations import ChatEnv
from lateralgym.integrations.trl import environment

SIXTH = 1 / 6
BEFORE = {
    "trl": {"prompt", "completion", "reward", "label", "turn_rewards", "logprobs", "group_id", "episode_id",
            "item_id", "seed", "benchmark", "config", "outcome", "judge_notes"},
    "turn": {"step", "action", "valid", "reward", "judge_label", "reply", "tokens", "logprobs", "token_ids"},
}  # fmt: skip
"""The columns every export had before process rewards existed: a run without them keeps exactly these."""


@pytest.fixture(scope="module")
def puzzles(tmp_path_factory: pytest.TempPathFactory) -> list[ARBenchPuzzle]:
    return load_arbench(write_release(tmp_path_factory.mktemp("arbench")))


def _dense() -> EpisodeConfig:
    return EpisodeConfig.named("arbench-sp").with_options(reward="dense")


@pytest.fixture(scope="module")
def dense_run(puzzles: list[ARBenchPuzzle], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dense")
    return run(_dense(), items=puzzles, player="oracle", out=out, progress=False).run_dir


@pytest.fixture(scope="module")
def sparse_run(puzzles: list[ARBenchPuzzle], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("sparse")
    return run("arbench-sp", items=puzzles, player="oracle", out=out, progress=False).run_dir


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _rounded(value: Any) -> Any:
    """``value`` with every float rounded to 9 digits."""
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def test_rollouts_carry_each_moves_process_reward_inside_its_reward(dense_run: Path) -> None:
    steps = [r for r in read_log(dense_run / "steps.jsonl") if isinstance(r, StepLine)]
    for rollout in rollouts_from_log(dense_run):
        mine = [s for s in steps if s.episode_id == rollout.episode_id]
        assert [t.process_reward for t in rollout.turns] == [s.process.reward if s.process else None for s in mine]
        assert rollout.process_rewards == [s.process.reward if s.process else 0.0 for s in mine]
        assert rollout.reward == pytest.approx(sum(rollout.rewards))  # the process rewards are inside
    first = next(r for r in rollouts_from_log(dense_run) if r.item_id == "arbench-sp-test-0")
    assert first.process_rewards == [SIXTH] * 6 + [0.0] and first.rewards == [SIXTH] * 6 + [1.0]


def test_each_format_adds_process_columns_of_its_own(dense_run: Path, tmp_path: Path) -> None:
    trl = _rows(export_run(dense_run, "trl", tmp_path / "trl.jsonl").path)
    assert set(trl[0]) == BEFORE["trl"] | {"process_rewards", "process_reward"}
    first = next(row for row in trl if row["item_id"] == "arbench-sp-test-0")
    assert first["process_rewards"] == [SIXTH] * 6 + [0.0] and first["process_reward"] == 1.0
    assert first["reward"] == pytest.approx(2.0)  # one for the six key questions, one for the solve

    jsonl = _rows(export_run(dense_run, "jsonl", tmp_path / "r.jsonl").path)
    assert all(set(turn) == BEFORE["turn"] | {"process_reward"} for row in jsonl for turn in row["turns"])

    record = next(r for r in _rows(export_run(dense_run, "verifiers", tmp_path / "v.jsonl").path)
                  if r["task"]["data"]["id"] == "arbench-sp-test-0")  # fmt: skip
    (trace,) = record["traces"]
    assert (
        trace["metrics"]["process_reward"] == 1.0 and trace["info"]["turn_process_rewards"] == first["process_rewards"]
    )
    assert trace["rewards"] == {"reward": {"score": pytest.approx(2.0), "weight": 1.0}}  # counted once, in the reward


def test_a_run_without_process_rewards_exports_the_columns_it_always_had(sparse_run: Path, tmp_path: Path) -> None:
    trl = _rows(export_run(sparse_run, "trl", tmp_path / "trl.jsonl").path)
    assert all(set(row) == BEFORE["trl"] for row in trl)
    jsonl = _rows(export_run(sparse_run, "jsonl", tmp_path / "r.jsonl").path)
    assert all(set(turn) == BEFORE["turn"] for row in jsonl for turn in row["turns"])
    traces = [r["traces"][0] for r in _rows(export_run(sparse_run, "verifiers", tmp_path / "v.jsonl").path)]
    assert all(set(t["metrics"]) == {"solved", "turns"} and "turn_process_rewards" not in t["info"] for t in traces)


def test_dense_exports_load_with_datasets_and_verifiers(dense_run: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets", reason="the export extra (datasets) is not installed")
    for fmt in ("jsonl", "trl", "verifiers"):
        path = export_run(dense_run, fmt, tmp_path / fmt / "traces.jsonl").path
        loaded = datasets.load_dataset("json", data_files=str(path), split="train", cache_dir=str(tmp_path / "c"))
        # datasets reads the verifiers records (an empty struct in them) through pandas, which keeps ten
        # digits of a float such as 1/6: equal to that precision; the other two read back exactly
        exact = fmt != "verifiers"
        assert (loaded.to_list() if exact else _rounded(loaded.to_list())) == (
            _rows(path) if exact else _rounded(_rows(path))
        )
    if importlib.util.find_spec("verifiers") is None:
        pytest.skip("verifiers (>= 0.4) is not installed: the file is checked against datasets above")
    import_litellm()  # verifiers imports litellm: first make it use its local price list, never the network
    trace_store = pytest.importorskip("verifiers.v1.utils.trace_store", reason="verifiers is older than 0.4")
    from verifiers.v1.configs.agent import WireAgentConfig
    from verifiers.v1.state import State
    from verifiers.v1.task import WireTaskData
    from verifiers.v1.trace import Trace

    episodes = trace_store.read_episodes(tmp_path / "verifiers", Trace[WireTaskData, State, WireAgentConfig])
    by_id = {r.episode_id: r for r in rollouts_from_log(dense_run)}
    assert len(episodes) == len(by_id) == 3
    for episode in episodes:
        (trace,) = episode.traces
        rollout = by_id[trace.info["episode_id"]]
        assert trace.reward == pytest.approx(rollout.reward)
        assert trace.metrics["process_reward"] == pytest.approx(sum(rollout.process_rewards or []))


def test_a_live_chat_rollout_and_trls_environment_see_the_process_reward(puzzles: list[ARBenchPuzzle]) -> None:
    chat = ChatEnv(_dense(), items=puzzles)
    state = chat.start(puzzles[0].id, seed=3)
    asyncio_run(chat.step(state, "Question: Was the keeper dreaming?"))
    asyncio_run(chat.step(state, "Question: Was the keeper dreaming?"))
    assert [t.process_reward for t in state.turns] == [pytest.approx(SIXTH), pytest.approx(-SIXTH / 2)]
    assert chat.reward(state) == pytest.approx(SIXTH / 2)
    assert chat.rollout(state).process_rewards == [pytest.approx(SIXTH), pytest.approx(-SIXTH / 2)]

    tools = environment(_dense(), items=puzzles)()
    tools.reset(item_id=puzzles[0].id, seed=3)
    getattr(tools, "ask")("Had the keeper retired from the lighthouse?")  # noqa: B009 - a tool TRL calls by name
    assert tools.get_reward() == pytest.approx(SIXTH)


def asyncio_run(coroutine: Any) -> Any:
    import asyncio

    return asyncio.run(coroutine)
