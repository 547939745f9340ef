"""Tool rollouts: TRL's own ``environment_factory`` loop over a config (``lateralgym.integrations.trl``):
each move a tool call, the env's answer the tool's result, the episode's env reward TRL's reward
(``get_reward``). A second reward, weighted by ``valid_shaping``, is the share of accepted moves; both
go to TRL's log as ``lateralgym/reward`` and ``lateralgym/valid``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lateralgym.envs import EpisodeConfig
from lateralgym.integrations.grpo._text import REWARD_METRIC, VALID_METRIC
from lateralgym.integrations.trl import LateralToolEnvironment, dataset, environment

__all__ = ["tool_environment", "tool_rewards"]


def tool_environment(config: EpisodeConfig, items: Sequence[Any]) -> tuple[type[LateralToolEnvironment], list[Any]]:
    """The environment class over ``items`` and its rows (every item, with the seeds ``lateralgym run`` uses)."""
    env_class = environment(config, items=items)
    return env_class, dataset(env_class, split=None)


def _valid_share(env: LateralToolEnvironment) -> float:
    session = env.session
    if session is None or not session.moves:
        return 0.0
    return sum(valid for _, valid in session.moves) / len(session.moves)


def tool_rewards() -> list[Callable[..., list[float]]]:
    """The readable-move reward (TRL adds the env's own, ``get_reward``, itself)."""

    def valid_moves(
        completions: Any,
        environments: Sequence[LateralToolEnvironment],
        log_metric: Callable[[str, float], None] | None = None,
        **_: Any,
    ) -> list[float]:
        shares = [_valid_share(env) for env in environments]
        if log_metric is not None and environments:
            log_metric(REWARD_METRIC, sum(env.get_reward() for env in environments) / len(environments))
            log_metric(VALID_METRIC, sum(shares) / len(shares))
        return shares

    return [valid_moves]
