"""``lateralgym kb build --dry-run`` and ``lateralgym kb stats``, and the commands' one-line errors."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from _kb_replies import KBResponder
from llm_server import ScriptedLLMServer

from lateralgym.cli import main
from lateralgym.databuild._cost import estimate_cost_usd, price_per_million
from lateralgym.databuild._store import CheckpointStore
from lateralgym.envs.benchmarks.creativity.databuild._kb_build import KBBuildConfig, run_kb_build
from lateralgym.envs.benchmarks.creativity.databuild._kb_dryrun import ASSUMED_PARTS, plan_kb_build


def test_a_dry_run_of_a_fresh_build_estimates_every_stage_and_prices_known_models(tmp_path: Path) -> None:
    config = KBBuildConfig(scenes=("kitchen", "garage"), entities_per_scene=10, model="openai/gpt-4o-mini")
    plan = plan_kb_build(config, tmp_path / "kb")
    calls = {name: stage.calls for name, stage in plan.stages.items()}
    assert calls["entities"] == 2 and calls["parts"] == 20
    assert calls["physical"] == calls["states"] == 20 * ASSUMED_PARTS
    # 3 x 3 variants per part: every (physical, state) pair of a part is needed at most once.
    assert 20 * ASSUMED_PARTS * 3 <= calls["affordances"] <= 20 * ASSUMED_PARTS * 9
    assert all(stage.prompt_tokens > 0 and stage.completion_tokens > 0 for stage in plan.stages.values())
    prompt = sum(s.prompt_tokens for s in plan.stages.values())
    completion = sum(s.completion_tokens for s in plan.stages.values())
    assert plan.cost_usd == estimate_cost_usd("openai/gpt-4o-mini", prompt, completion) > 0
    assert not (tmp_path / "kb").exists()  # a dry run writes nothing


def test_unknown_prices_are_unknown_not_zero() -> None:
    assert price_per_million("openai/my-local-model", use_litellm=False) is None
    assert estimate_cost_usd("openai/my-local-model", 10, 10, use_litellm=False) is None
    assert price_per_million("openai/gpt-4o-mini?temperature=0") == (0.15, 0.60)


def test_a_dry_run_after_a_build_is_exact_and_sends_nothing(
    llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.responder = KBResponder()
    config = KBBuildConfig(
        scenes=("bathroom",), entities_per_scene=1, model="openai/annotator", base_url=llm_server.base_url
    )
    asyncio.run(run_kb_build(config, tmp_path, cache_dir=tmp_path / "cache"))
    calls = llm_server.chat_calls
    plan = plan_kb_build(config, tmp_path)
    assert plan.calls == 0 and plan.cost_usd is None  # a local server's price is unknown
    assert {name: stage.cached for name, stage in plan.stages.items()} == {
        "entities": 1,
        "parts": 1,
        "physical": 3,
        "states": 3,
        "affordances": 12,
    }
    argv = ["kb", "build", "--scenes", "bathroom", "--entities-per-scene", "1", "--model", "openai/annotator"]
    assert main([*argv, "--base-url", llm_server.base_url, "--out", str(tmp_path), "--dry-run"]) == 0
    shown = capsys.readouterr().out
    assert "Dry run" in shown and "affordances" in shown and "unknown" in shown
    assert llm_server.chat_calls == calls

    assert main(["kb", "stats", str(tmp_path), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["total"]["entities"] == 1 and stats["total"]["variants"] == 48
    assert main(["kb", "stats", str(tmp_path / "kb.jsonl")]) == 0
    assert "Table 2" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--scenes", "attic"], "--scenes: Input should be 'kitchen', 'living_room'"),
        (["--scenes", "kitchen", "--entities-per-scene", "0"], "--entities-per-scene: Input should be greater"),
        (["--scenes", "kitchen", "--embedder", "word2vec"], "unknown embedder 'word2vec'"),
    ],
)
def test_bad_options_are_one_line_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["kb", "build", "--model", "openai/x", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path)]
    assert main([*base, *argv]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("lateralgym: error: ") and message in err and "\n" not in err


def test_a_second_build_of_a_running_directory_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["kb", "build", "--scenes", "kitchen", "--model", "openai/x", "--base-url", "http://127.0.0.1:9/v1"]
    with CheckpointStore(tmp_path / "checkpoints"):  # a build holding the directory
        assert main([*argv, "--out", str(tmp_path)]) == 2
    assert "another build is using this directory" in capsys.readouterr().err


def test_stats_of_a_missing_kb_says_what_to_give(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["kb", "stats", str(tmp_path)]) == 2
    assert "give a kb build directory or an Entity JSONL file" in capsys.readouterr().err


def test_credentials_in_the_server_url_reach_no_file(
    llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.responder = KBResponder()
    url = llm_server.base_url.replace("http://", "http://builder:SECRET-tok-123@")
    model = f"openai/annotator?base_url={url}"
    argv = ["kb", "build", "--scenes", "garden", "--entities-per-scene", "1", "--model", model, "--quiet"]
    assert main([*argv, "--base-url", url, "--out", str(tmp_path)]) == 0
    assert "1 entities (48 entity variants) written" in capsys.readouterr().out
    written = [path for path in tmp_path.rglob("*") if path.is_file()]
    assert len(written) >= 7 and not [p for p in written if "SECRET-tok-123" in p.read_text(errors="replace")]
    settings = json.loads((tmp_path / "build.json").read_text())["settings"]
    assert settings["base_url"] == llm_server.base_url and "builder" not in settings["model"]


def test_a_scene_whose_entity_list_stays_invalid_is_reported_and_asked_again(
    llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    responder = KBResponder()
    responder.spoil("TASK: list household entities", "garbage")  # as a too-small model answers
    llm_server.responder = responder
    argv = ["kb", "build", "--scenes", "kitchen", "--entities-per-scene", "2", "--model", "openai/annotator"]
    argv += ["--base-url", llm_server.base_url, "--out", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "0 entities (0 entity variants) written" in out
    assert "kitchen: 0 of 2 entities" in out and "rerun the same command to ask again" in out
    assert "skipped" in out and llm_server.chat_calls == 3  # asked, re-asked twice, given up
    assert (tmp_path / "kb.jsonl").read_text() == ""
    responder.sabotage.clear()
    assert main(argv) == 0
    assert "2 entities (96 entity variants) written" in capsys.readouterr().out
