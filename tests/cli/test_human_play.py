"""A person playing in a real pseudo-terminal: natural input, free help, the verdict and the solution
after each episode, and on ``quit`` or Ctrl-D a stop that says the run is unfinished (exit status 130, as
after Ctrl-C) and that ``--resume`` picks up."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pexpect = pytest.importorskip("pexpect", reason="human-play tests drive a real terminal with pexpect")

from lateralgym.envs import load_sample_items  # noqa: E402
from lateralgym.episodes import EpisodeEnd, read_log  # noqa: E402


def spawn(tmp_path: Path, *args: str) -> pexpect.spawn:
    command = [sys.executable, "-m", "lateralgym.cli", "run", *args, "--player", "human", "--out", str(tmp_path)]
    child = pexpect.spawn(command[0], command[1:], encoding="utf-8", timeout=60, dimensions=(40, 200))
    return child


def test_brainteaser_a_bare_letter_answers_and_the_solution_is_shown(tmp_path: Path) -> None:
    puzzles = load_sample_items("brainteaser")[:3]
    child = spawn(tmp_path, "brainteaser", "--limit", "2")  # whole groups: the first group's three puzzles
    child.expect(r"\[turn 1\] > ")
    child.sendline("help")  # costs nothing
    child.expect("How to play")
    child.expect(r"\[turn 1\] > ")
    child.sendline("what?")  # not a move: costs nothing either
    child.expect("cost no turn")
    child.expect(r"\[turn 1\] > ")
    wrong = "ABCDE"[(puzzles[0].label + 1) % 5]
    child.sendline(wrong)  # a bare letter is an answer
    child.expect(f"Answer {wrong} recorded: incorrect")
    child.expect("The intended answer: " + "ABCDE"[puzzles[0].label])
    child.expect(r"\[turn 1\] > ")
    child.sendline("ABCDE"[puzzles[1].label])
    child.expect("recorded: correct")
    child.expect(r"\[turn 1\] > ")
    child.sendline("ABCD"[puzzles[2].label])
    child.expect("recorded: correct")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_splat_bare_questions_hint_and_quit_then_resume(tmp_path: Path) -> None:
    child = spawn(tmp_path, "splat", "--limit", "1")
    child.expect(r"\[turn 1\] > ")
    child.sendline("Was it raining?")  # a bare question is a question
    child.expect(r"(Yes|No|Irrelevant)\.")
    child.expect(r"\[turn 2\] > ")
    child.sendline("hint")
    child.expect("So far:")
    child.expect(r"\[turn 2\] > ")  # the hint cost no round
    child.sendline("quit")
    child.expect("the run is unfinished: .* finish the run later with: lateralgym run --resume (\\S+)")
    run_dir = Path(child.match.group(1).strip())
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130  # unfinished, as after Ctrl-C: a script never takes it for a finished run
    assert not [r for r in read_log(run_dir / "steps.jsonl") if isinstance(r, EpisodeEnd)]  # not errored: unfinished

    puzzle = load_sample_items("splat")[0]
    again = pexpect.spawn(
        sys.executable,
        ["-m", "lateralgym.cli", "run", "--resume", str(run_dir)],
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    again.expect("an episode left under way goes on from its last move")
    again.expect(r"\[turn 1\] > ask: Was it raining\?")  # the turn played before, shown again
    again.expect(r"\[turn 2\] > ")  # the episode goes on where it stopped
    again.sendline(f"Answer: {puzzle.answer}")
    again.expect("Correct!")
    again.expect("What really happened")
    again.expect(pexpect.EOF)
    again.close()
    assert again.exitstatus == 0
    ends = [r for r in read_log(run_dir / "steps.jsonl") if isinstance(r, EpisodeEnd)]
    assert len(ends) == 1 and ends[0].error is None


def test_ctrl_d_stops_with_status_130_and_says_the_run_is_unfinished(tmp_path: Path) -> None:
    child = spawn(tmp_path, "creativity-interactive", "--limit", "1")
    child.expect(r"\[turn 1\] > ")
    child.sendeof()
    child.expect("lateralgym: stopped, so the run is unfinished: .*finish the run later with: lateralgym run --resume")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130


def test_creativity_a_bare_entity_name_is_understood_and_the_solution_stays_on_screen(tmp_path: Path) -> None:
    task = load_sample_items("creativity")[0]
    child = spawn(tmp_path, "creativity-interactive", "--limit", "1")
    child.expect(r"\[turn 1\] > ")
    child.sendline(f"the {task.gold.entity.upper()}")  # a bare name: an inspection, not a format error
    child.expect(f"{task.gold.entity}:\r?\n  - {task.gold.part}: physical")
    child.expect(r"\[turn 2\] > ")
    child.sendline(f"commit: {task.gold.entity} | {task.gold.part} | {task.solution.apply_affordance}")
    child.expect("The intended answer")
    child.expect(pexpect.EOF)
    after = child.before
    child.close()
    assert child.exitstatus == 0
    # the headline only after a person's play: the solution is not pushed off a 40-line screen
    assert "headline" in after and "by_scene" not in after and "by_gold_level" not in after
    assert len(after.splitlines()) < 30 and "Next: lateralgym view" in after


def test_creativity_static_a_bare_entity_asks_for_the_part(tmp_path: Path) -> None:
    task = load_sample_items("creativity")[0]
    child = spawn(tmp_path, "creativity-static", "--limit", "1")
    child.expect(r"\[turn 1\] > ")
    child.sendline(task.gold.entity)
    child.expect("is the entity; say which part and how you would use it")
    child.expect("cost no turn")
    child.sendline("quit")
    child.expect(
        "the one under way goes on from its last move \\(the turns played are shown again\\); finish the run later "
        "with: lateralgym run --resume (\\S+)"
    )
    run_dir = Path(child.match.group(1).strip())
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    again = pexpect.spawn(
        sys.executable, ["-m", "lateralgym.cli", "run", "--resume", str(run_dir)], encoding="utf-8", timeout=60
    )
    again.expect("resuming: the episodes finished are kept; an episode left under way goes on from its last move")
    again.expect(r"\[turn 1\] > ")  # no move was played: nothing to show again
    again.sendline("quit")
    again.expect(pexpect.EOF)
    again.close()
    assert again.exitstatus == 130  # still unfinished
