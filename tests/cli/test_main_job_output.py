"""The main job (the README's set-up command) ends in at most 40 printed lines, the detail in report.md; in an
80-column terminal no table is wider and no header is cut short with an ellipsis, in ``run`` or ``report``."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOX = tuple("┏┃┡│└")


def _main_job() -> list[str]:
    """The ``lateralgym run ...`` of the README's set-up block, as it stands there."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    setup = readme[readme.index("\n## Set up\n") :]
    block = re.search(r"```bash\n(.*?)```", setup, re.S)
    assert block is not None
    command = block[1].strip().split("&&")[-1].strip()
    assert command.startswith("lateralgym run ")
    return shlex.split(command)[1:]


def _lateralgym(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": "80"}
    return subprocess.run(
        [sys.executable, "-m", "lateralgym.cli", *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


def _fits_80_columns(text: str) -> None:
    tables = [line for line in text.splitlines() if line.startswith(BOX)]
    assert tables, text
    too_wide = [line for line in tables if len(line) > 80]
    assert not too_wide, "\n".join(too_wide)
    assert "…" not in text, text  # nothing cut short: a header wraps at its underscores instead


def test_the_main_job_ends_in_40_lines_and_writes_every_table_to_report_md(tmp_path: Path) -> None:
    done = _lateralgym(_main_job(), tmp_path)
    assert done.returncode == 0, done.stderr
    printed = (done.stdout + done.stderr).strip().splitlines()
    assert len(printed) <= 40, "\n".join(printed)
    _fits_80_columns(done.stdout)
    assert "report.md in the run directory has every table" in done.stdout
    (run_dir,) = (tmp_path / "runs").iterdir()
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    for table in ("## Headline", "### by_scene", "### by_gold_level", "## Exploration", "| scored_episodes |"):
        assert table in report
    assert f"lateralgym report runs/{run_dir.name}" in report  # the figures are one command away


RUNS = [
    ("creativity-interactive", ["--sample", "40"]),
    ("brainteaser", ["--repeats", "2"]),
    ("splat", ["--repeats", "2"]),
]
"""Wide breakdowns: CreativityBench's eight, BrainTeaser's by kind and SPLAT's by band under repeats."""


@pytest.mark.parametrize(("config", "flags"), RUNS)
def test_report_tables_fit_80_columns_without_an_ellipsis(config: str, flags: list[str], tmp_path: Path) -> None:
    done = _lateralgym(["run", config, *flags, "--no-progress", "--out", "runs"], tmp_path)
    assert done.returncode == 0, done.stderr
    _fits_80_columns(done.stdout)
    (run_dir,) = (tmp_path / "runs").iterdir()
    report = _lateralgym(["report", str(run_dir)], tmp_path)
    assert report.returncode == 0, report.stderr
    _fits_80_columns(report.stdout.split("\nwrote ")[0])
