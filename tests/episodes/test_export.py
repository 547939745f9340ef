"""``lateralgym export``: rollouts rebuilt from step logs, in three formats that load with ``datasets``."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from llm_server import Fault, ScriptedLLMServer, reply_tokens, token_ids, token_logprob

from lateralgym.agents._llm_usage import import_litellm
from lateralgym.agents._prompts import conversation_start, prompt_plan
from lateralgym.cli import main
from lateralgym.envs import EpisodeConfig, LateralEnv, load_sample_items, parse_action
from lateralgym.episodes import (
    EpisodeStart,
    ExportError,
    StepLine,
    export_run,
    read_log,
    rollouts_from_log,
    run,
)

PUZZLE = load_sample_items("splat")[0]


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def offline_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    return run("splat", player="heuristic", limit=2, repeats=2, out=out, progress=False).run_dir


@pytest.fixture
def llm_run(llm_server: ScriptedLLMServer, tmp_path: Path) -> Path:
    """One SPLAT episode by an LLM player asking for logprobs and token ids: two questions, then the answer."""
    llm_server.enqueue("Question: Is it a concert?", "Question: Are they deaf?", f"Answer: {PUZZLE.answer}")  # type: ignore[attr-defined]
    spec = f"openai/scripted?base_url={llm_server.base_url}&logprobs=true&token_ids=true&reasoning=direct"
    return run("splat", player=spec, limit=1, out=tmp_path, progress=False, cache_dir=tmp_path / "cache").run_dir


def test_an_offline_run_exports_each_episode_as_a_chat_with_rewards_and_groups(offline_run: Path) -> None:
    rollouts = list(rollouts_from_log(offline_run))
    assert len(rollouts) == 4 and sorted(r.group_id for r in rollouts) == sorted([r.item_id for r in rollouts])
    assert {r.group_id for r in rollouts} == {r.episode_id.split("#")[0] for r in rollouts}
    steps = [r for r in read_log(offline_run / "steps.jsonl") if isinstance(r, StepLine)]
    for rollout in rollouts:
        env = LateralEnv(EpisodeConfig.named("splat"))
        obs, info = env.reset(seed=rollout.seed, options={"item_id": rollout.item_id})
        assert rollout.prompt == conversation_start(prompt_plan(info), str(obs["text"]))  # an LLM player's prompt
        assert rollout.prompt_source == "rebuilt"
        roles = [m["role"] for m in rollout.completion]
        assert roles == ["assistant", "user"] * (len(rollout.turns) - 1) + ["assistant"]
        mine = [s for s in steps if s.episode_id == rollout.episode_id]
        moves = [m["content"] for m in rollout.completion if m["role"] == "assistant"]
        assert [parse_action(move).model_dump(exclude_none=True) for move in moves] == [s.action for s in mine]
        assert rollout.rewards == [s.reward for s in mine] and rollout.final_reply == mine[-1].reply.text


def test_every_format_loads_with_datasets_and_reads_back_unchanged(offline_run: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets", reason="the export extra (datasets) is not installed")
    for fmt in ("jsonl", "trl", "verifiers"):
        result = export_run(offline_run, fmt, tmp_path / f"{fmt}.jsonl")
        rows = _rows(result.path)
        assert result.episodes == len(rows) == 4
        loaded = datasets.load_dataset("json", data_files=str(result.path), split="train", cache_dir=str(tmp_path))
        assert loaded.to_list() == rows, fmt
    trl = _rows(tmp_path / "trl.jsonl")
    assert {"prompt", "completion", "reward", "label"} <= set(trl[0])
    assert trl[0]["prompt"][0]["role"] == "system" and trl[0]["completion"][0]["role"] == "assistant"


def test_an_llm_run_exports_the_exact_chat_sent_and_the_token_data(
    llm_run: Path, llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    (rollout,) = rollouts_from_log(llm_run)
    sent = [r.body for r in llm_server.requests if r.body]
    assert rollout.prompt_source == "logged" and len(sent) == 3
    assert rollout.messages[:-1] == sent[-1]["messages"]  # the last request held the whole chat but the reply
    assert rollout.messages[-1] == {"role": "assistant", "content": f"Answer: {PUZZLE.answer}"}  # type: ignore[attr-defined]
    assert all(body["logprobs"] is True and body["return_token_ids"] is True for body in sent)
    for turn, reply in zip(rollout.turns, [m["content"] for m in rollout.completion[::2]], strict=True):
        assert turn.tokens == reply_tokens(reply) and turn.token_ids == token_ids(reply)
        assert turn.logprobs == [token_logprob(t) for t in reply_tokens(reply)]
    assert rollout.solved and rollout.reward == pytest.approx(sum(rollout.rewards))

    record = _rows(export_run(llm_run, "verifiers", tmp_path / "traces.jsonl").path)[0]
    nodes = record["traces"][0]["nodes"]
    sampled = [n for n in nodes if n["sampled"]]
    assert [n["message"]["role"] for n in sampled] == ["assistant"] * 3
    assert sampled[2]["token_ids"] == token_ids(rollout.messages[-1]["content"]) and all(sampled[2]["mask"])
    assert sampled[2]["logprobs"] == rollout.turns[2].logprobs and record["group"]["id"] == PUZZLE.id  # type: ignore[attr-defined]
    jsonl = _rows(export_run(llm_run, "jsonl", tmp_path / "r.jsonl").path)[0]
    assert jsonl["turns"][2]["logprobs"] == rollout.turns[2].logprobs


def test_the_verifiers_export_loads_with_verifiers_own_reader(llm_run: Path, tmp_path: Path) -> None:
    if importlib.util.find_spec("verifiers") is None:
        pytest.skip("verifiers (>= 0.4) is not installed: the same file is checked against datasets above")
    import_litellm()  # verifiers imports litellm: first make it use its local price list, never the network
    trace_store = pytest.importorskip("verifiers.v1.utils.trace_store", reason="verifiers is older than 0.4")
    from verifiers.v1.configs.agent import WireAgentConfig
    from verifiers.v1.state import State
    from verifiers.v1.task import WireTaskData
    from verifiers.v1.trace import Trace

    export_run(llm_run, "verifiers", tmp_path / "traces.jsonl")
    (episode,) = trace_store.read_episodes(tmp_path, Trace[WireTaskData, State, WireAgentConfig])
    (rollout,) = rollouts_from_log(llm_run)
    (trace,) = episode.traces
    assert [(m.role, m.content) for m in trace.messages] == [(m["role"], m["content"]) for m in rollout.messages]
    assert trace.reward == pytest.approx(rollout.reward) and trace.metrics["solved"] == 1.0
    assert episode.group is not None and episode.group.id == rollout.group_id and trace.num_turns == 3
    assert trace.branches[0].logprobs == [lp for turn in rollout.turns for lp in turn.logprobs or []]


def test_a_log_written_before_prompts_were_logged_rebuilds_the_same_chat(llm_run: Path) -> None:
    (logged,) = rollouts_from_log(llm_run)
    log = llm_run / "steps.jsonl"
    lines = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    for line in lines:
        line.pop("prompt", None)
    log.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    assert all(r.prompt is None for r in read_log(log) if isinstance(r, EpisodeStart))
    (rebuilt,) = rollouts_from_log(llm_run)
    assert rebuilt.prompt_source == "rebuilt" and rebuilt.messages == logged.messages


def test_errored_episodes_are_left_out_unless_asked_for(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue("Question: Is it a concert?", Fault.status(400))
    spec = f"openai/scripted?base_url={llm_server.base_url}"
    run_dir = run("splat", player=spec, limit=1, out=tmp_path, progress=False, cache_dir=tmp_path / "cache").run_dir
    kept = export_run(run_dir, "trl", tmp_path / "a.jsonl")
    assert (kept.episodes, kept.errored_skipped) == (0, 1)
    every = export_run(run_dir, "jsonl", tmp_path / "b.jsonl", include_errored=True)
    (row,) = _rows(every.path)
    assert row["error"] and "400" in row["error"] and len(row["turns"]) == 1 and row["solved"] is False


def test_the_cli_exports_and_refuses_what_is_not_a_run(
    offline_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(offline_run), "--format", "trl"]) == 0
    assert "exported 4 episodes as trl" in capsys.readouterr().out
    assert len(_rows(offline_run / "export" / "trl.jsonl")) == 4
    assert main(["export", str(tmp_path)]) == 2
    assert "no steps.jsonl" in capsys.readouterr().err
    with pytest.raises(ExportError, match="unknown export format"):
        export_run(offline_run, "csv")


def test_a_chat_format_exports_one_run_while_csv_takes_several(
    offline_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(offline_run), str(offline_run), "--format", "trl"]) == 2
    assert "exports one run: give one RUN_DIR" in capsys.readouterr().err
    target = tmp_path / "rows.csv"
    assert main(["export", str(offline_run), "--format", "csv", "--out", str(target)]) == 0
    header, *rows = target.read_text(encoding="utf-8").splitlines()
    assert "episode_id" in header and len(rows) == 4  # two puzzles, two repeats
