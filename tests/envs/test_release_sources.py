"""docs/benchmarks.md says where each official release comes from and which files to pass: every file
a built-in reader names is in that table, with a source and a licence on each row, and the commands it
gives name a registered config or benchmark."""

from __future__ import annotations

import re
from pathlib import Path

from lateralgym.envs import SHIPPED_CONFIGS, all_benchmarks
from lateralgym.envs.benchmarks.macgyver._loaders import HUMAN_SOLUTIONS

PAGE = Path(__file__).resolve().parents[2] / "docs" / "benchmarks.md"
FILE_NAME = re.compile(r"[\w-]*\.(?:npy|xlsx|jsonl|json|list)\b")


def _section() -> str:
    text = PAGE.read_text(encoding="utf-8")
    return text.split("### Where the official releases come from", 1)[1].split("\n## ", 1)[0]


def _rows() -> list[list[str]]:
    lines = [line for line in _section().splitlines() if line.startswith("| ") and not line.startswith("| benchmark")]
    return [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines]


def test_every_file_a_reader_names_is_in_the_table() -> None:
    section = _section()
    named = {HUMAN_SOLUTIONS}
    for benchmark in all_benchmarks():
        descriptions = [f.description for f in benchmark.data.formats]
        descriptions += [f.description for f in benchmark.judging.judgement_formats]
        named |= {name for text in descriptions for name in FILE_NAME.findall(text)}
    assert {"puzzles.xlsx", "rs_dev.jsonl", "english.json", "problem_solution_pair.xlsx", "stories.json"} <= named
    missing = sorted(name for name in named if name not in section)
    assert not missing, f"docs/benchmarks.md does not say where these come from: {missing}"


def test_each_row_has_a_source_a_licence_and_a_command() -> None:
    rows = _rows()
    assert len(rows) >= 8
    known = set(SHIPPED_CONFIGS) | {b.name for b in all_benchmarks()}
    for benchmark, where, licence, command in rows:
        assert "github.com/" in where or ".github.io" in where, benchmark
        assert licence, benchmark
        runs = re.findall(r"lateralgym run ([\w-]+)", command)
        assert all(name in known for name in runs), (benchmark, runs)
        assert runs or "judges eval" in command or "--data" in command, benchmark
