"""Run metrics, exactly as the three papers define them, computed by streaming episode ends.

``MetricsAccumulator`` consumes ``episode_end`` records one at a time and keeps only what the
definitions need: each item's grouping info and one compact summary per repeat (best-of-R looks
across an item's repeats, a group accuracy across a group's items, and a re-run of
the same ``(item, repeat)`` — a retried error after a resume — replaces the earlier record).
``compute_metrics`` scores any stream of log records; ``metrics_from_log`` scores a step log,
including a partial one from a killed run. Both count the episodes a log records more than once
(``DuplicateEpisodes``: two processes wrote one log), still scoring each once, by its last record.

Conventions shared by every benchmark:

* rates and accuracies are percentages (0-100);
* an episode that ended with ``error`` set counts as unsolved / incorrect;
* with R > 1 repeats per item, each accuracy-like metric appears twice, suffixed
  ``_best_of_R`` (an item counts when any repeat succeeded) and ``_mean_of_R`` (the plain mean
  over all episodes); behaviour means (turns, inspections, exploration) are always plain means.
  A benchmark may say otherwise for a metric of its own (its scorer's docstring);
* with R > 1, the headline adds ``pass^1`` .. ``pass^R`` (every one of k tries succeeds) and
  ``pass@1`` .. ``pass@R`` (at least one does): the unbiased estimators over each item's tries of the
  benchmark's success, averaged over items (``lateralgym.envs._pass_k``, ``Scorer.tries``).

The per-benchmark definitions belong to the benchmarks (``Benchmark.metrics.scorer``; e.g.
the ``_metrics`` module of each benchmark's folder). Every logged outcome is validated as the
benchmark's typed ``Outcome`` before it is scored: a record missing a field the metrics read is a
``MetricsError``, never a silent 0 %.

The same pass tallies what the episodes did, for ``summary.json``: how valid the
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
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from lateralgym.envs import ConfigError, LateralGymError, ScoredEpisode, get_benchmark
from lateralgym.envs.support import validation_message
from lateralgym.episodes._log import STEP_LOG, EpisodeEnd, EpisodeStart, StepLine, Usage, read_log

Record = EpisodeStart | StepLine | EpisodeEnd

DEFAULT_MAX_ROUNDS = 15
"""The round limit counted for an unsolved episode that was not cut off by its config (an errored
one) when the run gives none."""


class MetricsError(LateralGymError, ValueError):
    """There is nothing to score, or the records do not belong together."""


class DuplicateEpisodes:
    """Finds the episodes a step log records more than once: a second ``episode_start`` or a second
    ``episode_end`` for one episode id (two starts before the first ended, two ends, or a start
    after the end).

    One run never writes either (a resume first drops the lines of unfinished and errored
    episodes); two processes writing one log at once do.
    """

    def __init__(self) -> None:
        self._started: set[str] = set()
        self._ended: set[str] = set()
        self.episodes: set[str] = set()
        """Ids of the episodes recorded more than once."""

    def add(self, record: Record) -> None:
        """Take the next record of the log."""
        if isinstance(record, StepLine):
            return
        seen = self._started if isinstance(record, EpisodeStart) else self._ended
        if record.episode_id in seen:
            self.episodes.add(record.episode_id)
        seen.add(record.episode_id)


class RunMetrics(BaseModel):
    """The metrics of one run (or of any set of episodes of one benchmark)."""

    model_config = ConfigDict(extra="forbid")

    benchmark: str
    """The registered benchmark's name."""
    mode: str | None = None
    """The config's mode when the log says (``static``, ``interactive``, ...)."""
    episodes: int = 0
    """Episodes scored (one per item and repeat)."""
    errored: int = 0
    """Episodes that ended with an error; they count as unsolved / incorrect."""
    duplicates: int = 0
    """Episodes the log records more than once (two processes wrote it at once); each is still
    counted once, by its last record."""
    items: int = 0
    """Distinct items scored."""
    repeats: int = 1
    """R: the most repeats recorded for one item; metric names carry ``_best_of_R`` / ``_mean_of_R`` when > 1."""
    headline: dict[str, int | float] = Field(default_factory=dict)
    """The papers' headline metrics, by name (counts stay integers); with R > 1, then ``pass^1`` ..
    ``pass^R`` and ``pass@1`` .. ``pass@R`` of the benchmark's success (percent)."""
    breakdowns: dict[str, list[dict[str, Any]]] = Field(default_factory=dict)
    """Tables by name (``by_gold_level``, ``by_kind``, ``by_band``, ...): one dict per row."""
    exploration: dict[str, int | float] = Field(default_factory=dict)
    """Interactive modes: questions asked, answer-label shares, repeats, coverage, turns before commit."""
    warnings: list[str] = Field(default_factory=list)
    """The benchmark's warnings about these numbers (a paper average over a subset missing a part)."""


