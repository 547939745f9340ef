"""CreativityBench's interactive mode is the paper's protocol (§5, App. E-F), explore mode is ours.

Interactive: 15 turns, the first-person environment text shown, entities *and* interactable scene
items inspectable from one mixed list, every reply ending with the turns remaining, no ``ask``.
Explore: 20 turns, ``ask`` allowed, entity names only, no countdown.
"""

from __future__ import annotations

import gymnasium
import pytest
from _items import PAINT_TASK

import lateralgym
from lateralgym.agents import HeuristicAgent, OracleAgent
from lateralgym.envs import EpisodeConfig
from lateralgym.envs.benchmarks.creativity import CreativityEnv, _player


def _env(config: str) -> CreativityEnv:
    env = CreativityEnv(EpisodeConfig.named(config), items=[PAINT_TASK])
    env.reset(seed=0)
    return env


def test_interactive_brief_shows_the_environment_and_one_list_of_things() -> None:
    env = CreativityEnv(EpisodeConfig.named("creativity-interactive"), items=[PAINT_TASK])
    obs, info = env.reset(seed=0)
    text = obs["text"]
    assert f"ENVIRONMENT: {PAINT_TASK.environment}" in text
    listed = next(line for line in text.splitlines() if line.startswith("THINGS IN THE SCENE: "))
    things = listed.removeprefix("THINGS IN THE SCENE: ").split("; ")
    # the three entities and the one interactable item, in one shuffled list
    assert sorted(things) == sorted(["steel soup spoon", "cotton tea towel", "bamboo cutting board", "paint tin"])
    assert "You have 15 turns" in text and "ask:" not in text
    assert "handle" not in text  # no part is shown before an inspection
    assert info["public"]["inspectable_items"] == ["paint tin"]


def test_interactive_item_inspection_countdown_and_last_turn() -> None:
    env = _env("creativity-interactive")
    obs, _, _, _, info = env.step("inspect: paint tin")
    assert obs["text"] == "paint tin: a small tin with a tight metal lid\n[14 turns left.]"
    assert info["valid_action"] is True and info["public"]["revealed"] == {}
    obs, _, _, _, info = env.step("inspect: steel soup spoon")
    assert obs["text"].startswith("steel soup spoon:\n  - bowl") and obs["text"].endswith("\n[13 turns left.]")
    # invalid replies carry the countdown too (the official harness appends it to every reply)
    obs, _, _, _, info = env.step("hmm")
    assert obs["text"].startswith("Invalid action") and obs["text"].endswith("\n[12 turns left.]")
    obs, _, _, _, _ = env.step("ask: is the spoon metal?")
    assert "not allowed" in obs["text"] and obs["text"].endswith("[11 turns left.]")
    obs, _, _, _, _ = env.step("inspect: laptop")
    assert "no thing called 'laptop'" in obs["text"] and "paint tin" in obs["text"]
    for _ in range(9):
        obs, _, _, _, _ = env.step("inspect: paint tin")
    assert obs["text"].endswith("[1 turn left: this is your last turn, give your final answer now.]")
    obs, _, terminated, _, info = env.step("commit: steel soup spoon | handle | lever the lid")
    assert terminated and "turns left" not in obs["text"] and "turn left" not in obs["text"]
    outcome = info["outcome"]
    assert (outcome["turns"], outcome["inspections"], outcome["items_inspected"]) == (15, 1, ["paint tin"])
    assert outcome["gold_correct"] and outcome["invalid_actions"] == 3


def test_interactive_runs_out_after_15_turns_with_the_no_turns_message() -> None:
    env = _env("creativity-interactive")
    for _ in range(15):
        obs, _, terminated, truncated, info = env.step("inspect: paint tin")
    assert truncated and not terminated
    assert obs["text"].endswith("No turns left (15 used). The episode is over.")
    assert info["outcome"]["committed"] is False


def test_explore_keeps_the_old_protocol() -> None:
    env = CreativityEnv(EpisodeConfig.named("creativity-explore"), items=[PAINT_TASK])
    obs, _ = env.reset(seed=0)
    assert "ENTITIES AROUND YOU" in obs["text"] and "ENVIRONMENT" not in obs["text"]
    assert "You have 20 turns" in obs["text"] and "ask:" in obs["text"]
    obs, _, _, _, _ = env.step("ask: is the steel soup spoon made of metal?")
    assert obs["text"] == "Irrelevant." or obs["text"] in ("Yes.", "No.")
    obs, _, _, _, _ = env.step("inspect: paint tin")  # items are not inspectable here
    assert "no entity called 'paint tin'" in obs["text"] and "turns left" not in obs["text"]


