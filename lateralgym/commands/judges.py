"""``lateralgym judges eval``: a judge measured against people's labels (accuracy, precision, recall, F1).

The data's format belongs to a benchmark (``Benchmark.judging.judgement_formats``), which also builds the
judge (its offline judges, its LLM judge for a model spec, a local model through its OpenAI-compatible
server and ``--base-url``); the command only
finds the format, loads the cases and prints what ``lateralgym.judges.evaluate_judge`` measures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from lateralgym.cli import EXIT_ALL_ERRORED, EXIT_OK, EXIT_SOME_ERRORED
from lateralgym.commands import add_import_flag, load_imports
from lateralgym.envs import LateralGymError


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``judges`` with its action ``eval``."""
    judges = sub.add_parser("judges", help="measure a judge against people's labels")
    actions = judges.add_subparsers(dest="judges_command", required=True, metavar="ACTION")
    evaluate = actions.add_parser(
        "eval",
        help="score a judge on human-labelled judgements: accuracy, precision, recall, F1, majority baseline",
        description="Ask a judge (an offline one, an LLM as provider/model, a local model as local/NAME, served for "
        "the command, or at --base-url) every "
        "human-labelled "
        "judgement of DATA, the way the benchmark's game asks it, and compare its labels with people's: accuracy, "
        "precision / recall / F1 of the positive label (a confirmed guess, a solved puzzle), the majority baseline, "
        "per-group (story) accuracy, 95 % bootstrap intervals. Judge calls that fail for good (a server down, a "
        "refused request) are left out and the first error printed: exit status 3 when some failed, 4 when all did. "
        "Formats: " + _formats_help(),
    )
    evaluate.add_argument("data", help="the labelled judgements: a file, or a folder (see the formats above)")
    evaluate.add_argument(
        "--judge",
        required=True,
        help="the judge: an offline judge's name, a model spec provider/model[?...], or local/NAME",
    )
    evaluate.add_argument(
        "--json",
        action="store_true",
        help='print one line: {"n", "accuracy", "precision", "recall", "f1", "majority", "kappa", "kappa_low", '
        '"kappa_high", "confusion", ...}',
    )
    evaluate.add_argument(
        "--save-card",
        metavar="FILE",
        help="write the judge's card (its spec, model file sha256, the data, n, accuracy and Cohen's kappa with "
        "intervals, the majority baseline, the date): runs judged by it carry the card with --judge-card FILE, and "
        "their reports show the judge's agreement with people",
    )
    evaluate.add_argument(
        "--cv",
        choices=["stories"],
        help="cross-validate a learned judge: retrain it on all but one fold of stories (every case of a story in "
        "one fold) and score it on the held-out fold, so no story scored was seen in training",
    )
    evaluate.add_argument(
        "--folds", type=int, default=8, metavar="K", help="folds of --cv (default 8; at most the stories' number)"
    )
    evaluate.add_argument("--format", metavar="NAME", help="skip detection: a format name (see above)")
    evaluate.add_argument("--benchmark", metavar="NAME", help="look among this benchmark's formats only")
    evaluate.add_argument(
        "--items", metavar="PATH", help="the dataset the labels name items of (default: the benchmark's sample data)"
    )
    evaluate.add_argument("--limit", type=int, metavar="N", help="only the first N judgements")
    evaluate.add_argument("--base-url", metavar="URL", help="OpenAI-compatible server of an LLM judge")
    evaluate.add_argument("--concurrency", type=int, default=8, metavar="N", help="judge calls in flight (default 8)")
    evaluate.add_argument("--resamples", type=int, default=1000, metavar="B", help="bootstrap resamples (default 1000)")
    evaluate.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default 0)")
    evaluate.add_argument("--cache-dir", metavar="DIR", help="LLM response cache (default ./.lateralgym-cache/llm)")
    evaluate.add_argument("--no-cache", action="store_true", help="bypass the LLM response cache")
    add_import_flag(evaluate)
    evaluate.set_defaults(handler=_cmd_eval)


def _formats_help() -> str:
    from lateralgym.envs import all_benchmarks

    found = [f"{f.name} ({b.name}): {f.description}" for b in all_benchmarks() for f in b.judging.judgement_formats]
    return "; ".join(found) or "none registered"


def _find_format(path: Path, name: str | None, benchmark: str | None) -> tuple[Any, Any]:
    """(benchmark, format) of the data: the named format, else the first whose sniff accepts it."""
    from lateralgym.envs import all_benchmarks, get_benchmark

    units = [get_benchmark(benchmark)] if benchmark else all_benchmarks()
    known = [(unit, fmt) for unit in units for fmt in unit.judging.judgement_formats]
    if not known:
        raise LateralGymError(f"{benchmark or 'no benchmark'} reads no human-labelled judgements")
    if name is not None:
        chosen = [(u, f) for u, f in known if f.name == name]
        if not chosen:
            raise LateralGymError(
                f"unknown judgement format {name!r}; choose one of {sorted(f.name for _, f in known)}"
            )
        return chosen[0]
    for unit, fmt in known:
        if fmt.sniff(path):
            return unit, fmt
    raise LateralGymError(
        f"{path}: cannot tell its judgement format; pass --format, one of {sorted(f.name for _, f in known)}"
    )


