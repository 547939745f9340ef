"""``lateralgym run``: run a config's episodes into a run directory (or finish one with ``--resume``,
or estimate one with ``--dry-run``) and print the metrics.

The flags become typed values here: a ``RunOptions`` (checked once, the same for a run and a dry
run), the config with ``--data`` / ``--seed`` / ``--max-turns`` applied, or a ``ResumeRequest``;
``lateralgym.episodes.run`` does the rest, resume rules included.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

from lateralgym.cli import EXIT_ALL_ERRORED, EXIT_CODES, EXIT_OK, EXIT_SOME_ERRORED
from lateralgym.commands import add_import_flag, add_trust_flags, load_imports, wants_help
from lateralgym.envs import SHIPPED_CONFIGS, LateralGymError

if TYPE_CHECKING:
    from lateralgym.envs import EpisodeConfig
    from lateralgym.episodes import RunOptions, RunRecord, RunResult


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``run``."""
    run = sub.add_parser(
        "run",
        help="run episodes of a config and print the results table",
        description="Run episodes of a config into a run directory (config, manifest, step log, summary) "
        "and print the metrics.",
        epilog=(_offline_judges() if wants_help() else "") + EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "config",
        nargs="?",
        help=f"a shipped config ({', '.join(SHIPPED_CONFIGS)}), a YAML or TOML file, or a benchmark's name (its "
        "default config); omit with --resume",
    )
    add_import_flag(run)
    add_trust_flags(run, with_import=False)
    run.add_argument(
        "--data",
        metavar="PATH",
        help="dataset file (official release format or LateralGym JSONL), or the name of an earlier sample a "
        "benchmark still ships (docs/benchmarks.md#datasets)",
    )
    run.add_argument(
        "--format",
        metavar="NAME",
        help="the --data file's format, one of the config's benchmark's (see 'lateralgym data stats --help'); "
        "default: detected among that benchmark's formats",
    )
    run.add_argument(
        "--player",
        help="player: random, heuristic, oracle, human, or a model: openai/gpt-4o-mini, openai/NAME with "
        "--base-url, anthropic/... via litellm, local/smollm2 or local/PATH.gguf (served here for the run: "
        "'lateralgym models'); options as openai/NAME?temperature=0&reasoning=cot, constrain=grammar|json_schema|off "
        "(default: the config's)",
    )
    run.add_argument(
        "--judge",
        help="judge: one of the benchmark's offline judges (listed below with what each cannot do; the run's "
        f"first line says it again), human (a person judges {_human_judged() if wants_help() else 'a puzzle'} in "
        "the terminal, seeing the hidden "
        "answer), or a model spec provider/model[?temperature=0&samples=3], local/smollm2 too (default: the "
        "config's)",
    )
    run.add_argument(
        "--base-url",
        metavar="URL",
        help="OpenAI-compatible server (vLLM, Ollama, llama.cpp) for LLMs; with --resume it moves every role "
        "that followed it (the judge too, unless the run gave it its own --judge-base-url)",
    )
    run.add_argument("--judge-base-url", metavar="URL", help="server for the LLM judge if it differs from --base-url")
    run.add_argument("--judge-samples", type=int, metavar="K", help="LLM judge: majority vote of K samples (default 1)")
    run.add_argument(
        "--judge-card",
        metavar="FILE",
        help="the judge's card from 'lateralgym judges eval DATA --judge SPEC --save-card FILE': checked against the "
        "run's judge, kept in the manifest; report, view and compare show its measured agreement with people",
    )
    run.add_argument(
        "--llm-concurrency",
        type=int,
        metavar="N",
        help="LLM requests in flight at once, players and judges together (default: --concurrency, at least 8)",
    )
    run.add_argument(
        "--adaptive-concurrency",
        action="store_true",
        help="let the LLM cap find the server's pace: start at 20, halve on HTTP 429, grow up to --llm-concurrency "
        "while latency holds",
    )
    run.add_argument("--no-cache", action="store_true", help="bypass the LLM response cache (with --resume too)")
    run.add_argument("--cache-dir", metavar="DIR", help="LLM response cache (default ./.lateralgym-cache/llm)")
    run.add_argument(
        "--limit",
        type=int,
        metavar="N",
        help="run only the first N items (N >= 1; a benchmark scored by groups completes each group it touches)",
    )
    run.add_argument(
        "--sample",
        type=int,
        metavar="N",
        help="run about N items drawn with the run seed (--seed) and spread over the benchmark's groups (scenes and "
        "gold entities, difficulty bands, puzzle groups kept whole): a few items that stand for the set; the same "
        "N, seed and data draw the same items",
    )
    run.add_argument("--repeats", type=int, default=1, metavar="R", help="episodes per item (best-of-R and mean)")
    run.add_argument("--concurrency", type=int, default=4, metavar="C", help="episodes in flight (default 4)")
    run.add_argument(
        "--seed",
        type=int,
        help="run seed, 0 to 2**64-1 (default: the config's); each episode's seed derives from (seed, item, repeat)",
    )
    run.add_argument("--max-turns", type=int, metavar="T", help="override the config's turn limit")
    run.add_argument(
        "--unsafe-free-hints",
        action="store_true",
        help="allow the config's 'hints: free' (the judge's own words reach the player after a leak filter that "
        "no encoding of the answer is sure to fail; 'hints: template' is safe)",
    )
    run.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set one of the benchmark's own options (the config's options: block), e.g. --option "
        "scoring=strict; repeat for several (values read as YAML: true, 0.5, text)",
    )
    run.add_argument("--out", default="runs", metavar="DIR", help="where run directories go (default ./runs)")
    run.add_argument(
        "--resume",
        metavar="RUN_DIR",
        help="finish a killed run (or rerun its errored episodes) instead of starting one; one process at a "
        "time: a run holds a lock on its directory",
    )
    run.add_argument("--no-progress", action="store_true", help="no progress bar")
    run.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="local: this process plays every episode on one event loop (default); ray: Ray workers play them "
        "(pip install 'lateralgym[ray]'), this process alone writes the log, so --resume stays exactly-once",
    )
    run.add_argument(
        "--address",
        metavar="ADDR",
        help="with --backend ray: the cluster to join (auto, or ray://HEAD:10001 after 'ray start --head'); "
        "default: start a local Ray on this machine",
    )
    run.add_argument(
        "--actors",
        type=int,
        metavar="N",
        help="with --backend ray: worker actors, each playing many episodes at once (default: one per CPU)",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="print the episodes, expected LLM calls and tokens per role and the estimated cost (offline price "
        "table), then stop: nothing is sent or written",
    )
    run.add_argument(
        "--no-check",
        action="store_true",
        help="skip the check before the run (one free GET /models per model server: a dead server or a "
        "wrong key stops the run at once)",
    )
    run.add_argument(
        "--stop-after-errors",
        type=int,
        default=10,
        metavar="N",
        help="stop the run after N episodes in a row end in an error (default 10; 0: never); the rest stay "
        "for --resume. The first error of each kind is printed as it happens",
    )
    run.add_argument(
        "--aux",
        metavar="RUN_DIR",
        help="elicitation: give the LLM player an auxiliary prompt that the benchmark of the run in RUN_DIR builds "
        "from its log (a benchmark that offers one; its env card says what it shows); adds aux=... to the player "
        "spec",
    )
    run.add_argument(
        "--aux-puzzles", type=int, metavar="M", help="with --aux: how many of that run's items (default 1)"
    )
    run.add_argument(
        "--aux-seed",
        metavar="N",
        help="with --aux: the seed the M items are drawn at random with (default 0), or 'first' for the run's first M",
    )
    run.add_argument(
        "--aux-variant",
        choices=("data", "reasoning"),
        help="with --aux: data = the run's moves and replies, reasoning = with its player's reasoning too (run "
        "that player with reasoning=cot)",
    )
    run.set_defaults(handler=_cmd_run)


