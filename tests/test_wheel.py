"""A built wheel installed into a fresh venv imports and runs like the editable checkout."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _index_reachable() -> bool:
    probe = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", "/tmp/lateralgym-probe", "six"],
        capture_output=True,
        timeout=120,
    )
    return probe.returncode == 0


@pytest.mark.slow
def test_wheel_installs_and_runs_in_a_fresh_venv(tmp_path: Path) -> None:
    if not _index_reachable():
        pytest.skip("no network to the package index: cannot install the wheel's dependencies")
    dist, source = tmp_path / "dist", tmp_path / "source"
    # build from a copy: setuptools writes build/ and *.egg-info next to the sources
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".venv", ".git", "build", "runs", "*.egg-info"))
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(dist), str(source)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    (wheel,) = dist.glob("lateralgym-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", str(wheel)], check=True, capture_output=True, timeout=600
    )
    # nothing installed as a bare top-level module, and the package data is in the wheel
    check = (
        "import importlib.util, lateralgym, lateralgym.envs as e;"
        "assert all(importlib.util.find_spec(m) is None for m in ('envs','agents','judges','episodes'));"
        "assert len(e.load_sample_items('creativity')) >= 48; print(lateralgym.__file__)"
    )
    out = subprocess.run([str(py), "-c", check], check=True, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert str(env_dir) in out.stdout
    run = subprocess.run(
        [
            str(env_dir / "bin" / "lateralgym"),
            "run",
            "brainteaser",
            "--limit",
            "3",
            "--no-progress",
            "--out",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    assert "3 episodes run" in run.stdout