def _cmd_eval(args: argparse.Namespace) -> int:
    from lateralgym.envs import judge_note, load_items
    from lateralgym.judges import cross_validate, evaluate_judge, make_judge

    load_imports(args.imports)
    path = Path(args.data)
    if not path.exists():
        raise LateralGymError(f"{path}: no such file or folder")
    if args.limit is not None and args.limit < 1:
        raise LateralGymError(f"--limit takes a number of judgements, 1 or more, got {args.limit}")
    if args.concurrency < 1 or args.resamples < 0:
        raise LateralGymError("--concurrency must be 1 or more and --resamples 0 or more")
    unit, fmt = _find_format(path, args.format, args.benchmark)
    items = list(load_items(args.items, benchmark=unit.name)) if args.items else None
    cases = list(fmt.load(path, items))[: args.limit]
    judge = make_judge(
        args.judge,
        benchmark=unit.name,
        base_url=args.base_url,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
    )
    trained_here = _trained_on(judge, path)
    if args.cv:
        result = cross_validate(
            judge, cases, folds=args.folds, format=fmt.name, resamples=args.resamples, seed=args.seed
        )
    else:
        result = evaluate_judge(
            judge, cases, format=fmt.name, concurrency=args.concurrency, resamples=args.resamples, seed=args.seed
        )
    if result.failed and not result.n:
        print(
            f"lateralgym: error: every judge call failed ({result.failed} of {result.failed}): {result.first_error}; "
            "fix that (the server, the key, the extra) and run again",
            file=sys.stderr,
        )
        return EXIT_ALL_ERRORED
    if trained_here and not args.cv:
        print(
            f"lateralgym: note: judge {args.judge} was trained on this very data, so these figures are in-sample, "
            "not an estimate of how it judges new stories: add --cv stories",
            file=sys.stderr,
        )
    if args.save_card:
        _save_card(result, args, unit.name, path)
    if args.json:
        print(json.dumps(result.json_line()))
    else:
        note = judge_note(unit.name, args.judge)
        if note:
            print(f"judge {args.judge}: {note}")
        print(_render(result))
    if result.failed:
        print(
            f"lateralgym: {result.failed} of {result.failed + result.n} judge calls failed and are left out of the "
            f"figures; the first: {result.first_error}",
            file=sys.stderr,
        )
        return EXIT_SOME_ERRORED
    return EXIT_OK


def _trained_on(judge: Any, data: Path) -> bool:
    """Whether a learned judge's weights were trained on ``data`` (its ``training_data_sha256``)."""
    trained = getattr(judge, "training_data_sha256", "")
    if not trained:
        return False
    from lateralgym.judges import data_digest

    return bool(trained == data_digest(data))


def _save_card(result: Any, args: argparse.Namespace, benchmark: str, data: Path) -> None:
    """Write the judge card ``--save-card`` names (its model file's sha256 for a ``local/`` judge)."""
    from lateralgym.agents import served_models
    from lateralgym.judges import make_card, write_card

    served = {model.spec: model.sha256 for model in served_models()}
    card = make_card(result, judge=args.judge, benchmark=benchmark, data=data, model_sha256=served.get(args.judge))
    target = Path(args.save_card)
    try:
        write_card(card, target)
    except OSError as exc:
        raise LateralGymError(f"--save-card {target}: cannot write it ({exc.strerror or exc})") from None
    if not args.json:
        print(f"wrote the judge card {target}: {card.summary()}")


def _fraction(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _render(result: Any) -> str:
    """The evaluation as lines of text: the figures with intervals, the baseline, the confusion, per group."""
    lines = [
        f"judge {result.judge} on {result.format}: {result.n} judgements"
        + (f" ({result.failed} failed calls left out)" if result.failed else "")
    ]
    if result.cross_validation:
        lines.append(
            f"  cross-validated by {result.cross_validation}: each case labelled by the judge retrained on the "
            "other folds, so no story scored was seen in training"
        )
    for name in ("accuracy", "precision", "recall", "f1"):
        low_high = result.intervals.get(name)
        interval = f"  95% [{low_high[0]:.4f}, {low_high[1]:.4f}]" if low_high else ""
        label = f"{name} ({result.positive})" if name in ("precision", "recall", "f1") else name
        lines.append(f"  {label:<20} {_fraction(getattr(result, name))}{interval}")
    lines.append(f"  {'majority baseline':<20} {_fraction(result.majority)}  (always {result.majority_label!r})")
    low_high = result.intervals.get("kappa")
    interval = f"  95% [{low_high[0]:.4f}, {low_high[1]:.4f}]" if low_high else ""
    lines.append(f"  {'Cohen kappa':<20} {_fraction(result.kappa)}{interval}  (0: chance agreement)")
    if result.mean_group_accuracy is not None:
        spread = result.group_spread()
        lines.append(
            f"  {'mean group accuracy':<20} {_fraction(result.mean_group_accuracy)} over {len(result.groups)}"
            + (f"  (sd {spread['sd']:.3f}, {spread['min']:.3f} to {spread['max']:.3f})" if spread else "")
        )
    lines.append(
        "  confusion (people -> judge): "
        + "; ".join(
            f"{expected}: " + ", ".join(f"{got} {n}" for got, n in sorted(row.items()))
            for expected, row in sorted(result.confusion.items())
        )
    )
    if result.confusion_as_labelled != result.confusion:
        lines.append(
            "  as labelled (people's label -> judge's own): "
            + "; ".join(
                f"{expected}: " + ", ".join(f"{got} {n}" for got, n in sorted(row.items()))
                for expected, row in sorted(result.confusion_as_labelled.items())
            )
        )
    if result.groups:
        lines.append("  per group:")
        width = max(len(g.group) for g in result.groups)
        lines += [f"    {g.group:<{width}}  {g.accuracy:.3f}  ({g.cases})" for g in result.groups]
    return "\n".join(lines)
