"""The leaderboard for people: runs as rows, in a terminal table or Markdown.

Each row says what ran (run, benchmark, player, judge, dataset), how much (episodes, errored, and
``partial`` when the run has not finished its plan), the metrics with 95 % bootstrap intervals
(``61.5 [48.0, 74.0]``), then how the LLM player's replies were decoded (``constrained``: ``grammar``,
``json_schema``, ``off`` for the papers' free text) and the share of its moves that were invalid. By
default the metric columns are each benchmark's headline numbers (the papers' first metrics);
``all_metrics`` shows every headline metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.table import Table

from lateralgym.episodes._compare import DEFAULT_RESAMPLES, Leaderboard, RunRow, leaderboard

__all__ = ["compare_markdown", "compare_runs", "leaderboard_cells"]

_FACTS = ("run", "benchmark", "player", "judge", "dataset", "episodes")
_VALIDITY = ("constrained", "invalid")
"""After the metrics: how the player's replies were decoded, and the share of its moves that were invalid."""

SHORT_RUN_NAME = 16
"""Run names up to this long stay in the terminal table's first column; longer ones become ``#1``, ``#2``,
... with a legend under the table, so a row is one line however long its run's name."""


def _metric_columns(board: Leaderboard, all_metrics: bool) -> list[str]:
    names: dict[str, None] = {}
    for benchmark in dict.fromkeys(row.benchmark for row in board.rows):
        if all_metrics:
            names.update(dict.fromkeys(n for r in board.rows if r.benchmark == benchmark for n in r.metrics))
        else:
            names.update(dict.fromkeys(board.primary(benchmark)))
    return list(names)


def _episodes(row: RunRow) -> str:
    text = f"{row.episodes}"
    if row.errored:
        text += f" ({row.errored} errored)"
    if row.partial:
        text += f", partial: {row.episodes}/{row.planned}"
    return text


def leaderboard_cells(board: Leaderboard, all_metrics: bool = False) -> tuple[list[str], list[list[str]]]:
    """The header and one row of cell texts per run (blank where a run lacks a metric)."""
    metrics = _metric_columns(board, all_metrics)
    rows: list[list[str]] = []
    for row in board.rows:
        judge = row.judge + (f" ({row.judge_agreement})" if row.judge_agreement else "")
        facts = [row.run_id, row.benchmark + (f" ({row.mode})" if row.mode else ""), row.player, judge]
        facts += [row.dataset, _episodes(row)]
        invalid = "" if row.invalid_rate is None else f"{100 * row.invalid_rate:.1f}%"
        validity = [row.constrained or "-", invalid]
        rows.append(facts + [row.metrics[m].text() if m in row.metrics else "" for m in metrics] + validity)
    return [*_FACTS, *metrics, *_VALIDITY], rows


def _board(run_dirs: Sequence[str | Path] | Leaderboard, resamples: int) -> Leaderboard:
    return run_dirs if isinstance(run_dirs, Leaderboard) else leaderboard(run_dirs, resamples=resamples)


def compare_runs(
    run_dirs: Sequence[str | Path] | Leaderboard, *, resamples: int = DEFAULT_RESAMPLES, all_metrics: bool = False
) -> Table:
    """Runs as rows (best first within a benchmark), metrics with 95 % bootstrap intervals.

    Args:
        run_dirs: run directories or folders of runs, or a ``Leaderboard`` already computed.
        resamples: bootstrap resamples per run (0: values without intervals).
        all_metrics: every headline metric, not only each benchmark's paper headline.

    Raises:
        MetricsError: a directory is not a run, or its log holds no episodes.
    """
    board = _board(run_dirs, resamples)
    header, rows = leaderboard_cells(board, all_metrics)
    caption = f"metrics: value [95% bootstrap interval over items, {board.resamples} resamples]"
    if any(len(cells[0]) > SHORT_RUN_NAME for cells in rows):
        # long run names (config-player-timestamp-random) would wrap over lines: a short label, named below
        legend = [f"#{n} = {cells[0]}" for n, cells in enumerate(rows, 1)]
        rows = [[f"#{n}", *cells[1:]] for n, cells in enumerate(rows, 1)]
        caption = "\n".join([caption, *legend])
    table = Table(title="Leaderboard", title_justify="left", caption=caption, caption_justify="left")
    for n, name in enumerate(header):
        right = len(_FACTS) <= n < len(header) - len(_VALIDITY) or name == "invalid"
        table.add_column(name, justify="right" if right else "left", overflow="fold", no_wrap=n == 0)
    for cells in rows:
        table.add_row(*cells)
    return table


def compare_markdown(
    run_dirs: Sequence[str | Path] | Leaderboard, *, resamples: int = DEFAULT_RESAMPLES, all_metrics: bool = False
) -> str:
    """``compare_runs`` as a Markdown table."""
    from lateralgym.episodes._report import markdown_table

    board = _board(run_dirs, resamples)
    header, rows = leaderboard_cells(board, all_metrics)
    body: list[Any] = rows
    return markdown_table(header, body)
