"""Runs compared: a leaderboard with bootstrap confidence intervals, and paired differences.

``leaderboard(run_dirs)`` gives one ``RunRow`` per run (what ran: benchmark, config, player,
judge, dataset; how much: episodes, errored, planned; and every headline metric with a 95 %
bootstrap interval). The interval resamples the run's *items* with replacement (an item's repeats
stay together) and scores each resample with the benchmark's own scorer, so it holds for every
metric the paper defines (band averages, group accuracies, best-of-R),
not only for plain proportions.

Runs are ranked like with like: ``Leaderboard.boards()`` splits them by what makes scores comparable
(benchmark, config, dataset), and each board ranks its runs on one metric, the benchmark's first
headline metric *for one try* (``RunRow.one_try``): a run with repeats counts the mean of its tries
(``_mean_of_R``), as the paired difference does, never its best of R, so a run is not ranked up for
having been given more tries. Its best-of-R, ``pass^k`` and ``pass@k`` are shown apart
(``RunRow.with_repeats``); ``Leaderboard.apart()`` says in one line which runs are not ranked together.

``paired_difference(a, b)`` compares two runs on the items both ran: per item, the share of
repeats that succeeded (the benchmark's ``Outcome.succeeded``), the mean difference in percentage
points with a bootstrap interval over those items, and, with one repeat each, the discordant
items and McNemar's exact test; with repeats in both, the same paired difference of each
``pass^k`` and ``pass@k`` (per item estimators, ``lateralgym.envs._pass_k``).
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Callable, Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from lateralgym.envs import (
    Benchmark,
    ConfigError,
    ItemTerms,
    ScoredEpisode,
    Scorer,
    get_benchmark,
    pass_k_terms,
    pass_key_order,
)
from lateralgym.envs.support import csv_cell
from lateralgym.episodes._log import STEP_LOG, EpisodeEnd, EpisodeStart, StepLine, read_log
from lateralgym.episodes._manifest import read_run
from lateralgym.episodes._metrics import DEFAULT_MAX_ROUNDS, MetricsError, Moves, MovesTally, compute_metrics
from lateralgym.episodes._report import judge_agreement

__all__ = [
    "DEFAULT_RESAMPLES",
    "Interval",
    "Leaderboard",
    "PairedDifference",
    "RunRow",
    "bootstrap_headline",
    "leaderboard",
    "paired_difference",
]

DEFAULT_RESAMPLES = 1000
"""Bootstrap resamples per run (``--resamples``)."""

_LEVEL = 0.95


class Interval(BaseModel):
    """A metric's value on the run and its percentile bootstrap interval."""

    value: float
    low: float | None = None
    """Lower bound of the 95 % interval (None when the run has one item, or none was computed)."""
    high: float | None = None

    def text(self) -> str:
        """``61.5 [48.0, 74.0]``, or the value alone without an interval."""
        if self.low is None or self.high is None:
            return f"{self.value:.1f}"
        return f"{self.value:.1f} [{self.low:.1f}, {self.high:.1f}]"


BOARD_KEYS = ("benchmark", "mode", "config", "dataset")
"""What runs must share to be ranked on one board (``RunRow.board``), coarsest first."""