def _human_judged() -> str:
    """The benchmarks a person can judge (``--judge human``), by title."""
    from lateralgym.envs import all_benchmarks

    return ", ".join(b.title or b.name for b in all_benchmarks() if b.judging.human_judge) or "nothing"


def _offline_judges() -> str:
    """Each benchmark's offline judges and the limits they state (``--help``'s epilog)."""
    from lateralgym.envs import all_benchmarks, judge_note

    lines = []
    for benchmark in all_benchmarks():
        for name in benchmark.judging.offline_judges:
            note = judge_note(benchmark.name, name)
            text = f"{benchmark.name} {name}: {note or 'grades exactly, as the paper does'}"
            lines.append(textwrap.fill(text, 100, initial_indent="  ", subsequent_indent="      "))
    return "\noffline judges:\n" + "\n".join(lines) + "\n"


def _cmd_run(args: argparse.Namespace) -> int:
    from lateralgym.agents import offline_player_note
    from lateralgym.envs import judge_note, trust_recorded_imports
    from lateralgym.episodes import run

    if args.resume is None and args.config is None:
        raise LateralGymError("give a config to run (see 'lateralgym configs') or --resume RUN_DIR")
    if args.aux is None and (args.aux_puzzles is not None or args.aux_variant is not None or args.aux_seed is not None):
        raise LateralGymError("--aux-puzzles, --aux-variant and --aux-seed go with --aux RUN_DIR")
    if args.resume is not None and args.aux is not None:
        raise LateralGymError("--resume keeps the run's own player and its aux prompt; drop --aux")
    if args.format is not None and args.data is None:
        raise LateralGymError("--format names the format of a --data file; give --data too")
    if args.resume is not None and args.option:
        raise LateralGymError("--resume keeps the run's own options; drop --option")
    if args.resume is not None and args.dry_run:
        raise LateralGymError("--dry-run estimates a new run; drop --resume (or --dry-run)")
    imports = load_imports(args.imports)  # before the config (and --aux's player) is looked up
    trust_recorded_imports(bool(args.trust_imports))  # a resumed run's, or --aux's, recorded imports
    options = _options(args)
    if args.resume is not None:
        from lateralgym.episodes import ResumeRequest

        request = ResumeRequest(
            run_dir=Path(args.resume), config=args.config, dataset=args.data, seed=args.seed, max_turns=args.max_turns
        )
        recorded = _recorded_run(request.run_dir)
        if _person(recorded):  # said before the person starts
            print(f"resuming: the episodes finished are kept; {left_under_way(recorded, 'an episode left')}")
        result = run(None, options, resume=request)
    else:
        config = config_from_args(args, imports)
        if args.dry_run:
            from lateralgym.episodes import dry_run

            print(dry_run(config, options).render())
            return EXIT_OK
        judge = options.judge or config.judge
        note = judge_note(config.benchmark, judge)
        player = options.player or config.player
        fallback = offline_player_note(config.benchmark, player)
        result = run(config, options)
        # The first lines of the results, which they qualify (an error before the run stands alone).
        if fallback:
            print(f"player {player}: {fallback}")
        if note:
            print(f"judge {judge}: {note}")
    _print_result(result)
    return _run_status(result)


