"""A run's validity in one number (``summary.json``'s ``moves``), shown in the run's line, the report (which
leads with it past 10 % invalid), the viewer and the leaderboard (with how the replies were decoded); and
the time a local run will take, from one timed call."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from llm_server import ScriptedLLMServer

from lateralgym.agents import Speed, UsageMeter
from lateralgym.envs import EpisodeConfig, ModelCall
from lateralgym.episodes import (
    DryRun,
    RoleEstimate,
    dry_run,
    leaderboard,
    run,
    write_report,
    write_viewer,
)
from lateralgym.episodes._estimate import estimate_time
from lateralgym.episodes._leaderboard import leaderboard_cells
from lateralgym.episodes._progress import CallsColumn, RunProgress

MODEL = "openai/test-model"


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-moves-key")


def script(*replies: str) -> Callable[[dict[str, Any]], str]:
    """Replies in order, then the last one again (a model that settled)."""
    queue = list(replies)
    return lambda body: queue.pop(0) if len(queue) > 1 else queue[0]


def reasking_config() -> EpisodeConfig:
    data = EpisodeConfig.named("brainteaser").model_dump()
    return EpisodeConfig.from_dict({**data, "name": "brainteaser-reasks", "reasks": None}, source="test")


def play(server: ScriptedLLMServer, tmp_path: Path, config: EpisodeConfig | str, limit: int, **options: Any) -> Any:
    return run(
        config,
        player=options.pop("player", MODEL),
        base_url=server.base_url,
        limit=limit,
        out=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        concurrency=1,
        progress=False,
        **options,
    )


def test_summary_moves_count_invalid_reasked_and_fallback_moves(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    # Three puzzles: readable at once; readable after one re-ask; unreadable twice (invalid).
    llm_server.responder = script("Answer: A", "hmm", "Answer: B", "no idea", "still no idea", "pass")
    result = play(llm_server, tmp_path, reasking_config(), limit=3)
    moves = json.loads((result.run_dir / "summary.json").read_text())["moves"]
    assert moves == {
        "total": 3, "invalid": 1, "invalid_rate": 0.3333, "reasked": 2, "fallback": 0, "constrained": {},
    }  # fmt: skip
    assert result.moves.alarming and result.moves.line().startswith("moves: 3, invalid 1 (33.3 %)")


def test_a_fallback_move_is_counted(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.responder = script("I wonder.", "Perhaps the man was a twin.")  # read as an explanation attempt
    result = play(llm_server, tmp_path, EpisodeConfig.named("splat"), limit=1, player=f"{MODEL}?max_tokens=20")
    assert result.moves.fallback >= 1 and result.moves.reasked >= 1 and result.moves.invalid == 0


def test_the_report_leads_with_validity_past_ten_percent(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.default_reply = "I like turtles."  # the paper's single shot: every answer unread
    bad = play(llm_server, tmp_path, "brainteaser", limit=3)
    text = write_report(bad.run_dir).read_text()
    first_paragraph = text.split("\n\n")[1]
    assert first_paragraph.startswith("**Validity: 3 of 3 player moves (100.0 %) were invalid")
    assert "constrain=grammar" in first_paragraph
    llm_server.default_reply = "Answer: A"
    good = play(llm_server, tmp_path, "brainteaser", limit=3, use_cache=False)
    text = write_report(good.run_dir).read_text()
    assert "Validity:" not in text and "| player moves | 3, invalid 0 (0.0 %), re-asked 0, fallback 0 |" in text


def test_the_viewer_and_the_leaderboard_show_validity_and_decoding(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    def obeys(body: dict[str, Any]) -> str:
        return "ok" if body.get("grammar") == 'root ::= "ok"' else "Answer: A"

    llm_server.responder = obeys
    constrained = play(llm_server, tmp_path, "brainteaser", limit=2, player=f"{MODEL}?constrain=grammar")
    free = play(llm_server, tmp_path, "brainteaser", limit=2)
    offline = run("brainteaser", player="heuristic", limit=2, out=tmp_path / "runs", progress=False)
    board = leaderboard([constrained.run_dir, free.run_dir, offline.run_dir], resamples=0)
    by_dir = {row.run_dir: row for row in board.rows}
    assert by_dir[str(constrained.run_dir)].constrained == "grammar"
    assert by_dir[str(free.run_dir)].constrained == "off"
    assert by_dir[str(offline.run_dir)].constrained == "" and by_dir[str(offline.run_dir)].invalid_rate == 0.0
    header, rows = leaderboard_cells(board)
    assert header[-2:] == ["constrained", "invalid"]
    assert sorted(r[-2] for r in rows) == ["-", "grammar", "off"] and {r[-1] for r in rows} == {"0.0%"}

    page = write_viewer(constrained.run_dir).read_text()
    assert "player moves: 3, invalid 0 (0.0 %)" in page and "constrained: grammar 3" in page


def test_the_time_estimate_adds_reading_and_writing_and_says_how_to_shorten() -> None:
    dry = DryRun(
        config="splat", benchmark="splat", mode="multiturn", episodes=10, items=10, repeats=1, max_turns=15,
        player="local/smollm2", judge="local/smollm2",
        roles=[
            RoleEstimate(role="player", model="local/smollm2", calls=(10, 150), prompt_tokens=(4000, 80000),
                         completion_tokens=(400, 6000), cost_usd=(0, 0), price="free"),
            RoleEstimate(role="judge", model="local/smollm2", calls=(10, 150), prompt_tokens=(3000, 45000),
                         completion_tokens=(50, 750), cost_usd=(0, 0), price="free"),
        ],
    )  # fmt: skip
    speed = Speed(read_tokens_per_s=100.0, write_tokens_per_s=10.0, seconds=1.0)
    estimate = estimate_time(dry, speed, "local/smollm2, 1 thread", ["player", "judge"])
    # Fewest: 4000 + 3000 read at 100/s, 450 written at 10/s. Most: each later call reads 60 new tokens.
    assert estimate.low_s == pytest.approx(70 + 45)
    assert estimate.high_s == pytest.approx((7000 + 280 * 60) / 100 + 6750 / 10)
    line = estimate.line()
    assert line.startswith("time: about 2 min to 15 min for 20-300 local model calls (local/smollm2, 1 thread")
    assert "--sample 6 or --max-turns 9 keeps it near 10 min" in line
    judge_only = estimate_time(dry, speed, "x", ["judge"])
    assert judge_only.calls == (10, 150) and judge_only.advice() is None


def test_a_dry_run_of_a_local_model_costs_nothing_and_counts_constrained_replies(tmp_path: Path) -> None:
    config = EpisodeConfig.named("brainteaser")
    local = dry_run(config, player="local/smollm2", limit=2)
    player = local.roles[0]
    assert player.cost_usd == (0.0, 0.0) and "no cost" in player.price
    assert player.completion_tokens[0] == local.episodes * 3  # "Answer: X" and a margin: 3 tokens a call
    free = dry_run(config, player="local/smollm2?constrain=off", limit=2)
    assert free.roles[0].completion_tokens[0] == free.episodes * 512  # a local spec's reply cap
    assert local.first_prompt and local.first_prompt[0]["role"] == "system"
    assert "first_prompt" not in local.model_dump()


def test_the_progress_bar_shows_calls_and_tokens_per_second() -> None:
    meter = UsageMeter()
    for _ in range(3):
        meter.record(ModelCall(text="ok", completion_tokens=10))
    bar = RunProgress(total=5, label="splat", meters=[meter], enabled=False)
    column = next(c for c in bar.progress.columns if isinstance(c, CallsColumn))
    text = column.render(bar.progress.tasks[0]).plain
    assert text.startswith("3 calls, ") and text.endswith(" tok/s")
    assert not any(isinstance(c, CallsColumn) for c in RunProgress(total=5).progress.columns)  # offline: none