class RunRow(BaseModel):
    """One run on the leaderboard."""

    run_dir: str
    run_id: str
    benchmark: str
    mode: str | None = None
    config: str = ""
    player: str = ""
    judge: str = ""
    judge_agreement: str = ""
    """The judge's measured agreement with people (its card), ``unmeasured``, or blank for exact grading."""
    dataset: str = ""
    created: str = ""
    episodes: int
    """Episodes scored."""
    errored: int
    planned: int | None = None
    """Episodes the run planned (from its manifest); more than ``episodes`` when it is partial."""
    items: int
    repeats: int
    constrained: str = ""
    """What the LLM player's replies were decoded under: ``grammar``, ``json_schema``, ``off`` (free text,
    the papers' protocol), both joined by ``+`` when a run fell back midway; blank for offline players."""
    invalid_rate: float | None = None
    """The share of player moves the env could not use (``summary.json``'s ``moves.invalid_rate``)."""
    metrics: dict[str, Interval] = Field(default_factory=dict)
    """Every headline metric with its interval."""

    @property
    def partial(self) -> bool:
        """The run has not finished its plan (killed, stopped, or still running)."""
        return self.planned is not None and self.episodes < self.planned

    @property
    def board(self) -> tuple[str, str, str, str]:
        """What runs must share to be ranked together (``BOARD_KEYS``): benchmark, mode, config and dataset."""
        return (self.benchmark, self.mode or "", self.config, self.dataset)

    def one_try(self) -> dict[str, Interval]:
        """The metrics of one try, by their plain names: a run with repeats gives the mean over its tries
        (``X_mean_of_R`` as ``X``); best-of-R, ``pass^k`` and ``pass@k`` are left out (``with_repeats``)."""
        if self.repeats <= 1:
            return {n: v for n, v in self.metrics.items() if pass_key_order(n) is None and "_best_of_" not in n}
        mean, best = f"_mean_of_{self.repeats}", f"_best_of_{self.repeats}"
        plain = {n: v for n, v in self.metrics.items() if pass_key_order(n) is None and not n.endswith((mean, best))}
        return plain | {n.removesuffix(mean): v for n, v in self.metrics.items() if n.endswith(mean)}

    def with_repeats(self) -> dict[str, Interval]:
        """What only repeats measure: best-of-R, then ``pass^k`` and ``pass@k`` (empty with one repeat)."""
        best = {n: v for n, v in self.metrics.items() if n.endswith(f"_best_of_{self.repeats}")}
        passes = sorted((n for n in self.metrics if pass_key_order(n) is not None), key=_pass_order)
        return best | {n: self.metrics[n] for n in passes} if self.repeats > 1 else {}


class Leaderboard(BaseModel):
    """Runs as rows, in boards of runs that can be ranked together (``boards``), best first on each
    board by its benchmark's first headline metric for one try (``ranked_on``)."""

    rows: list[RunRow]
    resamples: int

    def primary(self, benchmark: str) -> list[str]:
        """The one-try metrics shown for ``benchmark``: its paper's headline names present in its rows
        (``RunRow.one_try``; the first of them ranks), else the first two metrics its rows have."""
        present = list(dict.fromkeys(n for row in self.rows if row.benchmark == benchmark for n in row.one_try()))
        try:
            named = get_benchmark(benchmark).metrics.headline
        except ConfigError:
            named = ()
        return [n for n in named if n in present] or present[:2]

    def ranked_on(self, benchmark: str) -> str:
        """The metric runs of ``benchmark`` are ranked on (one try); blank when none has one."""
        return next(iter(self.primary(benchmark)), "")

    def boards(self) -> list[Leaderboard]:
        """The runs in boards of like with like (``RunRow.board``: one benchmark, mode, config and
        dataset), in order of first appearance, each ranked best first."""
        keys = list(dict.fromkeys(row.board for row in self.rows))
        return [self.model_copy(update={"rows": [r for r in self.rows if r.board == key]}) for key in keys]

    def apart(self) -> str | None:
        """One line naming what keeps runs off one board (the coarsest of ``BOARD_KEYS`` in which they
        differ), or None when they are all on one."""
        boards = self.boards()
        if len(boards) < 2:
            return None
        keys = [b.rows[0].board for b in boards]
        level = next(n for n in range(len(BOARD_KEYS)) if len({key[n] for key in keys}) > 1)
        what = BOARD_KEYS[level]
        if len(self.rows) == 2:
            (a, b), (first, second) = (row.run_id for row in self.rows), (key[level] or "?" for key in keys)
            return f"not comparable: {a} and {b} differ in {what} ({first} vs {second}), so each has a board of its own"
        values = ", ".join(dict.fromkeys(key[level] or "?" for key in keys))
        return f"not comparable: these runs differ in {what} ({values}), so each board ranks its own runs"

    def to_records(self) -> list[dict[str, Any]]:
        """One flat dict per run: facts, the metric it is ranked on (``ranked_on``: ``X`` or, with
        repeats, ``X_mean_of_R``), then each metric as ``name``, ``name_low``, ``name_high``."""
        records = []
        for row in self.rows:
            record: dict[str, Any] = row.model_dump(exclude={"metrics"})
            record["partial"] = row.partial
            ranked = self.ranked_on(row.benchmark)
            record["ranked_on"] = f"{ranked}_mean_of_{row.repeats}" if ranked and row.repeats > 1 else ranked
            for name, interval in row.metrics.items():
                column = f"metric.{name}" if name in record else name  # the headline's own ``errored`` count
                record[column], record[f"{column}_low"], record[f"{column}_high"] = (
                    interval.value,
                    interval.low,
                    interval.high,
                )
            records.append(record)
        return records

    def to_csv(self) -> str:
        """``to_records`` as CSV text (a header with every column any run has)."""
        return records_csv(self.to_records())

    def to_pandas(self) -> Any:
        """``to_records`` as a ``pandas.DataFrame`` (``pip install 'lateralgym[pandas]'``)."""
        from lateralgym.episodes._episode_table import require_pandas

        return require_pandas().DataFrame(self.to_records())


