"""Building the command line's parser loads only the command being run (README, Architecture)."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import json, sys
from lateralgym.cli import _parser
_parser(sys.argv[1:])
print(json.dumps(sorted(m for m in sys.modules if ".commands" in m and m != "lateralgym.commands")))
"""


def _loaded(*argv: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded: list[str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_a_core_command_loads_its_own_module_only() -> None:
    assert _loaded("run", "splat", "--limit", "1") == ["lateralgym.commands._imports", "lateralgym.commands.run"]
    assert _loaded("serve", "splat") == ["lateralgym.commands._imports", "lateralgym.commands.serve"]


def test_help_and_shared_groups_load_every_command() -> None:
    everything = _loaded("--help")
    assert "lateralgym.commands.view" in everything and any("benchmarks" in m for m in everything)
    train = _loaded("train", "ppo", "--help")
    assert any(m.startswith("lateralgym.envs.benchmarks.") for m in train)  # benchmarks add to `train`
