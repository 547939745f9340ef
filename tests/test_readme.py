"""The README and the docs tell the truth: the quick start's commands and the Python examples run,
every link resolves, the README stays short, and its test command is the one .ci/run runs."""

from __future__ import annotations

import importlib.util
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = sorted((ROOT / "docs").glob("*.md"))
RUNNABLE = [ROOT / "README.md", ROOT / "docs" / "running.md", ROOT / "docs" / "training.md"]
"""Pages whose ```python blocks run as they are (offline, on the shipped data)."""


def section(text: str, title: str) -> str:
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def test_the_readme_is_a_short_front_door() -> None:
    assert len(README.splitlines()) <= 250


@pytest.mark.parametrize("page", RUNNABLE, ids=lambda p: p.name)
def test_python_examples_run(page: Path, tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S)
    assert blocks
    for n, code in enumerate(blocks):
        script = tmp_path / f"example_{n}.py"
        script.write_text(code)
        done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"{page.name} example {n} failed:\n{done.stderr}"


def test_every_quick_start_command_runs(tmp_path: Path) -> None:
    """Each command of the quick start, in order, in one empty folder (runs/ builds up as in a session)."""
    commands = [
        line.strip()
        for block in re.findall(r"```bash\n(.*?)```", section(README, "Quick start"), re.S)
        for line in block.splitlines()
        if line.strip()
    ]
    assert any(c.startswith("lateralgym run") for c in commands) and any("replay" in c for c in commands)
    has_rl = importlib.util.find_spec("sb3_contrib") is not None and importlib.util.find_spec("torch") is not None
    ran = 0
    for command in commands:
        if command.startswith("pip install"):
            continue  # the extra is installed or not; the train command below is skipped without it
        if command.startswith("lateralgym train ppo") and not has_rl:
            continue
        argv = [sys.executable, "-m", "lateralgym.cli", *shlex.split(command)[1:]]
        done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, f"`{command}` failed ({done.returncode}):\n{done.stderr[-2000:]}"
        ran += 1
    assert ran >= 8


def test_every_link_resolves() -> None:
    broken = []
    for page in [ROOT / "README.md", *DOCS, ROOT / "benchmarks" / "README.md"]:
        text = page.read_text(encoding="utf-8")
        for target in re.findall(r"\]\(([^)]+)\)", text):
            if target.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                broken.append(f"{page.relative_to(ROOT)}: {target}")
            elif anchor and resolved.suffix == ".md":
                headings = re.findall(r"^#+ (.+)$", resolved.read_text(encoding="utf-8"), re.M)
                slugs = {re.sub(r"[^\w\- ]", "", h.lower()).strip().replace(" ", "-") for h in headings}
                if anchor not in slugs:
                    broken.append(f"{page.relative_to(ROOT)}: {target} (no heading #{anchor})")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_ci_runs_exactly_the_readme_test_command() -> None:
    commands = re.findall(r"```bash\n(.*?)```", README, re.S)
    test_command = commands[1].strip()
    assert "pytest" in test_command
    assert test_command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "lateralgym run creativity-interactive" in commands[0]
