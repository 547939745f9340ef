"""No CSV LateralGym writes holds a cell a spreadsheet would run as a formula (CSV injection).

A crafted dataset names its items and writes its questions like formulas (``=HYPERLINK(...)``,
``+1+1``, ``-2+3``, ``@SUM(A1)``, a leading tab or carriage return). ``export --format csv``,
``compare --csv`` (the same writer) and SPLAT's annotators' label template escape each such cell
with a leading ``'`` (OWASP's advice), and the label reader takes the escape off again.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from lateralgym.cli import main
from lateralgym.envs.benchmarks.splat import SituationPuzzle
from lateralgym.envs.support import FORMULA_STARTS
from lateralgym.episodes import run
from lateralgym.episodes._compare import records_csv

HOSTILE = ['=HYPERLINK("http://example.invalid","x")', "+1+1", "-2+3", "@SUM(A1)", "\tTAB", "\rCR"]


def _cells(text: str) -> list[str]:
    return [cell for row in csv.reader(io.StringIO(text, newline="")) for cell in row]


def _number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _formulas(cells: list[str]) -> list[str]:
    """Cells a spreadsheet would run: starting like a formula, and not a number (``-3`` is one)."""
    return [cell for cell in cells if cell.startswith(FORMULA_STARTS) and not _number(cell)]


def test_records_csv_escapes_text_that_starts_like_a_formula() -> None:
    text = records_csv([{"=title": value, "n": -3, "ok": "plain"} for value in HOSTILE])
    assert len(list(csv.reader(io.StringIO(text, newline="")))) == 1 + len(HOSTILE)  # no row split
    cells = _cells(text)
    assert not _formulas(cells), _formulas(cells)
    assert {f"'{value}" for value in HOSTILE[:-1]} <= set(cells) and "'=title" in cells
    assert "\nCR" in cells  # a carriage return is written as a line break, inside its quoted cell
    assert "-3" in cells and "plain" in cells  # numbers and plain text as they were


def test_export_csv_of_a_crafted_dataset_holds_no_formula(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "riddles.jsonl"
    records = [
        {"id": value, "question": f"{value} riddle {n}?", "choices": ["=1+1", "@a", "b"], "label": 2}
        for n, value in enumerate(HOSTILE)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert (
        main(
            [
                "run",
                "riddlesense",
                "--data",
                str(data),
                "--player",
                "oracle",
                "--out",
                str(tmp_path / "runs"),
                "--no-progress",
            ]
        )
        == 0
    )
    run_dir = next((tmp_path / "runs").iterdir())
    capsys.readouterr()
    assert main(["export", str(run_dir), "--format", "csv"]) == 0
    cells = _cells(capsys.readouterr().out)
    assert not _formulas(cells), _formulas(cells)
    # the ids, escaped (the loader strips the tab and the carriage return off the last two)
    assert {f"'{value}" for value in HOSTILE[:4]} <= set(cells)


def test_the_splat_label_template_is_escaped_and_reads_back(tmp_path: Path) -> None:
    from lateralgym.envs.benchmarks.splat._agreement import load_human_labels
    from lateralgym.envs.benchmarks.splat._judge_labels import write_label_template

    puzzles = [
        SituationPuzzle(id=f"=cmd{n}", title="+title", story=f"@story {n}", answer="-the answer", difficulty=5)
        for n in range(2)
    ]
    result = run("splat", player="heuristic", items=puzzles, out=tmp_path / "runs", progress=False)
    path = write_label_template(result.run_dir)
    text = path.read_text(encoding="utf-8")
    cells = _cells(text)
    assert not _formulas(cells), _formulas(cells)
    assert "'=cmd0" in cells
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    for row in rows:  # a person fills every label, the escaped cells untouched
        row["human_answer" if row["question"] else "human_verdict"] = "yes" if row["question"] else "not_yet"
    filled = tmp_path / "labels.csv"
    with filled.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert {label.item_id for label in load_human_labels(filled)} == {"=cmd0", "=cmd1"}