class PairedDifference(BaseModel):
    """Run A minus run B on the items both ran, in percentage points of success."""

    a: str
    b: str
    shared_items: int
    only_a: int
    """Items run by A only (left out)."""
    only_b: int
    a_rate: float
    """A's success rate on the shared items (mean over items of the share of repeats solved)."""
    b_rate: float
    difference: Interval
    """``a_rate - b_rate`` with its bootstrap interval over the shared items."""
    a_only_solved: int | None = None
    """With one repeat each: items A solved and B did not."""
    b_only_solved: int | None = None
    mcnemar_p: float | None = None
    """McNemar's exact two-sided p-value on the discordant items (one repeat each)."""
    passes: dict[str, Interval] = Field(default_factory=dict)
    """With repeats in both runs: ``pass^k`` and ``pass@k`` of A minus B's, in percentage points, with a
    bootstrap interval, over the shared items both tried at least k times; k up to the fewer repeats."""

    def describe(self) -> str:
        """One line for people."""
        line = (
            f"{self.a} - {self.b}: {self.difference.text()} points of success on {self.shared_items} shared items "
            f"({self.a_rate:.1f}% vs {self.b_rate:.1f}%)"
        )
        if self.mcnemar_p is not None:
            line += (
                f"; solved by A only {self.a_only_solved}, by B only {self.b_only_solved}, McNemar p = "
                f"{self.mcnemar_p:.3g}"
            )
        if self.only_a or self.only_b:
            line += f"; left out: {self.only_a} items only A ran, {self.only_b} only B ran"
        if self.passes:
            line += "\n  " + "; ".join(f"{name} {d.text()}" for name, d in self.passes.items()) + " (points, A - B)"
        return line


def _pass_order(name: str) -> tuple[int, int]:
    """``pass^1`` .. ``pass^K``, then ``pass@1`` .. ``pass@K``."""
    return pass_key_order(name) or (2, 0)


def records_csv(records: Sequence[dict[str, Any]]) -> str:
    """Dicts as CSV text, the columns in order of first appearance; every cell (header too) is safe to
    open in a spreadsheet (``csv_cell``: text that starts like a formula is escaped)."""
    columns = list(dict.fromkeys(key for record in records for key in record))
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writerow({column: _cell(column) for column in columns})
    for record in records:
        writer.writerow({key: _cell(value) for key, value in record.items()})
    return buffer.getvalue()


def _cell(value: Any) -> Any:
    """A value as a safe CSV cell: None empty, a carriage return a line break (the writer, ending rows
    with ``\\n``, would leave a bare one unquoted and split the row), formulas escaped (``csv_cell``)."""
    if value is None:
        return ""
    if isinstance(value, str) and "\r" in value:
        value = value.replace("\r\n", "\n").replace("\r", "\n")
    return csv_cell(value)


