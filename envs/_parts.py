"""A benchmark's parts: small objects, one job each, that a ``Benchmark`` is composed of.

A benchmark names its identity and rules on its own class (name, item and outcome types, scene,
modes, action forms, what is public and secret about an item) and holds six parts, each with
defaults, so a benchmark overrides only the parts that differ:

* ``data`` (``DataPart``): the sample it ships, the release formats it reads, ``data stats`` counts,
  train / test sides, the problem an item's variants share, the items a ``--limit`` or ``--sample``
  run plays (its groups and strata);
* ``judging`` (``JudgingPart``): its offline judges, its LLM and human judges, its verdicts and the
  human-labelled judgement formats its judges are measured on;
* ``policies`` (``PolicyPart``): the offline players' moves (``random``, ``heuristic``, ``oracle``);
* ``prompts`` (``PromptPart``): the LLM player's protocol (prompts, worked examples, reply parser,
  the reply that makes a move, re-asks, fallback, action grammar, auxiliary prompts);
* ``metrics`` (``MetricsPart``): the scorer, the typed outcome, the headline, the report's figures
  and the rewards of its own;
* ``leaks`` (``LeakPart``): what the no-leak walk probes (release markers, a twin item, probing moves).

A benchmark declares a part as a class attribute holding an instance (``policies = GuessPolicies()``,
or ``judging = JudgingPart.having(default_judge="reference")`` for a part that only sets values);
each registered benchmark gets its own copy, bound to it (``part.benchmark``), so a part's methods
reach the benchmark's name, item type and texts without anyone passing them.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Hashable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

import numpy as np
from pydantic import BaseModel

from lateralgym.envs._actions import Action, Commit, Invalid
from lateralgym.envs._errors import ConfigError

if TYPE_CHECKING:
    from typing import Self

    from lateralgym.envs._benchmark import Benchmark, DatasetFormat, JudgementFormat, Outcome, PromptRequest, StatBlock
    from lateralgym.envs._config import EpisodeConfig
    from lateralgym.envs._figures import BarFigure, MetricsView
    from lateralgym.envs._grammar import ActionGrammar
    from lateralgym.envs._judging import Judge
    from lateralgym.envs._scoring import Scorer
    from lateralgym.envs._splits import Split

__all__ = ["PARTS", "DataPart", "JudgingPart", "LeakPart", "MetricsPart", "Part", "PolicyPart", "PromptPart"]

ItemT = TypeVar("ItemT", bound=BaseModel)
OutcomeT = TypeVar("OutcomeT", bound="Outcome")


class Part:
    """What every part has: the benchmark it belongs to, once the benchmark is built."""

    _owner: Benchmark[Any, Any] | None = None

    @property
    def benchmark(self) -> Benchmark[Any, Any]:
        """The benchmark this part belongs to."""
        if self._owner is None:
            raise RuntimeError(
                f"{type(self).__name__} belongs to no benchmark yet: reach it through a benchmark instance"
            )
        return self._owner

    @classmethod
    def having(cls, **settings: Any) -> Self:
        """This part with some of its class attributes set, for a part that only sets values
        (``judging = JudgingPart.having(offline_judges={"facts": FactsJudge}, default_judge="facts")``).

        Raises:
            TypeError: a setting this part does not have (the message lists the ones it has).
        """
        known = sorted(n for n in dir(cls) if n[0] != "_" and n != "benchmark" and not callable(getattr(cls, n)))
        unknown = sorted(set(settings) - set(known))
        if unknown:
            raise TypeError(f"{cls.__name__} has no setting {unknown[0]!r}; its settings: {', '.join(known)}")
        part: Self = type(cls.__name__, (cls,), dict(settings))()
        return part

    def bound(self, benchmark: Benchmark[Any, Any]) -> Self:
        """A copy of this part that belongs to ``benchmark``."""
        part = copy.copy(self)
        part._owner = benchmark
        return part


class DataPart(Part, Generic[ItemT]):
    """A benchmark's data: what it ships, which release formats it reads, how ``data stats`` counts it."""

    sample_file: ClassVar[str | None] = None
    """The sample data file shipped in ``lateralgym/envs/data`` (our JSONL), if any."""
    sample_data: ClassVar[dict[str, str]] = {}
    """Other data files it ships in ``lateralgym/envs/data``, by dataset name (a knowledge base)."""
    formats: ClassVar[tuple[DatasetFormat, ...]] = ()
    """The official release formats it reads (our JSONL is always read too). Format names are the
    benchmark's own: ``--format`` and detection only ever look among the chosen benchmark's."""
    jsonl_keys: ClassVar[frozenset[str]] = frozenset()
    """Keys that identify its items in our JSONL format; the most specific match wins."""
    records: ClassVar[tuple[tuple[frozenset[str], type[BaseModel]], ...]] = ()
    """JSONL records that are its data but not its items (``(identifying keys, model)``: a knowledge
    base's entities); ``data stats`` counts them through ``stats``."""

    def sample_items(self) -> list[ItemT]:
        """The shipped sample items."""
        unit = self.benchmark
        if self.sample_file is None:
            raise ConfigError(f"benchmark {unit.name!r} ships no sample data: give a dataset file (--data)")
        from lateralgym.envs._samples import read_sample

        items: list[Any] = read_sample(self.sample_file, unit.item_type)
        return items

    def stat_axes(self, item: ItemT) -> dict[str, Any]:
        """What ``lateralgym data stats`` counts an item by (axis -> value); default: nothing but the count."""
        return {}

    def stats(self, records: Sequence[Any]) -> StatBlock:
        """What ``lateralgym data stats`` shows of its records (items, or its ``records``);
        default: each ``stat_axes`` axis counted as a section."""
        from lateralgym.envs._benchmark import StatBlock

        sections: dict[str, dict[str, int]] = {}
        for record in records:
            for axis, value in self.stat_axes(record).items():
                counts = sections.setdefault(axis, {})
                counts[str(value)] = counts.get(str(value), 0) + 1
        return StatBlock(kind=self.benchmark.name, sections={k: dict(sorted(v.items())) for k, v in sections.items()})

    def stream_stats(self, records: Iterator[Any]) -> StatBlock:
        """``stats`` of records read once, one at a time (``lateralgym data stats`` streams a file
        through it). The default keeps them all and calls ``stats``; a benchmark whose counts need one
        record at a time overrides it, so a file of any size is counted in little memory."""
        return self.stats(list(records))

    def split_of(self, item: ItemT) -> Split:
        """Which side of a train / test split the item is on: its own ``split`` field when it has one,
        else a stable hash of its id (``lateralgym.envs.split_items``)."""
        from lateralgym.envs._splits import hashed_split

        own = getattr(item, "split", None)
        return own if own in ("train", "test") else hashed_split(self.benchmark.item_id(item))

    def group_of(self, item: ItemT) -> str:
        """What the items a run plays together share (a puzzle and its reconstructions, scored as a group):
        ``--limit`` completes every group it touches and ``--sample`` draws whole groups. Default: the
        item's id (each item alone)."""
        return str(self.benchmark.item_id(item))

    def problem_of(self, item: ItemT) -> str:
        """The problem an item poses, shared by its variants (the same task among other distractors, a
        reworded puzzle): an interval over items draws one problem's variants together. Default: its
        ``group_of`` (items played together pose one problem)."""
        return self.group_of(item)

    def level_of(self, item: ItemT) -> Hashable | None:
        """The item's difficulty level, for a trainer's ``--curriculum adaptive`` (``lateralgym.envs``'s
        ``Curriculum``): items of one level are drawn alike. Default: None (no levels; the adaptive
        curriculum is refused)."""
        return None

    def strata(self, item: ItemT) -> dict[str, Hashable]:
        """What a ``--sample`` draw spreads its items over, coarsest first (level name -> the item's
        value: ``{"scene": ..., "gold entity": ...}``), and what a ``--limit`` cut is checked against.
        Default: nothing (a simple random sample)."""
        return {}

    def first_items(self, items: Sequence[ItemT], limit: int) -> list[ItemT]:
        """The items a run with ``--limit limit`` plays, in dataset order: the first ``limit`` and the
        rest of the groups they touch (``group_of``), so group metrics are defined for every group played."""
        head = list(items[:limit])
        touched = {self.group_of(item) for item in head}
        return head + [item for item in items[limit:] if self.group_of(item) in touched]

    def sampled_items(self, items: Sequence[ItemT], size: int, seed: int) -> list[ItemT]:
        """The items a run with ``--sample size`` plays, in dataset order: about ``size`` of them (whole
        groups), spread over the ``strata`` in proportion to their items, drawn with the run ``seed``.
        The same items, size and seed give the same sample; a larger one holds a smaller one's items."""
        from lateralgym.envs._sampling import stratified_sample

        return stratified_sample(items, size, seed, strata=self.strata, group_of=self.group_of)

    def cut_note(self, items: Sequence[ItemT], limit: int) -> str | None:
        """One line when the items a ``--limit limit`` run plays all fall in one stratum of a level where
        ``items`` has several, naming it and ``--sample``; else None."""
        from lateralgym.envs._sampling import narrow_cut

        found = narrow_cut(self.first_items(items, limit), items, self.strata)
        if found is None:
            return None
        level, value, count = found
        return (
            f"--limit {limit} plays the first items, all of one {level} ({value!r} of {count}); "
            f"--sample {limit} draws items that stand for the set, spread over every {level}"
        )


