"""The leaderboard for people: runs as rows, in a terminal table or Markdown, one board per kind of run.

Runs are ranked like with like (``Leaderboard.boards``: one benchmark, mode, config and dataset a board),
each board titled with what its runs share and the metric it ranks on. A row says what ran (run,
player, judge), how much (episodes, errored, ``partial`` when the run has not finished its plan, and
its tries per item), the metrics of one try with 95 % bootstrap intervals (``61.5 [48.0, 74.0]``; a
run with repeats: the mean of its tries, ``RunRow.one_try``), then how the LLM player's replies were
decoded (``constrained``: ``grammar``, ``json_schema``, ``off`` for the papers' free text) and the
share of its moves that were invalid. What only repeats measure (best-of-R, ``pass^k``, ``pass@k``)
is a table of its own under the board, never a column beside one try. By default the metric columns
are the benchmark's headline numbers (the papers' first metrics); ``all_metrics`` shows every metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from lateralgym.episodes._compare import DEFAULT_RESAMPLES, Leaderboard, RunRow, leaderboard

__all__ = ["compare_markdown", "compare_runs", "leaderboard_cells"]

_FACTS = ("run", "player", "judge", "episodes", "tries")
_VALIDITY = ("constrained", "invalid")
"""After the metrics: how the player's replies were decoded, and the share of its moves that were invalid."""

SHORT_RUN_NAME = 16
"""Run names up to this long stay in the terminal table's first column; longer ones become ``#1``, ``#2``,
... with a legend under the table, so a row is one line however long its run's name."""

ONE_TRY = "one try: a run with repeats counts the mean of its tries, as the paired difference does"


def _metric_columns(board: Leaderboard, all_metrics: bool) -> list[str]:
    names: dict[str, None] = {}
    for benchmark in dict.fromkeys(row.benchmark for row in board.rows):
        if all_metrics:
            names.update(dict.fromkeys(n for r in board.rows if r.benchmark == benchmark for n in r.one_try()))
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


def board_title(board: Leaderboard) -> str:
    """What a board's runs share (benchmark, config where it is not the benchmark's name, dataset) and
    the metric it ranks them on."""
    benchmark, mode, config, dataset = board.rows[0].board
    shared = [benchmark + (f" ({mode})" if mode else "")]
    if config and config != benchmark:
        shared.append(f"config {config}")
    if dataset:
        shared.append("the sample data" if dataset == "sample" else f"data {dataset}")
    ranked = board.ranked_on(board.rows[0].benchmark)
    return ", ".join(shared) + (f": ranked on {ranked}, one try" if ranked else "")


def judge_notes(board: Leaderboard) -> list[str]:
    """One line per judge whose agreement with people the board's runs state (measured, or not)."""
    found = {(row.judge, row.judge_agreement) for row in board.rows if row.judge_agreement}
    return [f"judge {judge}: {agreement}" for judge, agreement in sorted(found)]


def leaderboard_cells(board: Leaderboard, all_metrics: bool = False) -> tuple[list[str], list[list[str]]]:
    """The header and one row of cell texts per run (blank where a run lacks a metric), metrics of one
    try; ``constrained`` and ``invalid`` when a run's player is a model or made an invalid move."""
    metrics = _metric_columns(board, all_metrics)
    validity = any(row.constrained or row.invalid_rate for row in board.rows)
    rows: list[list[str]] = []
    for row in board.rows:
        facts = [row.run_id, row.player, row.judge, _episodes(row), str(row.repeats)]
        one_try = row.one_try()
        cells = facts + [one_try[m].text() if m in one_try else "" for m in metrics]
        if validity:
            cells += [row.constrained or "-", "" if row.invalid_rate is None else f"{100 * row.invalid_rate:.1f}%"]
        rows.append(cells)
    return [*_FACTS, *metrics, *(_VALIDITY if validity else ())], rows


def repeats_cells(
    board: Leaderboard, all_metrics: bool = False, labels: dict[str, str] | None = None
) -> tuple[list[str], list[list[str]]]:
    """What only repeats measure, one column per run with repeats (named by ``labels``, run dir -> label;
    default the run's name): best-of-R of the ranked metric (every one with ``all_metrics``), ``pass^k``
    and ``pass@k``; no rows without repeats."""
    labels = labels or {row.run_dir: row.run_id for row in board.rows}
    tried = [row for row in board.rows if row.with_repeats()]
    measures: dict[str, None] = {}
    for row in tried:
        ranked = board.ranked_on(row.benchmark)
        for name in row.with_repeats():
            if all_metrics or name.startswith(("pass^", "pass@")) or name.startswith(f"{ranked}_best_of_"):
                measures.setdefault(name)
    shown = [row.with_repeats() for row in tried]
    rows = [[name, *(found[name].text() if name in found else "" for found in shown)] for name in measures]
    return ["measure", *(labels[row.run_dir] for row in tried)], rows