class _Run:
    """A run's log read once: its start facts, scored episodes by item, and the scorer's mode."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.record = read_run(run_dir)
        log = run_dir / STEP_LOG
        if not log.is_file():
            raise MetricsError(f"{run_dir} has no {STEP_LOG}: pass run directories made by 'lateralgym run'")
        records = list(read_log(log))
        self.metrics = compute_metrics(records)
        tally = MovesTally()
        for record in records:
            tally.add(record)
        self.moves = tally.totals()
        self.constrained = _decoding(records, self.moves)
        self.start = next((r for r in records if isinstance(r, EpisodeStart)), None)
        unit = get_benchmark(self.metrics.benchmark)
        latest: dict[str, EpisodeEnd] = {}
        for record in records:
            if isinstance(record, EpisodeEnd):
                latest[record.episode_id] = record
        self.by_item: dict[str, list[ScoredEpisode]] = {}
        for end in latest.values():
            try:
                outcome = unit.metrics.outcome_of(end.outcome) if end.outcome is not None else None
            except ValidationError:
                outcome = None  # compute_metrics above already refused an unreadable outcome
            self.by_item.setdefault(end.item_id, []).append(
                ScoredEpisode(end.item_id, end.repeat, outcome, end.meta, end.error, end.truncated)
            )

    def succeeded(self, item: str) -> float:
        """The share of the item's repeats that succeeded."""
        episodes = self.by_item[item]
        return sum(e.ok and e.outcome is not None and e.outcome.succeeded() for e in episodes) / len(episodes)

    def tries(self) -> dict[str, list[bool]]:
        """Each item's tries of the benchmark's success, as its scorer counts them (``Scorer.tries``)."""
        scorer = _scorer_of(self.by_item, self.metrics.benchmark, mode=self.metrics.mode, max_turns=DEFAULT_MAX_ROUNDS)
        return dict(zip(scorer.items, scorer.tries(), strict=True))


def _scorer_of(
    by_item: dict[str, list[ScoredEpisode]], benchmark: str, *, mode: str | None, max_turns: int
) -> Scorer[Any, Any]:
    """The benchmark's scorer holding every episode of ``by_item``."""
    scorer = get_benchmark(benchmark).metrics.scorer(mode=mode, max_turns=max_turns)
    for episodes in by_item.values():
        for episode in episodes:
            scorer.add(episode)
    return scorer


Progress = Callable[[int], None]
"""Told how many more resamples are done (a progress bar's ``advance``)."""


def bootstrap_headline(
    by_item: dict[str, list[ScoredEpisode]],
    benchmark: str,
    *,
    mode: str | None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    max_turns: int = DEFAULT_MAX_ROUNDS,
    progress: Progress | None = None,
) -> dict[str, tuple[float, float]]:
    """95 % percentile intervals of every headline metric, resampling items with replacement.

    Each resample draws as many items as the run has and scores them as the benchmark's scorer
    would (a drawn item's repeats stay together; an item drawn twice counts twice). A metric a
    resample cannot compute (no episode of a band drawn) is left out of that resample. When the
    scorer gives its headline as sums over items (``Scorer.headline_terms``), or scores many
    resamples at once from the items' draw counts (``Scorer.headline_resampled``: group accuracies,
    means of band means), a chunk of resamples is scored at once with numpy; otherwise each resample
    is scored by the scorer itself. All see the same draws, so a seed gives the same intervals.
    With repeats, ``pass^k`` and ``pass@k`` (the run's headline adds them) are scored from their
    per-item terms on the same draws.

    Returns:
        Metric name -> (low, high); empty with fewer than two items or ``resamples`` below 1.
    """
    items = list(by_item)
    if len(items) < 2 or resamples < 1:
        return {}
    unit = get_benchmark(benchmark)
    # Each episode is summarised once; a resample reuses the summaries.
    whole = _scorer_of(by_item, benchmark, mode=mode, max_turns=max_turns)
    rng = np.random.default_rng(seed)
    # One draw per resample, in turn, as the scorer-by-scorer bootstrap has always drawn them.
    draws = np.stack([rng.integers(0, len(items), size=len(items)) for _ in range(resamples)])
    headline = [name for name, value in whole.score().headline.items() if _finite(value)]
    terms = whole.headline_terms()
    position = {item: n for n, item in enumerate(whole.items)}
    order = np.array([position[item] for item in items])
    values: dict[str, np.ndarray] | None = None
    if terms is not None and all(name in terms for name in headline):
        values = _scored_by_terms({name: terms[name] for name in headline}, order, draws, progress)
    else:
        values = _scored_by_counts(whole, headline, order, draws, progress)
    if values is None:
        values = _scored_one_by_one(unit, whole, items, draws, max_turns, progress)
    # pass^k and pass@k are means over items whatever the scorer's headline is: always from their terms
    passes = pass_k_terms(whole.tries())
    if passes:
        values.update(_scored_by_terms(passes, order, draws, None))
    tail = 100 * (1 - _LEVEL) / 2
    return {
        name: (float(np.percentile(found, tail)), float(np.percentile(found, 100 - tail)))
        for name, found in values.items()
        if len(found)
    }


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and math.isfinite(value)


