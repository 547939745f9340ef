"""A benchmark with only what it must have (no headline, no offline policies, one move) is told
straight: its results show no row for a metric it never reports, ``--player heuristic`` (or
``random``, ``oracle``) says in one line what it fell back to, and a person's ``help`` and error
lines name the game's own moves, never ``inspect:`` or ``ask:`` it lacks. Each run is a new process:
an imported benchmark registered in this one would leak into later tests."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

GAME = """
from lateralgym.envs import (
    Benchmark, Commit, DataPart, FrozenRecord, Handled, JudgingPart, Outcome, Scene, Text, register_benchmark,
)


class Riddle(FrozenRecord):
    id: Text
    riddle: Text
    answer: Text


class RiddleOutcome(Outcome):
    solved: bool

    def succeeded(self) -> bool:
        return self.solved


class NoJudge:
    name = "none"
    synchronous = True


class RiddleScene(Scene[Riddle, RiddleOutcome]):
    def __init__(self, item, config, judge, rng):
        super().__init__(item, config, judge, rng)
        self.solved = False

    def brief(self) -> str:
        return self.item.riddle

    async def handle(self, action):
        assert isinstance(action, Commit)
        self.solved = (action.answer or "").strip().lower() == self.item.answer
        return Handled(message="Right." if self.solved else "Wrong.", terminated=True)

    def outcome(self, turns, invalid_actions):
        return RiddleOutcome(**self.common(turns, invalid_actions, committed=True), solved=self.solved)


@register_benchmark
class Riddles(Benchmark[Riddle, RiddleOutcome]):
    name = "bare-riddles"
    item_type = Riddle
    outcome_type = RiddleOutcome
    scene_type = RiddleScene
    modes = ("single",)
    action_forms = {"commit": "commit: <one word>"}
    data = DataPart.having(jsonl_keys=frozenset({"riddle", "answer"}))
    judging = JudgingPart.having(offline_judges={"none": NoJudge}, default_judge="none")
"""

RIDDLES = [
    {"id": "r1", "riddle": "What has keys but opens no lock?", "answer": "piano"},
    {"id": "r2", "riddle": "What has hands but cannot clap?", "answer": "clock"},
]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "riddles.py").write_text(GAME, encoding="utf-8")
    (tmp_path / "riddles.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RIDDLES), encoding="utf-8")
    return tmp_path


def lateralgym(folder: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "lateralgym.cli", "run", "--import", "riddles.py", "bare-riddles"]
    command += ["--data", "riddles.jsonl", "--no-progress", *args]
    return subprocess.run(command, cwd=folder, input=stdin, capture_output=True, text=True, timeout=300)


def test_no_row_for_a_metric_it_never_reports_and_the_fallback_is_said(folder: Path) -> None:
    done = lateralgym(folder, "--player", "heuristic")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "accuracy" not in out and "n/a" not in out  # the default scorer reports success_rate
    assert "success_rate" in out
    notes = [line for line in out.splitlines() if line.startswith("player heuristic:")]
    assert notes == [
        "player heuristic: bare-riddles defines no heuristic or random policy (heuristic_action, random_action): "
        "the heuristic player answered 'I do not know.' every turn"
    ]


@pytest.mark.parametrize(
    ("player", "said"),
    [
        ("random", "defines no random policy (random_action): the random player answered 'I do not know.'"),
        ("oracle", "defines no oracle policy (oracle_action): every oracle move was invalid"),
    ],
)
def test_every_offline_fallback_is_said(folder: Path, player: str, said: str) -> None:
    done = lateralgym(folder, "--player", player)
    assert done.returncode == 0, done.stderr
    assert f"player {player}: bare-riddles {said}" in done.stdout


def test_a_person_is_shown_the_game_own_moves(folder: Path) -> None:
    moves = "help\nhint\nask: is it a piano?\ninspect: the lid\nwhat?\ncommit: piano\ncommit: clock\n"
    done = lateralgym(folder, "--player", "human", stdin=moves)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    help_text = out.split("How to play:", 1)[1].split("quit", 1)[0]
    assert "commit: <one word>" in help_text
    assert "inspect" not in help_text and "ask" not in help_text and "letter" not in help_text
    assert "Nothing to recall: this game has no questions or inspections" in out
    assert "this game has no 'ask' move; write 'commit: <one word>'" in out
    assert "this game has no 'inspect' move" in out
    assert "(not a move: write 'commit: <one word>'; type 'help'" in out
    assert out.count("cost no turn") == 3
    assert out.count("Right.") == 2  # the one move it has still plays, each on its first turn


def test_a_game_without_a_judge_is_told_what_to_add(folder: Path) -> None:
    """A benchmark class with no ``judging`` part has no offline judge: one line says what to give it."""
    game = (folder / "riddles.py").read_text(encoding="utf-8")
    without = "\n".join(line for line in game.splitlines() if not line.lstrip().startswith("judging ="))
    (folder / "riddles.py").write_text(without + "\n", encoding="utf-8")
    done = lateralgym(folder, "--player", "random")
    assert done.returncode != 0 and "Traceback" not in done.stderr
    said = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(said) == 1, done.stderr
    assert "benchmark 'bare-riddles' defines no offline judge" in said[0]
    assert "JudgingPart.having(offline_judges=" in said[0]
