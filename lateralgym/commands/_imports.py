"""``--import``: benchmarks defined outside the package, loaded before a command reads its config."""

from __future__ import annotations

import argparse


def add_import_flag(parser: argparse.ArgumentParser) -> None:
    """Add ``--import PATH_OR_MODULE`` (repeatable)."""
    parser.add_argument(
        "--import",
        dest="imports",
        action="append",
        default=[],
        metavar="PATH_OR_MODULE",
        help="import a benchmark of your own first: a .py file or a module (repeatable); a run records it in its "
        "config, so resume, replay, view and report import it too. Then name its config, or the benchmark "
        "itself to run its default config",
    )


def load_imports(imports: list[str]) -> tuple[str, ...]:
    """Import each source (``lateralgym.envs.load_benchmark``); returns them as a config records them."""
    from lateralgym.envs import import_reference, load_benchmark

    for source in imports:
        load_benchmark(source)
    return tuple(import_reference(source) for source in imports)


def add_trust_flags(parser: argparse.ArgumentParser, *, with_import: bool = True) -> None:
    """Add ``--import`` (naming the code a run's config records) and ``--trust-imports``: a run directory
    is data, so the code its config names runs only when named or trusted (docs/security.md)."""
    if with_import:
        parser.add_argument(
            "--import",
            dest="imports",
            action="append",
            default=[],
            metavar="PATH_OR_MODULE",
            help="the benchmark file or module a run's config records (its imports:), named so it may run "
            "(repeatable); a run directory is data, and nothing it names runs unless you name it",
        )
    parser.add_argument(
        "--trust-imports",
        action="store_true",
        help="run the code a run directory's config names without naming each with --import (only for runs "
        "from a source you trust: opening a run should not run code from it)",
    )


def open_run_dirs(args: argparse.Namespace) -> None:
    """Before a command reads run directories: import what ``--import`` names and apply ``--trust-imports``."""
    from lateralgym.envs import trust_recorded_imports

    load_imports(args.imports)
    trust_recorded_imports(bool(args.trust_imports))
