"""Leaderboards compare like with like: one board per benchmark, config and dataset, ranked on one metric of
one try (a run with repeats: the mean of its tries, as the paired difference counts them), best-of-R and
pass@k apart, and one line for runs that are not comparable."""

from __future__ import annotations

from pathlib import Path

import pytest

from lateralgym.cli import main
from lateralgym.episodes import leaderboard, paired_difference, run


@pytest.fixture(scope="module")
def brainteaser_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A random player with three tries per puzzle, made first (so listed first), and a heuristic one."""
    out = tmp_path_factory.mktemp("runs")
    random = run("brainteaser", player="random", repeats=3, out=out / "random", progress=False).run_dir
    heuristic = run("brainteaser", player="heuristic", out=out / "heuristic", progress=False).run_dir
    return random, heuristic


def test_a_run_with_repeats_is_ranked_on_one_try_as_the_paired_difference_counts(
    brainteaser_runs: tuple[Path, Path],
) -> None:
    random, heuristic = brainteaser_runs
    board = leaderboard([random, heuristic], resamples=0)
    assert len(board.boards()) == 1 and board.ranked_on("brainteaser") == "overall_acc"
    by_player = {row.player: row for row in board.rows}
    assert (
        by_player["random"].one_try()["overall_acc"].value == by_player["random"].metrics["overall_acc_mean_of_3"].value
    )
    assert "overall_acc_best_of_3" in by_player["random"].with_repeats()
    first, second = board.rows
    paired = paired_difference(first.run_dir, second.run_dir, resamples=0)
    assert paired.difference.value >= 0  # the board's first is the pair's better
    assert paired.a_rate == pytest.approx(first.one_try()["overall_acc"].value)
    assert paired.b_rate == pytest.approx(second.one_try()["overall_acc"].value)
    assert [r["ranked_on"] for r in board.to_records()] == [
        "overall_acc" if row.repeats == 1 else "overall_acc_mean_of_3" for row in board.rows
    ]


def test_compare_prints_one_try_columns_and_the_repeats_apart(
    brainteaser_runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    random, heuristic = brainteaser_runs
    assert main(["compare", str(random), str(heuristic), "--markdown", "--resamples", "20"]) == 0
    out = capsys.readouterr().out
    assert "**brainteaser (mcq), the sample data: ranked on overall_acc, one try**" in out
    board, repeats = out.split("With repeats")
    header = next(line for line in board.splitlines() if line.startswith("| run"))
    assert "best_of" not in header and "pass" not in header
    assert "| overall_acc_best_of_3 |" in repeats and "| pass@3 |" in repeats
    rows = [line for line in board.splitlines() if line.startswith("| brainteaser-")]
    paired = next(line for line in out.splitlines() if line.startswith("paired: "))
    better = rows[0].split(" | ")[0].removeprefix("| ")
    assert paired.startswith(f"paired: {better} - ")  # A is the board's first, and A - B is not negative
    assert not paired.split(": ")[2].startswith("-")


def test_runs_of_different_benchmarks_get_one_line_saying_they_are_not_comparable(
    brainteaser_runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, heuristic = brainteaser_runs
    splat = run("splat", player="heuristic", limit=4, out=tmp_path, progress=False).run_dir
    assert main(["compare", str(heuristic), str(splat), "--resamples", "0"]) == 0
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if "not comparable" in line]
    assert lines == [
        f"not comparable: {heuristic.name} and {splat.name} differ in benchmark (brainteaser vs splat), "
        "so each has a board of its own"
    ]
    assert "paired:" not in out
    assert "ranked on overall_acc, one try" in out and "ranked on acc, one try" in out


def test_runs_of_one_benchmark_under_different_configs_are_on_boards_of_their_own(tmp_path: Path) -> None:
    static = run("creativity-static", limit=3, out=tmp_path, progress=False).run_dir
    interactive = run("creativity-interactive", limit=3, out=tmp_path, progress=False).run_dir
    board = leaderboard([static, interactive], resamples=0)
    assert [len(b.rows) for b in board.boards()] == [1, 1]
    assert "differ in mode (static vs interactive)" in (board.apart() or "")


def test_compare_fits_80_columns_without_cutting_a_header(
    brainteaser_runs: tuple[Path, Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    splat = run("splat", player="heuristic", limit=4, out=tmp_path, progress=False).run_dir
    assert main(["compare", *map(str, brainteaser_runs), str(splat), "--resamples", "20"]) == 0
    out = capsys.readouterr().out
    tables = [line for line in out.splitlines() if line[:1] in "┏┃┡│└"]
    assert tables and all(len(line) <= 80 for line in tables)
    assert "…" not in out
