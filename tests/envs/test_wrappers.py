"""RL wrappers: discrete actions, numeric features, vector envs."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from _items import PAINT_TASK
from gymnasium.utils.env_checker import check_env

import lateralgym  # noqa: F401 - registers the env ids
from lateralgym.envs import Commit, EpisodeConfig, Inspect, Invalid
from lateralgym.envs.benchmarks.creativity import CreativityEnv
from lateralgym.envs.benchmarks.creativity.rl.wrappers import DiscreteCreativity, PartOrder, make_vector_env


def tiny(mode: str = "creativity-interactive", part_order: PartOrder = "file") -> DiscreteCreativity:
    return DiscreteCreativity(CreativityEnv(EpisodeConfig.named(mode), items=[PAINT_TASK]), part_order=part_order)


def test_check_env_passes_on_the_wrapped_env() -> None:
    check_env(tiny(), skip_render_check=True)
    check_env(DiscreteCreativity(gymnasium.make("lateralgym/Creativity-Static-v1").unwrapped), skip_render_check=True)


def test_decode_inspect_commit_and_empty_slots() -> None:
    env = tiny()
    _, info = env.reset(seed=0)
    E, P = env.E, env.P
    s = info["public"]["entities"].index("steel soup spoon")
    assert env.decode(s) == Inspect(entity="steel soup spoon")
    assert isinstance(env.decode(5), Invalid)  # only 3 entities
    # before inspection the part is unknown: a placeholder that cannot be right
    assert env.decode(E + s * P + 1) == Commit(entity="steel soup spoon", part="part_1", how_to_use="")
    env.step(s)
    assert env.decode(E + s * P + 1) == Commit(entity="steel soup spoon", part="handle", how_to_use="")


def test_features_reflect_inspection_and_reward_the_gold() -> None:
    env = tiny()
    obs, info = env.reset(seed=0)
    E, P = env.E, env.P
    s = info["public"]["entities"].index("steel soup spoon")
    assert obs.shape == env.observation_space.shape and env.observation_space.contains(obs)
    assert obs[:E].sum() == 3 and obs[E : 2 * E].sum() == 0
    obs, *_ = env.step(s)
    part_mask = obs[4 * E + 1 : 4 * E + 1 + E * P].reshape(E, P)
    assert obs[E + s] == 1.0 and part_mask[s].tolist()[:3] == [1.0, 1.0, 0.0]
    _, reward, terminated, _, info = env.step(E + s * P + 1)
    assert terminated and reward == 1.0 and info["outcome"]["gold_correct"]


def test_shuffled_part_slots_are_drawn_per_episode_from_the_seed_and_leave_the_env_alone() -> None:
    """With ``part_order="shuffled"`` (the default) a slot holds no fixed part: the order is a
    permutation drawn from the reset seed, the commit it decodes to is the part its features describe,
    and the env's own draws (the entity order) are those of the file-order wrapper."""
    static = EpisodeConfig.named("creativity-static")
    task = PAINT_TASK.model_copy(deep=True)
    spoon = next(e for e in task.entities if e.name == "steel soup spoon")
    names = [p.name for p in spoon.parts]
    orders: set[tuple[str, ...]] = set()
    for seed in range(12):
        shuffled = DiscreteCreativity(CreativityEnv(static, items=[task]))
        plain = DiscreteCreativity(CreativityEnv(static, items=[task]), part_order="file")
        _, info = shuffled.reset(seed=seed)
        assert plain.reset(seed=seed)[1]["public"]["entities"] == info["public"]["entities"]
        s = info["public"]["entities"].index("steel soup spoon")
        slots = tuple(shuffled.decode(shuffled.E + s * shuffled.P + j).part for j in range(len(names)))
        assert sorted(slots) == sorted(names) and [p for p, _ in shuffled.parts("steel soup spoon")] == list(slots)
        assert [p for p, _ in plain.parts("steel soup spoon")] == names
        again = DiscreteCreativity(CreativityEnv(static, items=[task]))
        again.reset(seed=seed)
        assert tuple(again.decode(again.E + s * again.P + j).part for j in range(len(names))) == slots
        orders.add(slots)
    assert len(orders) > 1  # the order moves with the seed
    with pytest.raises(ValueError, match="part_order"):
        DiscreteCreativity(CreativityEnv(static, items=[task]), part_order="sorted")  # type: ignore[arg-type]


def test_vector_env_rollout() -> None:
    envs = make_vector_env("lateralgym/Creativity-Interactive-v2", num_envs=3)
    obs, _ = envs.reset(seed=7)
    assert obs.shape == (3, envs.single_observation_space.shape[0])
    rng = np.random.default_rng(0)
    finished = 0
    for _ in range(60):
        obs, reward, terminated, truncated, _ = envs.step(rng.integers(envs.single_action_space.n, size=3))
        finished += int(np.sum(terminated | truncated))
    assert finished > 0 and np.all(np.isfinite(obs))
    envs.close()


def test_rejects_other_benchmarks() -> None:
    with pytest.raises(ValueError, match="CreativityBench"):
        DiscreteCreativity(gymnasium.make("lateralgym/BrainTeaser-v1").unwrapped)


def test_action_masks_allow_exactly_the_useful_moves() -> None:
    env = tiny()
    _, info = env.reset(seed=0)
    E, P = env.E, env.P
    mask = env.action_masks()
    assert mask.dtype == bool and mask.shape == (env.action_space.n,)
    assert mask[:E].tolist()[:4] == [True, True, True, False] and not mask[E:].any()  # inspect only
    s = info["public"]["entities"].index("steel soup spoon")
    _, _, _, _, info = env.step(s)
    mask = info["action_mask"]
    assert not mask[s] and mask[E + s * P : E + s * P + 2].all() and not mask[E + s * P + 2]
    static = tiny("creativity-static")
    static.reset(seed=0)
    assert not static.action_masks()[:E].any() and static.action_masks()[E:].sum() == 6  # 3 entities x 2 parts
    # every masked-in action is one the env accepts as valid
    for action in np.flatnonzero(static.action_masks()):
        static.reset(seed=0)
        assert static.step(int(action))[4]["valid_action"]


@pytest.mark.parametrize("asynchronous", [False, True])
def test_vector_envs_never_crash_on_any_outcome_shape(asynchronous: bool) -> None:
    """Thousands of random masked and unmasked steps across seeds: episodes end committed and not,
    and the merged infos always have one shape."""
    envs = make_vector_env("lateralgym/Creativity-Interactive-v2", num_envs=4, asynchronous=asynchronous)
    try:
        rng = np.random.default_rng(1)
        ended = 0
        for seed in range(3):
            _, infos = envs.reset(seed=seed)
            for _ in range(250 if asynchronous else 600):
                masks = np.stack(infos["action_mask"])
                pick = [int(rng.choice(np.flatnonzero(m))) for m in masks]
                random = rng.integers(envs.single_action_space.n, size=4)
                actions = np.where(rng.random(4) < 0.5, pick, random)
                obs, reward, terminated, truncated, infos = envs.step(actions)
                ended += int(np.sum(terminated | truncated))
                assert np.all(np.isfinite(reward)) and envs.observation_space.contains(obs)
        assert ended > 20
    finally:
        envs.close()
