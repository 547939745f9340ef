"""A rich progress bar for runs: episodes done, rate, ETA and the running score."""

from __future__ import annotations

from types import TracebackType

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from lateralgym.episodes._log import EpisodeEnd


def episode_score(end: EpisodeEnd) -> float:
    """1.0 when the episode was answered correctly (gold correct / correct choice / solved)."""
    outcome = end.outcome
    key = {"creativity": "gold_correct", "brainteaser": "correct", "splat": "solved"}.get(end.benchmark, "correct")
    return 1.0 if outcome.get(key) and not end.error else 0.0


class RunProgress:
    """Context manager around ``rich.progress.Progress``; disabled when ``enabled`` is False."""

    def __init__(self, total: int, done: int = 0, label: str = "episodes", enabled: bool = True) -> None:
        self.progress = Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[rate]}"),
            TimeElapsedColumn(),
            TimeRemainingColumn(),
            TextColumn("score {task.fields[score]}"),
            disable=not enabled,
            transient=False,
        )
        self.task = self.progress.add_task(label, total=total, completed=done, score="-", rate="")
        self.scores: list[float] = []
        self.errors = 0

    def advance(self, end: EpisodeEnd) -> None:
        """Count a finished episode and update the running score."""
        self.scores.append(episode_score(end))
        self.errors += end.error is not None
        score = f"{100 * sum(self.scores) / len(self.scores):.1f}%"
        if self.errors:
            score += f" ({self.errors} errored)"
        task = self.progress.tasks[0]
        rate = f"{task.speed:.2f} ep/s" if task.speed else ""
        self.progress.update(self.task, advance=1, score=score, rate=rate)

    def __enter__(self) -> RunProgress:
        self.progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.progress.stop()
