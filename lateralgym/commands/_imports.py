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
