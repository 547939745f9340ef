"""Metrics for people: terminal tables, a Markdown report with plots, and runs side by side.

``render_metrics`` / ``print_metrics`` draw a run's headline, breakdowns and exploration as rich
tables. ``write_report`` writes ``report.md`` into a run directory, with PNG figures under
``plots/`` linked by relative paths. Runs compared (a leaderboard, runs as rows) live in
``_leaderboard`` and ``_compare``.

A report is read apart from the run (pasted in a paper draft, sent to a colleague), so it states
what produced the numbers (``run_facts``): the judge (with what an offline judge can and cannot
do), the dataset, whether the run finished its plan (a partial run's rates are of the episodes done
so far), and the tokens and cost per role, summed from the step log.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from rich.console import Console
from rich.table import Table

from lateralgym.envs import ConfigError, get_benchmark, judge_note
from lateralgym.episodes._log import Usage
from lateralgym.episodes._manifest import RunRecord, read_run
from lateralgym.episodes._metrics import Moves, MovesTally, RunMetrics, metrics_and_usage

if TYPE_CHECKING:
    from lateralgym.episodes._plots import Plot

REPORT = "report.md"

_NOTE = (
    "Rates and accuracies are percentages (each benchmark's env card defines its metrics). Errored episodes "
    "count as incorrect. With R > 1 repeats, `_best_of_R` counts an item when any repeat succeeded and "
    "`_mean_of_R` is the plain mean over episodes; `pass^k` is the chance that k of an item's tries all "
    "succeed and `pass@k` that at least one does (unbiased estimators over its R tries, averaged over items)."
)


_PASS_COLUMNS = ("k", "pass^k (all k succeed)", "pass@k (one of k succeeds)")


def format_value(value: Any, decimals: int = 2) -> str:
    """A cell's text: floats with ``decimals`` decimals (two in files, one in the terminal), counts as
    integers, blanks for missing values."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{decimals}f}"
    return str(value)


def _shown(value: Any) -> str:
    """A terminal cell: one decimal, which is what a person reads of a percentage."""
    return format_value(value, decimals=1)


def _columns(rows: Sequence[dict[str, Any]]) -> list[str]:
    """Every key of the rows, in order of first appearance."""
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row))
    return list(seen)


def _summary(metrics: RunMetrics) -> str:
    mode = f" ({metrics.mode})" if metrics.mode else ""
    return (
        f"{metrics.benchmark}{mode}: {metrics.episodes} episodes ({metrics.errored} errored), "
        f"{metrics.items} items, repeats {metrics.repeats}"
    )


def _headline_rows(metrics: RunMetrics) -> dict[str, Any]:
    """The headline with the benchmark's own headline metrics first, ``n/a`` for those nothing scored
    (every episode errored or dropped), so the number a reader looks for never silently disappears."""
    named = _named_headline(metrics)
    rows: dict[str, Any] = {}
    passes = _pass_keys(metrics)
    others = {k: v for k, v in metrics.headline.items() if k not in passes}  # pass^k: a table of its own
    # n/a only when none of them was scored: a benchmark may name alternatives a run reports one of
    # (a rule's own rates are the plain names, the other rules' carry the rule's name)
    none_scored = not any(key == n or key.startswith(f"{n}_") for n in named for key in metrics.headline)
    for name in named:
        variants = [n for n in metrics.headline if n == name or n.startswith(f"{name}_best_of_")]
        variants += [n for n in metrics.headline if n.startswith(f"{name}_mean_of_")]
        for variant in variants or ([name] if none_scored else []):
            rows[variant] = metrics.headline.get(variant, "n/a")
    return rows | {k: v for k, v in others.items() if k not in rows}


def pass_k_rows(metrics: RunMetrics) -> list[tuple[int, Any, Any]]:
    """``(k, pass^k, pass@k)`` for k = 1 .. the most tries of one item (None where a run lacks one);
    empty with one repeat."""
    found: dict[int, dict[int, Any]] = {}
    for name, order in _pass_keys(metrics).items():
        found.setdefault(order[1], {})[order[0]] = metrics.headline[name]
    return [(k, found[k].get(0), found[k].get(1)) for k in sorted(found)]


