"""Offline players: random, a lexical heuristic, and an oracle that reads the gold.

Together they bracket a benchmark: the oracle scores 100 %, random scores chance, and the
heuristic sits between. None of them needs a model or the network. Each holds the policies part of
the episode's benchmark (``info["benchmark"]``, looked up once per episode; the oracle's, once per
item), so a benchmark you register gets all three.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lateralgym.agents._base import Agent
from lateralgym.envs import Action, PolicyPart, benchmark_of, get_benchmark, item_key


def offline_player_note(benchmark: str, player: str) -> str | None:
    """What an offline player does instead when ``benchmark`` defines no policy of its own for it, in
    one line (``lateralgym run`` prints it with the results); None when it does, or for any other player."""
    if player not in ("random", "heuristic", "oracle"):
        return None
    policies = get_benchmark(benchmark).policies
    if policies.defines(player):
        return None
    if player == "oracle":
        return f"{benchmark} defines no oracle policy (oracle_action): every oracle move was invalid"
    blank = "answered 'I do not know.' every turn"
    if player == "random":
        return f"{benchmark} defines no random policy (random_action): the random player {blank}"
    if policies.defines("random"):
        return f"{benchmark} defines no heuristic policy (heuristic_action): the heuristic player played its random one"
    return (
        f"{benchmark} defines no heuristic or random policy (heuristic_action, random_action): "
        f"the heuristic player {blank}"
    )


class _PolicyAgent(Agent):
    """An agent that plays its episode's benchmark's policies (held from ``reset``)."""

    _policies: PolicyPart[Any] | None = None

    def reset(self, observation: dict[str, Any], info: dict[str, Any], seed: int | None = None) -> None:
        super().reset(observation, info, seed)
        self._policies = get_benchmark(str(info["benchmark"])).policies

    def policies(self, info: dict[str, Any]) -> PolicyPart[Any]:
        """The policies of ``info``'s benchmark (those held since ``reset``; looked up if it was skipped)."""
        if self._policies is None or self._policies.benchmark.name != info["benchmark"]:
            self._policies = get_benchmark(str(info["benchmark"])).policies
        return self._policies


class RandomAgent(_PolicyAgent):
    """Uniformly random among the public options (the benchmark's ``random_action``)."""

    name = "random"

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        return self.policies(info).random_action(info, self.rng)


class HeuristicAgent(_PolicyAgent):
    """A cheap lexical baseline: the benchmark's ``heuristic_action`` (each benchmark's env card says
    what its policy does: word overlap with the task, the longest option, probing questions...)."""

    name = "heuristic"

    def __init__(self, seed: int | None = None, inspections: int = 3, probes: int = 10) -> None:
        super().__init__(seed)
        self.settings = {"inspections": inspections, "probes": probes}
        """Budgets the policies read (``inspections``: entities to inspect, ``probes``: questions to ask)."""
        self.memory: dict[str, Any] = dict(self.settings)

    def reset(self, observation: dict[str, Any], info: dict[str, Any], seed: int | None = None) -> None:
        super().reset(observation, info, seed)
        self.memory = dict(self.settings)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        return self.policies(info).heuristic_action(info, self.rng, self.memory)


class OracleAgent(Agent):
    """Reads the gold from the items it is given: the upper bound, and a check that scoring works."""

    name = "oracle"

    def __init__(self, items: Iterable[Any], seed: int | None = None) -> None:
        super().__init__(seed)
        self.items: dict[str, tuple[Any, PolicyPart[Any]]] = {}
        for item in items:
            unit = benchmark_of(item)
            self.items[item_key(unit.item_id(item))] = (item, unit.policies)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        item, policies = self.items[str(info["item"])]
        return policies.oracle_action(item, info)
