"""LateralGym: Gymnasium/PettingZoo environments for lateral thinking and creative tool use.

Importing ``lateralgym`` registers the env ids (``lateralgym/Creativity-Interactive-v0`` etc.);
``lateralgym.make(name)`` builds an env from a shipped config name or a YAML file.
"""

from lateralgym._registration import ENV_IDS, make, register_envs

__version__ = "0.1.0"

register_envs()

__all__ = ["ENV_IDS", "__version__", "make", "register_envs"]
