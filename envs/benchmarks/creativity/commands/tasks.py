"""``lateralgym tasks build`` and ``lateralgym tasks stats``: the CreativityBench task pipeline (paper §4.2, App. D).

``tasks build`` runs stages A-H over a knowledge base (``lateralgym.envs.benchmarks.creativity.databuild``)
and writes our JSONL (``.jsonl``, or gzip-compressed ``.jsonl.gz``) or the official task JSON (``--format official``).
LLM answers are checkpointed (``--checkpoints``), so a killed build resumes and a rerun costs nothing;
``--dry-run`` prints the calls, tokens and cost per stage first; ``--constrained-json`` sends each stage's
JSON schema in ``response_format``; ``--distractor-counts``, ``--max-strata`` and ``--diameter`` size a trial build.
``tasks stats`` prints the counts per scene and the (band x level) and (similarity x count) grids of any
task file our loaders read.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from lateralgym.envs.benchmarks.creativity.commands.kb import (
    RESUMES,
    add_constrained_json,
    add_reask_temperature,
    json_form,
)

_EXAMPLES = """examples:
  lateralgym tasks build --kb kb/ --model openai/gpt-4o-mini --embedder lexical --out tasks.jsonl --dry-run
  lateralgym tasks build --kb kb/ --model openai/qwen --base-url http://127.0.0.1:8000/v1 --out tasks.jsonl.gz
  lateralgym tasks build --kb kb/ --model openai/gpt-4o-mini --out tasks.json --format official
  lateralgym tasks stats tasks.jsonl.gz
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``tasks build`` and ``tasks stats``."""
    parser = sub.add_parser(
        "tasks",
        help="build CreativityBench tasks from a KB (paper §4.2), or count a task file",
        description=__doc__.split("\n")[0] if __doc__ else None,
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="tasks_command", required=True, metavar="{build,stats}")
    build = actions.add_parser(
        "build", help="run stages A-H over a KB", epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    build.add_argument("--kb", type=Path, required=True, help="KB: an Entity JSONL file, or a folder of kb*.jsonl")
    build.add_argument("--out", type=Path, required=True, help="tasks file: .jsonl, .jsonl.gz, or .json (official)")
    build.add_argument("--model", help="model of the LLM stages (provider/model[?options]); none: answers stored")
    build.add_argument("--base-url", help="OpenAI-compatible server of --model (and of an API --embedder)")
    build.add_argument("--embedder", default="lexical", help="lexical (default), st: (local MiniLM), or a model")
    build.add_argument("--checkpoints", type=Path, help="checkpoint folder (default: OUT's name + .checkpoints)")
    build.add_argument("--seeds", type=Path, help="hand-written stage C answers: a TaskSeed JSONL, or seeds*.jsonl")
    build.add_argument("--only-seeded", action="store_true", help="golds only where a task text is stored")
    build.add_argument("--judge", choices=("llm", "rules"), default="llm", help="stages D and F: model or rules")
    build.add_argument("--per-tier", type=int, default=10, help="golds per (scene, band, level) tier (paper: 10)")
    build.add_argument("--tiers-per-gold", type=int, help="keep at most this many distractor tiers per gold")
    build.add_argument(
        "--distractor-counts",
        type=_counts,
        metavar="N,N,...",
        help="distractor counts of the tiers (default 3,6,9,12 as the paper; 1,2 for a KB of a few entities)",
    )
    build.add_argument(
        "--max-strata", type=int, metavar="N", help="golds from the first N (scene, band, level) strata only (a trial)"
    )
    build.add_argument(
        "--diameter",
        type=float,
        default=0.35,
        metavar="D",
        help="cap on a cluster's diameter in cosine distance (paper: 0.35); a trial over a few entities, whose uses "
        "rarely come that close, may widen it so stage B finds clusters of two or more",
    )
    build.add_argument(
        "--embed-field", choices=("action", "category"), default="action", help="embed the use (paper) or its category"
    )
    build.add_argument(
        "--cluster-scope", choices=("scene", "kb"), default="scene", help="cluster per scene (paper) or the whole KB"
    )
    build.add_argument(
        "--distractor-scope", choices=("scene", "kb"), default="scene", help="distractors from the scene (paper) or KB"
    )
    build.add_argument("--seed", type=int, default=0, help="seed of every draw")
    build.add_argument("--format", choices=("jsonl", "official"), help="default: official for .json, else jsonl")
    build.add_argument("--concurrency", type=int, default=16, help="model requests in flight")
    add_constrained_json(build)
    add_reask_temperature(build)
    build.add_argument("--dry-run", action="store_true", help="print calls, tokens and cost per stage; ask nothing")
    build.add_argument("--quiet", action="store_true", help="no progress bars")
    build.set_defaults(handler=_cmd_build, on_interrupt=RESUMES)
    stats = actions.add_parser("stats", help="counts per scene, (band x level) and (similarity x count) grids")
    stats.add_argument("tasks", type=Path, help="a task file (our JSONL, .jsonl.gz, or official task JSON)")
    stats.set_defaults(handler=_cmd_stats, on_interrupt=RESUMES)


def _counts(text: str) -> tuple[int, ...]:
    """``3,6`` -> ``(3, 6)`` (each checked by ``TaskBuildConfig``)."""
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated whole numbers, got {text!r}") from None


def _job(args: argparse.Namespace) -> Any:
    """The ``TaskBuildJob`` the flags ask for; a setting out of range names its flag."""
    from pydantic import ValidationError

    from lateralgym.databuild import DataBuildError
    from lateralgym.envs._errors import validation_message
    from lateralgym.envs.benchmarks.creativity.databuild import TaskBuildConfig
    from lateralgym.envs.benchmarks.creativity.databuild._tasks_run import TaskBuildJob

    try:
        config = TaskBuildConfig(
            per_tier=args.per_tier,
            diameter=args.diameter,
            tiers_per_gold=args.tiers_per_gold,
            embed_field=args.embed_field,
            cluster_scope=args.cluster_scope,
            distractor_scope=args.distractor_scope,
            seed=args.seed,
            constrained_json=json_form(args.constrained_json, args.model or ""),
            **({"reask_temperature": args.reask_temperature} if args.reask_temperature is not None else {}),
            max_strata=args.max_strata,
            **({"counts": args.distractor_counts} if args.distractor_counts is not None else {}),
        )
        return TaskBuildJob(
            kb=args.kb,
            out=args.out,
            model=args.model,
            base_url=args.base_url,
            embedder=args.embedder,
            checkpoints=args.checkpoints,
            seeds=args.seeds,
            only_seeded=args.only_seeded,
            judge=args.judge,
            format=args.format,
            concurrency=args.concurrency,
            dry_run=args.dry_run,
            quiet=args.quiet,
            config=config,
        )
    except ValidationError as exc:
        field, message = validation_message(exc)
        name = field.split(".")[0]
        flag = {"counts": "distractor_counts"}.get(name, name).replace("_", "-")
        raise DataBuildError(f"--{flag}: {message}") from None


def _cmd_build(args: argparse.Namespace) -> int:
    from lateralgym.envs.benchmarks.creativity.databuild._tasks_run import run_build

    return run_build(_job(args))


def _cmd_stats(args: argparse.Namespace) -> int:
    from lateralgym.envs.benchmarks.creativity.databuild._tasks_run import run_stats

    return run_stats(args.tasks)
