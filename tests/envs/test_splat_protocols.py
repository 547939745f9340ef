"""SPLAT's two protocols (``commit``, ``paper``) and unclear judge replies, offline and end to end
against a real OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _items import STORY
from llm_server import ScriptedLLMServer

from lateralgym.agents._llm_client import LLMClient
from lateralgym.envs import Commit, EpisodeConfig
from lateralgym.envs._judging import QA, JudgeReply, parse_message_label
from lateralgym.envs.benchmarks.splat import ReferenceJudge, SplatEnv, splat_v0
from lateralgym.envs.benchmarks.splat._llm_judge import LLMSplatJudge
from lateralgym.envs.benchmarks.splat._scene import SOLVED_MESSAGE, UNCLEAR_MESSAGE
from lateralgym.envs.testing import check_scene, find_leaks

PAPER = EpisodeConfig.named("splat").with_options(protocol="paper")
COMMIT = EpisodeConfig.named("splat")
_clients: list[LLMClient] = []


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _clients:
        _clients.pop().close()


def make_client(server: ScriptedLLMServer, tmp_path: Path) -> LLMClient:
    client = LLMClient(
        "openai/judge-model",
        base_url=server.base_url,
        cache_dir=tmp_path / "cache",
        backoff_base_s=0.01,
        timeout=5.0,
        max_retries=2,
    )
    _clients.append(client)
    return client


def bodies(server: ScriptedLLMServer) -> list[dict[str, Any]]:
    return [r.body for r in server.requests if r.method == "POST"]


def user_text(body: dict[str, Any]) -> str:
    return str(next(m["content"] for m in body["messages"] if m["role"] == "user"))


def player_text(body: dict[str, Any]) -> str:
    return user_text(body).split("<<<\n", 1)[1].split("\n>>>", 1)[0]


class ScriptedJudge:
    """An offline judge replying with fixed labels (answer: ``labels`` in turn; grade: not yet)."""

    name = "scripted"
    synchronous = True

    def __init__(self, *labels: str) -> None:
        self.labels = list(labels)
        self.histories: list[tuple[QA, ...]] = []

    async def answer(self, item: Any, question: str, history: tuple[QA, ...]) -> JudgeReply:
        self.histories.append(history)
        return JudgeReply.model_validate({"label": self.labels.pop(0), "raw": STORY.answer})

    async def grade(self, item: Any, commit: Commit, history: tuple[QA, ...]) -> JudgeReply:
        self.histories.append(history)
        return JudgeReply(label="not_yet", hint=STORY.answer)


# -- unclear replies ---------------------------------------------------------------------------


def test_an_unclear_reply_is_told_neutrally_and_counted() -> None:
    env = SplatEnv(COMMIT, items=[STORY], judge=ScriptedJudge("yes", "unclear", "correct", "no"))
    env.reset(seed=0)
    steps = [env.step(f"ask: question {n}?") for n in range(4)]
    texts = [observation["text"] for observation, *_ in steps]
    assert texts == ["Yes.", UNCLEAR_MESSAGE, "Irrelevant.", "No."]  # "correct" is no answer label
    assert [int(observation["last_reply"]) for observation, *_ in steps] == [1, 6, 3, 2]
    assert [r.judge_label for r in env.records] == ["yes", "unclear", "irrelevant", "no"]
    assert steps[-1][4]["public"]["history"][1] == ["question 1?", "unclear"]
    assert not find_leaks(json.dumps(texts), STORY)


def test_outcome_counts_unclear_separately_from_irrelevant() -> None:
    config = COMMIT.model_copy(update={"max_turns": 4})
    env = SplatEnv(config, items=[STORY], judge=ScriptedJudge("unclear", "irrelevant", "unclear"))
    env.reset(seed=0)
    for question in ("a?", "b?", "c?"):
        env.step(f"ask: {question}")
    *_, truncated, info = env.step("commit: they were all deaf")
    assert truncated
    out = info["outcome"]
    assert (out["questions"], out["irrelevant"], out["unclear"], out["judged_moves"]) == (3, 1, 2, 3)
    assert (out["yes"], out["no"], out["protocol"]) == (0, 0, "commit")
    assert out["turns"] == 4  # an unclear reply uses its round


# -- the paper protocol, offline ---------------------------------------------------------------


def test_paper_opening_says_any_message_can_solve() -> None:
    env = SplatEnv(PAPER, items=[STORY])
    observation, _ = env.reset(seed=0)
    assert "Any question or explanation that states what really happened solves the puzzle." in observation["text"]
    assert "solves the puzzle" not in SplatEnv(COMMIT, items=[STORY]).reset(seed=0)[0]["text"]


def test_paper_reference_judge_a_question_stating_the_answer_solves() -> None:
    env = SplatEnv(PAPER, items=[STORY])
    env.reset(seed=0)
    observation, reward, terminated, _, _ = env.step("ask: Was it a film?")
    assert (observation["text"], terminated) == ("Yes.", False)
    observation, reward, terminated, _, info = env.step(
        "ask: Was it a silent film in a cinema, the violinist an actor on the screen?"
    )
    assert (observation["text"], terminated, reward) == (SOLVED_MESSAGE, True, 1.0)
    out = info["outcome"]
    assert (out["solved"], out["attempts"], out["questions"], out["judged_moves"], out["protocol"]) == (
        True, 0, 1, 1, "paper",
    )  # fmt: skip


def test_paper_reference_judge_an_explanation_that_does_not_solve_gets_a_label_not_a_hint() -> None:
    env = SplatEnv(PAPER, items=[STORY])
    env.reset(seed=0)
    observation, _, terminated, _, info = env.step("commit: the violinist was famous")
    assert observation["text"] in {"No.", "Irrelevant."} and not terminated
    assert info["public"]["history"] == []  # explanations are not questions
    assert env.scene is not None and env.scene.attempts == 1  # type: ignore[attr-defined]


def test_commit_reference_judge_a_question_stating_the_answer_does_not_solve() -> None:
    env = SplatEnv(COMMIT, items=[STORY])
    env.reset(seed=0)
    observation, _, terminated, _, _ = env.step(
        "ask: Was it a silent film in a cinema, the violinist an actor on the screen?"
    )
    assert (observation["text"], terminated) == ("Yes.", False)


def test_paper_judge_without_respond_is_graded_then_answered_with_no_history() -> None:
    judge = ScriptedJudge("yes", "no")
    env = SplatEnv(PAPER, items=[STORY], judge=judge)
    env.reset(seed=0)
    assert env.step("ask: Was it a film?")[0]["text"] == "Yes."
    observation, *_ = env.step("commit: they were deaf")
    assert observation["text"] == "No."  # the hint (the answer) is never forwarded
    assert judge.histories == [(), (), (), ()]  # grade, answer, grade, answer: none with history
    assert not find_leaks(json.dumps([r.message for r in env.records]), STORY)


def test_paper_conformance_and_no_leak() -> None:
    check_scene(lambda: SplatEnv(PAPER, items=[STORY]))


# -- end to end against the loopback server ----------------------------------------------------


def paper_host(body: dict[str, Any]) -> str:
    """A judge following the paper prompt: correct when the message says silent film."""
    system = str(body["messages"][0]["content"])
    assert "correct, yes, no or irrelevant" in system and STORY.answer in system
    text = player_text(body).lower()
    if "silent film" in text:
        return "correct"
    if "film" in text:
        return "yes"
    if "dance" in text:
        return "I would rather not say."  # unreadable, re-ask included
    return "no"


def test_paper_protocol_end_to_end_with_the_llm_judge(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.responder = paper_host
    env = SplatEnv(PAPER, items=[STORY], judge=LLMSplatJudge(make_client(llm_server, tmp_path)))
    env.reset(seed=0)
    script = [
        ("ask: Was it a film?", "Yes."),
        ("commit: The violinist was deaf.", "No."),
        ("ask: Was there a dance?", UNCLEAR_MESSAGE),
        ("ask: Was it a silent film, with the violinist on screen?", SOLVED_MESSAGE),
    ]
    for action, expected in script:
        observation, _, terminated, _, info = env.step(action)
        assert observation["text"] == expected, action
    assert terminated
    sent = bodies(llm_server)
    assert len(sent) == 5  # one call per move, plus one re-ask of the unreadable reply
    for body in sent[1:]:  # the judge remembers no earlier question
        assert "Earlier questions" not in user_text(body) and "Was it a film?" not in user_text(body)
    assert [player_text(b) for b in sent][1] == "The violinist was deaf."  # explanations go whole
    out = info["outcome"]
    assert (out["solved"], out["turns"], out["attempts"], out["unclear"], out["judged_moves"]) == (True, 4, 1, 1, 3)
    assert [r.judge_label for r in env.records] == ["yes", "no", "unclear", "correct"]
    assert sum(len(r.judge_calls) for r in env.records) == 5
    visible = json.dumps([r.message for r in env.records]) + json.dumps(info)
    assert not find_leaks(visible, STORY)


def test_commit_protocol_end_to_end_keeps_the_history_and_records_unclear(
    llm_server: ScriptedLLMServer, tmp_path: Path
) -> None:
    def host(body: dict[str, Any]) -> str:
        text = player_text(body).lower()
        if "proposes an explanation" in str(body["messages"][0]["content"]):
            return "correct" if "silent film" in text else "not yet"
        return "yes" if "film" in text else "Let me think about that."

    llm_server.responder = host
    env = SplatEnv(COMMIT, items=[STORY], judge=LLMSplatJudge(make_client(llm_server, tmp_path)))
    env.reset(seed=0)
    assert env.step("ask: Was it a film?")[0]["text"] == "Yes."
    assert env.step("ask: Did anyone sing?")[0]["text"] == UNCLEAR_MESSAGE
    # Under commit a question that states the answer is only answered.
    assert env.step("ask: Was it a silent film?")[0]["text"] == "Yes."
    observation, _, terminated, _, info = env.step("commit: It was a silent film.")
    assert (observation["text"], terminated) == (SOLVED_MESSAGE, True)
    last_question = [b for b in bodies(llm_server) if "Was it a silent film?" in player_text(b)][0]
    assert "- Was it a film? -> yes" in user_text(last_question)
    assert "- Did anyone sing? -> unclear" in user_text(last_question)
    out = info["outcome"]
    assert (out["questions"], out["yes"], out["unclear"], out["judged_moves"]) == (3, 2, 1, 3)


def test_llm_respond_votes_and_parses(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue("correct", "yes", "correct")
    judge = LLMSplatJudge(make_client(llm_server, tmp_path), samples=3)

    async def run() -> JudgeReply:
        try:
            return await judge.respond(STORY, "It was a silent film.")
        finally:
            await judge.client.aclose()

    assert asyncio.run(run()).label == "correct"
    assert parse_message_label("Correct.") == "correct"
    assert parse_message_label("The answer is no") == "no"
    assert parse_message_label("hmm") is None


# -- the AEC env -------------------------------------------------------------------------------


def test_aec_paper_every_move_is_one_message_the_judge_can_accept() -> None:
    env = splat_v0.env(items=[STORY], config=PAPER)
    env.reset(seed=0)
    env.step("ask: Was it a silent film?")
    assert env.infos["judge"]["pending"] == {"kind": "message", "message": "Was it a silent film?"}
    assert "Reply 'correct' if it states what really happened" in env.observe("judge")["text"]
    env.step("correct")
    assert all(env.terminations.values()) and env.infos["player"]["outcome"]["solved"] is True


def test_aec_paper_unclear_and_labels() -> None:
    env = splat_v0.env(items=[STORY], config=PAPER)
    env.reset(seed=0)
    env.step("commit: the violinist was deaf")
    env.step("no")
    assert env.observe("player")["text"] == "No."
    env.step("ask: was it raining?")
    env.step("Sure! " + STORY.answer)
    assert env.observe("player")["text"] == UNCLEAR_MESSAGE and env.observe("player")["last_reply"] == 6
    assert not find_leaks(env.observe("player")["text"], STORY)


def test_reference_judge_respond_works_directly() -> None:
    judge = ReferenceJudge()

    async def both() -> tuple[str, str]:
        solved = await judge.respond(STORY, "A silent film: the violinist was an actor on the cinema screen.")
        asked = await judge.respond(STORY, "Was it raining?")
        return solved.label, asked.label

    assert asyncio.run(both()) == ("correct", "irrelevant")


def test_shipped_paper_config() -> None:
    config = EpisodeConfig.named("splat-paper")
    assert (config.options.protocol, config.max_turns, config.judge) == ("paper", 15, "reference")
    assert EpisodeConfig.named("splat").options.protocol == "commit"  # the stricter protocol stays the default


def test_paper_runs_replay_and_feed_agreement(tmp_path: Path) -> None:
    """A paper-protocol run replays step for step, and its unclear or solving replies do not break the
    agreement tooling (an unclear reply is no label; a solving one is a verdict)."""
    from lateralgym.envs.benchmarks.splat import judge_labels_from_run
    from lateralgym.episodes import replay, run

    result = run("splat-paper", player="heuristic", limit=3, out=tmp_path, progress=False)
    assert all(r.divergence is None for r in replay(result.run_dir))
    labels = judge_labels_from_run(result.run_dir)
    assert labels and all(r.answer in (None, "yes", "no", "irrelevant") for r in labels)


def test_a_judge_seat_plays_the_paper_protocol() -> None:
    """Under paper the AEC judge agent gets whole messages; a seat answers them with ``respond``."""
    from lateralgym.envs import EpisodeConfig, load_sample_items
    from lateralgym.envs.benchmarks.splat import JudgeSeat, ReferenceJudge, splat_v0

    puzzle = load_sample_items("splat")[0]
    env = splat_v0.env(config=EpisodeConfig.named("splat-paper"), items=[puzzle])
    seat = JudgeSeat(ReferenceJudge(), [puzzle])
    env.reset(seed=0)
    env.step(f"ask: Is it that {puzzle.answer}?")
    assert env.agent_selection == "judge"
    env.step(seat.act(env.observe("judge"), env.infos["judge"]))
    assert all(env.terminations.values()) and env.infos["player"]["outcome"]["solved"] is True
