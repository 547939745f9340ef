"""The offline SPLAT judge says what it cannot do wherever it is chosen (``--judge`` help, the run's
first line, the report), and what it says is true: these are the failures it owns up to."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from lateralgym.cli import main
from lateralgym.envs import judge_note, load_sample_items
from lateralgym.envs._actions import Commit
from lateralgym.envs.benchmarks.splat._judges import ReferenceJudge

PARAPHRASE = (
    "The crowd consisted of people who cannot perceive sound; they cheered with a silent gesture used by that "
    "community, and the musicians took it as a standing ovation."
)


def test_the_limits_it_states_are_real() -> None:
    puzzle = load_sample_items("splat")[0]  # Silent Ovation: the audience was Deaf
    judge = ReferenceJudge()
    assert "'Was the audience not deaf?' gets yes" in ReferenceJudge.limits
    assert asyncio.run(judge.answer(puzzle, "Was the audience not deaf?", ())).label == "yes"  # negation missed
    graded = asyncio.run(judge.grade(puzzle, Commit(answer=PARAPHRASE), ()))
    assert graded.label == "not_yet" and graded.hint == "Your explanation covers 0 of 4 key points."


def test_judge_notes() -> None:
    assert judge_note("splat", "reference") == ReferenceJudge.limits
    assert judge_note("brainteaser", "exact") is None  # exact grading, as the paper: nothing to disclose
    assert judge_note("splat", "openai/gpt-4o-mini") is None
    assert judge_note("no-such-benchmark", "reference") is None


def test_the_run_says_it_first_and_the_help_says_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "splat", "--limit", "1", "--no-progress", "--out", str(tmp_path)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    # the first line says the offline run measures nothing, and how to play SPLAT for real
    assert first.startswith("judge reference: this run measures nothing: an offline stand-in for SPLAT's LLM judge")
    assert "--judge human" in first and "--player openai/NAME" in first
    # an unrelated error stands alone: the long note is not printed before it
    assert main(["run", "splat", "--data", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert "judge reference" not in captured.out + captured.err and captured.err.startswith("lateralgym: error")
    assert main(["run", "riddlesense", "--limit", "1", "--no-progress", "--out", str(tmp_path)]) == 0
    assert not capsys.readouterr().out.startswith("judge ")
    help_text = subprocess.run(
        [sys.executable, "-m", "lateralgym.cli", "run", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "understands no negation or paraphrase" in " ".join(help_text.split())
    assert "human (a person judges SPLAT" in " ".join(help_text.split())
