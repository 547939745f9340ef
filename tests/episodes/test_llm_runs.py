"""Whole runs with LLM players and judges against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from llm_server import Fault, ScriptedLLMServer

from lateralgym.cli import main
from lateralgym.envs import load_sample_items
from lateralgym.episodes import (
    EpisodeEnd,
    EpisodeStart,
    StepLine,
    metrics_and_usage,
    read_log,
    replay,
    run,
    usage_from_log,
)

PUZZLES = {p.story: p for p in load_sample_items("splat")}  # type: ignore[union-attr]
KEY = "sk-test-SECRET-4f9d2c1e7b"


def _text(body: dict[str, Any]) -> str:
    return "\n".join(str(m.get("content", "")) for m in body["messages"])


def splat_actor(body: dict[str, Any]) -> str:
    """Plays both roles as a cooperative model would: the player asks twice then explains; the judge
    says yes to questions and accepts an explanation that is the hidden answer."""
    text = _text(body)
    if "FULL EXPLANATION (secret" in text:
        secret = re.search(r"FULL EXPLANATION \(secret, for you only\): (.*)", text)
        assert secret is not None
        if "proposes an explanation" in text:
            return "correct" if secret.group(1).strip()[:40] in text.split("secret, for you only")[-1] else "not yet"
        return "yes"
    puzzle = next(p for story, p in PUZZLES.items() if story in text)
    asked = sum(1 for m in body["messages"] if m["role"] == "assistant")
    if asked < 2:
        return f"Question: Is round {asked + 1} about the {puzzle.title.lower()}?"
    return f"Answer: {puzzle.answer}"


@pytest.fixture
def actor_server() -> Any:
    server = ScriptedLLMServer(responder=splat_actor, require_key=KEY).start()
    try:
        yield server
    finally:
        server.stop()


def _records(run_dir: Path) -> list[Any]:
    return list(read_log(run_dir / "steps.jsonl"))


def test_full_splat_run_with_llm_player_and_llm_judge_from_the_cli(
    actor_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    code = main(
        [
            "run",
            "splat",
            "--player",
            "openai/test-player",
            "--judge",
            "openai/test-judge",
            "--base-url",
            actor_server.base_url,
            "--limit",
            "3",
            "--out",
            str(tmp_path / "runs"),
            "--cache-dir",
            str(tmp_path / "cache"),
            "--no-progress",
        ]
    )
    assert code == 0
    out = capsys.readouterr().out
    assert "player LLM: 9 calls" in out and "judge LLM: 9 calls" in out
    (run_dir,) = (tmp_path / "runs").iterdir()
    records = _records(run_dir)
    ends = [r for r in records if isinstance(r, EpisodeEnd)]
    assert len(ends) == 3 and all(e.outcome and e.outcome["solved"] and e.outcome["turns"] == 3 for e in ends)
    steps = [r for r in records if isinstance(r, StepLine)]
    assert all(s.llm is not None and s.llm.text and s.llm.model == "openai/test-player" for s in steps)
    first = [s for s in steps if s.episode_id == ends[0].episode_id]
    assert [s.judge_label for s in first] == ["yes", "yes", "correct"]
    assert json.loads((run_dir / "summary.json").read_text())["headline"]["acc"] == 100.0
    # every request carried the key, and no file of the run or the cache holds it
    assert all(r.headers.get("authorization") == f"Bearer {KEY}" for r in actor_server.requests)
    for path in [*run_dir.rglob("*"), *(tmp_path / "cache").rglob("*")]:
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path
            assert "SECRET-4f9d" not in path.read_text(errors="replace"), path


def test_rerun_hits_the_cache_and_costs_zero_calls(
    actor_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    kwargs: dict[str, Any] = {
        "player": "openai/test-player",
        "judge": "openai/test-judge",
        "base_url": actor_server.base_url,
        "limit": 2,
        "cache_dir": tmp_path / "cache",
        "progress": False,
    }
    first = run("splat", out=tmp_path / "a", **kwargs)
    calls = actor_server.chat_calls
    assert calls == 12 and first.usage["player"].calls == 6
    second = run("splat", out=tmp_path / "b", **kwargs)
    assert actor_server.chat_calls == calls  # not one request more
    assert second.usage["player"].calls == 0 and second.usage["player"].cache_hits == 6
    assert second.usage["judge"].calls == 0 and second.usage["judge"].cache_hits == 6
    assert second.metrics.headline == first.metrics.headline
    steps = [r for r in _records(second.run_dir) if isinstance(r, StepLine)]
    assert all(s.llm is not None and s.llm.cache_hit for s in steps)
    # replay re-steps from the log with the logged judge replies: no API calls either
    assert all(r.divergence is None for r in replay(second.run_dir))
    assert actor_server.chat_calls == calls


def test_an_unpriced_models_cost_reads_back_as_unknown_not_free(
    actor_server: ScriptedLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The log leaves ``None`` fields out; an unknown cost must still be written (as null), or it
    would read back as the default 0.0 and the summary would call a paid run free."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    result = run(
        "splat",
        player="openai/test-player",
        judge="openai/test-judge",
        base_url=actor_server.base_url,
        limit=2,
        out=tmp_path,
        use_cache=False,
        progress=False,
    )
    ends = [r for r in _records(result.run_dir) if isinstance(r, EpisodeEnd)]
    assert len(ends) == 2
    assert all(end.usage["player"].calls > 0 and end.usage["player"].cost_usd is None for end in ends)
    assert result.usage["player"].cost_usd is None and result.usage["judge"].cost_usd is None
    summary = json.loads((result.run_dir / "summary.json").read_text(encoding="utf-8"))
    assert '"cost_usd": null' in json.dumps(summary) and '"cost_usd": 0.0' not in json.dumps(summary)

    # An episode recorded twice (two writers) counts once, by its last end; report reads usage and
    # metrics in the one pass and keeps only numbers per episode.
    log = result.run_dir / "steps.jsonl"
    first_end = next(line for line in log.read_text(encoding="utf-8").splitlines() if '"episode_end"' in line)
    again = json.loads(first_end)
    again["usage"]["player"]["calls"] += 100
    with log.open("a", encoding="utf-8") as f:
        f.write(json.dumps(again) + "\n")
    metrics, usage = metrics_and_usage(log)
    assert usage["player"].calls == result.usage["player"].calls + 100 and usage["player"].cost_usd is None
    assert usage_from_log(log) == usage and metrics.duplicates == 1


def test_ten_percent_faults_every_episode_ends_and_no_step_is_lost(tmp_path: Path) -> None:
    faults = (Fault.status(500), Fault.status(503), Fault.rate_limit(0.01), Fault.garbage(), Fault.empty())
    server = ScriptedLLMServer(responder=splat_actor, fault_rate=0.10, fault_kinds=faults, seed=7).start()
    try:
        result = run(
            "splat",
            player="openai/test-player?max_retries=0&timeout=5",
            judge="openai/test-judge",
            base_url=server.base_url,
            limit=20,
            concurrency=4,
            use_cache=False,
            out=tmp_path,
            progress=False,
        )
        served = server.faults_served
    finally:
        server.stop()
    assert served > 0
    records = _records(result.run_dir)
    starts = {r.episode_id for r in records if isinstance(r, EpisodeStart)}
    ends = [r for r in records if isinstance(r, EpisodeEnd)]
    assert len(starts) == len(ends) == 20 and {e.episode_id for e in ends} == starts
    errored = [e for e in ends if e.error]
    assert errored, "with retries off for the player, some faults must end episodes"
    assert all("LLMCallError" in e.error or "Invalid" in e.error for e in errored)  # type: ignore[operator]
    for end in ends:  # every completed turn has its step line
        lines = [r for r in records if isinstance(r, StepLine) and r.episode_id == end.episode_id]
        turns = end.outcome["turns"] if end.outcome else 0
        # an episode that errored inside a step ends with that step unlogged (it never completed)
        assert [s.step for s in lines] == list(range(1, len(lines) + 1)) and turns - len(lines) in (0, 1)
    assert result.metrics.errored == len(errored)
    assert all((e.outcome or {}).get("solved") or e.error or e.truncated or e.terminated for e in ends)


def test_llm_player_on_brainteaser_and_creativity(tmp_path: Path) -> None:
    def answer(body: dict[str, Any]) -> str:
        text = _text(body)
        if "CHOICES:" in text or "\nChoice:\n" in text:  # our layout, or the paper's (the config's default)
            return "The twist is in the wording, so the answer is (A)."
        entities = re.search(r"ENTITIES AROUND YOU: (.*)", text)
        if entities and body["messages"][-1]["content"].startswith("TASK"):
            return json.dumps({"action": "inspect", "entity": entities.group(1).split(";")[0].upper()})
        first = re.search(r"^(.+):\n  - (\w+):", text, re.M)
        assert first is not None
        commit = {"action": "commit", "gold_entity": first.group(1), "gold_part": first.group(2), "how_to_use": "press"}
        return f"```json\n{json.dumps(commit)}\n```"

    server = ScriptedLLMServer(responder=answer).start()
    try:
        bt = run(
            "brainteaser",
            player="openai/m",
            base_url=server.base_url,
            limit=6,
            out=tmp_path,
            progress=False,
            cache_dir=tmp_path / "c",
        )
        cb = run(
            "creativity-explore",
            player="openai/m",
            base_url=server.base_url,
            limit=4,
            out=tmp_path,
            progress=False,
            cache_dir=tmp_path / "c",
        )
    finally:
        server.stop()
    bt_steps = [r for r in _records(bt.run_dir) if isinstance(r, StepLine)]
    assert [s.action for s in bt_steps] == [{"kind": "commit", "choice": 0}] * 6
    cb_steps = sorted(
        (r for r in _records(cb.run_dir) if isinstance(r, StepLine)), key=lambda r: (r.episode_id, r.step)
    )
    assert [s.action["kind"] for s in cb_steps] == ["inspect", "commit"] * 4
    assert all(s.valid for s in cb_steps)  # the upper-cased entity name was matched
    assert cb.metrics.headline["mean_inspections"] == 1.0


def test_credentials_in_server_urls_stay_out_of_the_manifest(tmp_path: Path) -> None:
    server = ScriptedLLMServer(default_reply="Answer: (A)").start()
    try:
        url = server.base_url.replace("http://", "http://alice:pw-SECRET-77@")
        result = run(
            "brainteaser",
            player=f"openai/m?base_url={url}",
            judge="exact",
            base_url=url,
            limit=1,
            out=tmp_path,
            cache_dir=tmp_path / "cache",
            progress=False,
        )
    finally:
        server.stop()
    assert result.ran == 3  # --limit 1 plays the first puzzle's whole group
    for path in [*result.run_dir.rglob("*"), *(tmp_path / "cache").rglob("*")]:
        if path.is_file():
            assert "pw-SECRET-77" not in path.read_text(errors="replace"), path


def test_llm_concurrency_caps_requests_in_flight(tmp_path: Path) -> None:
    from lateralgym.agents import set_default_concurrency

    server = ScriptedLLMServer(default_reply="Answer: (A)", latency_s=0.05).start()
    try:
        run(
            "brainteaser",
            player="openai/m",
            judge="exact",
            base_url=server.base_url,
            limit=12,
            concurrency=8,
            llm_concurrency=2,
            use_cache=False,
            out=tmp_path,
            progress=False,
        )
        assert server.chat_calls == 12 and server.max_in_flight == 2
    finally:
        server.stop()
        set_default_concurrency(8)