class JudgingPart(Part):
    """A benchmark's judges: which specs it knows, and what they may answer."""

    offline_judges: ClassVar[Mapping[str, Callable[[], Judge]]] = {}
    """Judges that need no model, by spec (``exact``, ``kb``, ``reference``)."""
    default_judge: ClassVar[str] = "exact"
    """The judge spec its configs name by default."""
    llm_judge: ClassVar[str | None] = None
    """``module:Class`` of its LLM judge (imported only when used); None: LLM judge specs grade
    with the benchmark's exact rules, which need no model."""
    human_judge: ClassVar[str | None] = None
    """``module:Class`` of a person judging in the terminal (``--judge human``), if it has one."""
    verdict_labels: ClassVar[tuple[str, ...]] = ("correct", "not_yet", "incorrect")
    """The labels its judges may grade a final answer with (``correct`` is the one that solves)."""
    judgement_formats: ClassVar[tuple[JudgementFormat, ...]] = ()
    """File formats of human-labelled judgements its judges can be measured on (``lateralgym judges eval``)."""

    def make_judge(self, spec: str) -> Judge | None:
        """The offline judge ``spec`` names (``reference``, ``exact``, a spec with options such as
        ``reference-embed?model=st:``), or None when it names none of them."""
        factory = self.offline_judges.get(spec)
        return factory() if factory is not None else None


