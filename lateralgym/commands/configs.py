"""``lateralgym configs``: the shipped configs, one line each."""

from __future__ import annotations

import argparse

from lateralgym.commands import add_import_flag, load_imports


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``configs``."""
    parser = sub.add_parser(
        "configs",
        help="list the shipped configs (and the registered benchmarks, whose names run their default config)",
    )
    add_import_flag(parser)
    parser.set_defaults(handler=_cmd_configs)


def _cmd_configs(args: argparse.Namespace) -> int:
    from lateralgym.envs import SHIPPED_CONFIGS, EpisodeConfig, all_benchmarks

    load_imports(args.imports)
    for name in SHIPPED_CONFIGS:
        cfg = EpisodeConfig.named(name)
        print(
            f"{name:24} {cfg.benchmark:12} mode={cfg.mode:12} actions={','.join(cfg.allowed_actions):18} "
            f"max_turns={cfg.max_turns:<3} judge={cfg.judge} player={cfg.player}"
        )
    shipped = {EpisodeConfig.named(name).benchmark for name in SHIPPED_CONFIGS}
    others = [b for b in all_benchmarks() if b.name not in shipped]
    if others:
        print("\nbenchmarks without a shipped config (run one by name, with its default config):")
        for benchmark in others:
            imported = not type(benchmark).__module__.startswith("lateralgym.")
            how = f"lateralgym run {'--import FILE ' if imported else ''}{benchmark.name}"
            how += " --data FILE" if benchmark.data.sample_file is None else ""
            print(f"  {benchmark.name:22} {benchmark.title}  ({how})")
    return 0
