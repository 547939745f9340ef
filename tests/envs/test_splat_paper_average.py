"""SPLAT's band average over a subset missing a band: the official ``metrics.py`` divides Acc and O/A by
three (a missing band counts 0) under ``splat-paper``, with a warning naming the empty band; our
``commit`` protocol averages the bands present."""

from __future__ import annotations

from pathlib import Path

import pytest

from lateralgym.cli import main
from lateralgym.envs import ScoredEpisode
from lateralgym.envs.benchmarks.splat import SplatOutcome, SplatScorer


def _outcome(band: str, solved: bool, turns: int, protocol: str) -> SplatOutcome:
    difficulty = {"easy": 2, "medium": 5, "hard": 8}[band]
    return SplatOutcome(
        turns=turns,
        max_turns=15,
        invalid_actions=0,
        committed=solved,
        questions=turns - 1,
        yes=0,
        no=0,
        irrelevant=turns - 1,
        repeated_questions=0,
        first_commit_turn=turns if solved else None,
        solved=solved,
        attempts=int(solved),
        difficulty=difficulty,
        band=band,  # type: ignore[arg-type]
        protocol=protocol,  # type: ignore[arg-type]
    )


def _scored(protocol: str) -> tuple[dict[str, float], list[str]]:
    # easy: one puzzle solved in round 2; medium: one solved in round 4, one unsolved (15 rounds); no hard
    scorer = SplatScorer(mode="multiturn", max_turns=15)
    plays = [("e1", "easy", True, 2), ("m1", "medium", True, 4), ("m2", "medium", False, 15)]
    for item, band, solved, turns in plays:
        scorer.add(ScoredEpisode(item, 0, _outcome(band, solved, turns, protocol), {}, truncated=not solved))
    scored = scorer.score()
    return scored.headline, scored.warnings


def test_the_paper_protocol_divides_by_three_and_warns() -> None:
    headline, warnings = _scored("paper")
    # bands: easy Acc 100, O/A 50; medium Acc 50, O/A (25 + 0)/2 = 12.5; hard: none (counts 0)
    assert headline["acc"] == pytest.approx((100 + 50 + 0) / 3)
    assert headline["oa"] == pytest.approx((50 + 12.5 + 0) / 3)
    assert headline["rnd"] == pytest.approx((2 + (4 + 15) / 2) / 2)  # Rnd: the bands present
    assert headline["acc_all_puzzles"] == pytest.approx(200 / 3)
    (warning,) = warnings
    assert "no hard puzzle" in warning and "metrics.py" in warning


def test_our_protocol_averages_the_bands_present_without_a_warning() -> None:
    headline, warnings = _scored("commit")
    assert headline["acc"] == pytest.approx((100 + 50) / 2)
    assert headline["oa"] == pytest.approx((50 + 12.5) / 2)
    assert warnings == []


def test_a_limited_splat_paper_run_prints_the_warning(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["run", "splat-paper", "--player", "oracle", "--limit", "1", "--out", str(tmp_path), "--no-progress"])
    assert code == 0
    out = capsys.readouterr().out
    assert "warning: no " in out and "counting 0" in out
