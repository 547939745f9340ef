"""``lateralgym configs``: the shipped configs, one line each."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``configs``."""
    sub.add_parser("configs", help="list the shipped configs").set_defaults(handler=_cmd_configs)


def _cmd_configs(args: argparse.Namespace) -> int:
    from lateralgym.envs import SHIPPED_CONFIGS, EpisodeConfig

    for name in SHIPPED_CONFIGS:
        cfg = EpisodeConfig.named(name)
        print(
            f"{name:24} {cfg.benchmark:12} mode={cfg.mode:12} actions={','.join(cfg.allowed_actions):18} "
            f"max_turns={cfg.max_turns:<3} judge={cfg.judge} player={cfg.player}"
        )
    return 0
