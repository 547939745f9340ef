"""An agent's own randomness: made on first use, seeded as the constructor or the last ``reset`` says."""

from __future__ import annotations

from typing import Any

import numpy as np

from lateralgym.agents import Agent
from lateralgym.envs import Action


class _Dice(Agent):
    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        raise NotImplementedError


def test_the_constructor_seed_gives_the_stream_of_that_seed() -> None:
    assert _Dice(seed=7).rng.integers(0, 1000, 5).tolist() == np.random.default_rng(7).integers(0, 1000, 5).tolist()


def test_reset_with_a_seed_starts_that_seed_stream_again() -> None:
    agent = _Dice(seed=7)
    agent.rng.integers(0, 1000, 3)
    agent.reset({}, {}, seed=11)
    assert agent.rng.integers(0, 1000, 5).tolist() == np.random.default_rng(11).integers(0, 1000, 5).tolist()
    agent.reset({}, {})  # no seed: the stream goes on
    assert agent.rng.integers(0, 1000, 5).tolist() == np.random.default_rng(11).integers(0, 1000, 10).tolist()[5:]


def test_a_generator_set_by_hand_is_the_one_used() -> None:
    agent = _Dice(seed=7)
    agent.rng = np.random.default_rng(3)
    assert agent.rng.integers(0, 1000, 4).tolist() == np.random.default_rng(3).integers(0, 1000, 4).tolist()
