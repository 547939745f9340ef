"""Model usage per role summed from a step log (the last end record of each episode counting), and
a run's metrics with its usage in one pass over the log."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from lateralgym.episodes._log import EpisodeEnd, Usage, read_log
from lateralgym.episodes._moves import MovesTally

if TYPE_CHECKING:
    from lateralgym.episodes._metrics import RunMetrics

__all__ = ["UsageTally", "metrics_and_usage", "usage_from_log"]


class UsageTally:
    """Model usage per role over a stream of episode ends, the last end of each episode counting.

    Each episode's usage is kept as a tuple of numbers (not its ``EpisodeEnd``, which carries the
    whole outcome), so a report over a million-line log stays small."""

    _FIELDS = tuple(Usage.model_fields)

    def __init__(self) -> None:
        self._latest: dict[str, tuple[tuple[str, tuple[Any, ...]], ...]] = {}

    def add(self, record: object) -> None:
        """Note ``record`` if it is an episode end (others are ignored)."""
        if isinstance(record, EpisodeEnd):
            self._latest[record.episode_id] = tuple(
                (role, tuple(getattr(usage, name) for name in self._FIELDS)) for role, usage in record.usage.items()
            )

    def totals(self) -> dict[str, Usage]:
        """The usage per role summed over the episodes noted."""
        totals: dict[str, Usage] = {}
        for roles in self._latest.values():
            for role, values in roles:
                totals.setdefault(role, Usage()).merge(
                    Usage.model_construct(**dict(zip(self._FIELDS, values, strict=True)))
                )
        return totals


def usage_from_log(log_path: Path) -> dict[str, Usage]:
    """Model usage per role over every episode end of a step log (the last record of each episode)."""
    tally = UsageTally()
    if log_path.exists():
        for record in read_log(log_path):
            tally.add(record)
    return tally.totals()


def metrics_and_usage(log_path: Path, moves: MovesTally | None = None) -> tuple[RunMetrics, dict[str, Usage]]:
    """The run's metrics and its model usage per role, in one pass over the step log (which also
    counts the player's ``moves`` when a tally is given).

    Raises:
        MetricsError: the log does not exist or holds no episodes.
        LogError: a line other than the last is not a valid record.
    """
    from lateralgym.episodes._metrics import metrics_from_log

    tally = UsageTally()

    def note(record: object) -> None:
        tally.add(record)
        if moves is not None:
            moves.add(record)

    metrics = metrics_from_log(log_path, on_record=note)
    return metrics, tally.totals()
