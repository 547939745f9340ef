"""Lean steps, what the RL trainers step, give the full path's rewards, observations and outcomes.

``LateralEnv(lean=True)`` (the RL wrappers' default) grades a CreativityBench answer under the
config's scoring rule alone and puts the outcome's flags and counts in ``info``. These tests play the
same seeded episodes (valid moves, masked-out ones, text no parser reads) on a lean and a full env side
by side and compare every step; and they replay a run's logged moves on a lean env: the run (the full
path) graded every answer under all three rules, and the lean replay reaches the same figures.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lateralgym.envs import EpisodeConfig, get_benchmark
from lateralgym.envs._engine import outcome_numbers
from lateralgym.envs.benchmarks.creativity import CreativityEnv, CreativityTask
from lateralgym.envs.benchmarks.creativity import _judges as judges
from lateralgym.envs.benchmarks.creativity._options import SCORINGS
from lateralgym.envs.benchmarks.creativity.rl.evaluation import load_tasks, training_config
from lateralgym.envs.benchmarks.creativity.rl.wrappers import DiscreteCreativity
from lateralgym.episodes import EpisodeEnd, EpisodeStart, StepLine, read_log, read_run, run

CONFIGS = ("creativity-interactive", "creativity-static", "creativity-cot")


@pytest.fixture(scope="module")
def tasks() -> list[CreativityTask]:
    return load_tasks(EpisodeConfig.named("creativity-interactive"))[:40]


def _scalars(outcome: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in outcome.items() if isinstance(v, bool | int | float)}


def _same_info(lean: dict[str, Any], full: dict[str, Any]) -> None:
    assert lean.keys() == full.keys()
    for key in lean:
        if isinstance(lean[key], np.ndarray):
            assert np.array_equal(lean[key], full[key]), key
        else:
            assert lean[key] == full[key], key


def _same_typed_outcome(lean_env: CreativityEnv, full_env: CreativityEnv, scoring: str) -> None:
    lean, full = lean_env.outcome(), full_env.outcome()
    assert lean.model_dump(exclude={"rules"}) == full.model_dump(exclude={"rules"})
    if full.rules:  # a commit was graded: the run keeps every rule, the lean env its own
        assert list(full.rules) == list(SCORINGS)
        assert lean.rules == {scoring: full.rules[scoring]}
    else:
        assert lean.rules == {}


@pytest.mark.parametrize("scoring", SCORINGS)
@pytest.mark.parametrize("name", CONFIGS)
def test_the_lean_wrapper_steps_as_the_full_one(tasks: list[CreativityTask], name: str, scoring: str) -> None:
    config = training_config(EpisodeConfig.named(name).with_options(scoring=scoring))
    lean_env = CreativityEnv(config, items=tasks)
    full_env = CreativityEnv(config, items=tasks)
    lean, full = DiscreteCreativity(lean_env), DiscreteCreativity(full_env, lean=False)
    assert lean_env.lean and not full_env.lean
    rng = np.random.default_rng(7)
    rewards = []
    for seed in range(30):
        lean_obs, lean_info = lean.reset(seed=seed)
        full_obs, full_info = full.reset(seed=seed)
        done = False
        while not done:
            assert np.array_equal(lean_obs, full_obs)
            _same_info(lean_info, full_info)
            mask = lean.action_masks()
            assert np.array_equal(mask, full.action_masks())
            # mostly what the mask allows, sometimes anything: empty slots, unrevealed parts, out of range
            choices = np.flatnonzero(mask) if rng.random() < 0.8 else np.arange(lean.n_actions + 2)
            action = int(rng.choice(choices))
            lean_obs, lean_reward, lean_end, lean_cut, lean_info = lean.step(action)  # lean first: it grades afresh
            if "outcome" in lean_info and lean_env.scene is not None and lean_env.scene.committed is not None:
                graded = judges._last_graded[0]
                assert graded is not None and list(graded.facts) == [scoring]  # the other rules were never graded
            full_obs, full_reward, full_end, full_cut, full_info = full.step(action)
            assert (lean_reward, lean_end, lean_cut) == (full_reward, full_end, full_cut)
            rewards.append(lean_reward)
            done = lean_end or lean_cut
        _same_info(lean_info, full_info)
        assert lean_info["outcome"] == _scalars(full_env.outcome().model_dump(mode="json"))
        _same_typed_outcome(lean_env, full_env, scoring)
    assert any(r > 0 for r in rewards) or name != "creativity-interactive"


@pytest.mark.parametrize("name", ["creativity-interactive", "creativity-explore", "creativity-static"])
def test_the_lean_env_answers_text_as_the_full_one(tasks: list[CreativityTask], name: str) -> None:
    """The bare env, text moves (the benchmark's random valid move, or text no parser reads): the same
    observations, rewards and infos; ``info["outcome"]`` is the full outcome's flags and counts."""
    config = EpisodeConfig.named(name)
    lean, full = CreativityEnv(config, items=tasks, lean=True), CreativityEnv(config, items=tasks)
    policies = get_benchmark("creativity").policies
    rng = np.random.default_rng(3)
    for seed in range(40):
        lean_obs, lean_info = lean.reset(seed=seed)
        full_obs, full_info = full.reset(seed=seed)
        done = False
        while not done:
            assert lean_obs["text"] == full_obs["text"] and lean_obs["turn"] == full_obs["turn"]
            _same_info(lean_info, full_info)
            move = policies.random_action(full_info, rng) if rng.random() < 0.85 else "commit: nothing | at all"
            lean_obs, lean_reward, lean_end, lean_cut, lean_info = lean.step(move)
            full_obs, full_reward, full_end, full_cut, full_info = full.step(move)
            assert (lean_reward, lean_end, lean_cut) == (full_reward, full_end, full_cut)
            done = lean_end or lean_cut
        lean_outcome, full_outcome = lean_info.pop("outcome"), full_info.pop("outcome")
        _same_info(lean_info, full_info)
        assert lean_outcome == _scalars(full_outcome) == outcome_numbers(full.outcome())
        _same_typed_outcome(lean, full, "paper")


@pytest.mark.parametrize("player", ["heuristic", "random"])
def test_a_run_grades_every_rule_and_a_lean_replay_reaches_its_figures(
    tasks: list[CreativityTask], tmp_path: Path, player: str
) -> None:
    config = EpisodeConfig.named("creativity-interactive").with_options(scoring="official")
    result = run(config, player=player, items=tasks[:25], out=tmp_path / "run", progress=False)
    records = list(read_log(read_run(result.run_dir).log_path))
    lean = CreativityEnv(config, items=tasks[:25], lean=True)
    committed = 0
    for start in (r for r in records if isinstance(r, EpisodeStart)):
        steps = [r for r in records if isinstance(r, StepLine) and r.episode_id == start.episode_id]
        end = next(r for r in records if isinstance(r, EpisodeEnd) and r.episode_id == start.episode_id)
        assert end.outcome is not None
        lean.reset(seed=start.seed, options={"item_id": start.item_id})
        total = 0.0
        for step in steps:
            _, reward, _, _, info = lean.step(step.action)
            total += reward
        assert total == pytest.approx(end.reward)
        assert info["outcome"] == _scalars(end.outcome)
        logged = dict(end.outcome)
        rules = logged.pop("rules")
        replayed = lean.outcome().model_dump(mode="json")
        assert replayed.pop("rules") == ({"official": rules["official"]} if rules else {})
        assert replayed == logged
        if rules:
            committed += 1
            assert list(rules) == list(SCORINGS)  # the run graded the answer under every rule
    assert committed > 0