def _options(args: argparse.Namespace) -> RunOptions:
    """The run's settings from the flags (``--aux`` builds the player spec)."""
    from lateralgym.episodes import RunOptions

    player = args.player
    if args.aux is not None:
        from lateralgym.agents import with_aux
        from lateralgym.envs import EpisodeConfig

        player = with_aux(
            player or EpisodeConfig.named(args.config).player,
            args.aux,
            puzzles=args.aux_puzzles,
            variant=args.aux_variant,
            seed=_aux_seed(args.aux_seed),
        )
    return RunOptions(
        player=player,
        judge=args.judge,
        judge_samples=args.judge_samples,
        judge_card=Path(args.judge_card) if args.judge_card else None,
        limit=args.limit,
        sample=args.sample,
        repeats=args.repeats,
        concurrency=args.concurrency,
        out=args.out,
        progress=not args.no_progress,
        base_url=args.base_url,
        judge_base_url=args.judge_base_url,
        cache_dir=args.cache_dir,
        # None: a new run uses the cache, a resumed one does as it was started
        use_cache=False if args.no_cache else None,
        llm_concurrency=args.llm_concurrency,
        adaptive_concurrency=args.adaptive_concurrency,
        backend=args.backend,
        ray_address=args.address,
        ray_actors=args.actors,
        check=not args.no_check,
        stop_after_errors=args.stop_after_errors,
    )


def config_from_args(args: argparse.Namespace, imports: tuple[str, ...]) -> EpisodeConfig:
    """The named config (after ``--import``) with ``--data``, ``--format``, ``--seed`` and ``--max-turns`` applied."""
    from lateralgym.envs import EpisodeConfig

    config = EpisodeConfig.named(args.config, imports=imports)
    updates: dict[str, object] = {}
    if args.data:
        updates["dataset"] = args.data
        updates["dataset_format"] = args.format
    if args.seed is not None:
        updates["seed"] = args.seed
    if args.max_turns is not None:
        updates["max_turns"] = args.max_turns
    if args.unsafe_free_hints:
        updates["unsafe_free_hints"] = True
    if updates:
        config = EpisodeConfig.from_dict({**config.model_dump(), **updates}, source="command line")
    if args.option:
        config = config.with_options(**_option_values(args.option))
    return config


def _aux_seed(value: str | None) -> int | str | None:
    """``--aux-seed``: a whole number, ``first``, or None when not given."""
    if value is None or value == "first":
        return value
    if not value.strip().isdigit():
        raise LateralGymError(f"--aux-seed takes a whole number or 'first', got {value!r}")
    return int(value)


