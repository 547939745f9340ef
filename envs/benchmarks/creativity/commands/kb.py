"""``lateralgym kb build`` and ``lateralgym kb stats``: the CreativityBench KB pipeline (paper §4.1, App. C).

``kb build`` runs stages A-H with any model the client layer takes and writes ``OUT/kb.jsonl`` (the
package's ``Entity`` lines, which ``lateralgym data stats`` and ``lateralgym tasks build --kb`` read),
``OUT/build.json`` (settings and counters) and ``OUT/checkpoints/`` (every validated answer): a killed
build resumes with the same command, and a finished one reruns for free. ``--dry-run`` prints the
calls, tokens and cost per stage and sends nothing. ``--constrained-json`` also sends each stage's JSON
schema in ``response_format`` (for small local models; on for ``local/`` models, off for others); ``--min-variants``,
``--max-physical-variants``, ``--max-state-combinations`` and ``--affordances-per-variant`` size a trial
build. ``kb stats`` prints the paper's Table 2 counts.
"""

from __future__ import annotations

import argparse
from pathlib import Path

CONSTRAINED_JSON_HELP = (
    "also send each stage's JSON schema in response_format, so a grammar-decoding server can only write that "
    "shape: json_object (the default when the flag is bare: llama-cpp-python, llama.cpp) or json_schema "
    "(OpenAI structured outputs, vLLM), or off; replies are still validated and re-asked. Default: json_object "
    "for a local/ model (LateralGym's own llama.cpp server), off otherwise"
)


def add_constrained_json(parser: argparse.ArgumentParser) -> None:
    """The ``--constrained-json [FORM]`` option of ``kb build`` and ``tasks build``."""
    parser.add_argument(
        "--constrained-json",
        nargs="?",
        const="json_object",
        choices=("json_object", "json_schema", "off"),
        metavar="FORM",
        help=CONSTRAINED_JSON_HELP,
    )


def json_form(given: str | None, model: str) -> str | None:
    """The ``--constrained-json`` form a build sends: the one given (``off``: none), else ``json_object``
    for a ``local/`` model, whose server LateralGym starts and knows decodes under it."""
    if given is not None:
        return None if given == "off" else given
    from lateralgym.agents import LOCAL_PROVIDER

    return "json_object" if model.startswith(f"{LOCAL_PROVIDER}/") else None


def add_reask_temperature(parser: argparse.ArgumentParser) -> None:
    """The ``--reask-temperature T`` option of ``kb build`` and ``tasks build``."""
    parser.add_argument(
        "--reask-temperature",
        type=float,
        metavar="T",
        help=(
            "temperature of a re-ask after an invalid reply, sent with a per-attempt seed so a model does not "
            "repeat its mistake; the first ask keeps the stage's temperature (default 0.7)"
        ),
    )


_EXAMPLES = """examples:
  lateralgym kb build --scenes kitchen,garage --entities-per-scene 50 --model openai/gpt-4o-mini --out kb/ --dry-run
  lateralgym kb build --scenes kitchen --entities-per-scene 20 --model openai/qwen \\
      --base-url http://127.0.0.1:8000/v1 --embedder st: --out kb/
  lateralgym kb build --scenes kitchen --entities-per-scene 4 --model 'openai/smollm2?max_tokens=1200&seed=1' \\
      --base-url http://127.0.0.1:8000/v1 --constrained-json --min-variants 1 --max-physical-variants 1 \\
      --max-state-combinations 1 --affordances-per-variant 1 --out kb/
  lateralgym kb stats kb/
"""


