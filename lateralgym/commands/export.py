"""``lateralgym export RUN_DIR --format {jsonl,trl,verifiers}``: a run's episodes as LLM training data."""

from __future__ import annotations

import argparse

_FORMATS = ("jsonl", "trl", "verifiers")


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add the ``export`` command."""
    parser = sub.add_parser(
        "export",
        help="write a run's episodes as chat rollouts for LLM training (jsonl, trl or verifiers)",
        description=(
            "Write every finished episode of a run as the chat the player saw and wrote, with per-turn and "
            "total rewards, the outcome and a group id per item (GRPO groups: run with --repeats R). "
            "jsonl: LateralGym's complete records; trl: TRL's conversational prompt/completion columns "
            "with reward and label; verifiers: verifiers' traces.jsonl. Each loads with the datasets library."
        ),
    )
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (lateralgym run ... wrote it)")
    parser.add_argument("--format", choices=_FORMATS, default="jsonl", dest="fmt", help="output format (default jsonl)")
    parser.add_argument(
        "--out", default=None, help="output file (default RUN_DIR/export/rollouts.jsonl, trl.jsonl or traces.jsonl)"
    )
    parser.add_argument(
        "--include-errored",
        action="store_true",
        help="keep episodes that ended in an error (API outage); left out by default",
    )
    parser.set_defaults(handler=_cmd_export)


def _cmd_export(args: argparse.Namespace) -> int:
    from lateralgym.episodes import export_run

    result = export_run(args.run_dir, args.fmt, args.out, include_errored=args.include_errored)
    skipped = f" ({result.errored_skipped} errored left out)" if result.errored_skipped else ""
    print(f"exported {result.episodes} episodes as {result.format} to {result.path}{skipped}")
    return 0