_CHUNK = 100
"""Resamples scored together: their draw counts are a (chunk x items) matrix."""


def _scored_by_terms(
    terms: dict[str, ItemTerms], order: np.ndarray, draws: np.ndarray, progress: Progress | None
) -> dict[str, np.ndarray]:
    """Each metric on every resample, from the items' draw counts times their terms (one matrix product)."""
    names = list(terms)
    columns: list[list[float]] = []
    for name in names:
        columns.append(terms[name].numerator)
        columns.append(terms[name].denominator or [1.0] * len(order))
    per_item = np.array(columns, dtype=float).T[order]  # items (in draw order) x 2 columns per metric
    n_items = len(order)
    sums = []
    for start in range(0, len(draws), _CHUNK):
        chunk = draws[start : start + _CHUNK]
        rows = np.repeat(np.arange(len(chunk)), n_items)
        counts = np.bincount(rows * n_items + chunk.ravel(), minlength=len(chunk) * n_items)
        sums.append(counts.reshape(len(chunk), n_items).astype(float) @ per_item)
        if progress is not None:
            progress(len(chunk))
    total = np.concatenate(sums)
    values: dict[str, np.ndarray] = {}
    for k, name in enumerate(names):
        numerator, denominator = total[:, 2 * k], total[:, 2 * k + 1]
        if terms[name].denominator is None:
            values[name] = terms[name].scale * numerator
        else:
            defined = denominator != 0
            values[name] = terms[name].scale * numerator[defined] / denominator[defined]
    return values


def _scored_by_counts(
    whole: Scorer[Any, Any], headline: list[str], order: np.ndarray, draws: np.ndarray, progress: Progress | None
) -> dict[str, np.ndarray] | None:
    """Each metric on every resample by the scorer's ``headline_resampled`` from the items' draw
    counts, a chunk of resamples at a time; None when the scorer does not give them all."""
    n_items = len(order)
    found: dict[str, list[np.ndarray]] = {name: [] for name in headline}
    for start in range(0, len(draws), _CHUNK):
        chunk = order[draws[start : start + _CHUNK]]  # positions in the scorer's item order
        rows = np.repeat(np.arange(len(chunk)), n_items)
        counts = np.bincount(rows * n_items + chunk.ravel(), minlength=len(chunk) * n_items)
        scored = whole.headline_resampled(counts.reshape(len(chunk), n_items).astype(float))
        if scored is None or not all(name in scored for name in headline):
            return None
        for name in headline:
            found[name].append(scored[name])
        if progress is not None:
            progress(len(chunk))
    values = {name: np.concatenate(parts) for name, parts in found.items()}
    return {name: value[~np.isnan(value)] for name, value in values.items()}


def _scored_one_by_one(
    unit: Benchmark[Any, Any],
    whole: Scorer[Any, Any],
    items: list[str],
    draws: np.ndarray,
    max_turns: int,
    progress: Progress | None,
) -> dict[str, np.ndarray]:
    """Each metric on every resample, by the benchmark's scorer on each resample in turn."""
    found: dict[str, list[float]] = {}
    for done, draw in enumerate(draws, start=1):
        scorer = unit.metrics.scorer(mode=whole.mode, max_turns=max_turns)
        for n, index in enumerate(draw):
            key = f"{items[index]}~{n}"
            scorer.items[key], scorer.info[key] = whole.items[items[index]], whole.info[items[index]]
        for name, value in scorer.score().headline.items():
            if _finite(value):
                found.setdefault(name, []).append(float(value))
        if progress is not None and (done % 10 == 0 or done == len(draws)):
            progress(10 if done % 10 == 0 else done % 10)
    return {name: np.array(values) for name, values in found.items()}


