"""LateralGym: Gymnasium/PettingZoo environments for lateral thinking and inventive tool use.

Importing ``lateralgym`` registers the env ids of every built-in benchmark from their table, importing
none of them, and those of each benchmark registered later (``lateralgym.ENV_IDS`` loads and lists them
all); ``lateralgym.make(config)`` builds an env from an ``EpisodeConfig``, a shipped config name or a
YAML/TOML file, for any registered benchmark (yours too).
"""

from __future__ import annotations

from typing import Any

import gymnasium

__version__ = "0.1.0"


def env_ids() -> dict[str, str]:
    """Registered env id -> the shipped config it runs, over every registered benchmark."""
    from lateralgym.envs import all_benchmarks

    return {env_id: config for b in all_benchmarks() for env_id, config in b.env_ids.items()}


def make(config: Any, **kwargs: Any) -> Any:
    """Build the env for a config (an ``EpisodeConfig``, a shipped config name or a YAML path).

    Keyword arguments go to the env: ``items``, ``judge``, ``render_mode``.
    """
    from lateralgym.envs import EpisodeConfig, LateralEnv

    cfg = config if isinstance(config, EpisodeConfig) else EpisodeConfig.named(str(config))
    return LateralEnv(cfg, **kwargs)


def _register_ids(ids: dict[str, str]) -> None:
    """Register env ids (id -> shipped config name) with Gymnasium (idempotent)."""
    for env_id, config in ids.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point="lateralgym:make", kwargs={"config": config})


def register_envs() -> None:
    """Register the built-in benchmarks' env ids (from their table: no benchmark is imported), those of
    the benchmarks registered so far, and those of every benchmark registered from now on (idempotent)."""
    from lateralgym.envs import BENCHMARKS, REGISTRATION_HOOKS
    from lateralgym.envs.benchmarks import BUILTIN

    if _register_ids not in REGISTRATION_HOOKS:
        REGISTRATION_HOOKS.append(_register_ids)
    for builtin in BUILTIN.values():
        _register_ids(builtin.env_ids)
    for benchmark in list(BENCHMARKS.values()):
        _register_ids(benchmark.env_ids)


register_envs()


def __getattr__(name: str) -> object:
    if name == "ENV_IDS":  # computed: benchmarks registered later add theirs
        return env_ids()
    raise AttributeError(f"module 'lateralgym' has no attribute {name!r}")


__all__ = ["ENV_IDS", "__version__", "env_ids", "make", "register_envs"]
