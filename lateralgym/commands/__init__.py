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
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
from typing import TYPE_CHECKING

_FIRST = ("run", "data", "replay", "view", "report", "configs")

TRAIN_HELP = "train a policy or an LLM on a benchmark's tasks, and test it on held-out ones"
TRAIN_DESCRIPTION = (
    "Train on a config's train items and evaluate on its held-out test items. Algorithms: grpo (an LLM, any "
    "benchmark; the grpo extra) and each benchmark's own (ppo: a MaskablePPO policy; the rl extra)."
)
"""Commands listed first in ``lateralgym --help``, in the order a newcomer meets them."""


def register_all(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Let every module of this package add its sub-commands (``_FIRST`` first, the others in name
    order), then every registered benchmark's own command module (``Benchmark.commands``)."""
    names = sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))
    for name in sorted(names, key=lambda n: _FIRST.index(n) if n in _FIRST else len(_FIRST)):
        importlib.import_module(f"{__name__}.{name}").register(sub)
    from lateralgym.envs import all_benchmarks

    for benchmark in all_benchmarks():
        if benchmark.commands is not None:
            importlib.import_module(benchmark.commands).register(sub)


if TYPE_CHECKING:
    Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]
    """argparse's sub-command collection (``add_subparsers``), as ``register`` receives it."""


def command_group(sub: Subparsers, name: str, *, help: str, description: str) -> Subparsers:
    """The sub-commands of the group ``name`` (``lateralgym train ...``), made by the first module that
    asks, so the core and a benchmark can each add theirs (``train grpo``, ``train ppo``)."""
    groups: dict[str, Subparsers] = sub.__dict__.setdefault("_lateralgym_groups", {})
    if name not in groups:
        parser = sub.add_parser(name, help=help, description=description)
        groups[name] = parser.add_subparsers(dest=f"{name}_command", metavar="ACTION", required=True)
    return groups[name]
