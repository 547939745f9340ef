"""SPLAT's agreement tables with several annotators: pooled, per annotator, per band, people against
people (hand-computed), and the blank label file of ``lateralgym agreement --template``."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from lateralgym.cli import main
from lateralgym.envs import DatasetError
from lateralgym.envs.benchmarks.splat import agreement, agreement_rows, judge_labels_from_run, write_label_template
from lateralgym.envs.benchmarks.splat._agreement import load_human_labels, records_from_history
from lateralgym.envs.benchmarks.splat._agreement_table import agreement_table
from lateralgym.episodes import run

COLUMNS = ["item_id", "question", "human_answer", "human_verdict"]
BANDS = {"p1": "easy", "p2": "hard"}


def judge() -> list:  # type: ignore[type-arg]
    return [
        *records_from_history("p1", [["a?", "yes"], ["b?", "no"]], "correct"),
        *records_from_history("p2", [["c?", "irrelevant"], ["d?", "yes"]], "not_yet"),
    ]


def write(path: Path, rows: list[list[str]], columns: list[str] = COLUMNS) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(columns)
        writer.writerows(rows)
    return path


@pytest.fixture
def people(tmp_path: Path) -> list:  # type: ignore[type-arg]
    """Two annotators: ``ann`` (a file of her own, named by the file) and ``bob`` (an annotator column)."""
    ann = write(
        tmp_path / "ann.csv",
        [
            ["p1", "a?", "yes", ""],
            ["p1", "b?", "yes", ""],
            ["p1", "", "", "correct"],
            ["p2", "c?", "irrelevant", ""],
            ["p2", "d?", "no", ""],
            ["p2", "", "", "not yet"],
            ["p2", "e?", "", ""],  # an unlabelled template row: skipped
        ],
    )
    bob = write(
        tmp_path / "people.csv",
        [
            ["bob", "p1", "a?", "yes", ""],
            ["bob", "p1", "b?", "no", ""],
            ["bob", "p1", "", "", "not_yet"],
            ["bob", "p2", "c?", "no", ""],
            ["bob", "p2", "d?", "yes", ""],
            ["bob", "p2", "", "", "not_yet"],
        ],
        ["annotator", *COLUMNS],
    )
    return [*load_human_labels(ann), *load_human_labels(bob)]


def test_several_annotators_by_hand(people: list) -> None:  # type: ignore[type-arg]
    rows = {(r.first, r.second, r.band): r for r in agreement_table(judge(), people, BANDS)}
    assert list(rows) == [
        ("judge", "people", "all"),
        ("judge", "people", "easy"),
        ("judge", "people", "hard"),
        ("judge", "ann", "all"),
        ("judge", "bob", "all"),
        ("people", "people", "all"),
        ("people", "people", "easy"),
        ("people", "people", "hard"),
        ("ann", "bob", "all"),
    ]
    pooled = rows["judge", "people", "all"]
    # verdicts: p1 correct/ann correct, p2 not_yet/ann not_yet, p1 correct/bob not_yet (x), p2 agree: 3/4
    assert (pooled.puzzles, pooled.final_answer_agreement) == (4, 3 / 4)
    # answers (judge, person): ann (y,y) (n,y)x (i,i) (y,n)x; bob (y,y) (n,n) (i,n)x (y,y): 5/8
    assert (pooled.questions, pooled.reasoning_agreement) == (8, 5 / 8)
    # judge yes 4 no 2 irr 2; people yes 4 no 3 irr 1; p_e = (16 + 6 + 2) / 64 = 0.375; (0.625-0.375)/0.625
    assert pooled.kappa == pytest.approx(0.4)
    assert pooled.confusion == [[3, 1, 0], [1, 1, 0], [0, 1, 1]]
    # easy (p1): M 1/2; R 3/4; judge yes 2 no 2, people yes 3 no 1: p_e = 8/16, kappa = 0.25/0.5
    easy = rows["judge", "people", "easy"]
    assert (easy.final_answer_agreement, easy.reasoning_agreement, easy.kappa) == (0.5, 0.75, pytest.approx(0.5))
    # hard (p2): M 1; R 1/2; judge irr 2 yes 2, people irr 1 no 2 yes 1: p_e = 4/16, kappa = 0.25/0.75
    hard = rows["judge", "people", "hard"]
    assert (hard.final_answer_agreement, hard.reasoning_agreement, hard.kappa) == (1.0, 0.5, pytest.approx(1 / 3))
    assert (rows["judge", "ann", "all"].final_answer_agreement, rows["judge", "ann", "all"].reasoning_agreement) == (
        1.0,
        0.5,
    )
    assert (rows["judge", "bob", "all"].final_answer_agreement, rows["judge", "bob", "all"].reasoning_agreement) == (
        0.5,
        0.75,
    )
    # people: ann vs bob. p1 verdicts differ, p2 agree: 1/2. a? agree, b? c? d? differ: 1/4.
    # ann yes 2 irr 1 no 1, bob yes 2 no 2: p_o 1/4, p_e (4 + 2 + 0)/16; kappa (4-6)/(16-6) = -0.2
    humans = rows["people", "people", "all"]
    assert (humans.final_answer_agreement, humans.reasoning_agreement) == (0.5, 0.25)
    assert humans.kappa == pytest.approx(-0.2) and rows["ann", "bob", "all"].kappa == pytest.approx(-0.2)
    # easy: M 0, R 1/2, ann yes 2 / bob yes 1 no 1: p_e 2/4 = p_o -> 0;  hard: M 1, R 0, kappa -0.25/0.75
    assert rows["people", "people", "easy"].model_dump(include={"final_answer_agreement", "reasoning_agreement"}) == {
        "final_answer_agreement": 0.0,
        "reasoning_agreement": 0.5,
    }
    assert rows["people", "people", "easy"].kappa == pytest.approx(0.0)
    assert rows["people", "people", "hard"].kappa == pytest.approx(-1 / 3)


def test_one_annotator_gives_the_single_comparison(people: list) -> None:  # type: ignore[type-arg]
    ann = [r for r in people if r.annotator == "ann"]
    rows = agreement_table(judge(), ann)
    assert [(r.first, r.second, r.band) for r in rows] == [("judge", "people", "all")]
    assert (rows[0].final_answer_agreement, rows[0].reasoning_agreement) == (1.0, 0.5)


def test_template_then_agreement_from_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = run("splat", player="heuristic", limit=2, out=tmp_path / "runs", progress=False)
    out = tmp_path / "blank.csv"
    assert main(["agreement", "--template", str(result.run_dir), "--out", str(out)]) == 0
    assert f"wrote {out}" in capsys.readouterr().out
    with out.open(encoding="utf-8", newline="") as handle:
        template = list(csv.DictReader(handle))
    labels = judge_labels_from_run(result.run_dir)
    questions = sorted((r for r in labels if r.question), key=lambda r: r.item_id)  # the log interleaves episodes
    assert [r["question"] for r in template if r["question"]] == [r.question for r in questions]
    finals = [r for r in template if r["explanation"]]
    assert [r["item_id"] for r in finals] == ["sp-001", "sp-002"]
    assert all(not r["human_answer"] and not r["human_verdict"] for r in template)  # blank: no judge label shown
    assert template[0]["story"].startswith("When the final song ended") and template[0]["band"]
    with pytest.raises(DatasetError, match="holds no labels"):  # a blank template labels nothing
        load_human_labels(out)

    # two people fill it: one as the judge did, one flipping every first question of a puzzle
    flip = {"yes": "no", "no": "yes", "irrelevant": "yes"}
    verdicts = {r.item_id: r.verdict for r in labels if r.verdict}
    for name, flipped in (("amy", False), ("ben", True)):
        judged = iter(r.answer for r in questions)
        filled, seen = [], set()
        for row in template:
            row = {**row, "annotator": name}
            if row["question"]:
                answer = next(judged)
                first = row["item_id"] not in seen
                seen.add(row["item_id"])
                row["human_answer"] = flip[answer] if flipped and first else answer  # type: ignore[index]
            else:
                row["human_verdict"] = verdicts[row["item_id"]]  # type: ignore[assignment]
            filled.append(row)
        with (tmp_path / f"{name}.csv").open("w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(template[0]))
            writer.writeheader()
            writer.writerows(filled)
    n = len(questions)
    assert main(["agreement", str(result.run_dir), str(tmp_path / "amy.csv"), str(tmp_path / "ben.csv")]) == 0
    printed = capsys.readouterr().out
    # pooled: 2n answers, 2 flipped -> (2n - 2) / 2n; verdicts all agree
    assert f"R:    {100 * (2 * n - 2) / (2 * n):.1f}% over {2 * n} questions" in printed
    assert "M: 100.0% over 4 puzzles" in printed
    assert "judge amy" in " ".join(printed.split()) and "people people" in " ".join(printed.split())
    rows = {
        (r.first, r.second, r.band): r
        for r in agreement_rows(result.run_dir, tmp_path / "amy.csv", tmp_path / "ben.csv")
    }
    assert rows["judge", "amy", "all"].reasoning_agreement == 1.0
    assert rows["people", "people", "all"].reasoning_agreement == pytest.approx((n - 2) / n)
    assert {band for _, _, band in rows} >= {"all"} and len({band for _, _, band in rows}) >= 2  # per band
    assert agreement(result.run_dir, tmp_path / "amy.csv").reasoning_agreement == 1.0


def test_agreement_cli_usage_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["agreement", str(tmp_path)]) == 2
    assert "give two label sources" in capsys.readouterr().err
    assert main(["agreement", "a", "b", "--out", "x.csv"]) == 2
    assert "--out goes with --template" in capsys.readouterr().err


def test_write_label_template_default_path(tmp_path: Path) -> None:
    result = run("splat-paper", player="heuristic", limit=1, out=tmp_path, progress=False)
    path = write_label_template(result.run_dir)
    assert path == result.run_dir / "labels-template.csv" and path.read_text().startswith("annotator,item_id,band")
