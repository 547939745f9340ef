"""The player and the judge a run's options name, built the same way here and in each Ray worker,
and the check of their model servers before anything is made."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lateralgym.agents import Agent, player_factory
from lateralgym.envs import EpisodeConfig, Judge
from lateralgym.episodes._options import RunOptions
from lateralgym.judges import make_judge

__all__ = ["AgentFactory", "build_judge", "build_player", "check_model_servers"]

AgentFactory = Callable[[int], Agent]
"""Builds a fresh player for an episode from the episode's seed."""


def build_player(config: EpisodeConfig, options: RunOptions, items: Sequence[Any]) -> AgentFactory:
    """The player factory of ``options.player`` (else the config's), on ``options.base_url``, at the
    config's temperature unless the spec sets one.

    Raises:
        ConfigError: an unknown player (``LLMConfigError`` for a bad model setup).
    """
    return player_factory(
        options.player or config.player,
        items,
        base_url=options.base_url,
        cache_dir=options.cache_dir,
        use_cache=options.use_cache is not False,
        temperature=config.temperature,
    )


def build_judge(config: EpisodeConfig, options: RunOptions) -> Judge:
    """The judge of ``options.judge`` (else the config's) for the config's benchmark, on
    ``options.judge_base_url`` (else ``base_url``); a model judge whose spec sets no temperature
    gets the config's.

    Raises:
        ConfigError: a judge the benchmark does not have (``LLMConfigError`` for a bad model setup).
    """
    spec = options.judge or config.judge
    return make_judge(
        spec,
        benchmark=config.benchmark,
        base_url=options.judge_base_url or options.base_url,
        cache_dir=options.cache_dir,
        use_cache=options.use_cache is not False,
        samples=options.judge_samples,
        temperature=_config_temperature(spec, config.temperature),
    )


def _config_temperature(spec: str, temperature: float | None) -> float | None:
    """The config's temperature for a model judge whose spec sets none (the spec's own wins)."""
    if temperature is None:
        return None
    from lateralgym.agents import is_model_spec

    if not is_model_spec(spec):
        return None
    from lateralgym.agents import ModelSpec

    return temperature if ModelSpec.parse(spec).temperature is None else None


async def check_model_servers(factory: Any, judge: Any, *, resuming: bool) -> None:
    """Check the player's and the judge's model servers before a run (see ``agents._llm_probe``), then
    that the player's server decodes under the constraint it asks for (``agents._constraint``).

    Raises:
        EndpointCheckError: a server cannot be reached or refuses the key; the clients are closed.
        ConstraintRejectedError: the player's server refuses or ignores its constraint and the spec
            names no fallback.
    """
    owners = (("player", factory), ("judge", judge))
    clients: list[tuple[str, Any]] = [(role, getattr(owner, "client", None)) for role, owner in owners]
    clients = [(role, client) for role, client in clients if client is not None]
    if not clients:
        return  # offline players and judges: nothing to reach (and the openai SDK is never imported)
    from lateralgym.agents import EndpointCheckError, check_endpoints

    problems = await check_endpoints(clients)
    if problems:
        for client in {id(c): c for _, c in clients}.values():
            await client.aclose()
        then = "fix that, then resume" if resuming else "nothing was run; fix that and run again"
        raise EndpointCheckError("; ".join(p.describe() for p in problems) + f"; {then} (--no-check skips the check)")
    constraint = getattr(factory, "constraint", None)
    player_client = getattr(factory, "client", None)
    if constraint is not None and player_client is not None and constraint.mode != "off":
        from lateralgym.agents import check_constraint

        try:
            await check_constraint(player_client, constraint)
        except Exception:
            for client in {id(c): c for _, c in clients}.values():
                await client.aclose()
            raise
