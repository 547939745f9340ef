"""What every benchmark's scorer shares: per-item repeat bookkeeping, rates, exploration counts.

A scorer keeps, for each item, its info (factors, group, band) and one compact summary per repeat;
that is the only state the papers' definitions need (best-of-R looks across an item's repeats,
group accuracy across a group's items). Keying summaries by ``(item, repeat)`` also makes a
re-run episode (a retried error after a resume) replace the earlier record instead of counting twice.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from lateralgym.episodes._log import EpisodeEnd

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the item-info type parameter


@dataclass
class Scored:
    """A scorer's result, before the accumulator adds the run's counts."""

    headline: dict[str, float] = field(default_factory=dict)
    breakdowns: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    exploration: dict[str, float] = field(default_factory=dict)


def pct(num: float, den: float) -> float | None:
    """``100 * num / den``; None when there is nothing to divide by."""
    return None if den == 0 else 100.0 * num / den


def mean(values: Iterable[float]) -> float | None:
    """The arithmetic mean; None for no values."""
    total, count = 0.0, 0
    for value in values:
        total += value
        count += 1
    return None if count == 0 else total / count


def suffixed(name: str, repeats: int) -> tuple[str, str]:
    """The best-of and mean-of names of a metric under ``repeats`` repeats."""
    return f"{name}_best_of_{repeats}", f"{name}_mean_of_{repeats}"


def put(target: dict[str, Any], name: str, best: float | None, plain: float | None, repeats: int) -> None:
    """Store a repeat-sensitive metric: both variants when ``repeats > 1``, else the plain value.

    None values are left out, so a table shows a blank rather than a made-up number.
    """
    if repeats > 1:
        best_name, mean_name = suffixed(name, repeats)
        if best is not None:
            target[best_name] = best
        if plain is not None:
            target[mean_name] = plain
    elif plain is not None:
        target[name] = plain


def put_plain(target: dict[str, Any], name: str, value: float | None) -> None:
    """Store a metric that does not depend on repeats, unless it is undefined."""
    if value is not None:
        target[name] = value


def success_rates(per_item: Sequence[Sequence[bool]]) -> tuple[float | None, float | None]:
    """(best-of-R, mean-of-R) success rates in percent over items' repeat outcomes.

    Best-of-R: an item counts when any repeat succeeded, over items. Mean-of-R: the plain rate
    over all episodes.
    """
    items = [outcomes for outcomes in per_item if outcomes]
    best = pct(sum(any(outcomes) for outcomes in items), len(items))
    plain = pct(sum(sum(outcomes) for outcomes in items), sum(len(outcomes) for outcomes in items))
    return best, plain


def lookup(end: EpisodeEnd, key: str) -> Any:
    """``key`` from the outcome, else from the episode's public metadata (an errored end may have no outcome)."""
    if key in end.outcome:
        return end.outcome[key]
    return end.meta.get(key)


def count(end: EpisodeEnd, key: str, default: int = 0) -> int:
    """An integer count from the outcome."""
    value = end.outcome.get(key, default)
    return int(value) if isinstance(value, int | float) else default


@dataclass(frozen=True, slots=True)
class Exploration:
    """How one interactive episode explored, from its outcome."""

    questions: int
    yes: int | None
    no: int | None
    irrelevant: int | None
    repeated: int | None
    invalid: int
    turns_before_commit: int | None
    """Turns spent before the episode's final commit; None when it never committed."""


def exploration_of(end: EpisodeEnd, committed: bool) -> Exploration:
    """Read the exploration counts an outcome carries (answer labels only when the env reports them)."""
    outcome = end.outcome

    def optional(key: str) -> int | None:
        value = outcome.get(key)
        return int(value) if isinstance(value, int | float) else None

    first_commit = optional("first_commit_turn")
    before: int | None = None
    if first_commit is not None:
        before = first_commit - 1
    elif committed:
        before = max(end.turns - 1, 0)
    return Exploration(
        questions=count(end, "questions", count(end, "asks")),
        yes=optional("yes"),
        no=optional("no"),
        irrelevant=optional("irrelevant"),
        repeated=optional("repeated_questions"),
        invalid=count(end, "invalid_actions"),
        turns_before_commit=before,
    )


def summarise_exploration(rows: Sequence[Exploration]) -> dict[str, float]:
    """Means per episode and answer-label shares (percent of questions asked)."""
    out: dict[str, float] = {}
    put_plain(out, "mean_questions", mean(r.questions for r in rows))
    labelled = [r for r in rows if r.yes is not None and r.no is not None and r.irrelevant is not None]
    asked = sum(r.questions for r in labelled)
    put_plain(out, "yes_ratio", pct(sum(r.yes or 0 for r in labelled), asked))
    put_plain(out, "no_ratio", pct(sum(r.no or 0 for r in labelled), asked))
    put_plain(out, "irrelevant_ratio", pct(sum(r.irrelevant or 0 for r in labelled), asked))
    counted = [r for r in rows if r.repeated is not None]
    put_plain(out, "mean_repeated_questions", mean(r.repeated or 0 for r in counted))
    put_plain(
        out, "repeated_question_rate", pct(sum(r.repeated or 0 for r in counted), sum(r.questions for r in counted))
    )
    put_plain(out, "mean_invalid_actions", mean(r.invalid for r in rows))
    put_plain(
        out,
        "mean_turns_before_commit",
        mean(r.turns_before_commit for r in rows if r.turns_before_commit is not None),
    )
    return out


class Scorer(Generic[S, I]):
    """Collects one benchmark's episodes: each item's info and one summary per repeat."""

    def __init__(self, *, mode: str | None = None, max_turns: int = 15) -> None:
        self.mode = mode
        self.max_turns = max_turns
        self.items: dict[str, dict[int, S]] = {}
        self.info: dict[str, I] = {}
        self._info_from_error: set[str] = set()

    def add(self, end: EpisodeEnd) -> None:
        """Record one episode; a later record of the same (item, repeat) replaces the earlier one."""
        self.items.setdefault(end.item_id, {})[end.repeat] = self.summarise(end)
        # An errored end carries only metadata: prefer the info of a finished episode.
        if end.item_id not in self.info or (end.item_id in self._info_from_error and end.error is None):
            self.info[end.item_id] = self.describe(end)
            if end.error is not None:
                self._info_from_error.add(end.item_id)
            else:
                self._info_from_error.discard(end.item_id)

    def summarise(self, end: EpisodeEnd) -> S:
        """The compact outcome of one episode."""
        raise NotImplementedError

    def describe(self, end: EpisodeEnd) -> I:
        """The item's info (grouping keys) as this episode reports it."""
        raise NotImplementedError

    def score(self) -> Scored:
        """Turn what was collected into metrics."""
        raise NotImplementedError

    @property
    def repeats(self) -> int:
        """R: the most repeats recorded for any item."""
        return max((len(r) for r in self.items.values()), default=0)

    def episodes(self) -> Iterator[S]:
        """Every recorded episode's summary."""
        for repeats in self.items.values():
            yield from repeats.values()

    def per_item(self, test: Callable[[S], bool], items: Iterable[str] | None = None) -> list[list[bool]]:
        """For each item (all, or those given), ``test`` applied to each of its repeats."""
        keys = self.items if items is None else items
        return [[test(s) for s in self.items[k].values()] for k in keys if k in self.items]
