"""Players: the interface every player implements (``Agent.act(observation, info) -> Action`` and
its async twin), the offline players, and the factory that builds a player from a spec string: an
offline name or an LLM model spec (``is_model_spec`` tells them apart without loading the model-spec
parser, so a run of offline players never does).

The offline players are random, a lexical heuristic, and an oracle that reads the gold. Together
they bracket a benchmark: the oracle scores 100 %, random scores chance, and the heuristic sits
between. None of them needs a model or the network. Each holds the policies part of the episode's
benchmark (``info["benchmark"]``, looked up once per episode; the oracle's, once per item), so a
benchmark you register gets all three.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from lateralgym.envs import Action, ConfigError, PolicyPart, benchmark_of, did_you_mean, get_benchmark, item_key


class PlayedTurn(BaseModel):
    """One turn of an episode played before a resume, as the player had it."""

    model_config = ConfigDict(frozen=True)

    turn: int
    """1-based turn number."""
    action: dict[str, Any]
    """The move as the env read it (``kind`` and its fields)."""
    reply: str
    """What the env answered."""


class Agent(ABC):
    """A player. ``reset`` starts an episode; ``act`` returns the next action.

    ``info["public"]`` carries the structured facts the env lets the player see (entity names,
    revealed attributes, choices, question history); agents never get the hidden item.
    """

    name: str = "agent"
    """Spec of the agent, as written in configs and logs."""

    resumes_mid_episode: ClassVar[bool] = False
    """Whether ``lateralgym run --resume`` may hand this player an episode left under way at its next
    turn (its earlier moves replayed from the log, ``show_played`` called); otherwise such an
    episode starts again at turn 1. Only a player whose state is rebuilt exactly from what the log
    keeps says so: a person (who is shown the turns again)."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng_seed = seed
        self._rng: np.random.Generator | None = None

    @property
    def rng(self) -> np.random.Generator:
        """The agent's own randomness, seeded by the last ``reset(seed=...)`` (else the constructor's
        seed). Made on first use: a model player never draws from it, and a generator costs a seeding."""
        if self._rng is None:
            self._rng = np.random.default_rng(self._rng_seed)
        return self._rng

    @rng.setter
    def rng(self, generator: np.random.Generator) -> None:
        self._rng = generator

    def reset(self, observation: dict[str, Any], info: dict[str, Any], seed: int | None = None) -> None:
        """Start an episode; ``seed`` re-seeds the agent's own randomness."""
        if seed is not None:
            self._rng_seed, self._rng = seed, None

    @abstractmethod
    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        """The next action for this observation."""

    def prompt_messages(self) -> list[dict[str, str]] | None:
        """The chat messages the player is given before the first observation (a model's system
        prompt and worked examples), once ``reset``; ``None`` for a player that reads no prompt. The
        runner logs them, so a rollout's messages can be rebuilt exactly from the step log."""
        return None

    def first_message(self, observation_text: str) -> str | None:
        """The first user message the player reads when it differs from the first observation (a paper
        layout that puts worked examples inside it), once ``reset``; ``None`` otherwise. The runner logs it
        beside ``prompt_messages``."""
        return None

    def show_played(self, opening: str, turns: Sequence[PlayedTurn]) -> None:
        """Called (after ``reset``) for a resumed episode that goes on at turn ``len(turns) + 1``, with
        the first observation and the turns played before; the next ``act`` gets the last reply.
        Only players that set ``resumes_mid_episode`` are called."""
        return None

    def episode_over(self, message: str, outcome: dict[str, Any], solution: str) -> None:
        """Called by the runner once an episode has ended and is logged: the env's last message, the
        outcome, and the item's reference solution. Only a person playing is shown it (the human
        agent); every other agent ignores it, so no model ever sees a solution."""
        return None

    async def act_async(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        """Async twin of ``act``; LLM agents override it, offline agents run ``act`` in place."""
        await asyncio.sleep(0)
        return self.act(observation, info)


OFFLINE_AGENTS: tuple[str, ...] = ("random", "heuristic", "oracle", "human")
"""Player specs that need no model."""


def is_model_spec(spec: str) -> bool:
    """Whether ``spec`` names a model (``provider/model[?options]``) rather than an offline agent or judge."""
    provider, sep, model = spec.partition("?")[0].partition("/")
    return bool(sep and provider.strip() and model.strip())


def make_agent(spec: str, items: Sequence[Any] = (), seed: int | None = None) -> Agent:
    """The player ``spec`` names: ``random``, ``heuristic``, ``oracle`` (needs ``items``), ``human``,
    or a model ``provider/model[?name=value&...]`` (see ``ModelSpec.parse`` and ``PLAYER_OPTIONS``).

    Raises:
        ConfigError: unknown spec (``LLMConfigError`` for a bad model setup).
    """
    if spec == "random":
        return RandomAgent(seed=seed)
    if spec == "heuristic":
        return HeuristicAgent(seed=seed)
    if spec == "oracle":
        return OracleAgent(items, seed=seed)
    if spec == "human":
        from lateralgym.agents._human import HumanAgent  # a person at the terminal: few runs have one

        return HumanAgent()
    if is_model_spec(spec):
        from lateralgym.agents._llm_player import LLMPlayer

        return LLMPlayer.from_spec(spec, seed=seed)
    raise _unknown_player(spec)


def check_player_spec(spec: str) -> None:
    """Refuse a player spec that names no player, before anything is built: not an offline player
    (``OFFLINE_AGENTS``) and not a model spec that parses.

    Raises:
        ConfigError: an unknown name (``LLMConfigError`` for a malformed model spec).
    """
    if spec in OFFLINE_AGENTS:
        return
    if not is_model_spec(spec):
        raise _unknown_player(spec)
    from lateralgym.agents._llm_spec import ModelSpec

    ModelSpec.parse(spec)


def _unknown_player(spec: str) -> ConfigError:
    return ConfigError(
        f"unknown player {spec!r}{did_you_mean(spec, OFFLINE_AGENTS)}; offline players are: "
        f"{', '.join(OFFLINE_AGENTS)}; or name a model as provider/model (e.g. openai/gpt-4o-mini)"
    )


def player_factory(
    spec: str,
    items: Sequence[Any] = (),
    *,
    base_url: str | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    temperature: float | None = None,
) -> Callable[[int], Agent]:
    """A function building a fresh player per episode from the episode's seed.

    LLM players of one run share one ``LLMClient`` (one concurrency limit, one usage meter,
    reachable as ``factory.client``). Every player gets the episode seed as its ``episode_seed``,
    which tags its cache entries without being sent, so repeats of an item are distinct requests
    whatever the backend, and a rerun with the same seeds replays from the cache. With the
    ``openai`` backend the episode seed is also sent as the sampling seed unless the spec sets one.
    ``base_url`` is used when the spec names none, and ``temperature`` (a config's) when the spec
    sets none. The players share one ``Constraint`` (``factory.constraint``), so a
    fallback the server forces is taken once for the whole run.
    """
    if not is_model_spec(spec):
        make_agent(spec, items)  # fail now, not in the first episode, on an unknown spec
        return lambda seed: make_agent(spec, items, seed)

    from lateralgym.agents._constraint import Constraint, default_constraint
    from lateralgym.agents._llm_client import LLMClient
    from lateralgym.agents._llm_player import PLAYER_OPTIONS, LLMPlayer
    from lateralgym.agents._llm_spec import LOCAL_PROVIDER, ModelSpec

    model = ModelSpec.parse(spec)
    if model.base_url is None and model.provider != LOCAL_PROVIDER:  # a local model gets its own server
        model = model.merge(base_url=base_url or None)
    if model.temperature is None:
        model = model.merge(temperature=temperature)
    options = model.role_options(PLAYER_OPTIONS, role="player")
    constraint = Constraint(options.pop("constrain", None) or default_constraint(model))
    client = LLMClient(model, cache_dir=cache_dir, use_cache=use_cache)

    def build(seed: int) -> Agent:
        request_seed = model.seed if model.seed is not None else seed if model.backend == "openai" else None
        return LLMPlayer(client, seed=request_seed, episode_seed=seed, constrain=constraint, **options)

    build.client = client  # type: ignore[attr-defined]
    build.constraint = constraint  # type: ignore[attr-defined]
    return build


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
