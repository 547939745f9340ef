"""The one place LateralGym's Gymnasium environment ids are registered."""

from __future__ import annotations

from typing import Any

import gymnasium

ENV_IDS: dict[str, str] = {
    "lateralgym/Creativity-Static-v0": "creativity-static",
    "lateralgym/Creativity-CoT-v0": "creativity-cot",
    "lateralgym/Creativity-Interactive-v0": "creativity-interactive",
    "lateralgym/BrainTeaser-v0": "brainteaser",
    "lateralgym/Splat-v0": "splat",
}
"""Registered env id -> shipped config name."""


def make(config: Any, **kwargs: Any) -> Any:
    """Build the env for a config (an ``EpisodeConfig``, a shipped config name or a YAML path).

    Keyword arguments go to the env: ``items``, ``judge``, ``render_mode``.
    """
    from lateralgym.envs import BrainTeaserEnv, CreativityEnv, EpisodeConfig, SplatEnv

    cfg = config if isinstance(config, EpisodeConfig) else EpisodeConfig.named(str(config))
    env_class = {"creativity": CreativityEnv, "brainteaser": BrainTeaserEnv, "splat": SplatEnv}[cfg.benchmark]
    return env_class(cfg, **kwargs)


def register_envs() -> None:
    """Register every env id (idempotent)."""
    for env_id, config in ENV_IDS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point="lateralgym._registration:make", kwargs={"config": config})
