"""Constrained actions and re-asks: the player sends its benchmark's action grammar (GBNF or JSON schema)
in the request, falls back only when told to, and re-asks single-shot configs unless the config keeps the
paper's one shot; over the real OpenAI-compatible test server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _items import PUZZLES
from llm_server import Fault, ScriptedLLMServer

import lateralgym
from lateralgym.agents import Constraint, ConstraintRejectedError, parse_constrain, player_factory
from lateralgym.agents._llm_client import LLMCallError, LLMClient
from lateralgym.agents._llm_player import LLMPlayer
from lateralgym.cli import main
from lateralgym.envs import EpisodeConfig, Invalid, get_benchmark
from lateralgym.episodes import StepLine, read_log, run

MODEL = "openai/test-model"


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-constraint-key")
    yield


def chat_bodies(server: ScriptedLLMServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.path.endswith("/chat/completions")]


def player(server: ScriptedLLMServer, tmp_path: Path, **options: Any) -> LLMPlayer:
    client = LLMClient(MODEL, base_url=server.base_url, cache_dir=tmp_path / "cache", max_retries=0, timeout=5)
    return LLMPlayer(client, **options)


def first_move(player_: LLMPlayer, config: str = "brainteaser") -> tuple[Any, dict[str, Any]]:
    env = lateralgym.make(config, items=list(PUZZLES))
    obs, info = env.reset(seed=0, options={"item_id": "SP-1"})
    player_.reset(obs, info, seed=0)
    return player_.act(obs, info), info


def test_grammar_mode_sends_the_benchmarks_gbnf_and_records_it(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue("Answer: B")
    action, info = first_move(player(llm_server, tmp_path, constrain=("grammar",)))
    body = chat_bodies(llm_server)[0]
    expected = get_benchmark("brainteaser").prompts.action_grammar(info, "direct")
    assert expected is not None and body["grammar"] == expected.gbnf()
    assert "response_format" not in body
    assert action.kind == "commit"


def test_json_schema_mode_sends_structured_output(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue('{"answer": "C"}')
    p = player(llm_server, tmp_path, constrain=("json_schema",))
    action, info = first_move(p)
    body = chat_bodies(llm_server)[0]
    expected = get_benchmark("brainteaser").prompts.action_grammar(info, "direct")
    assert expected is not None
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "move", "schema": expected.json_schema(), "strict": False},
    }
    assert "grammar" not in body
    assert action.kind == "commit" and action.choice == 2  # type: ignore[union-attr]
    assert p.last_llm is not None and p.last_llm.constrained == "json_schema"


def test_remote_models_are_free_text_unless_asked(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue("Answer: A")
    p = player(llm_server, tmp_path)
    first_move(p)
    body = chat_bodies(llm_server)[0]
    assert "grammar" not in body and "response_format" not in body
    assert p.constraint.mode == "off" and p.last_llm is not None and p.last_llm.constrained is None


def test_a_grammar_joins_the_token_id_field(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue("Answer: A")
    client = LLMClient(MODEL, base_url=llm_server.base_url, cache_dir=tmp_path / "cache", token_ids=True, max_retries=0)
    first_move(LLMPlayer(client, constrain=("grammar",)))
    body = chat_bodies(llm_server)[0]
    assert body["return_token_ids"] is True and body["grammar"].startswith("root ::=")


def test_a_refused_grammar_falls_back_only_when_the_spec_says_so(
    llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.enqueue(Fault.status(400), "Answer: D")
    p = player(llm_server, tmp_path, constrain=parse_constrain("grammar,off"))
    action, _ = first_move(p)
    first, second = chat_bodies(llm_server)
    assert "grammar" in first and "grammar" not in second
    assert action.kind == "commit" and p.last_llm is not None and p.last_llm.constrained is None
    assert p.constraint.mode == "off" and p.constraint.fallbacks[0][0] == "grammar"
    assert "refused constrain=grammar" in capsys.readouterr().err

    llm_server.reset()
    llm_server.enqueue(Fault.status(400))
    strict = player(llm_server, tmp_path, constrain=("grammar",))
    with pytest.raises(LLMCallError):
        first_move(strict)
    assert len(chat_bodies(llm_server)) == 1 and strict.constraint.mode == "grammar"


def test_one_constraint_is_shared_by_a_runs_players(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    factory = player_factory(
        f"{MODEL}?constrain=json_schema,off&max_retries=0", base_url=llm_server.base_url, cache_dir=tmp_path
    )
    a, b = factory(1), factory(2)
    assert isinstance(a, LLMPlayer) and isinstance(b, LLMPlayer)
    assert a.constraint is b.constraint is factory.constraint  # type: ignore[attr-defined]
    assert a.constraint.fall_back("json_schema", "HTTP 400") and b.constraint.mode == "off"


@pytest.mark.parametrize(
    ("value", "modes"),
    [("grammar", ("grammar",)), ("json_schema,off", ("json_schema", "off")), ("OFF", ("off",))],
)
def test_constrain_values(value: str, modes: tuple[str, ...]) -> None:
    assert parse_constrain(value) == modes


@pytest.mark.parametrize("value", ["regex", "off,grammar", "grammar,grammar", ""])
def test_bad_constrain_values_say_what_is_allowed(value: str) -> None:
    with pytest.raises(ValueError, match="grammar|off"):
        parse_constrain(value)
    with pytest.raises(ValueError):
        Constraint(())  # type: ignore[arg-type]


# -- the check before a run ----------------------------------------------------------------------


def test_the_check_before_a_run_refuses_a_server_that_ignores_the_grammar(
    llm_server: ScriptedLLMServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    llm_server.default_reply = "hello there"  # a server that takes the grammar field and ignores it
    spec = f"{MODEL}?constrain=grammar"
    code = main(
        ["run", "brainteaser", "--player", spec, "--base-url", llm_server.base_url, "--limit", "1"]
        + ["--out", str(tmp_path / "runs"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    )
    err = capsys.readouterr().err
    assert code == 4 and not (tmp_path / "runs").exists()
    assert len(err.strip().splitlines()) == 1 and "refused constrain=grammar" in err and "constrain=grammar,off" in err
    with pytest.raises(ConstraintRejectedError):
        run("brainteaser", player=spec, base_url=llm_server.base_url, limit=1, out=tmp_path / "runs", progress=False)


def test_with_a_fallback_the_run_goes_on_unconstrained_and_the_log_says_so(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    llm_server.enqueue(Fault.status(400))  # the check's grammar request is refused
    llm_server.default_reply = "Answer: A"
    result = run(
        "brainteaser",
        player=f"{MODEL}?constrain=grammar,off&max_retries=0",
        base_url=llm_server.base_url,
        limit=2,
        out=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    assert result.errored == 0
    moves = [r for r in read_log(result.run_dir / "steps.jsonl") if isinstance(r, StepLine)]
    assert moves and all(m.llm is not None and m.llm.constrained is None for m in moves)
    bodies = chat_bodies(llm_server)
    assert "grammar" in bodies[0] and all("grammar" not in b for b in bodies[1:])


def test_a_grammar_the_server_takes_is_checked_then_used_on_every_move(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    def obeys(body: dict[str, Any]) -> str:
        grammar = body.get("grammar", "")
        return "ok" if grammar == 'root ::= "ok"' else "Answer: B" if grammar else "free text"

    llm_server.responder = obeys
    result = run(
        "brainteaser",
        player=f"{MODEL}?constrain=grammar",
        base_url=llm_server.base_url,
        limit=2,
        out=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    moves = [r for r in read_log(result.run_dir / "steps.jsonl") if isinstance(r, StepLine)]
    assert moves and all(m.llm is not None and m.llm.constrained == "grammar" and m.valid for m in moves)


# -- re-asks ------------------------------------------------------------------------------------


def unreadable_then(answer: str) -> Any:
    replies = iter(["I really could not say.", answer])
    return lambda body: next(replies, answer)


def test_paper_configs_keep_the_single_shot(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.responder = unreadable_then("Answer: A")
    action, _ = first_move(player(llm_server, tmp_path))
    assert isinstance(action, Invalid) and len(chat_bodies(llm_server)) == 1


def test_single_turn_configs_re_ask_once_with_the_format(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.responder = unreadable_then("Answer: A")
    data = EpisodeConfig.named("brainteaser").model_dump()
    config = EpisodeConfig.from_dict({**data, "name": "brainteaser-reask", "reasks": None}, source="test")
    env = lateralgym.make(config, items=list(PUZZLES))
    obs, info = env.reset(seed=0, options={"item_id": "SP-1"})
    p = player(llm_server, tmp_path)
    p.reset(obs, info, seed=0)
    action = p.act(obs, info)
    assert action.kind == "commit" and p.last_llm is not None and p.last_llm.format_reasks == 1
    second = chat_bodies(llm_server)[1]["messages"]
    assert second[-1]["role"] == "user" and "could not read" in second[-1]["content"]
    assert json.dumps(p.last_llm.unparsed_replies) == json.dumps(["I really could not say."])


def test_the_spec_wins_over_the_config(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.responder = unreadable_then("Answer: C")
    action, _ = first_move(player(llm_server, tmp_path, reasks=1))
    assert action.kind == "commit" and len(chat_bodies(llm_server)) == 2