def test_env_ids_and_configs() -> None:
    assert lateralgym.ENV_IDS["lateralgym/Creativity-Interactive-v2"] == "creativity-interactive"
    assert lateralgym.ENV_IDS["lateralgym/Creativity-Explore-v1"] == "creativity-explore"
    assert "lateralgym/Creativity-Interactive-v1" not in lateralgym.ENV_IDS
    env = gymnasium.make("lateralgym/Creativity-Explore-v1")
    assert env.unwrapped.config.mode == "explore"
    for name in ("creativity-static", "creativity-cot", "creativity-interactive"):
        assert EpisodeConfig.named(name).temperature == 0.0, name
    assert EpisodeConfig.named("creativity-explore").temperature is None


@pytest.mark.parametrize("config", ["creativity-interactive", "creativity-explore"])
def test_offline_players_explore_then_answer(config: str) -> None:
    env = CreativityEnv(EpisodeConfig.named(config), items=[PAINT_TASK])
    for agent in (OracleAgent([PAINT_TASK]), HeuristicAgent(seed=0)):
        obs, info = env.reset(seed=0, options={"item_id": PAINT_TASK.id})
        agent.reset(obs, info)
        done = False
        while not done:
            obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
            done = terminated or truncated
        assert info["outcome"]["committed"] and info["outcome"]["inspections"] >= 1, type(agent).__name__
        if isinstance(agent, OracleAgent):
            assert info["outcome"]["gold_correct"] and info["outcome"]["turns"] == 2


def test_paper_prompts_per_mode() -> None:
    interactive = _player.system_prompt("interactive", "direct")
    assert '"action": "inspect", "target"' in interactive and '"action": "answer"' in interactive
    assert "ask" not in interactive.replace("task", "")
    assert _player.system_prompt("interactive", "cot") == interactive  # reasoning first is already asked
    assert '"action": "ask"' in _player.system_prompt("explore", "direct")
    static, cot = _player.system_prompt("static", "direct"), _player.system_prompt("cot", "cot")
    assert "First write your reasoning" in static and '"gold_entity"' in static
    for step in ("Task analysis", "Attribute grounding", "Affordance reasoning", "Answer from that reasoning"):
        assert step in cot and step not in static


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # the paper's interactive JSON moves, after prose reasoning
        ('Let me look. {"action": "explore", "target": "Paint Tin"}', {"kind": "inspect", "entity": "Paint Tin"}),
        (
            'Done.\n{"action": "answer", "gold_entity": "steel soup spoon", "gold_part": "handle", '
            '"how_to_use": "lever"}',
            {"kind": "commit", "entity": "steel soup spoon", "part": "handle", "how_to_use": "lever"},
        ),
    ],
)
def test_interactive_replies_in_the_paper_format_parse(reply: str, expected: dict[str, str]) -> None:
    public = {"entities": [e.name for e in PAINT_TASK.entities], "revealed": {}}
    action = _player.parse_creativity_reply(reply, public, _player.MODE_ACTIONS["interactive"])
    assert action.model_dump(exclude_none=True) == expected


def test_cot_reply_with_the_structured_reasoning_object_parses() -> None:
    reply = (
        '{"reasoning": {"task_analysis": "lift a lid", "attribute_grounding": "the handle is rigid steel", '
        '"affordance_reasoning": {"entity": "bamboo cutting board", "part": "board_face"}}, '
        '"gold_entity": "steel soup spoon", "gold_part": "handle", "how_to_use": "lever the lid"}'
    )
    public = {"entities": [e.name for e in PAINT_TASK.entities], "revealed": {}}
    action = _player.parse_creativity_reply(reply, public, _player.MODE_ACTIONS["cot"])
    assert action.model_dump(exclude_none=True) == {
        "kind": "commit",
        "entity": "steel soup spoon",
        "part": "handle",
        "how_to_use": "lever the lid",
    }
