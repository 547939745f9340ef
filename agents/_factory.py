"""Build a player from a spec string."""

from __future__ import annotations

from collections.abc import Sequence

from lateralgym.agents._base import Agent
from lateralgym.agents._human import HumanAgent
from lateralgym.agents._offline import HeuristicAgent, OracleAgent, RandomAgent
from lateralgym.envs import ConfigError, Item

OFFLINE_AGENTS: tuple[str, ...] = ("random", "heuristic", "oracle", "human")
"""Player specs that need no model."""


def make_agent(spec: str, items: Sequence[Item] = (), seed: int | None = None) -> Agent:
    """The player ``spec`` names: ``random``, ``heuristic``, ``oracle`` (needs ``items``) or ``human``.

    Raises:
        ConfigError: unknown spec.
    """
    if spec == "random":
        return RandomAgent(seed=seed)
    if spec == "heuristic":
        return HeuristicAgent(seed=seed)
    if spec == "oracle":
        return OracleAgent(items, seed=seed)
    if spec == "human":
        return HumanAgent()
    raise ConfigError(f"unknown player {spec!r}; offline players are: {', '.join(OFFLINE_AGENTS)}")
