"""Before spending: ``--dry-run`` (episodes, calls, tokens and cost per role from the real opening
prompts and the offline price table; nothing sent or written), recorded cost without litellm, and
run folders named after the player's model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer

from lateralgym.agents import LLMClient
from lateralgym.agents._prices import offline_price, price_per_million
from lateralgym.cli import main
from lateralgym.envs import EpisodeConfig
from lateralgym.episodes import dry_run, run
from lateralgym.episodes._dryrun import CHARS_PER_TOKEN, COMPLETION_TOKENS, EXCHANGE_TOKENS
from lateralgym.episodes._rundir import player_slug

KEY = "sk-dry-run-test"


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("openai/gpt-4o-mini", "gpt-4o-mini"),
        ("openai/gpt-4o-mini-2024-07-18?temperature=0", "gpt-4o-mini"),
        ("openai/gpt-4o", "gpt-4o"),
        ("anthropic/claude-3-5-haiku-latest", "claude-3-5-haiku"),
        ("gemini/gemini-2.5-pro-preview-05-06", "gemini-2.5-pro"),
        ("openai/qwen2.5-7b-instruct", None),
        ("openai/gpt-4o-minimal", None),  # a prefix is not a family: only whole name parts count
    ],
)
def test_the_price_table_finds_model_families(model: str, family: str | None) -> None:
    entry = price_per_million(model)
    assert (entry[0] if entry else None) == family


def test_offline_price() -> None:
    assert offline_price("openai/gpt-4o-mini", 1_000_000, 1_000_000) == pytest.approx(0.15 + 0.60)
    assert offline_price("openai/unknown-model", 10, 10) is None


def test_a_call_is_priced_from_the_table_without_litellm(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import lateralgym.agents._llm_client as client_module

    monkeypatch.setattr(client_module, "lookup_cost_usd", lambda *args: None)  # as without litellm
    server = ScriptedLLMServer(default_reply="four words of reply").start()
    try:
        client = LLMClient("openai/gpt-4o-mini", base_url=server.base_url, cache_dir=tmp_path, use_cache=False)
        call = client.complete_sync("one two three")
        client.close()
    finally:
        server.stop()
    assert (call.prompt_tokens, call.completion_tokens) == (3, 4)
    assert call.cost_usd == pytest.approx((3 * 0.15 + 4 * 0.60) / 1_000_000)


@pytest.mark.parametrize(
    ("player", "slug"),
    [
        ("openai/gpt-4o-mini?temperature=0&base_url=http://u:secret@h/v1", "gpt-4o-mini"),
        ("anthropic/claude-3-5-haiku-latest", "claude-3-5-haiku-latest"),
        ("openai/org/Model Name: v2!", "Model-Name-v2"),
        ("oracle", "oracle"),
        ("openai/" + "x" * 80, "x" * 40),
    ],
)
def test_player_slug(player: str, slug: str) -> None:
    assert player_slug(player) == slug


def test_run_folders_are_named_after_the_player(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run("splat", player="oracle", limit=1, out=tmp_path, progress=False).run_dir.name.startswith(
        "splat-oracle-2"
    )
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server = ScriptedLLMServer(default_reply="Answer: A").start()
    try:
        result = run(
            "riddlesense", player="openai/gpt-4o-mini?max_retries=0", base_url=server.base_url, limit=1, out=tmp_path,
            progress=False, use_cache=False,
        )  # fmt: skip
    finally:
        server.stop()
    assert result.run_dir.name.startswith("riddlesense-gpt-4o-mini-2") and result.run_id == result.run_dir.name
    assert result.usage["player"].cost_usd is not None  # priced (litellm's list or the offline table)


def test_dry_run_sends_nothing_writes_nothing_and_counts_calls(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = ScriptedLLMServer(default_reply="yes").start()
    try:
        argv = ["run", "splat", "--player", "openai/gpt-4o-mini", "--judge", "openai/gpt-4o-mini?samples=3"]
        argv += ["--base-url", server.base_url, "--limit", "4", "--max-turns", "5", "--dry-run"]
        assert main([*argv, "--out", str(tmp_path / "runs")]) == 0
        assert server.requests == []
    finally:
        server.stop()
    assert not (tmp_path / "runs").exists()
    out = capsys.readouterr().out
    assert "dry run of splat (splat, multiturn): 4 episodes = 4 items x 1 repeat(s), up to 5 turns each" in out
    assert "player openai/gpt-4o-mini: 4 - 20 calls" in out
    assert "judge openai/gpt-4o-mini: 12 - 60 calls" in out  # up to one call per move, 3 samples each
    assert "gpt-4o-mini: $0.15 in / $0.6 out per 1M tokens" in out and "estimated cost $" in out


def test_dry_run_counts_the_real_opening_prompt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The estimate's fewest prompt tokens are the opening prompts the run really sends."""
    config = EpisodeConfig.named("riddlesense")
    estimate = dry_run(config, player="openai/gpt-4o-mini", limit=3)
    (player,) = estimate.roles
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    server = ScriptedLLMServer(default_reply="Answer: A").start()
    try:
        result = run(config, player="openai/gpt-4o-mini", base_url=server.base_url, limit=3, out=tmp_path,
                     progress=False, use_cache=False)  # fmt: skip
    finally:
        server.stop()
    sent = [json.loads(p.read_text())["messages"] for p in (result.run_dir / "prompts").glob("*.json")]
    assert len(sent) == 3 and player.calls == (3, 3)  # one turn each: no range
    expected = sum(max(1, round(len(m["content"]) / CHARS_PER_TOKEN)) for messages in sent for m in messages)
    assert player.prompt_tokens == (expected, expected)
    assert player.completion_tokens == (3 * COMPLETION_TOKENS, 3 * COMPLETION_TOKENS)
    assert player.cost_usd is not None
    assert player.cost_usd[0] == pytest.approx((expected * 0.15 + 3 * COMPLETION_TOKENS * 0.6) / 1e6)