def _pass_keys(metrics: RunMetrics) -> dict[str, tuple[int, int]]:
    """The headline's ``pass^k`` / ``pass@k`` names with their order (``pass_key_order``); none in a run
    of one try per item, which has no spread to measure (``pass_k_terms``)."""
    if metrics.repeats < 2:
        return {}
    from lateralgym.envs import pass_key_order

    return {name: order for name in metrics.headline if (order := pass_key_order(name)) is not None}


def _named_headline(metrics: RunMetrics) -> tuple[str, ...]:
    """The benchmark's own headline metric names (none when it is not registered here)."""
    try:
        return tuple(get_benchmark(metrics.benchmark).metrics.headline)
    except ConfigError:
        return ()


def duplicates_warning(metrics: RunMetrics) -> str | None:
    """The warning for a log that records episodes more than once, or None when it records none."""
    if not metrics.duplicates:
        return None
    n = metrics.duplicates
    return (
        f"warning: {n} episode{'s are' if n != 1 else ' is'} recorded more than once in the step log (two "
        "processes wrote it at once?); each is counted once, by its last record"
    )


def _telling_columns(rows: Sequence[dict[str, Any]]) -> tuple[list[str], str | None]:
    """The columns of a breakdown worth a terminal's width, and a caption naming the others: a count
    that is 0 in every row (``errored``), or the same as a count before it in every row (``scored_episodes``
    beside ``episodes``). Rates stay, 0 or not. ``report.md`` keeps every column."""
    columns = _columns(rows)
    kept: list[str] = columns[:1]
    zeros: list[str] = []
    same: list[str] = []
    for column in columns[1:]:
        values = [row.get(column) for row in rows]
        if not all(type(v) is int for v in values):
            kept.append(column)
        elif not any(values):
            zeros.append(column)
        elif twin := next((k for k in kept[1:] if [row.get(k) for row in rows] == values), None):
            same.append(f"{column} = {twin}")
        else:
            kept.append(column)
    notes = [f"{', '.join(zeros)}: 0 in every row"] if zeros else []
    notes += same
    return kept, ("; ".join(notes) + " (report.md has every column)") if notes else None


_WIDE = 6
"""Columns past which a breakdown with fewer rows is shown turned, a column per row, to fit 80 columns."""


def _breakdown_table(name: str, rows: Sequence[dict[str, Any]]) -> Table:
    """A breakdown as a terminal table: a row per group, or, when it has many columns and few groups, a
    column per group (a band, a variant) and a row per measure."""
    columns, left_out = _telling_columns(rows)
    table = Table(title=name, title_justify="left", caption=left_out, caption_justify="left")
    turned = len(columns) > _WIDE and len(rows) + 1 < len(columns)
    header = [columns[0], *(_shown(row.get(columns[0])) for row in rows)] if turned else columns
    for n, column in enumerate(header):
        # ``gold_correct_rate`` as words: in a narrow terminal they wrap, where the name would be cut short
        heading = column if turned and n else column.replace("_", " ")
        table.add_column(heading, justify="left" if n == 0 else "right", overflow="fold", no_wrap=n == 0)
    if turned:
        for column in columns[1:]:
            table.add_row(column, *(_shown(row.get(column)) for row in rows))
    else:
        for row in rows:
            table.add_row(*(_shown(row.get(c)) for c in columns))
    return table


