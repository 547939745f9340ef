"""The PettingZoo AEC env for SPLAT: API conformance and a judge that tries to leak."""

from __future__ import annotations

from typing import Any

import pytest
from _items import STORY

from lateralgym.agents import make_agent
from lateralgym.envs import EpisodeConfig, action_to_text, load_sample_items, parse_action
from lateralgym.envs.benchmarks.splat import JudgeSeat, ReferenceJudge, splat_v0
from lateralgym.envs.benchmarks.splat.splat_v0 import parse_verdict
from lateralgym.envs.testing import check_aec, find_leaks


def test_api_seed_and_no_leak_on_tiny_and_sample_items() -> None:
    assert check_aec(lambda: splat_v0.env(items=[STORY])) >= 5
    assert check_aec(lambda: splat_v0.env()) >= 30 * 5


def test_player_and_judge_alternate_and_solve() -> None:
    env = splat_v0.env(items=[STORY])
    env.reset(seed=3)
    assert env.agent_selection == "player"
    assert "HIDDEN" not in env.observe("player")["text"]
    env.step("ask: Was it a film?")
    assert env.agent_selection == "judge"
    assert STORY.answer in env.observe("judge")["text"]
    env.step("Yes, it was.")
    assert env.observe("player")["text"] == "Yes." and env.observe("player")["last_reply"] == 1
    env.step("ask: What is the answer?")
    env.step("Sure! " + STORY.answer)  # a judge that does not answer in its vocabulary: recorded unclear
    assert env.observe("player")["text"] == "The judge could not answer that; ask differently."
    assert env.observe("player")["last_reply"] == 6
    env.step("commit: a silent film; the violinist was an actor on the screen")
    env.step("correct")
    assert all(env.terminations.values())
    assert env.rewards["player"] == 1.0 and env.infos["player"]["outcome"]["solved"] is True
    assert env.infos["player"]["outcome"]["turns"] == 3


def test_hint_that_leaks_is_not_forwarded() -> None:
    free = EpisodeConfig.named("splat").model_copy(update={"hints": "free", "unsafe_free_hints": True})
    env = splat_v0.env(items=[STORY], config=free)
    env.reset(seed=0)
    env.step("commit: the violinist was deaf")
    env.step("not yet: think about a silent film with an actor")
    text = env.observe("player")["text"]
    assert text == "Not yet." and not find_leaks(text, STORY)
    env.step("commit: the violinist was deaf")
    env.step("not yet: who else was in the room?")
    assert env.observe("player")["text"] == "Not yet. Hint: who else was in the room?"


def test_by_default_only_the_envs_own_hints_reach_the_player() -> None:
    env = splat_v0.env(items=[STORY])
    env.reset(seed=0)
    env.step("commit: the violinist was deaf")
    env.step("not yet: who else was in the room?")  # harmless, but not one of the env's hints
    assert env.observe("player")["text"] == "Not yet."
    env.step("commit: the violinist was deaf")
    env.step("not yet: Think about where it happens")
    assert env.observe("player")["text"] == "Not yet. Hint: Think about where it happens."


def test_parse_verdict() -> None:
    assert parse_verdict("Correct.") == ("correct", None)
    assert parse_verdict("not yet: look at the light") == ("not_yet", "look at the light")
    assert parse_verdict("hmm") == ("not_yet", None)


def test_truncation_after_max_rounds() -> None:
    env = splat_v0.env(items=[STORY])
    env.reset(seed=0)
    for _ in range(15):
        env.step("ask: is it raining?")
        env.step("no")
    assert all(env.truncations.values()) and env.infos["player"]["outcome"]["turns"] == 15


def play(env: Any, player: Any, seat: Any) -> dict[str, Any]:
    """The PettingZoo agent loop; returns the player's outcome."""
    outcome: dict[str, Any] = {}
    for agent in env.agent_iter():
        observation, _, terminated, truncated, info = env.last()
        if terminated or truncated:
            outcome = info.get("outcome", outcome)
            env.step(None)
        elif agent == "player":
            env.step(action_to_text(player.act(observation, info)))
        else:
            env.step(seat.act(observation, info))
    return outcome


@pytest.mark.parametrize(("player", "solved", "turns"), [("oracle", True, 1), ("heuristic", False, 15)])
def test_offline_players_and_a_judge_seat_play_the_aec_env(player: str, solved: bool, turns: int) -> None:
    puzzles = load_sample_items("splat")
    env = splat_v0.env()
    env.reset(seed=0, options={"item_id": "sp-003"})
    agent = make_agent(player, puzzles, seed=0)
    agent.reset(env.observe("player"), env.unwrapped.infos["player"], seed=0)
    outcome = play(env, agent, JudgeSeat(ReferenceJudge(), puzzles))
    assert outcome["solved"] is solved and outcome["turns"] == turns


def test_an_llm_judge_seat_over_http(llm_server: Any) -> None:
    from lateralgym.judges import make_judge

    puzzles = load_sample_items("splat")
    llm_server.responder = lambda body: "correct" if "proposes an explanation" in str(body["messages"]) else "yes"
    judge = make_judge(
        "openai/judge", benchmark="splat", base_url=llm_server.base_url, use_cache=False, backoff_base_s=0.01
    )
    env = splat_v0.env()
    env.reset(seed=0, options={"item_id": "sp-010"})
    script = iter(["ask: Was it planned?", "ask: Was anyone hurt?", "commit: it was all a rehearsal"])

    class Scripted:
        def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Any:
            return parse_action(next(script))

    outcome = play(env, Scripted(), JudgeSeat(judge, puzzles))
    assert outcome["solved"] is True and outcome["turns"] == 3 and outcome["yes"] == 2
    assert llm_server.chat_calls == 3
