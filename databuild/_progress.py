"""Progress bars per stage and the end-of-build summary table (rich), shared by the data pipelines."""

from __future__ import annotations

from collections.abc import Iterable
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from lateralgym.databuild._cost import format_cost
from lateralgym.databuild._llm import StageCounters

__all__ = ["StageProgress", "counters_table"]


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
    """A table of every stage's counters, with a total row."""
    table = Table(title=title)
    columns = ("calls", "cached", "written", "retried", "invalid_skipped", "errored", "prompt_tokens")
    table.add_column("stage")
    for column in (*columns, "completion_tokens", "cost"):
        table.add_column(column.replace("_", " "), justify="right")
    rows = list(counters)
    for row in rows:
        values = [str(getattr(row, column)) for column in (*columns, "completion_tokens")]
        table.add_row(row.stage, *values, format_cost(row.cost_usd) if row.calls else "-")
    totals = [str(sum(getattr(row, column) for row in rows)) for column in (*columns, "completion_tokens")]
    costs = [row.cost_usd for row in rows if row.calls]
    total_cost = None if any(cost is None for cost in costs) else sum(cost or 0.0 for cost in costs)
    table.add_row("total", *totals, format_cost(total_cost), style="bold")
    return table
