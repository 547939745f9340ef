"""What every benchmark's scorer shares: per-item repeat bookkeeping, rates, exploration counts.

A scorer keeps, for each item, its info (factors, group, band) and one compact summary per repeat;
that is the only state the papers' definitions need (best-of-R looks across an item's repeats,
group accuracy across a group's items). Keying summaries by ``(item, repeat)`` also makes a
re-run episode (a retried error after a resume) replace the earlier record instead of counting twice.

Scorers read ``ScoredEpisode`` records whose outcome is the benchmark's typed ``Outcome``: the
episodes layer validates each logged outcome before it gets here, so a missing field is an error,
never a silent 0 %.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from lateralgym.envs._benchmark import Outcome

if TYPE_CHECKING:
    import numpy as np

if TYPE_CHECKING:
    from lateralgym.envs._benchmark import Benchmark

S = TypeVar("S")
I = TypeVar("I")  # noqa: E741 - the item-info type parameter


@dataclass
class Scored:
    """A scorer's result, before the accumulator adds the run's counts."""

    headline: dict[str, float] = field(default_factory=dict)
    breakdowns: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    exploration: dict[str, float] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    """What a reader of these numbers must know (a paper's average over a subset that lacks a part):
    one line each, printed with the metrics and written into the report and ``summary.json``."""


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


@dataclass(frozen=True, slots=True)
class ItemTerms:
    """A headline metric as sums over items: ``scale * sum(numerator) / sum(denominator)``, or
    ``sum(numerator)`` alone (a count) without a denominator; each list holds one number per item,
    in the order of ``Scorer.items``.

    A metric of this form is scored on a bootstrap resample (items drawn with replacement) from the
    items' draw counts alone, so every resample is scored at once (``Scorer.headline_terms``). It is
    undefined on a resample whose denominator sums to 0, as the scorer leaves it out there.
    """

    numerator: list[float]
    denominator: list[float] | None = None
    scale: float = 1.0

    def value(self) -> float | None:
        """The metric over every item once: ``scale * sum(numerator) / sum(denominator)``, None when the
        denominator sums to 0; ``scale * sum(numerator)`` without a denominator."""
        if self.denominator is None:
            return self.scale * sum(self.numerator)
        bottom = sum(self.denominator)
        return None if bottom == 0 else self.scale * sum(self.numerator) / bottom


def rate_terms(target: dict[str, ItemTerms], name: str, per_item: Sequence[Sequence[bool]], repeats: int) -> None:
    """``put(target, name, *success_rates(per_item), repeats)`` as ``ItemTerms``, one entry of ``per_item`` per item."""
    plain = ItemTerms([float(sum(o)) for o in per_item], [float(len(o)) for o in per_item], 100.0)
    if repeats > 1:
        best_name, mean_name = suffixed(name, repeats)
        target[best_name] = ItemTerms([float(any(o)) for o in per_item], [float(bool(o)) for o in per_item], 100.0)
        target[mean_name] = plain
    else:
        target[name] = plain


def mean_terms(per_item: Sequence[Sequence[float | bool]], scale: float = 1.0) -> ItemTerms:
    """The mean (times ``scale``: 100 for a share in percent) of every value of every item, as ``ItemTerms``."""
    return ItemTerms([float(sum(v)) for v in per_item], [float(len(v)) for v in per_item], scale)


@dataclass(frozen=True, slots=True)
class ScoredEpisode:
    """One finished (or errored) episode as a scorer sees it."""

    item_id: str
    repeat: int
    outcome: Outcome | None
    """The typed outcome; partial when the episode errored, None when it never started."""
    meta: Mapping[str, Any]
    """The item's public metadata (factors, group, band), from the log."""
    error: str | None = None
    """Why the episode could not finish; it counts as unsolved."""
    truncated: bool = False
    """The episode ran out of turns."""

    @property
    def ok(self) -> bool:
        """Finished without an error."""
        return self.error is None and self.outcome is not None

    @property
    def turns(self) -> int:
        """Turns taken (0 when the episode never started)."""
        return self.outcome.turns if self.outcome is not None else 0


class ExplorationOutcome(Outcome):
    """An outcome of a mode where the player asks questions: the exploration counts."""

    questions: int
    """Yes/no questions asked."""
    yes: int
    """Questions answered yes."""
    no: int
    """Questions answered no."""
    irrelevant: int
    """Questions answered irrelevant (a scene may count unreadable replies apart, as ``unclear``)."""
    repeated_questions: int
    """Questions asked again word for word."""
    first_commit_turn: int | None
    """The turn of the first graded answer; None when there was none."""


@dataclass(frozen=True, slots=True)
class Exploration:
    """How one interactive episode explored, from its outcome."""

    questions: int
    yes: int
    no: int
    irrelevant: int
    repeated: int
    invalid: int
    turns_before_commit: int | None
    """Turns spent before the episode's first graded answer; None when it never gave one."""


def exploration_of(outcome: ExplorationOutcome) -> Exploration:
    """The exploration counts of an outcome."""
    first = outcome.first_commit_turn
    return Exploration(
        questions=outcome.questions,
        yes=outcome.yes,
        no=outcome.no,
        irrelevant=outcome.irrelevant,
        repeated=outcome.repeated_questions,
        invalid=outcome.invalid_actions,
        turns_before_commit=None if first is None else first - 1,
    )


def summarise_exploration(rows: Sequence[Exploration]) -> dict[str, float]:
    """Means per episode and answer-label shares (percent of questions asked)."""
    out: dict[str, float] = {}
    put_plain(out, "mean_questions", mean(r.questions for r in rows))
    asked = sum(r.questions for r in rows)
    put_plain(out, "yes_ratio", pct(sum(r.yes for r in rows), asked))
    put_plain(out, "no_ratio", pct(sum(r.no for r in rows), asked))
    put_plain(out, "irrelevant_ratio", pct(sum(r.irrelevant for r in rows), asked))
    put_plain(out, "mean_repeated_questions", mean(r.repeated for r in rows))
    put_plain(out, "repeated_question_rate", pct(sum(r.repeated for r in rows), asked))
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
        self._succeeded: dict[str, dict[int, bool]] = {}

    def add(self, end: ScoredEpisode) -> None:
        """Record one episode; a later record of the same (item, repeat) replaces the earlier one."""
        self.items.setdefault(end.item_id, {})[end.repeat] = self.summarise(end)
        succeeded = end.ok and end.outcome is not None and end.outcome.succeeded()
        self._succeeded.setdefault(end.item_id, {})[end.repeat] = succeeded
        # An errored end carries only metadata: prefer the info of a finished episode.
        if end.item_id not in self.info or (end.item_id in self._info_from_error and end.ok):
            self.info[end.item_id] = self.describe(end)
            if not end.ok:
                self._info_from_error.add(end.item_id)
            else:
                self._info_from_error.discard(end.item_id)

    def summarise(self, end: ScoredEpisode) -> S:
        """The compact outcome of one episode."""
        raise NotImplementedError

    def describe(self, end: ScoredEpisode) -> I:
        """The item's info (grouping keys) as this episode reports it."""
        raise NotImplementedError

    def score(self) -> Scored:
        """Turn what was collected into metrics."""
        raise NotImplementedError

    def headline_terms(self) -> dict[str, ItemTerms] | None:
        """The headline metrics as sums over items (``ItemTerms``), so a bootstrap scores all its
        resamples at once; None (the default) when they are not all of that form: each resample is
        then scored by ``score``. A scorer that gives terms must give them for every headline metric
        ``score`` reports, with the same values on the same items."""
        return None

    def headline_resampled(self, counts: np.ndarray) -> dict[str, np.ndarray] | None:
        """The headline metrics on a batch of bootstrap resamples at once, for headlines that are not
        sums over items (group accuracies, means of band means): ``counts`` holds how many times each
        item was drawn (resamples x items, the items in ``items`` order); each metric is an array with
        one value per resample, NaN where ``score`` on that resample would leave it out
        (``lateralgym.envs.support`` has the helpers). None (the default) when the scorer cannot:
        each resample is then scored by ``score``. A scorer that gives them must give every headline
        metric ``score`` reports, with the values ``score`` gives each resample."""
        return None

    def tries(self) -> list[list[bool]]:
        """Each item's tries of the benchmark's success (in ``items`` order): whether each of its repeats
        succeeded, which ``pass^k`` and ``pass@k`` are estimated from (``lateralgym.envs._pass_k``).

        By default each episode's ``Outcome.succeeded()``, an errored one failing. A scorer whose
        headline success rate leaves episodes out of its denominator leaves them out here too."""
        return [list(self._succeeded.get(item, {}).values()) for item in self.items]

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


class SuccessScorer(Scorer[bool, None]):
    """The default scorer: success rate (best-of-R and mean-of-R) and mean turns.

    An episode succeeds when its outcome's ``succeeded()`` says so; errored episodes fail.
    """

    def __init__(
        self,
        benchmark: Benchmark[Any, Any],
        *,
        mode: str | None = None,
        max_turns: int = 15,
        metric: str = "success_rate",
    ) -> None:
        super().__init__(mode=mode, max_turns=max_turns)
        self.benchmark = benchmark
        self.metric = metric
        self._turns: dict[tuple[str, int], int] = {}

    def summarise(self, end: ScoredEpisode) -> bool:
        if end.ok:
            self._turns[(end.item_id, end.repeat)] = end.turns
        else:
            self._turns.pop((end.item_id, end.repeat), None)
        return end.ok and end.outcome is not None and end.outcome.succeeded()

    def describe(self, end: ScoredEpisode) -> None:
        return None

    def score(self) -> Scored:
        scored = Scored()
        put(scored.headline, self.metric, *success_rates(self.per_item(lambda ok: ok)), self.repeats)
        put_plain(scored.headline, "mean_turns", mean(float(t) for t in self._turns.values()))
        return scored

    def headline_terms(self) -> dict[str, ItemTerms]:
        terms: dict[str, ItemTerms] = {}
        rate_terms(terms, self.metric, self.per_item(lambda ok: ok), self.repeats)
        turns = [[self._turns[(k, r)] for r in repeats if (k, r) in self._turns] for k, repeats in self.items.items()]
        terms["mean_turns"] = mean_terms(turns)
        return terms
