"""The code stays lint-clean (ruff) and type-clean (mypy --strict on the installed layout)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

Run = Callable[..., subprocess.CompletedProcess[str]]


def test_ruff_lint_and_format() -> None:
    if importlib.util.find_spec("ruff") is None:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    lint = subprocess.run([sys.executable, "-m", "ruff", "check", "."], cwd=ROOT, capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
    fmt = subprocess.run(
        [sys.executable, "-m", "ruff", "format", "--check", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert fmt.returncode == 0, fmt.stdout


def typecheck(run: Run, workdir: Path) -> subprocess.CompletedProcess[str] | None:
    """Background job: ``scripts/typecheck.py`` (mypy --strict); None when mypy is not installed.

    mypy keeps its incremental cache in the repository's (git-ignored) ``.mypy_cache`` unless
    ``MYPY_CACHE_DIR`` says otherwise: the first run takes half a minute, later ones re-check only
    what changed.
    """
    if importlib.util.find_spec("mypy") is None:
        return None
    env = {"MYPY_CACHE_DIR": str(ROOT / ".mypy_cache"), **os.environ}
    return run([sys.executable, str(ROOT / "scripts" / "typecheck.py")], timeout=600, cwd=workdir, env=env)


@pytest.mark.slow
@pytest.mark.background(job=typecheck)
def test_mypy_strict(background_job: Callable[[], subprocess.CompletedProcess[str] | None]) -> None:
    """mypy started at collection time (conftest.py) and ran alongside the other tests; its verdict."""
    check = background_job()
    if check is None:
        pytest.skip("mypy is not installed (pip install -e '.[test]')")
    assert check.returncode == 0, check.stdout + check.stderr
