"""LateralGym: Gymnasium/PettingZoo environments for lateral thinking and inventive tool use.

Importing ``lateralgym`` registers the env ids of every built-in benchmark from their table, importing
none of them, and those of each benchmark registered later (``lateralgym.ENV_IDS`` loads and lists them
all); ``lateralgym.make(config)`` builds an env from an ``EpisodeConfig``, a shipped config name or a
YAML/TOML file, for any registered benchmark (yours too).
"""

from lateralgym._registration import env_ids, make, register_envs

__version__ = "0.1.0"

register_envs()


def __getattr__(name: str) -> object:
    if name == "ENV_IDS":  # computed: benchmarks registered later add theirs
        return env_ids()
    raise AttributeError(f"module 'lateralgym' has no attribute {name!r}")


__all__ = ["ENV_IDS", "__version__", "env_ids", "make", "register_envs"]