class PolicyPart(Part, Generic[ItemT]):
    """The offline players' moves: ``random``, ``heuristic`` and ``oracle``.

    A policy left undefined falls back: ``heuristic`` plays ``random``, ``random`` answers "I do not
    know." every time, ``oracle`` makes invalid moves; ``defines`` tells which are the benchmark's own,
    and ``lateralgym run`` says in one line when a player falls back.
    """

    def defines(self, policy: str) -> bool:
        """Whether this benchmark defines the offline policy ``policy`` (``random``, ``heuristic`` or
        ``oracle``) itself, rather than falling back to the default."""
        own = getattr(type(self), f"{policy}_action", None)
        return own is not None and own is not getattr(PolicyPart, f"{policy}_action", None)

    def random_action(self, info: Mapping[str, Any], rng: np.random.Generator) -> Action:
        """A uniformly random move among the public options."""
        return Commit(answer="I do not know.")

    def heuristic_action(self, info: Mapping[str, Any], rng: np.random.Generator, memory: dict[str, Any]) -> Action:
        """A cheap lexical baseline's move; ``memory`` is the policy's per-episode scratch space."""
        return self.random_action(info, rng)

    def oracle_action(self, item: ItemT, info: Mapping[str, Any]) -> Action:
        """The move of a player that knows the answer (the upper bound, and a scoring check)."""
        return Invalid(raw="", reason=f"benchmark {self.benchmark.name!r} has no oracle")


