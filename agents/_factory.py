"""Build players from spec strings: offline names or LLM model specs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from lateralgym.agents._base import Agent
from lateralgym.agents._human import HumanAgent
from lateralgym.agents._offline import HeuristicAgent, OracleAgent, RandomAgent
from lateralgym.envs import ConfigError, Item

OFFLINE_AGENTS: tuple[str, ...] = ("random", "heuristic", "oracle", "human")
"""Player specs that need no model."""


def make_agent(spec: str, items: Sequence[Item] = (), seed: int | None = None) -> Agent:
    """The player ``spec`` names: ``random``, ``heuristic``, ``oracle`` (needs ``items``), ``human``,
    or a model ``provider/model[?option=value&...]`` (see ``parse_player_spec``).

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
        return HumanAgent()
    from lateralgym.agents._llm_player import LLMPlayer, is_model_spec

    if is_model_spec(spec):
        return LLMPlayer.from_spec(spec, seed=seed)
    raise ConfigError(
        f"unknown player {spec!r}; offline players are: {', '.join(OFFLINE_AGENTS)}; "
        "or name a model as provider/model (e.g. openai/gpt-4o-mini)"
    )


def player_factory(
    spec: str,
    items: Sequence[Item] = (),
    *,
    base_url: str | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
) -> Callable[[int], Agent]:
    """A function building a fresh player per episode from the episode's seed.

    LLM players of one run share one ``LLMClient`` (one concurrency limit, one usage meter,
    reachable as ``factory.client``). Every player gets the episode seed as its ``episode_seed``,
    which tags its cache entries without being sent, so repeats of an item are distinct requests
    whatever the backend, and a rerun with the same seeds replays from the cache. With the
    ``openai`` backend the episode seed is also sent as the sampling seed unless the spec sets one.
    """
    from lateralgym.agents._llm_client import LLMClient
    from lateralgym.agents._llm_player import LLMPlayer, is_model_spec, split_player_spec

    if not is_model_spec(spec):
        make_agent(spec, items)  # fail now, not in the first episode, on an unknown spec
        return lambda seed: make_agent(spec, items, seed)
    name, client_fields, options = split_player_spec(spec)
    if base_url and "base_url" not in client_fields:
        client_fields["base_url"] = base_url
    client = LLMClient(name, cache_dir=cache_dir, use_cache=use_cache, **client_fields)
    fixed_seed = options.pop("seed", None)

    def build(seed: int) -> Agent:
        request_seed = fixed_seed if fixed_seed is not None else seed if client.spec.backend == "openai" else None
        return LLMPlayer(client, seed=request_seed, episode_seed=seed, **options)

    build.client = client  # type: ignore[attr-defined]
    return build