def render_metrics(metrics: RunMetrics, *, brief: bool = False, breakdowns: bool = True) -> list[Table]:
    """The headline table, the ``pass^k`` table under repeats, one table per breakdown, and the
    exploration table when there is one; ``brief``: the headline table alone, with the benchmark's own
    headline metrics only; ``breakdowns=False``: the headline with the benchmark's own metrics and the
    exploration table (what ``lateralgym run`` prints: the rest is in ``report.md``).

    Each table fits 80 columns: a column header wraps at its underscores rather than being cut."""
    headline = Table(title="headline", title_justify="left")
    headline.add_column("metric")
    headline.add_column("value", justify="right")
    named = _named_headline(metrics)
    for name, value in _headline_rows(metrics).items():
        if (not brief and breakdowns) or not named or name.startswith(named):
            headline.add_row(name, _shown(value))
    tables = [headline]
    if brief:
        return tables
    passes = pass_k_rows(metrics) if breakdowns else []
    if passes:
        table = Table(title="pass^k / pass@k over each item's tries", title_justify="left")
        for n, column in enumerate(_PASS_COLUMNS):
            table.add_column(column, justify="left" if n == 0 else "right")
        for k, every, some in passes:
            table.add_row(str(k), _shown(every), _shown(some))
        tables.append(table)
    for name, rows in metrics.breakdowns.items() if breakdowns else ():
        tables.append(_breakdown_table(name, rows))
    if metrics.exploration:
        exploration = Table(title="exploration", title_justify="left")
        exploration.add_column("measure")
        exploration.add_column("value", justify="right")
        for name, value in metrics.exploration.items():
            exploration.add_row(name, _shown(value))
        tables.append(exploration)
    return tables


def print_metrics(
    metrics: RunMetrics, console: Console | None = None, *, brief: bool = False, breakdowns: bool = True
) -> None:
    """Print ``render_metrics`` to the console (a new one on stdout by default: the terminal's width, or
    ``COLUMNS``, 80 when piped); ``brief``: the headline only (after a person's play, so the reference
    solution just shown stays on screen); ``breakdowns=False``: no breakdown tables."""
    console = console or Console()
    console.print(f"[bold]{_summary(metrics)}[/bold]")
    warning = duplicates_warning(metrics)
    if warning is not None:
        console.print(warning, style="bold yellow", markup=False)
    for note in metrics.warnings:
        console.print(f"warning: {note}", style="bold yellow", markup=False)
    for table in render_metrics(metrics, brief=brief, breakdowns=breakdowns):
        console.print(table)


def _cell(value: Any) -> str:
    return format_value(value).replace("|", "\\|").replace("\n", " ")


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A GitHub-flavoured Markdown table, numbers right-aligned after the first column."""
    lines = [
        "| " + " | ".join(_cell(h) for h in header) + " |",
        "|" + "|".join(":---" if n == 0 else "---:" for n in range(len(header))) + "|",
    ]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def validity_warning(moves: Moves) -> str | None:
    """The line a report leads with when more than 10 % of the player's moves were invalid, else None."""
    if not moves.alarming:
        return None
    return (
        f"Validity: {moves.invalid} of {moves.total} player moves ({100 * moves.invalid_rate:.1f} %) were invalid "
        f"({moves.reasked} re-asked for the format, {moves.fallback} read by the fallback), so the metrics below "
        "score mostly unread or unusable answers; a model that cannot keep the format can be constrained to it "
        "(constrain=grammar on a llama.cpp server, json_schema on OpenAI or vLLM; the default for local/ models)"
    )