class PromptPart(Part):
    """The LLM player's protocol: our own wording of the paper's prompt, and how a reply is read."""

    player_reasks: ClassVar[int] = 0
    """How many times an LLM player is re-asked, by default, to repeat an unparsable reply in the
    expected format before ``fallback_action`` (0: an unparsable reply is an invalid move at once,
    as the single-answer papers grade it)."""

    def system_prompt(self, request: PromptRequest) -> str:
        """The LLM player's system prompt (our own wording of the paper's protocol)."""
        return (
            "You are playing a reasoning game. Read each message and reply with one action in the form "
            "the message asks for."
        )

    def worked_examples(self, request: PromptRequest) -> list[dict[str, str]]:
        """Chat messages shown before the first observation (few-shot); none by default."""
        return []

    def first_message(self, request: PromptRequest, observation: str) -> str:
        """The LLM player's first user message: the first observation (default), or a paper's own layout
        around it (worked examples inside the one message, as some papers' prompts have them)."""
        return observation

    def shows_env_forms(self, request: PromptRequest) -> bool:
        """Whether the system prompt also says the env's command forms are accepted (not in a paper
        layout that shows none)."""
        return True

    def parse_reply(self, text: str, info: Mapping[str, Any], reasoning: str | None) -> Action:
        """The action a model's reply makes; ``Invalid`` when there is none. Default: the env's forms."""
        from lateralgym.envs._actions import parse_action

        return parse_action(text.strip())

    def reply_for(self, action: Action, info: Mapping[str, Any], reasoning: str | None) -> str:
        """The reply a player following this prompt writes to make ``action`` here: what a supervised
        warm start trains on (an oracle's move as a model would write it), so ``parse_reply`` must read
        it back to ``action``. Default: the action as JSON (``action_to_text``), which the env's forms read."""
        from lateralgym.envs._actions import action_to_text

        if isinstance(action, Invalid):
            return action.raw
        return action_to_text(action)

    def reask_text(self, reason: str, request: PromptRequest) -> str:
        """The follow-up message that re-asks an LLM player whose reply could not be read."""
        return f"I could not read a move in your reply ({reason}). Reply again, exactly in the format asked for."

    def fallback_action(self, text: str, info: Mapping[str, Any]) -> Action | None:
        """How a reply still unparsable after the re-asks is read (``None``: an invalid move)."""
        return None

    def action_grammar(self, info: Mapping[str, Any], reasoning: str | None) -> ActionGrammar | None:
        """The replies ``parse_reply`` reads at this point of an episode, as an ``ActionGrammar`` an LLM
        player can ask its server to constrain the reply to (``?constrain=grammar`` or ``json_schema``).

        State it from the same forms the parser reads, and the prompt asks for (``lateralgym.envs.
        ActionGrammar``; ``final_turn(info)`` says when only the final answer is left). Default: ``None``,
        the benchmark states none and replies stay free text.
        """
        return None

    def gives_aux_prompt(self) -> bool:
        """Whether this benchmark's runs give an auxiliary prompt (``aux_prompt`` is its own)."""
        return type(self).aux_prompt is not PromptPart.aux_prompt

    def aux_prompt(self, run_dir: Path, *, puzzles: int, variant: str, seed: int | None = None) -> str:
        """An auxiliary prompt for an LLM player of another run, built from a run of this benchmark
        (the player spec's ``aux=RUN_DIR``: elicitation): ``puzzles`` of its items, drawn at random with
        ``seed`` (None: its first ones); default: this benchmark gives none.

        Raises:
            ConfigError: the run gives no auxiliary prompt.
        """
        name = self.benchmark.name
        raise ConfigError(f"{run_dir} is a {name!r} run, and {name} gives no auxiliary prompt")


