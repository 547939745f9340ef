"""``lateralgym report``: print a run's metrics and write its Markdown report with plots."""

from __future__ import annotations

import argparse

from lateralgym.commands import add_trust_flags, open_run_dirs
from lateralgym.commands._paths import one_run
from lateralgym.envs import LateralGymError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``report``."""
    report = sub.add_parser(
        "report",
        help="print a run's metrics and write RUN_DIR/report.md with plots",
        description="Compute the papers' metrics by streaming the step log (works on partial runs), print "
        "them, and write a Markdown report with matplotlib plots of every breakdown.",
    )
    report.add_argument("run_dir", help="a run directory")
    add_trust_flags(report)
    report.set_defaults(handler=_cmd_report)


def _cmd_report(args: argparse.Namespace) -> int:
    open_run_dirs(args)
    from lateralgym.episodes import MovesTally, metrics_and_usage, print_metrics, read_run, write_report

    run_dir = one_run(args.run_dir)
    if not (run_dir / "steps.jsonl").exists():
        raise LateralGymError(f"{run_dir} has no steps.jsonl: pass a directory made by 'lateralgym run'")
    read_run(run_dir)  # imports a benchmark of the user's own that the run's config names
    tally = MovesTally()
    metrics, usage = metrics_and_usage(run_dir / "steps.jsonl", moves=tally)  # one pass over the log
    moves = tally.totals()
    report = write_report(run_dir, metrics, usage, moves)  # first: it refuses a damaged run directory
    print_metrics(metrics)
    if moves.total:
        print(f"player {moves.line()}")
    print(f"\nwrote {report}")
    return 0