RESUMES = "the same command resumes the build from its checkpoints"
"""What ``lateralgym`` says when Ctrl-C stops a data build (``on_interrupt``)."""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``kb build`` and ``kb stats``."""
    parser = sub.add_parser(
        "kb",
        help="build a CreativityBench affordance KB with an LLM (paper §4.1), or count one",
        description=__doc__.split("\n")[0] if __doc__ else None,
        epilog=_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = parser.add_subparsers(dest="kb_command", required=True, metavar="{build,stats}")
    build = actions.add_parser(
        "build", help="run stages A-H", epilog=_EXAMPLES, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    build.add_argument("--scenes", required=True, help="comma-separated scenes, e.g. kitchen,garage")
    build.add_argument("--entities-per-scene", type=int, default=50, metavar="N", help="entities kept per scene")
    build.add_argument("--model", required=True, help="annotating model: provider/model[?options]")
    build.add_argument("--base-url", metavar="URL", help="OpenAI-compatible server of --model (and of an API embedder)")
    build.add_argument("--out", type=Path, required=True, help="output directory (an existing build is resumed)")
    build.add_argument(
        "--embedder", default="lexical", help="stage A de-duplication: lexical (default), st: (local MiniLM), a model"
    )
    build.add_argument("--temperature", type=float, default=0.7, help="sampling temperature (default 0.7)")
    build.add_argument("--concurrency", type=int, default=16, metavar="N", help="requests in flight (default 16)")
    build.add_argument("--seed", type=int, default=0, help="seed of the variant subsampling (default 0)")
    build.add_argument(
        "--max-physical-variants", type=int, default=8, metavar="N", help="physical entity variants (D; default 8)"
    )
    build.add_argument(
        "--max-state-combinations", type=int, default=6, metavar="N", help="state combinations per variant (F; 6)"
    )
    build.add_argument(
        "--min-variants",
        type=int,
        default=2,
        choices=(1, 2),
        help="fewest different variants per part in stages C and E: 2 (the paper's 2-3, default) or 1 for a trial "
        "with a tiny model (a variant repeating an earlier one is dropped instead of re-asked)",
    )
    build.add_argument(
        "--affordances-per-variant",
        type=int,
        default=6,
        choices=range(1, 7),
        metavar="N",
        help="uses stage G asks per part variant: 6 (the paper's, default) or 1-5 for a trial with a small model "
        "whose six uses outrun its token budget",
    )
    add_constrained_json(build)
    add_reask_temperature(build)
    build.add_argument("--dry-run", action="store_true", help="print calls, tokens and cost per stage; send nothing")
    build.add_argument("--quiet", action="store_true", help="no progress bars")
    build.set_defaults(handler=_cmd_build, on_interrupt=RESUMES)
    stats = actions.add_parser("stats", help="the paper's Table 2 counts of a KB")
    stats.add_argument("kb", type=Path, help="a kb build directory or an Entity JSONL file")
    stats.add_argument("--json", action="store_true", help="print the counts as JSON")
    stats.set_defaults(handler=_cmd_stats, on_interrupt=RESUMES)


def _cmd_build(args: argparse.Namespace) -> int:
    import asyncio
    import sys

    from pydantic import ValidationError
    from rich.console import Console

    from lateralgym.databuild import DataBuildError, StageProgress, counters_table, invalid_reasons
    from lateralgym.envs._errors import validation_message
    from lateralgym.envs.benchmarks.creativity.databuild._kb_build import KBBuildConfig, run_kb_build, scene_list
    from lateralgym.envs.benchmarks.creativity.databuild._kb_dryrun import plan_kb_build

    try:
        config = KBBuildConfig(
            scenes=scene_list(args.scenes),
            entities_per_scene=args.entities_per_scene,
            model=args.model,
            base_url=args.base_url,
            embedder=args.embedder,
            temperature=args.temperature,
            concurrency=args.concurrency,
            seed=args.seed,
            max_physical_variants=args.max_physical_variants,
            max_state_combinations=args.max_state_combinations,
            min_variants=args.min_variants,
            affordances_per_variant=args.affordances_per_variant,
            constrained_json=json_form(args.constrained_json, args.model),
            **({"reask_temperature": args.reask_temperature} if args.reask_temperature is not None else {}),
        )
    except ValidationError as exc:
        field, message = validation_message(exc, "settings")
        raise DataBuildError(f"kb build: --{field.split('.')[0].replace('_', '-')}: {message}") from None
    console = Console()
    if args.dry_run:
        console.print(plan_kb_build(config, args.out).table())
        return 0
    progress = StageProgress(Console(stderr=True), enabled=not args.quiet and sys.stderr.isatty())
    with progress:
        result = asyncio.run(run_kb_build(config, args.out, progress=progress))
    console.print(counters_table(result.counters.values(), title=f"kb build: {args.out}"))
    for line in invalid_reasons(result.counters.values()):
        console.print(line, markup=False, highlight=False)
    console.print(
        f"{result.entities} entities ({result.variants} entity variants) written to {result.kb_path}; "
        f"{len(result.dropped)} dropped as incomplete (see build.json)"
    )
    for scene, count in result.short_scenes(config.entities_per_scene).items():
        console.print(
            f"{scene}: {count} of {config.entities_per_scene} entities (stage A's answers were invalid, failed or "
            "ran out of new names; rerun the same command to ask again)"
        )
    return 0


def _cmd_stats(args: argparse.Namespace) -> int:
    from rich.console import Console

    from lateralgym.envs.benchmarks.creativity.databuild._kb_stats import kb_stats, read_kb

    stats = kb_stats(read_kb(args.kb))
    if args.json:
        print(stats.model_dump_json(indent=2))
    else:
        Console().print(stats.table())
    return 0
