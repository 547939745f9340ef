"""What a run's episodes did, tallied in one pass over its log for ``summary.json``: how valid the
player's moves were (``moves``) and the model usage per role (``llm_usage``).

A move is one player step of the log. It is *invalid* when the env could not use it (an unreadable
reply, an action the config does not allow, a name not in the scene); *re-asked* when the LLM player
asked again for the format before it (``ModelCall.format_reasks``); *fallback* when a reply still
unreadable was read by the benchmark's fallback; *constrained* by the mode its reply was decoded under
(``grammar``, ``json_schema``). Model usage is summed from each episode's last end record. An episode
run again after a resume counts once, by its last run.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from lateralgym.episodes._log import EpisodeEnd, EpisodeStart, StepLine, Usage, read_log

if TYPE_CHECKING:
    from lateralgym.episodes._metrics import RunMetrics

__all__ = ["INVALID_WARNING_RATE", "Moves", "MovesTally", "UsageTally", "metrics_and_usage", "usage_from_log"]

INVALID_WARNING_RATE = 0.10
"""Above this share of invalid moves, a report leads with the run's validity."""


class Moves(BaseModel):
    """The validity of a run's player moves."""

    total: int = 0
    """Player moves (steps) in the log."""
    invalid: int = 0
    """Moves the env could not use (each cost a turn)."""
    invalid_rate: float = 0.0
    """``invalid / total`` (0 without moves): the run's validity in one number."""
    reasked: int = 0
    """Moves whose first reply was unreadable and re-asked for the format (at least once)."""
    fallback: int = 0
    """Moves read by the benchmark's fallback from a reply still unreadable after the re-asks."""
    constrained: dict[str, int] = Field(default_factory=dict)
    """Moves whose reply was decoded under a constraint, by mode (``grammar``, ``json_schema``)."""

    @property
    def alarming(self) -> bool:
        """More than ``INVALID_WARNING_RATE`` of the moves were invalid."""
        return self.invalid_rate > INVALID_WARNING_RATE

    def line(self) -> str:
        """``moves: 26, invalid 2 (7.7 %), re-asked 3, fallback 1, constrained: grammar 26``."""
        text = f"moves: {self.total}, invalid {self.invalid} ({100 * self.invalid_rate:.1f} %)"
        text += f", re-asked {self.reasked}, fallback {self.fallback}"
        if self.constrained:
            text += ", constrained: " + ", ".join(f"{mode} {n}" for mode, n in self.constrained.items())
        return text


class MovesTally:
    """Counts ``Moves`` over a stream of log records (others are ignored); an episode's last run counts."""

    def __init__(self) -> None:
        self._episodes: dict[str, tuple[int, int, int, int, tuple[tuple[str, int], ...]]] = {}

    def add(self, record: object) -> None:
        """Note one record of the log."""
        if isinstance(record, EpisodeStart):
            self._episodes[record.episode_id] = (0, 0, 0, 0, ())  # a rerun starts its count afresh
        elif isinstance(record, StepLine) and record.agent == "player":
            total, invalid, reasked, fallback, constrained = self._episodes.get(record.episode_id, (0, 0, 0, 0, ()))
            call = record.llm
            modes = Counter(dict(constrained))
            if call is not None and call.constrained:
                modes[call.constrained] += 1
            self._episodes[record.episode_id] = (
                total + 1,
                invalid + (not record.valid),
                reasked + bool(call is not None and call.format_reasks),
                fallback + bool(call is not None and call.fallback),
                tuple(modes.items()),
            )

    def totals(self) -> Moves:
        """The moves of every episode noted."""
        total = invalid = reasked = fallback = 0
        modes: Counter[str] = Counter()
        for t, i, r, f, c in self._episodes.values():
            total, invalid, reasked, fallback = total + t, invalid + i, reasked + r, fallback + f
            modes.update(dict(c))
        rate = round(invalid / total, 4) if total else 0.0
        return Moves(
            total=total, invalid=invalid, invalid_rate=rate, reasked=reasked, fallback=fallback, constrained=dict(modes)
        )


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