def test_dry_run_of_a_multi_turn_range_and_of_offline_roles() -> None:
    config = EpisodeConfig.named("splat").model_copy(update={"max_turns": 4})
    (player,) = dry_run(config, player="openai/some-local-model", limit=2).roles
    low, high = player.prompt_tokens
    assert high == 4 * low + 2 * EXCHANGE_TOKENS * (4 * 3 // 2)  # each turn resends the chat so far
    assert player.cost_usd is None and "not in the offline price table" in player.price
    offline = dry_run(EpisodeConfig.named("creativity-interactive"), limit=2)
    assert offline.roles == [] and "no model calls" in offline.render()


def test_dry_run_refuses_resume(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = run("splat", player="oracle", limit=1, out=tmp_path, progress=False).run_dir
    assert main(["run", "--resume", str(run_dir), "--dry-run"]) == 2
    assert "--dry-run estimates a new run" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--limit", "0"], "nothing to run: --limit 0 selects no item"),
        (["--stop-after-errors", "-5"], "--stop-after-errors must be 0 (never) or more, got -5"),
        (["--player", "C:\\x"], "unknown player 'C:\\\\x'; offline players are: random, heuristic, oracle, human"),
        # the judge is built on both paths: another benchmark's judge, settings on an offline one
        (["--judge", "exact"], "judge 'exact' cannot judge splat (it judges brainteaser, creativity, riddlesense)"),
        (["--judge", "reference?samples=3"], "judge 'reference' is an offline judge and takes no settings"),
        # a model judge's options are read on both paths too (its key is only the run's to need)
        (["--judge", "openai/x?samples=0"], "openai/x: judge option 'samples': expected 1 or more, got 0"),
        (["--judge", "openai/x?sampels=3"], "openai/x: unknown judge option(s) sampels"),
    ],
)
def test_dry_run_refuses_what_a_run_refuses(
    flags: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dry run checks the run's options on the same path as a run: one line, exit 2, nothing made."""
    for extra in (["--dry-run"], []):
        assert main(["run", "splat", *flags, *extra, "--out", str(tmp_path / "runs"), "--no-progress"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("lateralgym: error: ") and message in err[0], err
    assert not (tmp_path / "runs").exists()