def write_report(
    run_dir: Path,
    metrics: RunMetrics | None = None,
    usage: dict[str, Usage] | None = None,
    moves: Moves | None = None,
    *,
    plots: bool = True,
) -> Path:
    """Write ``run_dir/report.md`` and its figures under ``run_dir/plots``.

    Args:
        run_dir: the run directory (holding ``steps.jsonl`` and, optionally, ``manifest.json``).
        metrics: the run's metrics; computed from ``run_dir/steps.jsonl`` when not given.
        usage: the run's model usage per role (``metrics_and_usage``); read from the log when not given.
        moves: how valid the player's moves were (``MovesTally``); read from the log when not given. When
            more than 10 % were invalid, the report leads with it.
        plots: draw the figures (matplotlib); False: the tables alone, with a line saying how to add
            them (``lateralgym run`` writes it so, ``lateralgym report`` with the figures).

    Returns:
        The path of ``report.md``.

    Raises:
        ReportError: matplotlib is not installed (``pip install 'lateralgym[plots]'``).
        MetricsError: the step log holds no episodes.
        ConfigError: ``manifest.json`` is there but damaged (not JSON, not a manifest).
    """
    run_dir = Path(run_dir)
    run = read_run(run_dir)  # a damaged manifest stops the report before any file is written
    manifest = run.manifest
    if metrics is None or usage is None or moves is None:  # one pass over the log for all three
        tally = MovesTally()
        read_metrics, read_usage = metrics_and_usage(run.log_path, moves=tally)
        metrics = read_metrics if metrics is None else metrics
        usage = read_usage if usage is None else usage
        moves = tally.totals() if moves is None else moves
    if plots:
        from lateralgym.episodes._plots import write_plots  # a run's own report has no figures

        figures = write_plots(metrics, run_dir)
    else:
        figures = {}
    pass_keys = _pass_keys(metrics)
    about = [
        ("run", (manifest.run_id if manifest else "") or run_dir.name),
        ("player", (manifest.options.player if manifest else None) or ""),
        ("config", manifest.config if manifest else ""),
        ("benchmark", metrics.benchmark),
        ("mode", metrics.mode or ""),
        ("episodes", f"{metrics.episodes} ({metrics.errored} errored)"),
        ("recorded more than once", metrics.duplicates or ""),
        ("items", metrics.items),
        ("repeats (R)", metrics.repeats),
        ("player moves", moves.line().removeprefix("moves: ") if moves.total else ""),
        *(
            (
                f"served {s.spec}",
                f"{Path(s.path).name} (sha256 {s.sha256[:12]}...), {s.threads} thread(s), {s.context} tokens of "
                f"context, {s.runtime}",
            )
            for s in (manifest.served if manifest else [])
        ),
        *run_facts(metrics, run, usage),  # judge, dataset, plan, tokens and cost per role
    ]
    parts = [
        f"# LateralGym report: {run_dir.name}",
        *(f"**{warning}.**" for warning in [validity_warning(moves)] if warning),
        markdown_table(["", ""], [(k, v) for k, v in about if v != ""]),
        *(f"**{warning}.**" for warning in [partial_warning(run, metrics)] if warning),
        *(f"**{warning}.**" for warning in [duplicates_warning(metrics)] if warning),
        *(f"**warning: {note}**" for note in metrics.warnings),
        _NOTE if plots else f"{_NOTE} Figures: `lateralgym report {run_dir}` adds them to this report.",
        "## Headline",
        markdown_table(["metric", "value"], ((k, v) for k, v in metrics.headline.items() if k not in pass_keys)),
    ]
    passes = pass_k_rows(metrics)
    if passes:
        parts += ["### pass^k and pass@k", markdown_table(_PASS_COLUMNS, passes)]
    if metrics.breakdowns:
        parts.append("## Breakdowns")
    for name, rows in metrics.breakdowns.items():
        columns = _columns(rows)
        parts += [f"### {name}", markdown_table(columns, ([row.get(c) for c in columns] for row in rows))]
        parts += [_image(plot) for plot in figures.get(name, [])]
    if metrics.exploration:
        parts += ["## Exploration", markdown_table(["measure", "value"], metrics.exploration.items())]
    if usage:
        columns = ["calls", "cache_hits", "failed_calls", "prompt_tokens", "completion_tokens", "format_reasks"]
        table: list[tuple[Any, ...]] = [
            (role, *(getattr(u, c) for c in columns), u.fallbacks, u.retries, u.truncated, u.cost_usd)
            for role, u in usage.items()
        ]
        parts += [
            "## Model usage",
            "Format re-asks: player replies without a readable move, asked again for the expected format; "
            "fallbacks: replies still unreadable, read by the benchmark's fallback (e.g. a question "
            "sentence as a question, else the reply as an explanation attempt); retries: requests sent again "
            "after a timeout, rate limit or server error; truncated: replies cut to their role's length cap.",
            markdown_table(["role", *columns, "fallbacks", "retries", "truncated", "cost_usd"], table),
        ]
    path = run_dir / REPORT
    path.write_text("\n\n".join(parts) + "\n", encoding="utf-8")
    return path


def _image(plot: Plot) -> str:
    title, relative = plot
    return f"![{title}]({relative})"


# The facts a report states about its run.

_LOOPBACK = ("localhost", "::1", "0.0.0.0")