def _row(run: _Run, resamples: int, seed: int, progress: Progress | None = None) -> RunRow:
    metrics, manifest, start = run.metrics, run.record.manifest, run.start
    intervals = bootstrap_headline(
        run.by_item, metrics.benchmark, mode=metrics.mode, resamples=resamples, seed=seed, progress=progress
    )
    options = manifest.options if manifest else None
    return RunRow(
        run_dir=str(run.run_dir),
        run_id=(manifest.run_id if manifest else "") or run.run_dir.name,
        benchmark=metrics.benchmark,
        mode=metrics.mode,
        config=(manifest.config if manifest else "") or (start.config if start else ""),
        player=(options.player if options else None) or (start.player if start else ""),
        judge=(options.judge if options else None) or (start.judge if start else ""),
        judge_agreement=judge_agreement(run.record, metrics.benchmark, short=True) or "",
        dataset=manifest.dataset if manifest else "",
        created=manifest.created if manifest else "",
        episodes=metrics.episodes,
        errored=metrics.errored,
        planned=run.record.planned,
        items=metrics.items,
        repeats=metrics.repeats,
        constrained=run.constrained,
        invalid_rate=run.moves.invalid_rate if run.moves.total else None,
        metrics={
            name: Interval(
                value=value, low=intervals.get(name, (None, None))[0], high=intervals.get(name, (None, None))[1]
            )
            for name, value in metrics.headline.items()
        },
    )


def _decoding(records: Sequence[object], moves: Moves) -> str:
    """``RunRow.constrained`` of a log: the modes its LLM player's replies were decoded under."""
    model_moves = sum(1 for r in records if isinstance(r, StepLine) and r.agent == "player" and r.llm is not None)
    if not model_moves:
        return ""
    modes = list(moves.constrained)
    if model_moves > sum(moves.constrained.values()):
        modes.append("off")
    return "+".join(modes)


def run_dirs_under(paths: Sequence[str | Path]) -> list[Path]:
    """The run directories named: each path is one, or a folder whose children are runs (``runs/``)."""
    found: list[Path] = []
    for path in map(Path, paths):
        if (path / STEP_LOG).is_file() or not path.is_dir():
            found.append(path)
        else:
            found += sorted(child for child in path.iterdir() if (child / STEP_LOG).is_file())
    return list(dict.fromkeys(found))


