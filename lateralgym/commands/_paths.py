"""Paths the commands that look at a run are given."""

from __future__ import annotations

from pathlib import Path

from lateralgym.envs import LateralGymError

__all__ = ["one_run"]


def one_run(path: str) -> Path:
    """A run directory, or the parent folder of exactly one (``runs/`` after a single run).

    Raises:
        LateralGymError: the folder holds several runs (the message names a few).
    """
    given = Path(path)
    if (given / "steps.jsonl").exists() or not given.is_dir():
        return given
    runs = sorted(p for p in given.iterdir() if (p / "steps.jsonl").exists())
    if len(runs) == 1:
        return runs[0]
    if runs:
        names = ", ".join(p.name for p in runs[:5]) + (", ..." if len(runs) > 5 else "")
        raise LateralGymError(f"{given} holds {len(runs)} runs ({names}): pass one of them")
    return given
