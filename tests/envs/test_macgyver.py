"""MacGyver (``macgyver``), on spreadsheets written for these tests in the release's layout: solvable ids
stored as text and unsolvable ones as numbers, steps separated by ``<br>`` and a newline, people's
solutions in ``additional_human_solutions.xlsx`` beside the problems."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from llm_server import ScriptedLLMServer

from lateralgym.cli import main
from lateralgym.envs import Commit, DatasetError, EpisodeConfig, LateralEnv, load_items
from lateralgym.envs.benchmarks.macgyver import MacGyverOutcome, ReferenceMacGyverJudge, load_macgyver
from lateralgym.envs.testing import check_scene
from lateralgym.episodes import run

ROWS = [
    ("ID", "Problem", "Solvable?", "Unconventional?", "Solution", "Label"),
    (
        "2001",
        "Your kettle is broken and you want tea. You have a metal saucepan, a candle and a phone charger.",
        "Yes",
        "conventional",
        "Step1: Fill the saucepan with water.<br>\nStep2: Heat it on the stove until it boils.",
        "efficient",
    ),
    (
        "2002",
        "A button fell off your shirt before a meeting. You have a stapler, a paperclip and tape.",
        "Yes",
        "unconventional",
        "Step1: Bend the paperclip through the button holes.<br>\nStep2: Hide it behind the placket.",
        "inefficient",
    ),
    (
        2003,
        "You must lift a car alone to change a tyre. You have a sock, a banana and a pencil.",
        "No",
        "N/A",
        "It is not possible: none of these can bear the weight of a car.",
        "correct_right_reason",
    ),
]
HUMANS = [
    ("ID", "Problem", "Solvable?", "Solution"),
    ("2002", "(the same problem)", "Yes", "Step1: Staple the shirt closed where the button was."),
    ("2002", "(the same problem)", "No", "I do not think it can be done."),
]


def _book(path: Path, rows: list[tuple[Any, ...]]) -> Path:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    for row in rows:
        sheet.append(list(row))
    book.save(path)
    return path


@pytest.fixture
def release(tmp_path: Path) -> Path:
    _book(tmp_path / "additional_human_solutions.xlsx", HUMANS)
    return _book(tmp_path / "problem_solution_pair.xlsx", ROWS)


def test_the_release_is_read_with_its_traps(release: Path) -> None:
    problems = load_macgyver(release)
    assert [p.id for p in problems] == ["2001", "2002", "2003"]  # the number 2003 becomes text
    assert problems[0].solution == "Step1: Fill the saucepan with water.\nStep2: Heat it on the stove until it boils."
    assert (problems[1].solvable, problems[1].unconventional, problems[2].solvable, problems[2].unconventional) == (
        True,
        True,
        False,
        None,
    )
    assert problems[1].human_solutions == ("Step1: Staple the shirt closed where the button was.",)  # "No" left out
    assert problems[0].reference_solutions() == (problems[0].solution,)


def test_data_stats_detects_it_beside_splats_spreadsheets(release: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["data", "stats", str(release)]) == 0
    out = capsys.readouterr().out
    assert "kind: macgyver" in out and "unsolvable" in out and "unconventional" in out


@pytest.mark.parametrize(
    ("answer", "verdict"),
    [
        ("Step1: Fill the saucepan with water. Step2: Heat it on the stove until it boils.", "correct_efficient"),
        ("It is not possible to make tea.", "wrong_fail_solvability_status"),
        ("Use the phone charger as a spoon.", "wrong_entire_wrong_solution"),
        ("Fill the saucepan with water and wait.", "wrong_partial_correct"),
    ],
)
def test_the_reference_judges_rubric_by_hand(release: Path, answer: str, verdict: str) -> None:
    env = LateralEnv(EpisodeConfig.named("macgyver"), items=load_macgyver(release), judge=ReferenceMacGyverJudge())
    env.reset(options={"item_id": "2001"})
    env.step(Commit(answer=answer))
    outcome = env.outcome()
    assert isinstance(outcome, MacGyverOutcome) and outcome.verdict == verdict


def test_the_oracle_is_correct_everywhere_and_the_kinds_are_broken_down(release: Path, tmp_path: Path) -> None:
    result = run("macgyver", items=load_macgyver(release), player="oracle", out=tmp_path, progress=False)
    assert result.metrics.headline["correct_rate"] == 100.0
    assert result.metrics.headline["efficient_rate"] == pytest.approx(100 / 3)  # only 2001's solution is efficient
    kinds = {row["kind"]: row["correct_unsolvable_share"] for row in result.metrics.breakdowns["by_kind"]}
    assert kinds == {"conventional": 0.0, "unconventional": 0.0, "unsolvable": 100.0}


def test_an_llm_judge_gives_the_verdict_from_its_rubric(release: Path, tmp_path: Path) -> None:
    replies = {
        "2001": {"claims_unsolvable": False, "feasibility": "feasible", "efficient": False, "reason": "slow"},
        "2002": {"claims_unsolvable": False, "feasibility": "partially", "efficient": None, "reason": "half"},
        "2003": {"claims_unsolvable": True, "feasibility": None, "efficient": None, "reason": "right"},
    }

    def respond(body: dict[str, Any]) -> str:
        text = body["messages"][-1]["content"]
        key = "2001" if "kettle" in text else "2002" if "button" in text else "2003"
        return json.dumps(replies[key])

    server = ScriptedLLMServer(responder=respond).start()
    try:
        result = run(
            "macgyver",
            items=load_macgyver(release),
            player="oracle",
            judge="openai/judge",
            base_url=server.base_url,
            out=tmp_path,
            progress=False,
            cache_dir=tmp_path / "cache",
        )
    finally:
        server.stop()
    shares = result.metrics.headline
    assert shares["correct_inefficient_share"] == shares["wrong_partial_correct_share"] == pytest.approx(100 / 3)
    assert shares["correct_unsolvable_share"] == pytest.approx(100 / 3) and shares["correct_rate"] == pytest.approx(
        200 / 3
    )


def test_conformance_and_no_leak(release: Path) -> None:
    items = load_items(release, benchmark="macgyver")
    check_scene(lambda: LateralEnv(EpisodeConfig.named("macgyver"), items=list(items)))


def test_a_bad_solvable_cell_names_the_row(tmp_path: Path) -> None:
    bad = [*ROWS[:2], ("2009", "A problem", "Maybe", "conventional", "Step1: x", "efficient")]
    with pytest.raises(DatasetError, match=r"row 3.*Solvable\?.*expected Yes or No"):
        load_macgyver(_book(tmp_path / "problem_solution_pair.xlsx", bad))


def test_judges_are_measured_against_the_releases_annotations(
    release: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    annotations = {
        "2001": [
            {"model": "person", "annotation": "correct_efficient", "solution": ROWS[1][4].replace("<br>", "")},
            {"model": "model-a", "annotation": "wrong_entire_wrong_solution", "solution": "Use the phone charger."},
        ],
        "2003": [
            {"model": "model-b", "annotation": "correct_unsolvable", "solution": "It is not possible to lift it."},
            {"model": "model-c", "annotation": "wrong_fail_solvability_status", "solution": "Lift it with the sock."},
            {"model": "person", "solution": "an entry without an annotation is left out"},
        ],
    }
    path = tmp_path / "benchmark_results.json"
    path.write_text(json.dumps(annotations), encoding="utf-8")
    assert main(["judges", "eval", str(path), "--items", str(release), "--judge", "reference", "--json"]) == 0
    # the reference judge: efficient plan correct; charger wrong; "not possible" correct; the sock plan on an
    # unsolvable problem wrong about solvability: all four agree with people
    figures = json.loads(capsys.readouterr().out)
    headline = {k: figures[k] for k in ("n", "accuracy", "precision", "recall", "f1", "majority")}
    assert headline == {"n": 4, "accuracy": 1.0, "precision": 1.0, "recall": 1.0, "f1": 1.0, "majority": 0.5}
    assert main(["judges", "eval", str(path), "--judge", "reference"]) == 2
    assert "--items problem_solution_pair.xlsx" in capsys.readouterr().err
