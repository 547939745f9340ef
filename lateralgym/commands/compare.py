"""``lateralgym compare`` / ``leaderboard`` (runs as rows, bootstrap intervals, paired differences)
(``lateralgym export --format csv`` is in ``export.py``)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from lateralgym.commands import add_trust_flags, open_run_dirs
from lateralgym.envs import LateralGymError

_RESAMPLES = 1000


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``compare`` and ``leaderboard`` (``export`` lives in ``export.py``)."""
    for name, summary in (
        ("compare", "compare runs: one row per run, metrics with bootstrap intervals, paired differences"),
        ("leaderboard", "the same table as 'compare', for a folder of runs (lateralgym leaderboard runs/)"),
    ):
        parser = sub.add_parser(
            name,
            help=summary,
            description="One board per kind of run (benchmark, config, dataset: runs of different kinds are not "
            "ranked together, and a line says so), one row per run (player, judge, episodes, tries; 'partial' when "
            "a run has not finished its plan), best first on the benchmark's first headline metric for one try (a "
            "run with repeats: the mean of its tries; its best of R and pass@k in a table apart), each metric with "
            "a 95%% percentile bootstrap interval over items (an item's repeats resampled together, scored with the "
            "paper's own metric). With two runs on one board, also their paired difference in success rate on the "
            "items both ran (bootstrap interval; McNemar's exact test with one repeat each).",
        )
        parser.add_argument("run_dirs", nargs="+", help="run directories, or folders holding runs (runs/)")
        parser.add_argument("--markdown", action="store_true", help="print a Markdown table instead")
        parser.add_argument("--csv", metavar="FILE", help="also write every metric and interval as CSV ('-': stdout)")
        parser.add_argument("--all", action="store_true", help="every metric, not only the papers' headline")
        parser.add_argument(
            "--resamples",
            type=int,
            default=_RESAMPLES,
            metavar="B",
            help=f"bootstrap resamples (default {_RESAMPLES}; 0: none)",
        )
        parser.add_argument("--seed", type=int, default=0, help="seed of the resampling (default 0)")
        add_trust_flags(parser)
        parser.set_defaults(handler=_cmd_compare)


def _cmd_compare(args: argparse.Namespace) -> int:
    open_run_dirs(args)
    from rich.console import Console
    from rich.progress import Progress, TimeElapsedColumn, TimeRemainingColumn

    from lateralgym.episodes import compare_markdown, compare_runs, leaderboard, paired_difference

    if args.resamples < 0:
        raise LateralGymError(f"--resamples must be 0 or more, got {args.resamples}")
    # On stderr, and only on a terminal: stdout stays the table alone (pipes, --csv -).
    with Progress(
        *Progress.get_default_columns()[:-1],
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        disable=not sys.stderr.isatty(),
        transient=True,
    ) as bar:
        task = bar.add_task("bootstrap", total=None)
        board = leaderboard(
            args.run_dirs,
            resamples=args.resamples,
            seed=args.seed,
            progress=lambda done, total: bar.update(task, completed=done, total=total),
        )
    if args.markdown:
        print(compare_markdown(board, all_metrics=args.all))
    else:
        Console().print(compare_runs(board, all_metrics=args.all, apart=False))
        note = board.apart()
        if note is not None:
            print(note)  # one line, however narrow the terminal
    if len(board.rows) == 2 and len(board.boards()) == 1:  # ranked on the board: the better one is A
        a, b = board.rows
        print(
            "\npaired: " + paired_difference(a.run_dir, b.run_dir, resamples=args.resamples, seed=args.seed).describe()
        )
    if args.csv:
        _write(args.csv, board.to_csv())
    return 0


def _write(target: str, text: str) -> None:
    if target == "-":
        sys.stdout.write(text)
        return
    Path(target).write_text(text, encoding="utf-8")
    print(f"wrote {target}", file=sys.stderr)
