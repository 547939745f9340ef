"""A built wheel installed into a fresh venv imports and runs like the editable checkout.

The build runs in the background from collection time on (see ``conftest.py``); the test waits for it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

Run = Callable[..., subprocess.CompletedProcess[str]]

IMPORT_CHECK = (
    "import importlib.util, lateralgym, lateralgym.envs as e, lateralgym.integrations;"
    "assert all(importlib.util.find_spec(m) is None for m in ('envs','agents','judges','episodes','integrations'));"
    "assert len(e.load_sample_items('creativity')) >= 48; print(lateralgym.__file__)"
)
"""Nothing is installed as a bare top-level module, and the package data is in the wheel."""


@dataclass(frozen=True)
class WheelRun:
    """What the background job saw: the venv it made, the import check and a CLI run inside that venv."""

    env_dir: Path
    imported: subprocess.CompletedProcess[str]
    cli: subprocess.CompletedProcess[str]


def _index_reachable(run: Run, workdir: Path) -> bool:
    probe = run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(workdir / "probe"), "six"],
        timeout=120,
    )
    return probe.returncode == 0


def build_and_install_wheel(run: Run, workdir: Path) -> WheelRun | None:
    """Background job: build the wheel, install it into a fresh venv, run it there; None without network."""
    if not _index_reachable(run, workdir):
        return None
    dist, source = workdir / "dist", workdir / "source"
    # build from a copy: setuptools writes build/ and *.egg-info next to the sources
    shutil.copytree(
        ROOT, source, ignore=shutil.ignore_patterns(".venv", ".git", "build", "runs", "*.egg-info", ".*_cache")
    )
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), str(source)], check=True, timeout=300)
    (wheel,) = dist.glob("lateralgym-*.whl")
    env_dir = workdir / "venv"
    run([sys.executable, "-m", "venv", str(env_dir)], check=True, timeout=300)
    py = env_dir / "bin" / "python"
    run([str(py), "-m", "pip", "install", "--quiet", str(wheel)], check=True, timeout=600)
    imported = run([str(py), "-c", IMPORT_CHECK], check=True, cwd=workdir, timeout=120)
    cli = run(
        [
            str(env_dir / "bin" / "lateralgym"),
            "run",
            "brainteaser",
            "--limit",
            "3",
            "--no-progress",
            "--out",
            str(workdir),
        ],
        cwd=workdir,
        timeout=300,
    )
    return WheelRun(env_dir=env_dir, imported=imported, cli=cli)


@pytest.mark.slow
@pytest.mark.background(job=build_and_install_wheel)
def test_wheel_installs_and_runs_in_a_fresh_venv(background_job: Callable[[], WheelRun | None]) -> None:
    try:
        result = background_job()
    except subprocess.CalledProcessError as exc:
        pytest.fail(f"{exc}\nstdout:\n{exc.stdout}\nstderr:\n{exc.stderr}")
    if result is None:
        pytest.skip("no network to the package index: cannot install the wheel's dependencies")
    assert str(result.env_dir) in result.imported.stdout
    assert result.cli.returncode == 0, result.cli.stderr
    assert "3 episodes run" in result.cli.stdout