def _board(run_dirs: Sequence[str | Path] | Leaderboard, resamples: int) -> Leaderboard:
    return run_dirs if isinstance(run_dirs, Leaderboard) else leaderboard(run_dirs, resamples=resamples)


def _table(header: list[str], rows: list[list[str]], numbers: range, caption: str | None, whole: int = 1) -> Table:
    """A table whose first ``whole`` columns keep each cell on one line (names: a run, a player); in a
    narrow terminal the others wrap at spaces, and a header at its underscores, never cut with an ellipsis."""
    table = Table(caption=caption, caption_justify="left")
    for n, name in enumerate(header):
        justify: Literal["left", "right"] = "right" if n in numbers else "left"
        table.add_column(name.replace("_", " "), justify=justify, overflow="fold", no_wrap=n < whole)
    for cells in rows:
        table.add_row(*cells)
    return table


def compare_runs(
    run_dirs: Sequence[str | Path] | Leaderboard,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    all_metrics: bool = False,
    apart: bool = True,
) -> Group:
    """One table per board of like runs (best first, metrics of one try with 95 % bootstrap intervals),
    each followed by the table of what its runs with repeats measured.

    Args:
        run_dirs: run directories or folders of runs, or a ``Leaderboard`` already computed.
        resamples: bootstrap resamples per run (0: values without intervals).
        all_metrics: every metric, not only each benchmark's paper headline.
        apart: end with the line saying which runs are not comparable (``Leaderboard.apart``), if any.

    Raises:
        MetricsError: a directory is not a run, or its log holds no episodes.
    """
    whole = _board(run_dirs, resamples)
    # labels for long names, numbered over every board so that each names one run
    labels = {row.run_dir: f"#{n}" for n, row in enumerate(whole.rows, 1)}
    parts: list[RenderableType] = []
    for board in whole.boards():
        header, rows = leaderboard_cells(board, all_metrics)
        caption = [f"value [95% bootstrap interval over items, {whole.resamples} resamples]; {ONE_TRY}"]
        caption += judge_notes(board)
        if any(len(cells[0]) > SHORT_RUN_NAME for cells in rows) or any(r.repeats > 1 for r in board.rows):
            # long run names (config-player-timestamp-random) would wrap over lines: a short label, named
            # below; and the table of repeats names its runs by the same labels
            named = [labels[row.run_dir] for row in board.rows]
            caption += [f"{label} = {cells[0]}" for label, cells in zip(named, rows, strict=True)]
            rows = [[label, *cells[1:]] for label, cells in zip(named, rows, strict=True)]
        else:
            labels.update({row.run_dir: row.run_id for row in board.rows})
        metrics = len(header) - (len(_VALIDITY) if header[-1] == _VALIDITY[-1] else 0)
        numbers = range(len(_FACTS) - 1, metrics)
        # the title above the table, not in it: a narrow table would wrap it
        parts += [
            Text(board_title(board), style="bold"),
            _table(header, rows, numbers, "\n".join(caption), len(_FACTS)),
        ]
        repeat_header, repeat_rows = repeats_cells(board, all_metrics, labels)
        if repeat_rows:
            parts.append(Text("with repeats (not ranked: more than one try)"))
            parts.append(_table(repeat_header, repeat_rows, range(1, len(repeat_header)), None))
    note = whole.apart() if apart else None
    if note is not None:
        parts.append(Text(note))
    return Group(*parts)


def compare_markdown(
    run_dirs: Sequence[str | Path] | Leaderboard, *, resamples: int = DEFAULT_RESAMPLES, all_metrics: bool = False
) -> str:
    """``compare_runs`` as Markdown: each board's title in bold, its table, and its table of repeats."""
    from lateralgym.episodes._report import markdown_table

    whole = _board(run_dirs, resamples)
    parts: list[str] = []
    for board in whole.boards():
        header, rows = leaderboard_cells(board, all_metrics)
        parts += [f"**{board_title(board)}**", markdown_table(header, rows), *judge_notes(board)]
        repeat_header, repeat_rows = repeats_cells(board, all_metrics)
        if repeat_rows:
            parts += ["With repeats (not ranked: more than one try):", markdown_table(repeat_header, repeat_rows)]
    parts.append(ONE_TRY[0].upper() + ONE_TRY[1:] + ".")
    note = whole.apart()
    if note is not None:
        parts.append(note[0].upper() + note[1:] + ".")
    return "\n\n".join(parts)
