"""A weak model as SPLAT player: format re-asks, the fallback reading, and their counts, over the real
loopback server (scripted replies of the kind a small local model writes)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _items import PUZZLES, STORY
from llm_server import ScriptedLLMServer, count_words

import lateralgym
from lateralgym.agents._llm_client import LLMClient, LLMConfigError
from lateralgym.agents._llm_player import LLMPlayer
from lateralgym.envs.benchmarks.splat._player import REASK
from lateralgym.envs.benchmarks.splat._reply import fallback_move
from lateralgym.episodes import StepLine, read_log, run, write_report

MODEL = "openai/weak-model"
PROSE = "The violinist is a very good musician and people like the music very much"
_clients: list[LLMClient] = []


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-weak-key")
    yield
    while _clients:
        _clients.pop().close()


def make_player(server: ScriptedLLMServer, tmp_path: Path, **kwargs: Any) -> LLMPlayer:
    client = LLMClient(MODEL, base_url=server.base_url, cache_dir=tmp_path / "cache", timeout=5.0, max_retries=0)
    _clients.append(client)
    return LLMPlayer(client, **kwargs)


def first_move(server: ScriptedLLMServer, player: LLMPlayer) -> Any:
    env = lateralgym.make("splat", items=[STORY])
    obs, info = env.reset(seed=0, options={"item_id": STORY.id})
    player.reset(obs, info, seed=0)
    action = player.act(obs, info)
    _, _, _, _, info = env.step(action)
    return action, info


def chats(server: ScriptedLLMServer) -> list[list[dict[str, str]]]:
    return [r.body["messages"] for r in server.requests if r.path.endswith("/chat/completions")]


def test_an_unparsable_reply_is_re_asked_once_with_the_format(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue(PROSE, "Question: Was the violinist on a screen?")
    player = make_player(llm_server, tmp_path)
    action, info = first_move(llm_server, player)

    assert action.kind == "ask" and action.question == "Was the violinist on a screen?"
    assert info["public"]["history"] == [["Was the violinist on a screen?", "yes"]]  # one round used, not two
    first, second = chats(llm_server)
    assert second[: len(first)] == first  # the same chat, continued
    assert second[len(first) :] == [{"role": "assistant", "content": PROSE}, {"role": "user", "content": REASK}]
    record = player.last_llm
    assert record is not None and record.format_reasks == 1 and record.fallback is None
    assert record.unparsed_replies == (PROSE,) and record.error is None
    # both requests are paid for: the record sums their tokens
    assert record.completion_tokens == count_words(PROSE) + count_words("Question: Was the violinist on a screen?")


@pytest.mark.parametrize(
    ("last", "kind", "text"),
    [
        (PROSE, "commit", PROSE),  # a statement is graded as an explanation attempt
        ("hmm so maybe is it a film? I am not sure", "ask", "hmm so maybe is it a film?"),
    ],
    ids=["statement", "question-inside-a-line"],
)
def test_still_unparsable_after_the_re_asks_the_fallback_reads_it(
    llm_server: ScriptedLLMServer, tmp_path: Path, last: str, kind: str, text: str
) -> None:
    llm_server.enqueue(PROSE, "I do not know really", last)
    player = make_player(llm_server, tmp_path, reasks=2)
    action, _ = first_move(llm_server, player)

    assert llm_server.chat_calls == 3
    assert action.kind == kind and (action.answer if kind == "commit" else action.question) == text
    record = player.last_llm
    assert record is not None and (record.format_reasks, record.fallback) == (2, kind)
    assert record.parsed_action == action.model_dump(exclude_none=True) and record.error is None


def test_no_re_ask_where_the_benchmark_grades_a_single_answer(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue("I like turtles.")
    env = lateralgym.make("brainteaser", items=list(PUZZLES))
    obs, info = env.reset(seed=0, options={"item_id": "SP-1"})
    player = make_player(llm_server, tmp_path)
    player.reset(obs, info, seed=0)
    assert player.act(obs, info).kind == "invalid" and llm_server.chat_calls == 1


def test_reasks_option_is_checked() -> None:
    with pytest.raises(LLMConfigError, match="reasks"):
        LLMPlayer.from_spec("openai/m?reasks=9&base_url=http://127.0.0.1:9/v1&api_key_env=NO_SUCH_KEY_VAR")


def test_fallback_move_keeps_empty_replies_invalid() -> None:
    assert fallback_move("  \n ** \n") is None
    assert fallback_move("Why? Because.").question == "Why?"  # type: ignore[union-attr]


def weak_splat_model(body: dict[str, Any]) -> str:
    """A player that writes prose first and a question only when re-asked; a judge that says no."""
    text = "\n".join(str(m["content"]) for m in body["messages"])
    if "FULL EXPLANATION (secret" in text:
        return "no"
    last = body["messages"][-1]["content"]
    return "Question: Is it a dream?" if last == REASK else "I think it is very strange story"


def test_a_run_counts_re_asks_and_fallbacks_in_usage_summary_and_report(tmp_path: Path) -> None:
    with ScriptedLLMServer(responder=weak_splat_model).start() as server:
        result = run(
            "splat",
            player=f"openai/weak?base_url={server.base_url}&reasks=1",
            judge=f"openai/judge?base_url={server.base_url}",
            limit=1,
            out=tmp_path / "runs",
            cache_dir=tmp_path / "cache",
            progress=False,
        )
    steps = [r for r in read_log(result.run_dir / "steps.jsonl") if isinstance(r, StepLine) and r.agent == "player"]
    assert len(steps) == 15 and all(s.llm is not None and s.llm.format_reasks == 1 for s in steps)
    assert all(s.action["kind"] == "ask" for s in steps)
    usage = json.loads((result.run_dir / "summary.json").read_text())["llm_usage"]["player"]
    assert (usage["format_reasks"], usage["fallbacks"], usage["calls"]) == (15, 0, 30)
    report = write_report(result.run_dir).read_text()
    assert "## Model usage" in report and "format_reasks" in report


def test_without_re_asks_and_fallback_a_prose_reply_is_an_invalid_move(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.enqueue(PROSE)
    player = make_player(llm_server, tmp_path, reasks=0, fallback=False)
    action, info = first_move(llm_server, player)
    assert action.kind == "invalid" and llm_server.chat_calls == 1
    assert player.last_llm is not None and player.last_llm.error is not None and player.last_llm.fallback is None
