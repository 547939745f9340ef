"""The ``lateralgym`` command: parses arguments and calls ``lateralgym.episodes`` (and the dataset
loaders of ``lateralgym.envs`` for ``data stats`` and ``configs``); no logic of its own."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lateralgym.envs import SHIPPED_CONFIGS, LateralGymError
from lateralgym.envs._errors import PlayerQuit

if TYPE_CHECKING:
    from lateralgym.envs import EpisodeConfig
    from lateralgym.episodes import RunOptions, RunResult

EXIT_OK = 0
EXIT_DIVERGED = 1
EXIT_USAGE = 2
EXIT_SOME_ERRORED = 3
EXIT_ALL_ERRORED = 4
EXIT_INTERRUPTED = 130

EXIT_CODES = f"""
exit status:
  {EXIT_OK}    done: every planned episode finished without an error
  {EXIT_DIVERGED}    replay: an episode diverged from its log, or the log records an episode twice
  {EXIT_USAGE}    a usage, config, data or run-directory error (one line on stderr; nothing ran or
       what ran is kept)
  {EXIT_SOME_ERRORED}    the run finished but some episodes ended in an error (an API outage): rerun
       them with 'lateralgym run --resume RUN_DIR'
  {EXIT_ALL_ERRORED}    every episode run ended in an error: nothing worked (a dead server, a wrong port
       or key, a setting the server refuses); fix that, then resume. Also when the
       check before a run finds a model server down or refusing the key (nothing ran)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C); 'lateralgym run --resume RUN_DIR' finishes the run
"""

DESCRIPTION = (
    """\
LateralGym: roll out players against CreativityBench, BrainTeaser, SPLAT and RiddleSense scenes.

Everything runs offline by default (scripted players, rule judges, the sample data shipped in
the package). Examples:

  lateralgym run creativity-interactive              # heuristic player, sample tasks, paper protocol
  lateralgym run splat --player oracle --limit 5     # 5 puzzles, upper bound
  lateralgym run brainteaser --data SP-train.npy     # the official BrainTeaser file
  lateralgym run riddlesense --data rs_dev.jsonl     # the official RiddleSense dev split
  lateralgym run --resume runs/splat-...             # finish a killed run
  lateralgym report runs/splat-...                   # tables + Markdown report with plots
  lateralgym data stats puzzles.xlsx                 # what a dataset file holds
  lateralgym run splat --player openai/qwen --judge openai/qwen --base-url http://127.0.0.1:8000/v1

