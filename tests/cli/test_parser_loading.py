"""Building the command line's parser loads only the command being run, and running it only what the run
needs (README, Architecture)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

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
    assert _loaded("run", "splat", "--limit", "1") == ["lateralgym.commands.run"]
    assert _loaded("serve", "splat") == ["lateralgym.commands.serve"]


def test_help_and_shared_groups_load_every_command() -> None:
    everything = _loaded("--help")
    assert "lateralgym.commands.view" in everything and any("benchmarks" in m for m in everything)
    train = _loaded("train", "ppo", "--help")
    assert any(m.startswith("lateralgym.envs.benchmarks.") for m in train)  # benchmarks add to `train`


RUN_PROBE = """
import json, sys
from lateralgym.cli import main
status = main(["run", "splat", "--limit", "1", "--out", sys.argv[1]])
ours = [m for m, v in sys.modules.items() if m.startswith("lateralgym") and getattr(v, "__file__", None)]
print(json.dumps([status, sorted(ours)]))
"""

RUN_BUDGET = 45
"""Project modules a one-item SPLAT run with its offline player and judge loads: issue 33's bar (52 before
seven small modules joined their kin: field types into the items and the name matching, the moves tally
into the metrics, the report's facts into the report, the plan into the options, the player interface and
offline players into one module with their factory, SPLAT's puzzle into its scene; 70 before the
model-spec parser, local servers, reply parser and pass^k loaded only when used; 145 before the lazy
registry and exports); docs/architecture.md says what they are."""

NOT_FOR_A_RUN = (
    "lateralgym.envs.benchmarks._mcq",  # what multiple choice shares
    "lateralgym.episodes._viewer",
    "lateralgym.episodes._plots",
    "lateralgym.episodes._replay",
    "lateralgym.episodes._export",
    "lateralgym.episodes._compare",
    "lateralgym.episodes._dryrun",
    "lateralgym.episodes._continue",
    "lateralgym.episodes._resume",
    "lateralgym.episodes._ray",
    "lateralgym.agents._llm_client",
    "lateralgym.agents._llm_spec",  # a model's spec, parsed only for one
    "lateralgym.agents._llm_errors",
    "lateralgym.agents._local_serve",  # local/ models' servers
    "lateralgym.agents._local_model",
    "lateralgym.agents._local_identity",
    "lateralgym.agents._gguf",
    "lateralgym.agents._human",
    "lateralgym.agents._llm_player",  # a model playing
    "lateralgym.agents._prompts",
    "lateralgym.agents._parsing",
    "lateralgym.judges._asker",
    "lateralgym.judges._evaluation",  # a judge measured against people
    "lateralgym.episodes._leaderboard",
    "lateralgym.episodes._served",  # sessions for drivers outside the runner (a server, a trainer)
    "lateralgym.episodes._estimate",
    "lateralgym.envs._sync",  # the background loop of a synchronous step with a model's judge
    "lateralgym.envs._pass_k",  # items tried more than once
    "lateralgym.envs._reply_text",  # a model's reply
    "lateralgym.envs._jsonl",  # records sharing list items (the compact JSONL form)
    "lateralgym.envs.benchmarks.splat._reply",
    "lateralgym.envs.benchmarks.splat._lateval",  # LatEval's puzzles
)
"""Modules only other runs need: other benchmarks, reports, the viewer, resume, Ray, LLM clients, players
and local servers, a person, repeats, model replies, other data layouts, a judge's measurement, the
sessions a server or trainer drives, a dry run's estimate."""


def test_a_run_loads_its_own_benchmark_and_what_the_run_needs(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", RUN_PROBE, str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    status, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    listing = "\n".join(loaded)
    assert status == 0
    assert len(loaded) <= RUN_BUDGET, f"{len(loaded)} project modules loaded (budget {RUN_BUDGET}):\n{listing}"
    other = [m for m in loaded if m.startswith("lateralgym.envs.benchmarks.") and ".splat" not in m]
    assert not other, f"another benchmark's modules loaded: {other}\n{listing}"
    assert not set(NOT_FOR_A_RUN) & set(loaded), f"{sorted(set(NOT_FOR_A_RUN) & set(loaded))}\n{listing}"