class MetricsAccumulator:
    """Scores one benchmark's episodes as they arrive.

    Args:
        benchmark: the benchmark every added episode must belong to.
        mode: the config's mode, when known (decides whether a benchmark's interactive
            metrics apply; inferred from the episodes otherwise).
        max_turns: the round limit, counted for unsolved episodes that were not truncated
            by their config (errored ones).

    Raises:
        MetricsError: ``benchmark`` is not one LateralGym scores.
    """

    def __init__(self, benchmark: str, *, mode: str | None = None, max_turns: int = DEFAULT_MAX_ROUNDS) -> None:
        try:
            self._unit = get_benchmark(benchmark)
        except ConfigError as exc:
            raise MetricsError(str(exc)) from None
        self.benchmark = benchmark
        self._scorer = self._unit.metrics.scorer(mode=mode, max_turns=max_turns)
        self._errored: set[tuple[str, int]] = set()

    @property
    def mode(self) -> str | None:
        """The config's mode, if known."""
        return self._scorer.mode

    @mode.setter
    def mode(self, mode: str | None) -> None:
        self._scorer.mode = mode

    def add(self, end: EpisodeEnd) -> None:
        """Score one finished (or errored) episode; a later record of the same episode replaces it.

        Raises:
            MetricsError: the episode belongs to another benchmark.
        """
        if end.benchmark != self.benchmark:
            raise MetricsError(
                f"episode {end.episode_id!r} is a {end.benchmark} episode; this accumulator scores {self.benchmark}"
            )
        try:
            outcome = self._unit.metrics.outcome_of(end.outcome) if end.outcome is not None else None
        except ValidationError as exc:
            field, message = validation_message(exc, "outcome")
            raise MetricsError(
                f"episode {end.episode_id!r}: its outcome is not a {self._unit.outcome_type.__name__} "
                f"(field {field!r}: {message}); was the log written by another version?"
            ) from None
        self._scorer.add(
            ScoredEpisode(
                item_id=end.item_id,
                repeat=end.repeat,
                outcome=outcome,
                meta=end.meta,
                error=end.error,
                truncated=end.truncated,
            )
        )
        key = (end.item_id, end.repeat)
        if end.error is None:
            self._errored.discard(key)
        else:
            self._errored.add(key)

    def result(self) -> RunMetrics:
        """The metrics of every episode added so far."""
        scored = self._scorer.score()
        tries = self._scorer.tries()
        reliability: dict[str, float] = {}
        if any(len(t) > 1 for t in tries):  # pass^k and pass@k measure items tried more than once
            from lateralgym.envs import pass_k_rates

            reliability = pass_k_rates(tries)
        return RunMetrics(
            benchmark=self.benchmark,
            mode=self.mode,
            episodes=sum(len(r) for r in self._scorer.items.values()),
            errored=len(self._errored),
            items=len(self._scorer.items),
            repeats=max(self._scorer.repeats, 1),
            headline={**scored.headline, **reliability},
            breakdowns=scored.breakdowns,
            exploration=scored.exploration,
            warnings=list(scored.warnings),
        )


class LogScorer:
    """``compute_metrics`` a record at a time: ``add`` the records of a log in order, then ``result``.

    Args:
        max_turns: the round limit, counted for unsolved episodes that were not truncated.
    """

    def __init__(self, *, max_turns: int = DEFAULT_MAX_ROUNDS) -> None:
        self._max_turns = max_turns
        self._accumulator: MetricsAccumulator | None = None
        self._duplicates = DuplicateEpisodes()
        self._mode: str | None = None
        self._started: str | None = None

    def add(self, record: Record) -> None:
        """Take the next record of the log.

        Raises:
            MetricsError: the records mix benchmarks, or an outcome is not the benchmark's.
        """
        self._duplicates.add(record)
        if isinstance(record, EpisodeStart):
            self._started = self._started or record.benchmark
            if self._mode is None:
                self._mode = record.mode
                if self._accumulator is not None and self._accumulator.mode is None:
                    self._accumulator.mode = self._mode
        elif isinstance(record, EpisodeEnd):
            if self._accumulator is None:
                self._accumulator = MetricsAccumulator(record.benchmark, mode=self._mode, max_turns=self._max_turns)
            self._accumulator.add(record)

    def result(self) -> RunMetrics:
        """The metrics of the records added so far.

        Raises:
            MetricsError: there are no episodes at all.
        """
        accumulator = self._accumulator
        if accumulator is None:
            if self._started is None:
                raise MetricsError("no episodes to score: the records hold no episode_start or episode_end")
            accumulator = MetricsAccumulator(self._started, mode=self._mode, max_turns=self._max_turns)
        return accumulator.result().model_copy(update={"duplicates": len(self._duplicates.episodes)})


def compute_metrics(records: Iterable[Record], *, max_turns: int = DEFAULT_MAX_ROUNDS) -> RunMetrics:
    """Score a stream of log records; only ``episode_end`` records count, and every record is
    checked for episodes the log holds twice (``RunMetrics.duplicates``).

    The benchmark comes from the end records (from the start records when no episode has
    finished yet) and the mode from the start records.

    Raises:
        MetricsError: there are no episodes at all, or the records mix benchmarks.
    """
    scorer = LogScorer(max_turns=max_turns)
    for record in records:
        scorer.add(record)
    return scorer.result()


def metrics_from_log(
    path: str | Path, *, max_turns: int = DEFAULT_MAX_ROUNDS, on_record: Callable[[Record], None] | None = None
) -> RunMetrics:
    """Score a step log (or a run directory holding ``steps.jsonl``); a torn last line is skipped.

    ``on_record`` sees every record as it streams past (a second tally over the same one pass).

    Raises:
        MetricsError: the log does not exist or holds no episodes.
        LogError: a line other than the last is not a valid record.
    """
    path = Path(path)
    if path.is_dir():
        path = path / STEP_LOG
    if not path.is_file():
        raise MetricsError(f"{path}: no such step log; pass a run directory or its {STEP_LOG}")
    try:
        records = read_log(path)
        if on_record is not None:
            records = _noted(records, on_record)
        return compute_metrics(records, max_turns=max_turns)
    except MetricsError as exc:
        raise MetricsError(f"{path}: {exc}") from exc


def _noted(records: Iterable[Record], note: Callable[[Record], None]) -> Iterator[Record]:
    for record in records:
        note(record)
        yield record


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
    tally = UsageTally()

    def note(record: object) -> None:
        tally.add(record)
        if moves is not None:
            moves.add(record)

    metrics = metrics_from_log(log_path, on_record=note)
    return metrics, tally.totals()
