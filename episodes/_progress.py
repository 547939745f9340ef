"""A rich progress bar for runs: episodes done, rate, model calls and tokens per second, ETA and the
running score."""

from __future__ import annotations

import time
from collections.abc import Sequence
from types import TracebackType
from typing import Any

from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from lateralgym.envs import get_benchmark
from lateralgym.episodes._log import EpisodeEnd

_RATE_EVERY_S = 0.5
"""How often the shown rate is recomputed (rich's ``Task.speed`` sums every sample of its window)."""


def episode_score(end: EpisodeEnd) -> float:
    """1.0 when the episode succeeded by its benchmark's outcome (gold correct / correct / solved)."""
    if end.error or end.outcome is None:
        return 0.0
    return 1.0 if get_benchmark(end.benchmark).metrics.outcome_of(end.outcome).succeeded() else 0.0


class CallsColumn(ProgressColumn):
    """Model calls answered so far and the tokens written per second since the run began, read from the
    clients' usage meters at each redraw (a long episode shows its calls as they happen)."""

    def __init__(self, meters: Sequence[Any]) -> None:
        super().__init__()
        self.meters = list(meters)
        self.started = time.monotonic()

    def render(self, task: Task) -> Text:
        calls = written = 0
        for meter in self.meters:
            summary = meter.summary()
            calls += summary.calls
            written += summary.completion_tokens
        elapsed = max(time.monotonic() - self.started, 1e-6)
        return Text(f"{calls} calls, {written / elapsed:.1f} tok/s")


def _per_second(speed: float) -> str:
    """``171 ep/s``, ``2.45 ep/s``, ``0.0312 ep/s``: three figures at most, short enough for an 80-column bar."""
    return f"{speed:.0f} ep/s" if speed >= 100 else f"{speed:.3g} ep/s"


class RunProgress:
    """Context manager around ``rich.progress.Progress``; disabled when ``enabled`` is False.

    ``meters`` (the model clients' ``UsageMeter``s) add a column of calls and tokens per second.
    """

    def __init__(
        self, total: int, done: int = 0, label: str = "episodes", enabled: bool = True, meters: Sequence[Any] = ()
    ) -> None:
        self.enabled = enabled
        calls: list[ProgressColumn] = [CallsColumn(meters)] if meters else []
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(bar_width=None),  # whatever width the other columns leave, so the line fits 80 columns
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            *calls,
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("score {task.fields[score]}"),
            disable=not enabled,
            transient=False,
        )
        self.task = self.progress.add_task(label, total=total, completed=done, score="-", rate="")
        self._rate, self._rate_at = "", -_RATE_EVERY_S
        self.solved = 0.0
        self.finished = 0
        self.errors = 0

    def advance(self, end: EpisodeEnd) -> None:
        """Count a finished episode and update the running score (a disabled bar counts only, as
        nothing shows the score: reading each outcome was ~1.5 % of a one-call episode's CPU)."""
        self.finished += 1
        self.errors += end.error is not None
        if not self.enabled:
            return
        self.solved += episode_score(end)  # running sums: no re-summing per episode
        score = f"{100 * self.solved / self.finished:.1f}%"
        if self.errors:
            score += f" ({self.errors} errored)"
        now = time.monotonic()
        if now - self._rate_at >= _RATE_EVERY_S:  # rich's speed sums its recent samples: not every episode
            task = self.progress.tasks[0]
            self._rate = _per_second(task.speed) if task.speed else ""
            self._rate_at = now
        self.progress.update(self.task, advance=1, score=score, rate=self._rate)

    def __enter__(self) -> RunProgress:
        self.progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.progress.stop()