def leaderboard(
    run_dirs: Sequence[str | Path],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> Leaderboard:
    """Every run as a row with bootstrap intervals, in boards of like with like (``Leaderboard.boards``),
    best first on each by its benchmark's first headline metric for one try (``Leaderboard.ranked_on``).

    Args:
        run_dirs: run directories, or folders holding runs (``runs/``).
        resamples: bootstrap resamples per run (0: no intervals).
        seed: seed of the resampling (the same seed gives the same intervals).
        progress: told (work done, total work) as runs are read and resampled (a progress bar's
            ``update``); a run read counts as one resample's work.

    Raises:
        MetricsError: a directory is not a run or its log holds no episodes.
    """
    dirs = run_dirs_under(run_dirs)
    if not dirs:
        raise MetricsError(f"no run directories in {', '.join(map(str, run_dirs))}")
    total = len(dirs) * (resamples + 1)
    done = 0

    def advance(amount: int) -> None:
        nonlocal done
        done += amount
        if progress is not None:
            progress(done, total)

    rows = []
    for number, run_dir in enumerate(dirs, start=1):
        run = _Run(run_dir)
        advance(1)
        rows.append(_row(run, resamples, seed, advance))
        advance(number * (resamples + 1) - done)  # a run of one item draws nothing
    board = Leaderboard(rows=rows, resamples=resamples)
    order = list(dict.fromkeys(r.board for r in rows))
    firsts = {row.benchmark: board.ranked_on(row.benchmark) for row in rows}

    def key(row: RunRow) -> tuple[int, float]:
        one_try = row.one_try()
        first = firsts[row.benchmark]
        value = one_try[first].value if first in one_try else -math.inf
        return order.index(row.board), -value

    return board.model_copy(update={"rows": sorted(board.rows, key=key)})


def mcnemar_exact(a_only: int, b_only: int) -> float:
    """McNemar's exact two-sided p-value: the discordant pairs against a fair coin (binomial, p = 1/2)."""
    n = a_only + b_only
    if n == 0:
        return 1.0
    # as an exact fraction: 2**n overflows a float past ~1,000 discordant items
    tail = Fraction(sum(math.comb(n, k) for k in range(min(a_only, b_only) + 1)), 2**n)
    return min(1.0, float(2 * tail))


def paired_difference(
    a: str | Path, b: str | Path, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
) -> PairedDifference:
    """Run ``a`` minus run ``b`` in success rate on the items both ran, with a bootstrap interval.

    Raises:
        MetricsError: the runs are of different benchmarks or share no item.
    """
    first, second = _Run(Path(a)), _Run(Path(b))
    if first.metrics.benchmark != second.metrics.benchmark:
        raise MetricsError(
            f"{a} is a {first.metrics.benchmark} run and {b} a {second.metrics.benchmark} run: "
            "pair runs of one benchmark"
        )
    shared = sorted(set(first.by_item) & set(second.by_item))
    if not shared:
        raise MetricsError(f"{a} and {b} share no item: run both on the same dataset to pair them")
    diffs = np.array([first.succeeded(i) - second.succeeded(i) for i in shared]) * 100
    result = PairedDifference(
        a=Path(a).name,
        b=Path(b).name,
        shared_items=len(shared),
        only_a=len(set(first.by_item) - set(shared)),
        only_b=len(set(second.by_item) - set(shared)),
        a_rate=100 * float(np.mean([first.succeeded(i) for i in shared])),
        b_rate=100 * float(np.mean([second.succeeded(i) for i in shared])),
        difference=_paired_interval(diffs, resamples, seed),
        passes=_paired_passes(first.tries(), second.tries(), shared, resamples, seed),
    )
    if first.metrics.repeats == 1 and second.metrics.repeats == 1:
        a_only = int(sum(d > 0 for d in diffs))
        b_only = int(sum(d < 0 for d in diffs))
        p = mcnemar_exact(a_only, b_only)
        result = result.model_copy(update={"a_only_solved": a_only, "b_only_solved": b_only, "mcnemar_p": float(p)})
    return result


def _paired_interval(diffs: np.ndarray, resamples: int, seed: int) -> Interval:
    """The mean of per-item differences with its 95 % percentile bootstrap interval over the items
    (no interval for one item or no resamples)."""
    low = high = None
    if len(diffs) > 1 and resamples > 0:
        rng = np.random.default_rng(seed)
        means = diffs[rng.integers(0, len(diffs), size=(resamples, len(diffs)))].mean(axis=1)
        tail = 100 * (1 - _LEVEL) / 2
        low, high = float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))
    return Interval(value=float(diffs.mean()), low=low, high=high)


def _paired_passes(
    a: dict[str, list[bool]], b: dict[str, list[bool]], shared: list[str], resamples: int, seed: int
) -> dict[str, Interval]:
    """``pass^k`` and ``pass@k`` of A minus B's per shared item (percentage points), each over the items
    both runs tried at least k times; empty unless both tried some item twice."""
    ours, theirs = pass_k_terms([a[i] for i in shared]), pass_k_terms([b[i] for i in shared])
    out: dict[str, Interval] = {}
    for name, terms in ours.items():
        other = theirs.get(name)
        if other is None or terms.denominator is None or other.denominator is None:
            continue
        both = [n for n in range(len(shared)) if terms.denominator[n] and other.denominator[n]]
        if both:
            diffs = np.array([terms.numerator[n] - other.numerator[n] for n in both]) * 100
            out[name] = _paired_interval(diffs, resamples, seed)
    return out