def _option_values(pairs: list[str]) -> dict[str, object]:
    """``--option NAME=VALUE`` flags as a mapping, each value read as a YAML scalar."""
    import yaml

    values: dict[str, object] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        if not sep or not name.strip():
            raise LateralGymError(f"--option {pair!r}: write NAME=VALUE, e.g. --option scoring=strict")
        try:
            values[name.strip()] = yaml.safe_load(text) if text.strip() else ""
        except yaml.YAMLError:
            values[name.strip()] = text
    return values


def _print_result(result: RunResult) -> None:
    from lateralgym.episodes import cost_text, local_roles, print_metrics

    recorded = _recorded_run(result.run_dir)
    # the main numbers: a person's last solution stays on screen, and every table is in report.md
    print_metrics(result.metrics, brief=_person(recorded), breakdowns=False)
    if not _person(recorded):
        count = len(result.metrics.breakdowns)
        more = ["the whole headline"] + ([f"{count} breakdown{'s' * (count != 1)}"] if count else [])
        more += ["pass^k and pass@k"] if result.metrics.repeats > 1 else []
        print(f"report.md in the run directory has every table: {', '.join(more)}")
    local = local_roles(recorded) if recorded is not None else set()
    for role, usage in result.usage.items():
        cost = cost_text(usage, role in local)
        print(
            f"{role} LLM: {usage.calls} calls, {usage.cache_hits} cache hits, "
            f"{usage.prompt_tokens}+{usage.completion_tokens} tokens, cost {cost}"
            + (
                f", {usage.format_reasks} format re-asks, {usage.fallbacks} fallback moves"
                if usage.format_reasks or usage.fallbacks
                else ""
            )
            + (f", {usage.retries} requests retried (timeouts, rate limits, server errors)" if usage.retries else "")
            + (f", {usage.truncated} replies cut to the length cap" if usage.truncated else "")
        )
    if result.moves.total and (result.usage or result.moves.invalid):
        print(f"player {result.moves.line()}")
    if result.error_kinds:
        print(f"errors by kind: {', '.join(f'{k} x {n}' for k, n in result.error_kinds.items())}")
    print(f"\nRun directory: {result.run_dir}  ({result.ran} episodes run, {result.planned} planned)")
    print(f"Next: lateralgym view {result.run_dir} (the episodes) · lateralgym report {result.run_dir} (with plots)")


def _recorded_run(run_dir: Path) -> RunRecord | None:
    """The run's directory as its manifest records it (None when it cannot be read)."""
    from lateralgym.episodes import read_run

    try:
        return read_run(run_dir)
    except LateralGymError:
        return None


def left_under_way(run: RunRecord | None, which: str = "the one") -> str:
    """What a resume does with the episode left under way: a person playing goes on from the last
    move (the earlier turns shown again); any other player starts it again at turn 1."""
    recorded = None if run is None or run.manifest is None else run.manifest.options
    if recorded is not None and recorded.player == "human":
        return f"{which} under way goes on from its last move (the turns played are shown again)"
    return f"{which} under way starts again at turn 1"


def stopped_line(run_dir: Path | None) -> str:
    """The line printed when a person stops a run (``quit``, Ctrl-D)."""
    where = str(run_dir) if run_dir is not None else "RUN_DIR"
    under_way = left_under_way(_recorded_run(run_dir) if run_dir is not None else None)
    return (
        f"stopped, so the run is unfinished: the episodes finished are kept, {under_way}; finish the run later "
        f"with: lateralgym run --resume {where}"
    )


def _person(run: RunRecord | None) -> bool:
    """Whether a person plays or judges the run."""
    recorded = None if run is None or run.manifest is None else run.manifest.options
    return recorded is not None and "human" in (recorded.player, recorded.judge)


def _run_status(result: RunResult) -> int:
    """The exit status of a finished run (see ``EXIT_CODES``), with a line on stderr when it is not 0."""
    if result.ran and result.errored == result.ran:
        first = " ".join((result.first_error or "").split())[:300]
        print(
            f"lateralgym: error: all {result.ran} episodes run ended in an error, so nothing worked (is the server "
            f"up, and its URL, key and settings right?); the first: {first}; fix that, then finish the run with: "
            f"lateralgym run --resume {result.run_dir}",
            file=sys.stderr,
        )
        return EXIT_ALL_ERRORED
    if result.metrics.errored or result.metrics.episodes < result.planned:
        print(
            f"lateralgym: {result.metrics.errored} of {result.planned} episodes ended in an error; rerun them with: "
            f"lateralgym run --resume {result.run_dir}",
            file=sys.stderr,
        )
        return EXIT_SOME_ERRORED
    return EXIT_OK
