"""Progress bars per stage and the end-of-build summary table (rich), shared by the data pipelines."""

from __future__ import annotations

from collections.abc import Iterable
from types import TracebackType

from rich import box
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from lateralgym.databuild._cost import format_cost
from lateralgym.databuild._llm import StageCounters

__all__ = ["StageProgress", "counters_table", "invalid_reasons"]


class StageProgress:
    """One progress bar per stage, whose total grows as a stage discovers its work.

    Disabled (every method a no-op) when ``enabled`` is false: tests and pipes get the summary only.

    Args:
        console: Where to draw (default: stderr).
        enabled: Whether to draw at all.
    """

    def __init__(self, console: Console | None = None, *, enabled: bool = True) -> None:
        self.console = console if console is not None else Console(stderr=True)
        self.enabled = enabled
        self._progress = Progress(
            TextColumn("{task.description:<12}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            disable=not enabled,
            transient=False,
        )
        self._tasks: dict[str, TaskID] = {}

    def stage(self, name: str) -> None:
        """Show a bar for ``name`` (idempotent), empty until work is added."""
        if name not in self._tasks:
            self._tasks[name] = self._progress.add_task(name, total=0)

    def add(self, name: str, count: int = 1) -> None:
        """``count`` more units of work for stage ``name``."""
        self.stage(name)
        task = self._tasks[name]
        total = self._progress.tasks[self._index(task)].total or 0
        self._progress.update(task, total=total + count)

    def done(self, name: str, count: int = 1) -> None:
        """``count`` units of stage ``name`` finished (cached, written or given up)."""
        self.stage(name)
        self._progress.advance(self._tasks[name], count)

    def _index(self, task: TaskID) -> int:
        return next(i for i, t in enumerate(self._progress.tasks) if t.id == task)

    def __enter__(self) -> StageProgress:
        self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._progress.stop()


def counters_table(counters: Iterable[StageCounters], *, title: str = "Build summary") -> Table:
    """A table of every stage's counters: one column per stage and a total column, one row per counter
    (``skipped``: given up after every re-ask; large counts as ``12.3k`` / ``4.5M``, exact ones are in the
    build's JSON), so it fits an 80-column terminal."""
    rows = list(counters)
    table = Table(title=title, box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True)
    table.add_column("", no_wrap=True)
    for row in rows:
        table.add_column(row.stage, justify="right")
    table.add_column("total", justify="right", style="bold")
    labels = {"invalid_skipped": "skipped", "prompt_tokens": "tokens in", "completion_tokens": "tokens out"}
    names = (
        "calls",
        "cached",
        "written",
        "retried",
        "invalid_skipped",
        "errored",
        "prompt_tokens",
        "completion_tokens",
    )
    for name in names:
        values = [getattr(row, name) for row in rows]
        table.add_row(labels.get(name, name), *(_count(v) for v in values), _count(sum(values)))
    costs = [row.cost_usd if row.calls else 0.0 for row in rows]
    total_cost = None if any(cost is None for cost in costs) else sum(cost or 0.0 for cost in costs)
    table.add_row(
        "cost",
        *(format_cost(c) if row.calls else "-" for c, row in zip(costs, rows, strict=True)),
        format_cost(total_cost),
    )
    return table


def invalid_reasons(counters: Iterable[StageCounters], most: int = 3) -> list[str]:
    """One line per stage that had invalid replies: its ``most`` commonest first problems, counted
    (``build.json`` keeps them all)."""
    lines = []
    for row in counters:
        if row.invalid_reasons:
            common = sorted(row.invalid_reasons.items(), key=lambda kv: (-kv[1], kv[0]))[:most]
            lines.append(f"{row.stage}: invalid replies: " + "; ".join(f"{n}x {reason}" for reason, n in common))
    return lines


def _count(value: int) -> str:
    """A count in at most six characters: ``999``, ``12,345``, ``123.4k``, ``12.3M``."""
    if value >= 1_000_000:
        return f"{value / 1_000_000:.1f}M"
    if value >= 100_000:
        return f"{value / 1_000:.1f}k"
    return f"{value:,}"