class MetricsPart(Part, Generic[OutcomeT]):
    """How a run is scored: the scorer, the typed outcome, the headline, figures and rewards of its own."""

    headline: ClassVar[tuple[str, ...]] = ()
    """The metric names a summary line names first (the paper's headline numbers), each shown as ``n/a``
    when a run scored nothing; none (the default): the scorer's metrics in its own order, none forced."""
    reward_fields: ClassVar[dict[str, str]] = {}
    """Rewards of its own a config may set under ``rewards:`` (name -> what earns it), besides the
    engine's ``correct``, ``invalid`` and ``step``."""

    def scorer(self, *, mode: str | None, max_turns: int) -> Scorer[Any, Any]:
        """A fresh scorer for a run's episodes (default: success rate and mean turns)."""
        from lateralgym.envs._scoring import SuccessScorer

        return SuccessScorer(self.benchmark, mode=mode, max_turns=max_turns)

    def outcome_of(self, data: Mapping[str, Any]) -> OutcomeT:
        """Validate a logged outcome; a missing or renamed field raises, it never scores 0 %."""
        return self.benchmark.outcome_type.model_validate(data)  # type: ignore[return-value]

    def figures(self, metrics: MetricsView) -> list[BarFigure]:
        """The report's figures of a run (bar charts, drawn by ``lateralgym report``); default: the
        headline rates."""
        from lateralgym.envs._figures import headline_figure

        return headline_figure(metrics)


class LeakPart(Part, Generic[ItemT]):
    """What the no-leak walk of ``check_scene`` probes beyond ``Benchmark.secret_texts``."""

    leak_markers: ClassVar[tuple[str, ...]] = ()
    """Strings of its release files that must never reach a player (a gold marker)."""
    phrase_leak_check: ClassVar[bool] = True
    """Whether the check also flags any 5-word run of a secret that ``public_text`` lacks (off where
    the public scene legitimately shares phrasing with the reference solution)."""

    def twin(self, item: ItemT) -> ItemT | None:
        """The same item with a different secret (e.g. another correct option), for the differential
        check: the player's view must not change with the secret before the episode ends."""
        return None

    def probe_actions(self, item: ItemT, config: EpisodeConfig) -> Iterable[Any]:
        """Actions that poke at every way an answer could leak (the no-leak walk plays them)."""
        yield "commit: tell me the answer"


PARTS: dict[str, type[Part]] = {
    "data": DataPart,
    "judging": JudgingPart,
    "policies": PolicyPart,
    "prompts": PromptPart,
    "metrics": MetricsPart,
    "leaks": LeakPart,
}
"""The part attributes of a ``Benchmark`` and their base classes; each instance binds its own copy of each."""


def misplaced_hooks(cls: type) -> list[str]:
    """Names a ``Benchmark`` subclass defines that belong to one of its parts, each with where it goes
    (``offline_judges: a setting of its judging part (JudgingPart)``): set on the class, they would do nothing."""
    found = []
    for slot, base in PARTS.items():
        members = {n for n in dir(base) if n[0] != "_" and n not in ("benchmark", "bound", "having")}
        for klass in cls.__mro__:
            for name in sorted(members & set(vars(klass))):
                found.append(f"{name}: it belongs to its {slot} part ({base.__name__}), as {slot} = ...")
    return sorted(set(found))
