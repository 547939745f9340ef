"""The numpy REINFORCE example: masks match the wrapper, training learns, seeds reproduce."""

from __future__ import annotations

import numpy as np
import pytest

from lateralgym.envs import Commit, Inspect, Invalid
from lateralgym.envs.benchmarks.creativity.rl.reinforce import (
    FEATURES,
    LinearSoftmaxPolicy,
    TrainingHistory,
    evaluate,
    make_env,
    shaped_config,
    train_reinforce,
)


@pytest.fixture(scope="module")
def trained() -> tuple[LinearSoftmaxPolicy, TrainingHistory]:
    return train_reinforce(make_env, episodes=800, lr=1.0, seed=0)


def test_shaped_config_is_a_copy_of_the_interactive_one() -> None:
    config = shaped_config()
    assert config.mode == "interactive" and config.reveal == "names" and config.max_turns == 6
    assert (config.rewards.step, config.rewards.extra("entity_only"), config.rewards.invalid) == (-0.01, 0.25, -0.05)


def test_masks_and_features_agree_with_the_wrapper() -> None:
    env = make_env()
    rng = np.random.default_rng(3)
    policy = LinearSoftmaxPolicy.for_env(env, theta=rng.normal(size=len(FEATURES)))
    E = env.E
    for index in range(0, 48, 5):
        obs, info = env.reset(options={"index": index})
        done = False
        while not done:
            phi, mask = policy.features(obs)
            assert phi.shape == (env.n_actions, len(FEATURES)) and mask.shape == (env.n_actions,)
            assert mask[:E].sum() == len(info["public"]["entities"])
            np.testing.assert_array_equal(phi[:E, FEATURES.index("inspect_already_inspected")], obs[E : 2 * E])
            revealed = info["public"]["revealed"]
            for action in range(env.n_actions):
                decoded = env.decode(action)
                real_part = isinstance(decoded, Commit) and decoded.part in revealed.get(decoded.entity, {})
                if mask[action]:
                    assert isinstance(decoded, Inspect) or real_part
                else:
                    assert isinstance(decoded, Invalid) or not real_part
            probs = policy.probabilities(phi, mask)
            assert np.all(probs[~mask] == 0.0) and probs.sum() == pytest.approx(1.0)
            action = policy.act(obs, rng)
            assert mask[action]
            obs, _, terminated, truncated, info = env.step(action)
            assert info["valid_action"]  # a masked-in action is never answered as invalid
            done = terminated or truncated


def test_training_beats_random_and_untrained_policies(trained: tuple[LinearSoftmaxPolicy, TrainingHistory]) -> None:
    policy, history = trained
    env = make_env()
    zero = LinearSoftmaxPolicy.for_env(env)
    learned = evaluate(policy, env)
    random = evaluate(zero, env, episodes=5 * 48, greedy=False, seed=0)
    untrained = evaluate(zero, env)
    assert learned.episodes == untrained.episodes == len(env.unwrapped.items) and len(history.returns) == 800
    assert learned.mean_return > random.mean_return > untrained.mean_return
    assert learned.gold_correct_rate > random.gold_correct_rate > untrained.gold_correct_rate == 0.0
    early, _ = train_reinforce(make_env, episodes=100, lr=1.0, seed=0)  # the same run, stopped early
    assert learned.mean_return > evaluate(early, env).mean_return


def test_learned_weights_read_as_the_tool_repurposing_heuristic(
    trained: tuple[LinearSoftmaxPolicy, TrainingHistory],
) -> None:
    theta = dict(zip(FEATURES, trained[0].theta, strict=True))
    # commit the part whose attributes match the task, never inspect an entity twice (the sign of
    # inspect_name_overlap is the data's: the 48-task sample of v0 planted name-echo distractors, the
    # pipeline-built sample does not)
    assert theta["commit_part_overlap"] > 0 and theta["commit_best_part"] > 0
    assert theta["inspect_already_inspected"] < 0


def test_same_seed_same_theta() -> None:
    first, history = train_reinforce(make_env, episodes=60, seed=7)
    again, history_again = train_reinforce(make_env, episodes=60, seed=7)
    other, _ = train_reinforce(make_env, episodes=60, seed=8)
    np.testing.assert_array_equal(first.theta, again.theta)
    assert history.returns == history_again.returns
    assert not np.array_equal(first.theta, other.theta)


def test_bad_arguments_are_rejected() -> None:
    env = make_env()
    with pytest.raises(ValueError, match="weights"):
        LinearSoftmaxPolicy.for_env(env, theta=np.zeros(3))
    with pytest.raises(ValueError, match="batch_size"):
        train_reinforce(make_env, episodes=10, batch_size=0)
    with pytest.raises(ValueError, match="at least one episode"):
        evaluate(LinearSoftmaxPolicy.for_env(env), env, episodes=0)