def local_roles(run: RunRecord) -> set[str]:
    """The roles (``player``, ``judge``) whose model server the run's manifest puts on this machine, where
    an unpriced model costs nothing rather than an unknown amount."""
    if run.manifest is None:
        return set()
    recorded = run.manifest.options
    urls = {"player": recorded.base_url, "judge": recorded.judge_base_url or recorded.base_url}
    return {
        role
        for role, url in urls.items()
        if url and ((host := urlsplit(url).hostname or "") in _LOOPBACK or host.startswith("127."))
    }


def cost_text(usage: Usage, local: bool = False) -> str:
    """``$0.0012``; for an unpriced model ``local: free`` when its server is on this machine, else ``unknown``."""
    if usage.cost_usd is not None:
        return f"${usage.cost_usd:.4f}"
    return "local: free" if local else "unknown"


def usage_text(usage: Usage, local: bool = False) -> str:
    """``12 calls (3 cache hits, 1 failed), 1,234 + 567 tokens, cost $0.0012`` (see ``cost_text``)."""
    extra = [f"{usage.cache_hits} cache hits"] if usage.cache_hits else []
    extra += [f"{usage.failed_calls} failed"] if usage.failed_calls else []
    cost = cost_text(usage, local)
    calls = f"{usage.calls} calls" + (f" ({', '.join(extra)})" if extra else "")
    return f"{calls}, {usage.prompt_tokens:,} + {usage.completion_tokens:,} tokens, cost {cost}"


def partial_warning(run: RunRecord, metrics: RunMetrics) -> str | None:
    """The warning for a run that has not finished its plan, or None."""
    planned = run.planned
    if planned is None or metrics.episodes >= planned:
        return None
    return (
        f"Partial run: {metrics.episodes} of {planned} planned episodes finished; the numbers are of those only. "
        f"Finish it with `lateralgym run --resume {run.run_dir}`"
    )


def judge_agreement(run: RunRecord, benchmark: str, *, short: bool = False) -> str | None:
    """How far the run's judge agrees with people: its card's figures (``--judge-card``), "unmeasured"
    for a benchmark whose judges can be measured (it reads human-labelled judgements), None otherwise
    (a judge that grades exactly, as the paper does)."""
    card = run.manifest.judge_card if run.manifest else None
    if card is not None:
        return card.short() if short else card.summary()
    try:
        measurable = bool(get_benchmark(benchmark).judging.judgement_formats)
    except ConfigError:
        return None
    if not measurable:
        return None
    if short:
        return "agreement with people unmeasured"
    return (
        "unmeasured: no judge card (measure it: lateralgym judges eval DATA --judge SPEC --save-card CARD, "
        "then run with --judge-card CARD)"
    )


def items_chosen(run: RunRecord) -> str:
    """Which of the dataset's items the run played: a ``--sample`` (its size and seed), the first
    ``--limit``, or blank for all of them (or a run without a manifest)."""
    if run.manifest is None:
        return ""
    options = run.manifest.options
    if options.sample is not None:
        return (
            f"a sample of {options.sample} (--sample {options.sample}, seed {run.manifest.seed}), spread over the "
            "benchmark's groups"
        )
    if options.limit is not None:
        return f"the first {options.limit} (--limit {options.limit}), with the rest of any group they touch"
    return ""


def run_facts(metrics: RunMetrics, run: RunRecord, usage: dict[str, Usage]) -> list[tuple[str, Any]]:
    """Rows for the report's header table: judge, dataset, episodes against the plan, use per role."""
    judge = (run.manifest.options.judge if run.manifest else None) or ""
    note = judge_note(metrics.benchmark, judge)
    planned = run.planned
    facts: list[tuple[str, Any]] = [
        ("judge", f"{judge} ({note})" if note else judge),
        ("dataset", run.manifest.dataset if run.manifest else ""),
    ]
    chosen = items_chosen(run)
    if chosen:
        facts.append(("items played", chosen))
    agreement = judge_agreement(run, metrics.benchmark)
    if agreement is not None:
        facts.append(("judge agreement with people", agreement))
    if planned is not None:
        state = "finished" if metrics.episodes >= planned else "partial"
        facts.append(("planned episodes", f"{planned} ({state}: {metrics.episodes} done)"))
    local = local_roles(run)
    for role, used in usage.items():
        facts.append((f"{role} model use", usage_text(used, role in local)))
    return facts
