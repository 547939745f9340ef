"""``lateralgym export RUN_DIR --format {jsonl,trl,verifiers,csv}``: a run's episodes as LLM training
data (chat rollouts), or as a table (CSV: one row per episode, of one or more runs)."""

from __future__ import annotations

import argparse

from lateralgym.commands import add_trust_flags, open_run_dirs

_FORMATS = ("jsonl", "trl", "verifiers", "csv")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``export`` command."""
    parser = sub.add_parser(
        "export",
        help="write a run's episodes as chat rollouts for LLM training (jsonl, trl, verifiers) or as CSV rows",
        description=(
            "Write every finished episode of a run as the chat the player saw and wrote, with per-turn and "
            "total rewards, the outcome and a group id per item (GRPO groups: run with --repeats R). "
            "jsonl: LateralGym's complete records; trl: TRL's conversational prompt/completion columns "
            "with reward and label; verifiers: verifiers' traces.jsonl. Each loads with the datasets library. "
            "csv: one row per finished episode of one or more runs (the run's facts, the episode's id, item, "
            "repeat, succeeded, turns, reward and error, meta.*, outcome.* and usage per role; "
            "lateralgym.episodes.to_pandas(RUN_DIR) gives the same rows as a DataFrame)."
        ),
    )
    parser.add_argument(
        "run_dirs",
        nargs="+",
        metavar="RUN_DIR",
        help="a run directory (lateralgym run ... wrote it); csv also takes several, or folders holding runs",
    )
    parser.add_argument("--format", choices=_FORMATS, default="jsonl", dest="fmt", help="output format (default jsonl)")
    parser.add_argument(
        "--out",
        default=None,
        help="output file (default RUN_DIR/export/rollouts.jsonl, trl.jsonl or traces.jsonl; csv: standard output)",
    )
    parser.add_argument(
        "--include-errored",
        action="store_true",
        help="keep episodes that ended in an error (API outage); left out by default",
    )
    add_trust_flags(parser)
    parser.set_defaults(handler=_cmd_export)


def _cmd_export(args: argparse.Namespace) -> int:
    open_run_dirs(args)
    from lateralgym.envs import LateralGymError
    from lateralgym.episodes import export_run

    if args.fmt == "csv":
        return _export_csv(args)
    if len(args.run_dirs) != 1:
        raise LateralGymError(f"--format {args.fmt} exports one run: give one RUN_DIR (csv takes several)")
    result = export_run(args.run_dirs[0], args.fmt, args.out, include_errored=args.include_errored)
    skipped = f" ({result.errored_skipped} errored left out)" if result.errored_skipped else ""
    print(f"exported {result.episodes} episodes as {result.format} to {result.path}{skipped}")
    return 0


def _export_csv(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from lateralgym.episodes import episodes_csv

    text = episodes_csv(args.run_dirs)
    if args.out in (None, "-"):
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0
