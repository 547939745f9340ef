"""CreativityBench's own commands: ``kb`` and ``tasks`` (its data pipelines) and ``train ppo``.

Its command layer: each module parses its flags into typed settings and calls the library
(``lateralgym.envs.benchmarks.creativity.databuild``, ``...creativity.rl``); nothing below parses
arguments. ``lateralgym.cli`` adds them through ``Benchmark.commands``.
"""

from __future__ import annotations

import argparse

from lateralgym.envs.benchmarks.creativity.commands import kb, tasks, train


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``kb``, ``tasks`` and ``train ppo`` to the command line."""
    for module in (kb, tasks, train):
        module.register(sub)
