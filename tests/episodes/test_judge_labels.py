"""Agreement between a run's judge and human labels, from Python and the CLI."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from lateralgym.cli import main
from lateralgym.envs.benchmarks.splat import agreement, judge_labels_from_run
from lateralgym.episodes import run


def test_agreement_of_a_run_with_people(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = run("splat", player="heuristic", limit=2, out=tmp_path, progress=False)
    labels = judge_labels_from_run(result.run_dir)
    questions = [r for r in labels if r.question]
    verdicts = {r.item_id: r.verdict for r in labels if r.verdict}
    assert len(questions) == 20 and set(verdicts) == {"sp-001", "sp-002"}
    human = tmp_path / "human.csv"
    with human.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["item_id", "question", "human_answer", "human_verdict"])
        for n, r in enumerate(questions):
            flipped = {"yes": "no", "no": "yes", "irrelevant": "yes"}[r.answer] if n < 5 else r.answer  # type: ignore[index]
            writer.writerow([r.item_id, r.question, flipped, ""])
        writer.writerow(["sp-001", "", "", "not_yet"])
        writer.writerow(["sp-002", "", "", "correct"])
    report = agreement(result.run_dir, human)
    # 15 of 20 answers agree; the heuristic never solved, so only sp-001's final verdict agrees
    assert report.questions == 20 and report.reasoning_agreement == pytest.approx(15 / 20)
    assert report.puzzles == 2 and report.final_answer_agreement == pytest.approx(1 / 2)
    assert main(["agreement", str(result.run_dir), str(human)]) == 0
    out = capsys.readouterr().out
    assert "final-answer agreement M: 50.0% over 2 puzzles" in out and "R:    75.0% over 20" in out
