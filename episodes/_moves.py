"""How valid a run's player moves were, in one number: ``summary.json``'s ``moves``.

A move is one player step of the log. It is *invalid* when the env could not use it (an unreadable
reply, an action the config does not allow, a name not in the scene); *re-asked* when the LLM player
asked again for the format before it (``ModelCall.format_reasks``); *fallback* when a reply still
unreadable was read by the benchmark's fallback; *constrained* by the mode its reply was decoded under
(``grammar``, ``json_schema``). An episode run again after a resume counts once, by its last run.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel, Field

from lateralgym.episodes._log import EpisodeStart, StepLine

__all__ = ["INVALID_WARNING_RATE", "Moves", "MovesTally"]

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
