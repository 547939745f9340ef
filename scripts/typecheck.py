"""Run mypy --strict on the package as installed (``lateralgym.envs`` etc. live in root folders).

mypy cannot follow setuptools' package-dir mapping through an editable install, so this builds a
throwaway tree of symlinks laid out as the installed package and checks that.
Usage: ``python scripts/typecheck.py``.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        package = Path(tmp) / "lateralgym"
        shutil.copytree(ROOT / "lateralgym", package, symlinks=True)
        for name in ("envs", "agents", "judges", "episodes", "integrations", "databuild"):
            (package / name).symlink_to(ROOT / name)
        command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "-p", "lateralgym"]
        return subprocess.call(command, cwd=tmp)


if __name__ == "__main__":
    sys.exit(main())
