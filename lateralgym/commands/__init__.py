"""Sub-commands of ``lateralgym`` that live in their own module.

Each module in this package (any ``lateralgym/commands/<name>.py``) defines::

    def register(sub: argparse._SubParsersAction) -> None:
        parser = sub.add_parser("kb", help="...")
        ...
        parser.set_defaults(handler=_cmd_kb)   # handler(args) -> exit status

``lateralgym.cli`` discovers the modules, so adding a command never edits ``cli.py``. A benchmark's
own commands live in its folder, in the module its ``Benchmark.commands`` names (with the same
``register``); they are added after these. Keep module
top-level imports light (argparse, pathlib): import heavy libraries inside the handler, so
``lateralgym --help`` stays fast. Raise ``LateralGymError`` for bad input: ``cli.main`` turns it into
one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil


def register_all(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Let every module of this package add its sub-commands, in name order, then every registered
    benchmark's own command module (``Benchmark.commands``)."""
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{__name__}.{info.name}").register(sub)
    from lateralgym.envs import all_benchmarks

    for benchmark in all_benchmarks():
        if benchmark.commands is not None:
            importlib.import_module(benchmark.commands).register(sub)
