"""The curriculum sampler: adaptive draws follow the level whose success is near 0.5, a seed repeats its
draws, uniform ignores success, and a benchmark gives its levels or is refused in one line."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from lateralgym.envs import (
    Curriculum,
    CurriculumEnv,
    CurriculumError,
    EpisodeConfig,
    curriculum_for,
    get_benchmark,
    load_sample_items,
)

CHANCE = {"easy": 0.95, "middle": 0.5, "hard": 0.05}
"""A synthetic learner: its chance of success per level."""


def levels(per_level: dict[str, int]) -> list[str]:
    return [level for level, count in per_level.items() for _ in range(count)]


def play(curriculum: Curriculum, episodes: int, seed: int = 7) -> list[int]:
    """Draw ``episodes`` items, reporting a success drawn from ``CHANCE`` for each."""
    outcomes = np.random.default_rng(seed)
    drawn = []
    for _ in range(episodes):
        index = curriculum.next()
        drawn.append(index)
        curriculum.update(index, float(outcomes.random() < CHANCE[curriculum.item_levels[index]]))
    return drawn


def shares(curriculum: Curriculum, drawn: list[int]) -> dict[str, float]:
    counts = Counter(curriculum.item_levels[i] for i in drawn)
    return {level: counts[level] / len(drawn) for level in CHANCE}


def test_adaptive_draws_move_to_the_level_whose_success_is_near_half() -> None:
    curriculum = Curriculum(levels({"easy": 10, "middle": 10, "hard": 10}), "adaptive", seed=3)
    later = play(curriculum, 3000)[1000:]
    share = shares(curriculum, later)
    assert share["middle"] > 0.6  # uniform would give it a third
    floor = curriculum.floor / 3
    assert min(share.values()) > 0.7 * floor  # the floor: no level starves
    state = curriculum.state()
    assert abs(state["easy"]["success"] - 0.95) < 0.1 and abs(state["hard"]["success"] - 0.05) < 0.1
    assert all(d.success is not None for d in curriculum.draws)


def test_the_same_seed_draws_the_same_items_and_another_seed_others() -> None:
    tiers = levels({"easy": 5, "middle": 7, "hard": 9})
    first = play(Curriculum(tiers, "adaptive", seed=11), 400)
    assert play(Curriculum(tiers, "adaptive", seed=11), 400) == first
    assert play(Curriculum(tiers, "adaptive", seed=12), 400) != first
    assert play(Curriculum(tiers, "uniform", seed=11), 400) == play(Curriculum(tiers, "uniform", seed=11), 400)


def test_uniform_draws_every_item_alike_whatever_the_successes() -> None:
    tiers = levels({"easy": 30, "middle": 0, "hard": 10})
    curriculum = Curriculum(tiers, "uniform", seed=5)
    drawn = play(curriculum, 4000)
    share = shares(curriculum, drawn)
    assert abs(share["easy"] - 0.75) < 0.03 and abs(share["hard"] - 0.25) < 0.03
    assert curriculum.probabilities() == {"easy": 0.75, "hard": 0.25}  # the successes changed nothing
    blind = Curriculum(tiers, "uniform", seed=5)
    assert [blind.next() for _ in range(4000)] == drawn  # nor did reporting them


def test_bad_settings_are_refused_in_one_line() -> None:
    with pytest.raises(CurriculumError, match="--curriculum is one of uniform, adaptive"):
        Curriculum(["a"], "hardest-first")
    with pytest.raises(CurriculumError, match="at least one item"):
        Curriculum([], "uniform")


def test_tool_tasks_have_tiers_and_a_benchmark_without_levels_refuses_adaptive() -> None:
    tasks = load_sample_items("creativity")
    curriculum = curriculum_for(get_benchmark("creativity"), tasks, "adaptive")
    assert len(curriculum.levels) >= 2
    band, distractors = curriculum.levels[0].split("/")
    assert band in ("small", "medium", "large") and distractors.endswith(" distractors")
    riddles = load_sample_items("riddlesense")
    with pytest.raises(CurriculumError) as refused:
        curriculum_for(get_benchmark("riddlesense"), riddles, "adaptive")
    assert "\n" not in str(refused.value) and "--curriculum uniform" in str(refused.value)
    assert curriculum_for(get_benchmark("riddlesense"), riddles, "uniform").levels == ["unrated"]


def test_the_env_wrapper_keeps_the_envs_own_draw_under_uniform_and_follows_adaptive() -> None:
    config = EpisodeConfig.named("creativity-interactive")
    tasks = load_sample_items("creativity")[:40]
    benchmark = get_benchmark("creativity")

    def ids(env: object, seeds: range) -> list[str]:
        return [env.reset(seed=s)[1]["item"] for s in seeds]  # type: ignore[attr-defined]

    from lateralgym.envs.benchmarks.creativity import CreativityEnv

    plain = ids(CreativityEnv(config, items=tasks), range(20))
    uniform = curriculum_for(benchmark, tasks, "uniform", seed=0)
    wrapped = CurriculumEnv(CreativityEnv(config, items=tasks), uniform, lambda info: 0.0)
    assert ids(wrapped, range(20)) == plain  # uniform: the env's own draw, unchanged
    assert len(uniform.draws) == 20
    _, info = wrapped.reset(seed=0)
    assert info["curriculum_level"] == benchmark.data.level_of(wrapped.unwrapped.item)

    adaptive = curriculum_for(benchmark, tasks, "adaptive", seed=0)
    env = CurriculumEnv(CreativityEnv(config, items=tasks), adaptive, lambda info: 1.0)
    for seed in range(5):
        env.reset(seed=seed)
        assert env.unwrapped.item is tasks[adaptive.draws[-1].index]
        done = False
        while not done:
            _, _, terminated, truncated, info = env.step("commit nothing")
            done = terminated or truncated
        assert info["curriculum_level"] == adaptive.draws[-1].level
    assert [d.success for d in adaptive.draws] == [1.0] * 5