LLM keys come from the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) and are never written.
"""
    + EXIT_CODES
)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="lateralgym", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="run episodes of a config and print the results table",
        description="Run episodes of a config into a run directory (config, manifest, step log, summary) "
        "and print the metrics.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument(
        "config",
        nargs="?",
        help=f"a shipped config ({', '.join(SHIPPED_CONFIGS)}) or a YAML or TOML file; omit with --resume",
    )
    run.add_argument("--data", metavar="PATH", help="dataset file (official release format or LateralGym JSONL)")
    run.add_argument(
        "--player",
        help="player: random, heuristic, oracle, human, or a model: openai/gpt-4o-mini, openai/NAME with "
        "--base-url, anthropic/... via litellm; options as openai/NAME?temperature=0&reasoning=cot (default: "
        "the config's)",
    )
    run.add_argument(
        "--judge",
        help="judge: the benchmark's offline judge (exact, kb, reference), human (a person judges SPLAT in the "
        "terminal, seeing the hidden answer), or a model spec provider/model[?temperature=0&samples=3] (default: "
        "the config's). SPLAT's offline 'reference' judge matches words with the hidden answer and understands no "
        "negation or paraphrase: fine for offline runs and tests, not for measurement; 'reference-embed' "
        "(pip install 'lateralgym[embed]') compares sentence embeddings: it takes paraphrases but still misses "
        "negation",
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
    run.add_argument("--limit", type=int, metavar="N", help="run only the first N items (N >= 1)")
    run.add_argument("--repeats", type=int, default=1, metavar="R", help="episodes per item (best-of-R and mean)")
    run.add_argument("--concurrency", type=int, default=4, metavar="C", help="episodes in flight (default 4)")
    run.add_argument(
        "--seed",
        type=int,
        help="run seed, 0 to 2**64-1 (default: the config's); each episode's seed derives from (seed, item, repeat)",
    )
    run.add_argument("--max-turns", type=int, metavar="T", help="override the config's turn limit")
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
        help="elicitation (SPLAT 5.3): give the LLM player an auxiliary prompt built from this SPLAT run's log "
        "(the first 5 questions and answers of m puzzles); adds aux=... to the player spec",
    )
    run.add_argument("--aux-puzzles", type=int, metavar="M", help="with --aux: how many SPLAT puzzles (default 3)")
    run.add_argument(
        "--aux-variant",
        choices=("data", "reasoning"),
        help="with --aux: data = questions and answers (the paper's dagger), reasoning = with the player's "
        "reasoning (*; run the SPLAT player with reasoning=cot)",
    )

    data = sub.add_parser("data", help="inspect dataset files")
    data_sub = data.add_subparsers(dest="data_command", required=True, metavar="ACTION")
    stats = data_sub.add_parser(
        "stats",
        help="detect a dataset file's format, load it and print its counts",
        description="Detect the format (BrainTeaser .npy, SPLAT .xlsx, CreativityBench / LatEval .json, "
        "RiddleSense / LateralGym .jsonl), load the file and print its counts, or an error naming the file, "
        "record and field.",
    )
    stats.add_argument("path", help="the dataset file")
    stats.add_argument(
        "--format", help="skip detection: brainteaser, splat, lateval, creativitybench, riddlesense, jsonl"
    )

    show = data_sub.add_parser(
        "show",
        help="print items of a dataset file as the player sees them, with their hidden answers marked",
        description="Load a dataset file (any supported format) and print items: by id, or a random few. Each "
        "item shows the first observation a player gets, then, under a rule, the reference solution that only "
        "judges and researchers see.",
    )
    show.add_argument("path", help="the dataset file")
    show.add_argument("--item", metavar="ID", action="append", help="an item id (repeat for several)")
    show.add_argument("--random", type=int, metavar="N", help="N items drawn at random (default: the first one)")
    show.add_argument("--seed", type=int, default=0, help="seed of --random (default 0)")
    show.add_argument("--format", help="skip detection (as for 'data stats')")

    replay = sub.add_parser(
        "replay",
        help="re-step a run's episodes from the log, verify them and print the transcript",
        description="Rebuild the env from the run's config, re-apply every logged action and check each "
        "observation, reward and ending against the log; report the first divergence precisely. Offline "
        "judges run live; an LLM judge's logged replies are replayed (no API calls). Exits 1 when an episode "
        "diverges or the log records an episode more than once.",
    )
    replay.add_argument("run_dir", help="a run directory")
    replay.add_argument("--episode", metavar="ID", help="only this episode id (ITEM#REPEAT) or item id")
    replay.add_argument("--quiet", action="store_true", help="verify only; no transcript")

    view = sub.add_parser(
        "view",
        help="write an offline HTML viewer of a run's episodes, or an index of a folder of runs",
        description="Write RUN_DIR/viewer.html: every episode, step by step, with the model calls and the "
        "messages they were sent, and the reference answer (collapsed). Runs of more than 250 episodes are "
        "paged: the HTML holds an index of every episode and the first page, and the other pages sit in "
        "viewer-pages/ beside it (keep the folder next to the HTML when you move it); it opens from file://, "
        "no server needed. Given a folder of runs (runs/), write each run's viewer and runs/index.html "
        "listing them all.",
    )
    view.add_argument("run_dir", help="a run directory, or a folder of runs")
    view.add_argument("--out", metavar="FILE", help="where to write the HTML (default RUN_DIR/viewer.html)")

    report = sub.add_parser(
        "report",
        help="print a run's metrics and write RUN_DIR/report.md with plots",
        description="Compute the papers' metrics by streaming the step log (works on partial runs), print "
        "them, and write a Markdown report with matplotlib plots of every breakdown.",
    )
    report.add_argument("run_dir", help="a run directory")

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

    sub.add_parser("configs", help="list the shipped configs")
    from lateralgym.commands import register_all

    register_all(sub)  # commands in their own modules (lateralgym/commands/*.py)
    return parser


def _cmd_agreement(args: argparse.Namespace) -> int:
    from lateralgym.episodes import agreement_rows, write_label_template

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


def _one_run(path: str) -> Path:
    """A run directory, or the parent folder of exactly one (``runs/`` after a single run)."""
    given = Path(path)
    if (given / "steps.jsonl").exists() or not given.is_dir():
        return given
    runs = sorted(p for p in given.iterdir() if (p / "steps.jsonl").exists())
    if len(runs) == 1:
        return runs[0]
    if runs:
        names = ", ".join(p.name for p in runs[:5]) + (", ..." if len(runs) > 5 else "")
        raise LateralGymError(f"{given} holds {len(runs)} runs ({names}): pass one of them")
    return given


def _cmd_replay(args: argparse.Namespace) -> int:
    from lateralgym.episodes import replay, transcript

    args.run_dir = _one_run(args.run_dir)
    if not args.quiet:
        print(transcript(args.run_dir, args.episode))
    results = replay(args.run_dir, args.episode)
    diverged = [r for r in results if r.divergence is not None]
    duplicated = [r.episode_id for r in results if r.duplicated]
    partial = sum(not r.complete for r in results)
    for r in diverged:
        assert r.divergence is not None
        print(r.divergence.describe(), file=sys.stderr)
    if duplicated:
        shown = ", ".join(duplicated[:5]) + (", ..." if len(duplicated) > 5 else "")
        print(
            f"lateralgym: warning: {len(duplicated)} episodes are recorded more than once in the log (two processes "
            f"wrote it at once?) and were not replayed: {shown}",
            file=sys.stderr,
        )
    replayed = [r for r in results if not r.duplicated]
    print(
        f"replayed {len(replayed)} episodes, {sum(r.steps for r in replayed)} steps: "
        + (f"{len(diverged)} diverged" if diverged else "all observations and rewards match the log")
        + (f" ({partial} unfinished)" if partial else "")
        + (f"; {len(duplicated)} recorded more than once" if duplicated else "")
    )
    return EXIT_DIVERGED if diverged or duplicated else EXIT_OK


def _cmd_view(args: argparse.Namespace) -> int:
    from lateralgym.episodes import write_runs_index, write_viewer

    given = Path(args.run_dir)
    holds = [p for p in given.iterdir() if (p / "steps.jsonl").exists()] if given.is_dir() else []
    if not (given / "steps.jsonl").exists() and len(holds) > 1:  # a folder of runs: an index of them
        path = write_runs_index(given, Path(args.out) if args.out else None)
        print(f"wrote {path} and the viewer of each of its {len(holds)} runs (open it in a browser; it works offline)")
        return 0
    path = write_viewer(_one_run(args.run_dir), Path(args.out) if args.out else None)
    print(f"wrote {path} (open it in a browser; it works offline)")
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from lateralgym.episodes import metrics_and_usage, print_metrics, write_report

    run_dir = _one_run(args.run_dir)
    if not (run_dir / "steps.jsonl").exists():
        raise LateralGymError(f"{run_dir} has no steps.jsonl: pass a directory made by 'lateralgym run'")
    metrics, usage = metrics_and_usage(run_dir / "steps.jsonl")  # one pass over the log
    report = write_report(run_dir, metrics, usage)  # first: it refuses a damaged run directory
    print_metrics(metrics)
    print(f"\nwrote {report}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    from lateralgym.episodes import ResumeRequest, dry_run, judge_note, run

    if args.resume is None and args.config is None:
        raise LateralGymError("give a config to run (e.g. 'lateralgym run splat') or --resume RUN_DIR")
    if args.aux is None and (args.aux_puzzles is not None or args.aux_variant is not None):
        raise LateralGymError("--aux-puzzles and --aux-variant go with --aux RUN_DIR (a SPLAT run directory)")
    if args.resume is not None and args.aux is not None:
        raise LateralGymError("--resume keeps the run's own player and its aux prompt; drop --aux")
    if args.resume is not None and args.dry_run:
        raise LateralGymError("--dry-run estimates a new run; drop --resume (or --dry-run)")
    options = _options(args)
    if args.resume is not None:
        request = ResumeRequest(
            run_dir=Path(args.resume), config=args.config, dataset=args.data, seed=args.seed, max_turns=args.max_turns
        )
        result = run(None, options, resume=request)
    else:
        config = _config(args)
        if args.dry_run:
            print(dry_run(config, options).render())
            return EXIT_OK
        judge = options.judge or config.judge
        note = judge_note(config.benchmark, judge)
        if note:  # said where the judge is chosen: the run's first line
            print(f"judge {judge}: {note}")
        result = run(config, options)
    _print_result(result)
    return _run_status(result)


def _options(args: argparse.Namespace) -> RunOptions:
    """The run's settings from the flags (``--aux`` builds the player spec)."""
    from lateralgym.episodes import RunOptions

    player = args.player
    if args.aux is not None:
        from lateralgym.agents._aux import with_aux
        from lateralgym.envs import EpisodeConfig

        player = with_aux(
            player or EpisodeConfig.named(args.config).player,
            args.aux,
            puzzles=args.aux_puzzles,
            variant=args.aux_variant,
        )
    return RunOptions(
        player=player,
        judge=args.judge,
        judge_samples=args.judge_samples,
        limit=args.limit,
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


def _config(args: argparse.Namespace) -> EpisodeConfig:
    """The named config with ``--data``, ``--seed`` and ``--max-turns`` applied."""
    from lateralgym.envs import EpisodeConfig

    config = EpisodeConfig.named(args.config)
    updates: dict[str, object] = {}
    if args.data:
        updates["dataset"] = args.data
    if args.seed is not None:
        updates["seed"] = args.seed
    if args.max_turns is not None:
        updates["max_turns"] = args.max_turns
    if updates:
        config = EpisodeConfig.from_dict({**config.model_dump(), **updates}, source="command line")
    return config


def _print_result(result: RunResult) -> None:
    from lateralgym.episodes import print_metrics

    print_metrics(result.metrics)
    for role, usage in result.usage.items():
        cost = "unknown" if usage.cost_usd is None else f"${usage.cost_usd:.4f}"
        print(
            f"{role} LLM: {usage.calls} calls, {usage.cache_hits} cache hits, "
            f"{usage.prompt_tokens}+{usage.completion_tokens} tokens, cost {cost}"
            + (
                f", {usage.format_reasks} format re-asks, {usage.fallbacks} fallback moves"
                if usage.format_reasks or usage.fallbacks
                else ""
            )
        )
    if result.error_kinds:
        print(f"errors by kind: {', '.join(f'{k} x {n}' for k, n in result.error_kinds.items())}")
    print(f"\nRun directory: {result.run_dir}  ({result.ran} episodes run, {result.planned} planned)")


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


def _cmd_data_stats(args: argparse.Namespace) -> int:
    from lateralgym.envs import dataset_stats, load_items

    items = load_items(args.path, format=args.format)
    print(dataset_stats(items, path=args.path).render())
    return 0


def _cmd_data_show(args: argparse.Namespace) -> int:
    import random

    from lateralgym.envs import load_items

    items = list(load_items(args.path, format=args.format))
    if args.item:
        by_id = {str(getattr(i, "id", "")): i for i in items}
        missing = [i for i in args.item if i not in by_id]
        if missing:
            raise LateralGymError(f"{args.path}: no item with id {', '.join(map(repr, missing))}")
        chosen = [by_id[i] for i in args.item]
    elif args.random is not None:
        if args.random < 1:
            raise LateralGymError("--random takes a number of items, 1 or more")
        chosen = random.Random(args.seed).sample(items, min(args.random, len(items)))
    else:
        chosen = items[:1]
    for item in chosen:
        print(render_item(item))
    return 0


def render_item(item: object) -> str:
    """An item as the player first sees it, then its reference solution below a rule."""
    from lateralgym.envs import SHIPPED_CONFIGS, EpisodeConfig, LateralEnv, benchmark_of

    benchmark = benchmark_of(item)
    config = next(
        EpisodeConfig.named(name) for name in SHIPPED_CONFIGS if EpisodeConfig.named(name).benchmark == benchmark.name
    )
    env = LateralEnv(config, items=[item])
    observation, _ = env.reset(seed=0)
    rule = "-" * 60
    return (
        f"=== {benchmark.item_id(item)} ({benchmark.name}, shown as in config {config.name!r})\n"
        f"{observation['text']}\n{rule} hidden from the player\n{benchmark.solution_text(item)}\n"
    )


def _cmd_configs() -> int:
    from lateralgym.envs import EpisodeConfig

    for name in SHIPPED_CONFIGS:
        cfg = EpisodeConfig.named(name)
        print(
            f"{name:24} {cfg.benchmark:12} mode={cfg.mode:12} actions={','.join(cfg.allowed_actions):18} "
            f"max_turns={cfg.max_turns:<3} judge={cfg.judge} player={cfg.player}"
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lateralgym`` command; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        handler = getattr(args, "handler", None)
        if handler is not None:
            return int(handler(args))
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "data":
            return _cmd_data_show(args) if args.data_command == "show" else _cmd_data_stats(args)
        commands = {
            "replay": _cmd_replay,
            "view": _cmd_view,
            "report": _cmd_report,
            "agreement": _cmd_agreement,
        }
        if args.command in commands:
            return commands[args.command](args)
        return _cmd_configs()
    except LateralGymError as exc:
        print(f"lateralgym: error: {exc}", file=sys.stderr)
        # a model server found down before the run: nothing worked, as when every episode errors
        return EXIT_ALL_ERRORED if type(exc).__name__ == "EndpointCheckError" else EXIT_USAGE
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return EXIT_OK
    except OSError as exc:  # a file the command was given or writes: one line, as for any other bad input
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"lateralgym: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except PlayerQuit:
        print(f"stopped; finish the run later with: lateralgym run --resume {_run_dir()}")
        return EXIT_OK
    except KeyboardInterrupt:
        if args.command in ("kb", "tasks"):  # a data build resumes from its checkpoints
            print("lateralgym: interrupted; the same command resumes the build from its checkpoints", file=sys.stderr)
            return EXIT_INTERRUPTED
        print(f"lateralgym: interrupted; finish the run with: lateralgym run --resume {_run_dir()}", file=sys.stderr)
        return EXIT_INTERRUPTED


def _run_dir() -> str:
    """The run directory a stopped run was writing, for the line that says how to finish it."""
    from lateralgym.episodes import current_run_dir

    where = current_run_dir()
    return str(where) if where is not None else "RUN_DIR"


if __name__ == "__main__":
    sys.exit(main())
