"""Sub-commands of ``lateralgym`` that live in their own module.

Each module in this package (any ``lateralgym/commands/<name>.py``) defines::

    def register(sub: argparse._SubParsersAction) -> None:
        parser = sub.add_parser("kb", help="...")
        ...
        parser.set_defaults(handler=_cmd_kb)   # handler(args) -> exit status

``lateralgym.cli`` discovers the modules, so adding a command never edits ``cli.py``. A benchmark's
own commands live in its folder, in the module its ``Benchmark.commands`` names (with the same
``register``); they are added after these. A handler is the only place that reads ``args``: it
turns them into typed values (a ``RunOptions``, paths) and calls the library. Keep module
top-level imports light (argparse, pathlib): import heavy libraries inside the handler, so
``lateralgym --help`` stays fast. Raise ``LateralGymError`` for bad input: ``cli.main`` turns it into
one line on stderr and exit status 2.

The flags several commands share live here too: ``--import`` (benchmarks defined outside the package,
loaded before a command reads its config) and ``--trust-imports`` (the code a run directory's config
names). So running a command loads this package and that command's module, nothing more.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from typing import TYPE_CHECKING

__all__ = [
    "add_import_flag",
    "add_trust_flags",
    "core_commands",
    "load_imports",
    "open_run_dirs",
    "register_all",
    "wants_help",
]


class _HelpAsked:
    """Whether the command line asks for help text: help texts that list every benchmark are built only then."""

    asked = True


def wants_help() -> bool:
    """Whether to build help texts that load every benchmark (``lateralgym.cli`` says, from the command line)."""
    return _HelpAsked.asked


def ask_help(asked: bool) -> None:
    """Say whether the command line asks for help (``lateralgym.cli`` does, before building the parser)."""
    _HelpAsked.asked = asked


_FIRST = ("run", "data", "replay", "view", "report", "configs")

"""Commands listed first in ``lateralgym --help``, in the order a newcomer meets them."""


def core_commands() -> list[str]:
    """The core sub-commands (this package's modules, one each), in the order ``--help`` lists them."""
    names = sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))
    return sorted(names, key=lambda n: _FIRST.index(n) if n in _FIRST else len(_FIRST))


SHARED_GROUPS = ("train",)
"""Core commands that benchmarks add sub-commands to (``train ppo``): building them loads every benchmark's."""


def register_all(sub: argparse._SubParsersAction, only: str | None = None) -> None:  # type: ignore[type-arg]
    """Let every module of this package add its sub-commands (``_FIRST`` first, the others in name
    order), then every registered benchmark's own command module (``Benchmark.commands``).

    ``only``: the command being run; a core command of its own (not a group benchmarks add to) is then
    the only module loaded, so running it imports nothing the other commands need."""
    names = core_commands()
    if only in names and only not in SHARED_GROUPS:
        importlib.import_module(f"{__name__}.{only}").register(sub)
        return
    for name in names:
        importlib.import_module(f"{__name__}.{name}").register(sub)
    from lateralgym.envs import all_benchmarks

    for benchmark in all_benchmarks():
        if benchmark.commands is not None:
            importlib.import_module(benchmark.commands).register(sub)


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


if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]
    """argparse's sub-command collection (``add_subparsers``), as ``register`` receives it."""
