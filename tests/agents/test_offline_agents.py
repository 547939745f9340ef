"""Offline players bracket each benchmark: oracle 100 %, random at chance, heuristic between."""

from __future__ import annotations

import io
from typing import Any

import numpy as np
import pytest
from _items import PAINT_TASK

import lateralgym
from lateralgym.agents import Agent, HeuristicAgent, HumanAgent, OracleAgent, RandomAgent, make_agent
from lateralgym.envs import Commit, ConfigError, EpisodeConfig, Inspect, LateralEnv
from lateralgym.envs._errors import PlayerQuit
from lateralgym.envs.benchmarks.creativity import CreativityEnv


def play(env: LateralEnv[Any], agent: Agent, item_id: str, seed: int) -> dict[str, Any]:
    obs, info = env.reset(seed=seed, options={"item_id": item_id})
    agent.reset(obs, info, seed=seed)
    while True:
        obs, _, terminated, truncated, info = env.step(agent.act(obs, info))
        if terminated or truncated:
            return info["outcome"]


SCORE = {"creativity": "gold_correct", "brainteaser": "correct", "splat": "solved"}


def accuracy(config: str, agent: Agent, repeats: int = 1) -> float:
    env = lateralgym.make(config)
    key = SCORE[env.config.benchmark]
    results = [
        play(env, agent, str(item.id), seed=1000 * repeat + n)[key]
        for repeat in range(repeats)
        for n, item in enumerate(env.items)
    ]
    return float(np.mean(results))


@pytest.mark.parametrize("config", ["creativity-static", "creativity-interactive", "brainteaser", "splat"])
def test_oracle_scores_100_percent(config: str) -> None:
    env = lateralgym.make(config)
    assert accuracy(config, OracleAgent(env.items)) == 1.0


def test_random_scores_chance_on_brainteaser() -> None:
    acc = accuracy("brainteaser", RandomAgent(seed=0), repeats=8)
    assert abs(acc - 0.25) < 0.06, acc


@pytest.mark.parametrize("config", ["creativity-static", "creativity-interactive", "brainteaser"])
def test_heuristic_sits_between_random_and_oracle(config: str) -> None:
    heuristic = accuracy(config, HeuristicAgent(seed=0))
    random = accuracy(config, RandomAgent(seed=0), repeats=4)
    assert random < heuristic < 1.0, (random, heuristic)


def test_interactive_heuristic_inspects_before_committing() -> None:
    env = CreativityEnv(EpisodeConfig.named("creativity-interactive"), items=[PAINT_TASK])
    agent = HeuristicAgent(seed=0, inspections=2)
    obs, info = env.reset(seed=0)
    actions = []
    while not env.done:
        action = agent.act(obs, info)
        actions.append(action)
        obs, _, _, _, info = env.step(action)
    assert [type(a) for a in actions] == [Inspect, Inspect, Commit]
    assert info["outcome"]["inspections"] == 2


def test_agents_are_reproducible_by_seed() -> None:
    env = lateralgym.make("splat")
    item = str(env.items[0].id)
    first = play(env, RandomAgent(), item, seed=5)
    assert play(env, RandomAgent(), item, seed=5) == first


def test_human_agent_reads_the_terminal() -> None:
    env = CreativityEnv(EpisodeConfig.named("creativity-interactive"), items=[PAINT_TASK])
    out = io.StringIO()
    agent = HumanAgent(
        stdin=io.StringIO("inspect: steel soup spoon\ncommit: steel soup spoon | handle | pry\n"), stdout=out
    )
    outcome = play(env, agent, PAINT_TASK.id, seed=0)
    assert outcome["gold_correct"] and "THINGS IN THE SCENE" in out.getvalue() and "[14 turns left.]" in out.getvalue()
    with pytest.raises(PlayerQuit, match="Ctrl-D"):
        HumanAgent(stdin=io.StringIO(""), stdout=out).act({"text": "x"}, {})


def test_make_agent() -> None:
    assert isinstance(make_agent("heuristic"), HeuristicAgent)
    with pytest.raises(ConfigError, match="offline players are"):
        make_agent("genius")


def test_probe_words_are_distinct() -> None:
    from lateralgym.envs.benchmarks.splat._player import PROBE_WORDS

    assert len(PROBE_WORDS) == len(set(PROBE_WORDS))


def test_built_in_benchmarks_define_their_offline_policies() -> None:
    """No fallback note for a benchmark that defines each policy, nor for a player that is no offline one."""
    from lateralgym.agents import offline_player_note
    from lateralgym.envs import all_benchmarks

    for benchmark in all_benchmarks():
        for player in ("random", "heuristic"):
            assert benchmark.policies.defines(player), (benchmark.name, player)
            assert offline_player_note(benchmark.name, player) is None
    assert offline_player_note("brainteaser", "openai/gpt-4o-mini") is None
