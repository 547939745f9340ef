"""SPLAT's own command: ``lateralgym agreement``, judge/human agreement (M, R and Cohen's kappa)."""

from __future__ import annotations

import argparse

from lateralgym.envs import LateralGymError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``agreement``."""
    agree = sub.add_parser(
        "agreement",
        help="judge/human agreement: SPLAT's final-answer M, reasoning R and Cohen's kappa",
        description="Compare label sources, each a run directory (the judge's replies in its step log) or a "
        "CSV/JSONL label file with columns item_id, question, human_answer (yes/no/irrelevant), human_verdict "
        "(correct/not_yet), rationale and optionally annotator and band. Questions are paired by their text. "
        "Several people (an annotator column, or one file each) are pooled, then shown per annotator, per "
        "difficulty band and against each other (SPLAT Tables 2-3). --template RUN_DIR writes a blank label "
        "file of a run's questions and final answers for people to fill.",
    )
    agree.add_argument("first", nargs="?", help="run directory or label file (usually the judge)")
    agree.add_argument("second", nargs="*", help="label files or run directories (usually people; one or more)")
    agree.add_argument("--template", metavar="RUN_DIR", help="write a blank label file (CSV) of this run instead")
    agree.add_argument("--out", metavar="FILE", help="with --template: where (default RUN_DIR/labels-template.csv)")
    agree.set_defaults(handler=_cmd_agreement)


def _cmd_agreement(args: argparse.Namespace) -> int:
    from lateralgym.envs.benchmarks.splat import agreement_rows, write_label_template

    if args.template is not None:
        if args.first is not None:
            raise LateralGymError("agreement --template RUN_DIR takes no label sources; drop them")
        path = write_label_template(args.template, args.out)
        print(
            f"wrote {path}: fill human_answer / human_verdict (and annotator), then run: "
            f"lateralgym agreement {args.template} {path}"
        )
        return 0
    if args.out is not None:
        raise LateralGymError("--out goes with --template RUN_DIR")
    if args.first is None or not args.second:
        raise LateralGymError(
            "give two label sources (e.g. 'lateralgym agreement RUN_DIR labels.csv') or --template RUN_DIR"
        )
    rows = agreement_rows(args.first, *args.second)
    report = rows[0]

    def pct(value: float | None) -> str:
        return "n/a" if value is None else f"{100 * value:.1f}%"

    def kappa(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.3f}"

    print(f"final-answer agreement M: {pct(report.final_answer_agreement)} over {report.puzzles} puzzles")
    print(f"reasoning agreement R:    {pct(report.reasoning_agreement)} over {report.questions} questions")
    print(f"Cohen's kappa:            {kappa(report.kappa)}")
    print("confusion (rows: first, columns: second): " + ", ".join(report.labels))
    for label, counts in zip(report.labels, report.confusion, strict=True):
        print(f"  {label:11} {counts}")
    if len(rows) > 1:
        print(f"\n{'first':>14} {'second':<14} {'band':<7} {'M':>7} {'(n)':>5} {'R':>7} {'(n)':>5} {'kappa':>7}")
        for row in rows:
            print(
                f"{row.first:>14} {row.second:<14} {row.band:<7} {pct(row.final_answer_agreement):>7} "
                f"{row.puzzles:>5} {pct(row.reasoning_agreement):>7} {row.questions:>5} {kappa(row.kappa):>7}"
            )
    return 0
