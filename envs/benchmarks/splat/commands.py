"""SPLAT's own commands: ``agreement`` (judge/human agreement, SPLAT's M, R and Cohen's kappa).

Its command layer: it parses its flags and calls ``lateralgym.envs.benchmarks.splat``'s agreement
functions; ``lateralgym.cli`` adds it through ``Benchmark.commands``.
"""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``agreement`` (its body moves here from the core command line; until then, nothing)."""
