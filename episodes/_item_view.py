"""A dataset item as a person reading the data sees it: the player's first observation, then the
reference solution only judges and researchers see (``lateralgym data show``)."""

from __future__ import annotations

from lateralgym.envs import SHIPPED_CONFIGS, ConfigError, EpisodeConfig, LateralEnv, benchmark_of

__all__ = ["render_item"]


def render_item(item: object) -> str:
    """An item as the player first sees it (shown as in the first shipped config of its benchmark),
    then its reference solution below a rule.

    Raises:
        ConfigError: the item belongs to no registered benchmark, or no shipped config runs its benchmark.
    """
    benchmark = benchmark_of(item)
    configs = (EpisodeConfig.named(name) for name in SHIPPED_CONFIGS)
    config = next((c for c in configs if c.benchmark == benchmark.name), None)
    if config is None:
        raise ConfigError(
            f"no shipped config runs {benchmark.name}, so its items cannot be shown as a player sees them"
        )
    env = LateralEnv(config, items=[item])
    observation, _ = env.reset(seed=0)
    rule = "-" * 60
    return (
        f"=== {benchmark.item_id(item)} ({benchmark.name}, shown as in config {config.name!r})\n"
        f"{observation['text']}\n{rule} hidden from the player\n{benchmark.solution_text(item)}\n"
    )
