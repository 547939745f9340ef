"""The README tells the truth: its Python examples run, its commands match .ci/run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_python_examples_run(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    assert blocks
    for n, code in enumerate(blocks):
        script = tmp_path / f"example_{n}.py"
        script.write_text(code)
        done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"README example {n} failed:\n{done.stderr}"


def test_ci_runs_exactly_the_readme_test_command() -> None:
    commands = re.findall(r"```bash\n(.*?)```", README, re.S)
    test_command = commands[1].strip()
    assert "pytest" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "lateralgym run creativity-interactive" in commands[0]
