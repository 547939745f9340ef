"""``lateralgym data stats`` / ``data show``: what a dataset file holds, and items as a player sees them."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lateralgym.commands import add_import_flag, load_imports
from lateralgym.envs import LateralGymError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``data`` with its actions ``stats`` and ``show``."""
    data = sub.add_parser("data", help="inspect dataset files")
    data_sub = data.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    stats = data_sub.add_parser(
        "stats",
        help="detect a dataset file's format, load it and print its counts",
        description="Detect the format among every registered benchmark's (or one benchmark's, with --benchmark), "
        "load the file and print its counts, or an error naming the file, record and field. Formats: "
        + _formats_help(),
    )
    stats.add_argument("path", help="the dataset file")
    _add_format_flags(stats)

    show = data_sub.add_parser(
        "show",
        help="print items of a dataset file as the player sees them, with their hidden answers marked",
        description="Load a dataset file (any supported format) and print items: by id, or a random few. Each "
        "item shows the first observation a player gets, then, under a rule, the reference solution that only "
        "judges and researchers see.",
    )
    show.add_argument(
        "path", help="the dataset file, or a config's or benchmark's name for the sample shipped with the package"
    )
    show.add_argument("--item", metavar="ID", action="append", help="an item id (repeat for several)")
    show.add_argument("--random", type=int, metavar="N", help="N items drawn at random (default: the first one)")
    show.add_argument("--seed", type=int, default=0, help="seed of --random (default 0)")
    _add_format_flags(show)
    stats.set_defaults(handler=_cmd_stats)
    show.set_defaults(handler=_cmd_show)


def _formats_help() -> str:
    """Each registered benchmark's formats, for ``--help``."""
    from lateralgym.envs import all_benchmarks

    listed = (f"{b.name}: {', '.join(f.name for f in b.data.formats) or '-'}" for b in all_benchmarks())
    return "; ".join(listed) + "; every benchmark also reads our jsonl."


def _add_format_flags(parser: argparse.ArgumentParser) -> None:
    add_import_flag(parser)
    parser.add_argument("--benchmark", metavar="NAME", help="look among this benchmark's formats only")
    parser.add_argument("--format", metavar="NAME", help="skip detection: a format name (see above)")


def _load(args: argparse.Namespace) -> Any:
    from lateralgym.envs import load_items

    load_imports(args.imports)
    return load_items(args.path, format=args.format, benchmark=args.benchmark)


def _cmd_stats(args: argparse.Namespace) -> int:
    from lateralgym.envs import dataset_stats, iter_items

    load_imports(args.imports)
    # A stream: a benchmark that counts one record at a time never holds the whole file.
    items = iter_items(args.path, format=args.format, benchmark=args.benchmark)
    print(dataset_stats(items, path=args.path).render())
    return 0


def _sample(name: str) -> list[Any] | None:
    """The shipped sample items of the config or benchmark ``name``; None when it names neither (or a file)."""
    from lateralgym.envs import SHIPPED_CONFIGS, ConfigError, EpisodeConfig, all_benchmarks, get_benchmark

    if Path(name).exists() or name not in {*SHIPPED_CONFIGS, *(b.name for b in all_benchmarks())}:
        return None
    try:
        return list(get_benchmark(EpisodeConfig.named(name).benchmark).data.sample_items())
    except ConfigError:
        return None


def _cmd_show(args: argparse.Namespace) -> int:
    import random

    from lateralgym.envs import load_items
    from lateralgym.episodes import render_item

    load_imports(args.imports)
    sample = None if args.format or args.benchmark else _sample(args.path)
    items = sample if sample is not None else list(load_items(args.path, args.format, args.benchmark))
    if args.item:
        by_id = {str(getattr(i, "id", "")): i for i in items}
        missing = [i for i in args.item if i not in by_id]
        if missing:
            raise LateralGymError(f"{args.path}: no item with id {', '.join(map(repr, missing))}")
        chosen = [by_id[i] for i in args.item]
    elif args.random is not None:
        if args.random < 1:
            raise LateralGymError("--random takes a number of items, 1 or more")
        chosen = random.Random(args.seed).sample(items, min(args.random, len(items)))
    else:
        chosen = items[:1]
    for item in chosen:
        print(render_item(item))
    return 0
