"""A benchmark is one registered unit: ``Benchmark`` and the registry of them.

Everything LateralGym knows about one benchmark sits in one subclass of ``Benchmark`` (and the
modules of its folder under ``lateralgym.envs.benchmarks``): the item schema, the dataset formats
it reads, its own config options, the scene's rules and action forms, its verdict vocabulary, what
is public and what is secret (for the leak check), the typed outcome, the metrics, the figures and
dataset counts, the LLM prompt and reply parser, the offline players' policies and judges, its LLM
judge and its own commands. The engine, the runner, the metrics, the reports, the plots, the
viewer, replay, the judge factory, the conformance checks and the players only ever ask the
registry, the way Gymnasium's ``make`` asks its registry of env ids.

A benchmark in a file of your own runs from the command line with ``lateralgym run --import
PATH_OR_MODULE NAME`` (or ``benchmark: module:Class`` in a config): ``load_benchmark`` imports it.

Register one with the ``@register_benchmark`` decorator (``docs/adding-a-benchmark.md``)::

    @register_benchmark
    class TwentyQuestions(Benchmark[Secret, GuessOutcome]):
        name = "twenty-questions"
        ...
"""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict

from lateralgym.envs._errors import ConfigError
from lateralgym.envs._parts import (
    PARTS,
    DataPart,
    JudgingPart,
    LeakPart,
    MetricsPart,
    PolicyPart,
    PromptPart,
    misplaced_hooks,
)

if TYPE_CHECKING:
    from lateralgym.envs._config import EpisodeConfig
    from lateralgym.envs._engine import Scene

__all__ = [
    "BENCHMARKS",
    "Benchmark",
    "DatasetFormat",
    "JudgeCase",
    "JudgementFormat",
    "Outcome",
    "PromptRequest",
    "ViewSection",
    "all_benchmarks",
    "benchmark_of",
    "get_benchmark",
    "import_reference",
    "load_benchmark",
    "NoOptions",
    "StatBlock",
    "register_benchmark",
]


class ViewSection(BaseModel):
    """A part of an ended episode the viewer shows above its outcome table (a benchmark's own)."""

    model_config = ConfigDict(frozen=True)

    title: str
    chips: list[str] | None = None
    """Short names shown as chips (``css_class`` styles them)."""
    rows: list[tuple[str, Any]] | None = None
    """A two-column table (``element_id`` names it)."""
    empty: str = "none"
    """Shown when there are no chips or rows."""
    element_id: str | None = None
    css_class: str | None = None


class Outcome(BaseModel):
    """What an episode ended with: the engine's counts plus the benchmark's own fields.

    Each benchmark subclasses it with the fields its metrics read; metrics read typed attributes,
    never ``dict.get``, so a renamed field fails the type checker and validation instead of
    scoring 0 %. ``turns`` lives here and only here.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    turns: int
    """Turns the player took (every action counts, invalid ones too)."""
    max_turns: int
    """The config's turn limit the episode ran under."""
    invalid_actions: int
    """Turns spent on invalid actions."""
    committed: bool
    """Whether the player gave a final answer that was graded."""

    def succeeded(self) -> bool:
        """Whether the episode counts as a success (the progress bar and the viewer use it)."""
        return False

    def badge(self) -> str:
        """A word or two for the viewer's episode list (``correct``, ``wrong``, ``entity only``)."""
        return "correct" if self.succeeded() else "wrong"

    judge_prose: ClassVar[frozenset[str]] = frozenset()
    """Fields holding a judge's free text (dotted paths into the outcome's JSON, ``judgement.comment``).
    Training exports keep them out of ``outcome`` (a trainer may feed it to a policy, and the text may
    talk about the hidden answer) and carry them apart, in ``judge_notes`` (``split_judge_prose``)."""

    @classmethod
    def split_judge_prose(cls, data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        """An outcome's JSON without its ``judge_prose`` fields, and those fields by path (empty ones left out).

        ``data`` is not changed; a path that is absent (an offline judge, a partial outcome) is skipped.
        """
        kept: dict[str, Any] = dict(data)
        notes: dict[str, Any] = {}
        for path in sorted(cls.judge_prose):
            *parents, leaf = path.split(".")
            node: Any = kept
            for name in parents:  # copied on the way down: the caller's dicts stay as they were
                child = node.get(name) if isinstance(node, dict) else None
                if not isinstance(child, dict):
                    node = None
                    break
                node[name] = node = dict(child)
            if isinstance(node, dict) and leaf in node:
                value = node.pop(leaf)
                if value not in (None, ""):
                    notes[path] = value
        return kept, notes

    view_hidden: ClassVar[frozenset[str]] = frozenset()
    """Outcome fields the viewer's outcome table leaves out (its ``view_sections`` show them)."""

    def view_sections(self) -> list[ViewSection]:
        """Sections the viewer shows above an ended episode's outcome table; none by default."""
        return []


@dataclass(frozen=True)
class DatasetFormat:
    """A file format a benchmark reads, with the test that recognises it.

    Attributes:
        name: The name users pass as ``--format`` / ``format=``; a benchmark's own (two benchmarks may
            each have a ``json``).
        description: One line for ``--help`` and errors.
        sniff: ``(path, first_record)`` -> whether the file is in this format. ``first_record`` is
            the file's first JSON value (a JSONL line, or a JSON file's first list element), or
            ``None`` when the file is not JSON text. Binary formats look at ``path`` themselves.
        load: Reads the file into items (or, for data that is not a benchmark's items, records).
        binary: True for formats that are not text (read before any text-based sniffing).
        fallback: True for a format that claims a kind of file only when no other format does (a
            spreadsheet reader whose errors explain look-alike workbooks it cannot read).
        keys: The keys a text format's record holds, so a file no format claims is told which format
            it comes closest to and which keys it lacks (empty: the format is left out of that).
    """

    name: str
    description: str
    sniff: Callable[[Path, Any], bool]
    load: Callable[[Path], Sequence[Any]]
    binary: bool = False
    fallback: bool = False
    keys: frozenset[str] = frozenset()


class JudgeCase(BaseModel):
    """One human-labelled judgement a judge can be measured on (``lateralgym judges eval``).

    The judge is asked as the benchmark's scene asks it: ``Judge.answer`` for a question or a guess
    (``kind="question"``), ``Judge.grade`` for an explanation (``kind="verdict"``); its label, mapped
    by ``collapse``, is compared with ``expected``.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    item: Any
    """The benchmark's item the judge sees (the hidden story with its answer)."""
    message: str
    """What the judge judges: a player's question, guess or explanation."""
    kind: Literal["question", "verdict"] = "question"
    """``question``: answered with ``Judge.answer``; ``verdict``: graded with ``Judge.grade``."""
    expected: str
    """People's label, in the judge's vocabulary (``yes`` / ``no`` / ``irrelevant``, ``correct`` / ``not_yet``)."""
    positive: str = "yes"
    """The label whose precision, recall and F1 are reported (a confirmed guess, a solved puzzle)."""
    group: str = ""
    """What the case belongs to (its story), for per-group accuracy."""
    source: str = ""
    """People's label as the file writes it (``Correct``, ``T``)."""
    collapse: tuple[tuple[str, str], ...] = ()
    """Judge labels read as another before the comparison (a binary task reads ``irrelevant`` as ``no``)."""

    def compared(self, label: str) -> str:
        """The judge's ``label`` as this case compares it (``collapse`` applied)."""
        return dict(self.collapse).get(label, label)


@dataclass(frozen=True)
class JudgementFormat:
    """A file format of human-labelled judgements a benchmark reads (``Benchmark.judging.judgement_formats``).

    Attributes:
        name: The name ``judges eval --format`` takes.
        description: One line for ``--help`` and errors.
        sniff: ``path`` -> whether the file (or folder) is in this format.
        load: ``(path, items)`` -> the cases; ``items`` are the dataset the labels refer to when the
            format names items by id (``None``: the benchmark's sample items).
    """

    name: str
    description: str
    sniff: Callable[[Path], bool]
    load: Callable[[Path, Sequence[Any] | None], Sequence[JudgeCase]]


class PromptRequest(BaseModel):
    """What an LLM player asks a benchmark for its opening messages."""

    model_config = ConfigDict(frozen=True)

    mode: str | None
    """The config's mode."""
    reasoning: str
    """``direct`` or ``cot``."""
    few_shot: bool = False
    """Whether worked examples precede the first observation (where the benchmark has them)."""
    shots: int | None = None
    """How many worked examples (``None``: the benchmark's whole set)."""
    demonstrations: str | None = None
    """A file of worked examples in the benchmark's own format (an official demonstrations file);
    ``None``: the examples the benchmark ships."""
    layout: str | None = None
    """The prompt layout the episode's config chose (a benchmark's own option, shown to the player as
    ``info["public"]["layout"]``); None: the benchmark's only one."""


class NoOptions(BaseModel):
    """The options of a benchmark that has none: an empty ``options:`` block."""

    model_config = ConfigDict(frozen=True, extra="forbid")


class StatBlock(BaseModel):
    """What ``lateralgym data stats`` shows of one benchmark's records."""

    model_config = ConfigDict(frozen=True)

    kind: str
    """What the records are (the benchmark's name, or a word for its other data: ``kb``)."""
    sections: dict[str, dict[str, int]] = {}
    """Counts by section, then key, in display order (``{"band": {"easy": 3, ...}}``)."""
    defects: list[str] = []
    """Release defects found in the records, one line each naming the record."""


ItemT = TypeVar("ItemT", bound=BaseModel)
OutcomeT = TypeVar("OutcomeT", bound=Outcome)


class Benchmark(Generic[ItemT, OutcomeT]):
    """One benchmark: its identity, its rules and what is public and secret about an item, on the class;
    the rest in six parts with defaults (``lateralgym.envs._parts``), overridden where it differs.

    Only ``name``, ``item_type``, ``outcome_type``, ``scene_type``, ``modes`` and ``action_forms``
    have no default; the rest default to something sensible for a question-and-answer game.
    """

    name: ClassVar[str]
    """Registry key and the ``benchmark:`` of configs and logs (lower case, ``twenty-questions``)."""
    title: ClassVar[str] = ""
    """Human name with its paper (``Twenty Questions (our own game)``)."""
    item_type: ClassVar[type[BaseModel]]
    """The pydantic model of one item; it must have an ``id`` field."""
    outcome_type: ClassVar[type[Outcome]]
    """The pydantic model of an episode's outcome."""
    scene_type: ClassVar[type[Scene[Any, Any]]]
    """The scene class: the rules of one item."""
    modes: ClassVar[tuple[str, ...]]
    """Config modes this benchmark runs (``static``, ``interactive``, ``mcq``, ``multiturn``, ...)."""
    reveals: ClassVar[tuple[str, ...]] = ("question",)
    """What a first observation may show; the first is the default."""
    action_forms: ClassVar[dict[str, str]]
    """How to write each action kind this benchmark understands (``{"commit": "commit: <letter>"}``)."""
    env_ids: ClassVar[dict[str, str]] = {}
    """Gymnasium ids registered for it -> the shipped config each one runs."""
    options_type: ClassVar[type[BaseModel]] = NoOptions
    """The pydantic model of a config's ``options:`` block: this benchmark's own settings, validated
    with the config (frozen; ``extra="forbid"``, so a misspelt option is an error)."""
    default_max_turns: ClassVar[int] = 1
    """The turn limit of ``default_config``."""
    commands: ClassVar[str | None] = None
    """A module of its own sub-commands (``register(sub)`` as in ``lateralgym.commands``), added to
    the ``lateralgym`` command line; its command layer, the only place it parses arguments."""

    # ------------------------------------------------------------------ its parts
    data: DataPart[Any] = DataPart()
    """Shipped sample, release formats, ``data stats`` counts, splits, problems, the items a ``--limit`` run plays."""
    judging: JudgingPart = JudgingPart()
    """Offline, LLM and human judges, verdict labels, human-labelled judgement formats."""
    policies: PolicyPart[Any] = PolicyPart()
    """The offline players' moves (``random``, ``heuristic``, ``oracle``)."""
    prompts: PromptPart = PromptPart()
    """The LLM player's prompts, reply parser, the reply for a move, re-asks, fallback, action grammar, auxiliary
    prompts."""
    metrics: MetricsPart[Any] = MetricsPart()
    """Scorer, typed outcome, headline metrics, the report's figures, rewards of its own."""
    leaks: LeakPart[Any] = LeakPart()
    """What the no-leak walk probes: release markers, a twin item, probing moves."""

    def __init__(self) -> None:
        for slot in PARTS:  # each benchmark holds its own copy of each part, bound to it
            setattr(self, slot, getattr(type(self), slot).bound(self))

    # ------------------------------------------------------------------ items and secrets
    def item_id(self, item: ItemT) -> str:
        """The item's id (every item model has an ``id`` field)."""
        return str(getattr(item, "id"))  # noqa: B009 - item types are the benchmark's own models

    def item_meta(self, item: ItemT) -> dict[str, Any]:
        """Public facts about an item for logs, filters and breakdowns; never anything hidden."""
        return {}

    def public_text(self, item: ItemT) -> str:
        """Everything the player is shown about the item up front."""
        return ""

    def secret_texts(self, item: ItemT) -> list[str]:
        """Texts the player must never see (hidden answers, reference solutions, clues)."""
        return []

    def solution_text(self, item: ItemT) -> str:
        """The reference answer as a person reads it, shown to a human player once the episode is
        over (never to a model). Default: the secret texts."""
        return "\n".join(self.secret_texts(item))

    # ------------------------------------------------------------------ configs
    def default_config(self) -> dict[str, Any]:
        """The config a run of this benchmark by name uses when no config file names it (``lateralgym
        run --import FILE.py NAME``): its first mode and reveal, every action it has, its default judge,
        ``default_max_turns`` turns. A mapping, validated as any config file is."""
        return {
            "name": self.name,
            "benchmark": self.name,
            "mode": self.modes[0],
            "allowed_actions": list(self.action_forms),
            "max_turns": self.default_max_turns,
            "judge": self.judging.default_judge,
        }

    def validate_config(self, config: EpisodeConfig) -> None:
        """Raise ``ValueError`` when a config makes no sense for this benchmark."""

    def __repr__(self) -> str:
        return f"<benchmark {self.name}>"


BENCHMARKS: dict[str, Benchmark[Any, Any]] = {}
"""Registered benchmarks by name."""

_lock = threading.Lock()


def register_benchmark(cls: type[Benchmark[ItemT, OutcomeT]]) -> type[Benchmark[ItemT, OutcomeT]]:
    """Class decorator: register a benchmark and its Gymnasium env ids."""
    for attribute in ("name", "item_type", "outcome_type", "scene_type", "modes", "action_forms"):
        if not hasattr(cls, attribute):
            raise TypeError(f"benchmark {cls.__name__} must define {attribute!r}")
    misplaced = misplaced_hooks(cls)
    if misplaced:
        raise TypeError(f"benchmark {cls.__name__} defines {misplaced[0]} (docs/adding-a-benchmark.md)")
    BENCHMARKS[cls.name] = cls()
    for hook in REGISTRATION_HOOKS:
        hook(cls.env_ids)
    return cls


REGISTRATION_HOOKS: list[Callable[[dict[str, str]], None]] = []
"""Called with each benchmark's env ids as it registers (``lateralgym`` adds Gymnasium's registration),
so the engine names no layer above it."""


PLUGIN_GROUP = "lateralgym.benchmarks"
"""Entry-point group through which installed packages register their benchmarks."""

_plugins_loaded = False


def load_plugins() -> None:
    """Import every installed package's ``lateralgym.benchmarks`` entry point (a module whose import
    registers benchmarks); ``lateralgym.envs`` calls it once, after the built-ins are registered."""
    global _plugins_loaded
    with _lock:
        if _plugins_loaded:
            return
        _plugins_loaded = True
    from importlib.metadata import entry_points

    for entry in entry_points(group=PLUGIN_GROUP):
        try:
            entry.load()
        except Exception as exc:  # a broken plugin must say which one it is
            raise ConfigError(f"the benchmark plugin {entry.name!r} ({entry.value}) failed to load: {exc}") from exc


def load_benchmark(source: str) -> list[Benchmark[Any, Any]]:
    """Import a benchmark defined outside the package, so its ``@register_benchmark`` runs.

    Args:
        source: a Python file (``games/twenty_questions.py``), a module name (``my_pkg.games``), or
            either with ``:Class`` (``games.py:TwentyQuestions``), which must then be a registered
            ``Benchmark`` subclass (it is registered if its module did not).

    Returns:
        The benchmarks the import registered (or the one named).

    Raises:
        ConfigError: the file or module cannot be imported, or registers no benchmark.
    """
    _load_builtins()
    target, class_name = _split_source(source)
    before = dict(BENCHMARKS)
    module = _import_source(target)
    if class_name:
        cls = getattr(module, class_name, None)
        if not (isinstance(cls, type) and issubclass(cls, Benchmark)):
            raise ConfigError(f"{source}: {target} has no Benchmark subclass {class_name!r}")
        if not any(type(b) is cls for b in BENCHMARKS.values()):
            register_benchmark(cls)
        return [BENCHMARKS[cls.name]]
    added = [b for name, b in BENCHMARKS.items() if before.get(name) is not b]
    if not added:  # imported before: its benchmarks, registered again if the registry lost them
        added = _registered_again(module)
    if not added:
        raise ConfigError(f"{source} registers no benchmark: decorate a Benchmark subclass with @register_benchmark")
    return added


def import_reference(source: str) -> str:
    """``source`` as a config records it: a file path made absolute (the run may resume elsewhere)."""
    target, class_name = _split_source(source)
    if _is_file_source(target):
        target = str(Path(target).resolve())
    return f"{target}:{class_name}" if class_name else target


def _is_file_source(target: str) -> bool:
    return target.endswith(".py") or "/" in target or "\\" in target or Path(target).is_file()


def _split_source(source: str) -> tuple[str, str]:
    """``(file or module, class name)`` of ``path.py:Class`` / ``module:Class``; the class is ``""``
    when none is named (a Windows drive letter, ``C:\\...``, is no class)."""
    head, sep, tail = source.rpartition(":")
    if sep and head and tail.isidentifier() and not (len(head) == 1 and head.isalpha()):
        return head, tail
    return source, ""


_imported: dict[str, Any] = {}


def _import_source(target: str) -> Any:
    """Import a module by file path or dotted name (a file is imported once per process)."""
    import importlib.util

    path = Path(target)
    if _is_file_source(target):
        path = path.resolve()
        if not path.is_file():
            raise ConfigError(f"--import {target}: no such file")
        key = str(path)
        if key in _imported:
            return _imported[key]
        same = _module_from(path)
        if same is not None:  # imported already by its own name (``import twenty_questions``): that one
            _imported[key] = same
            return same
        name = f"lateralgym_user_{abs(hash(key)):x}_{path.stem}"
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ConfigError(f"--import {target}: not a Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # dataclasses and pickling look modules up by name
        try:
            spec.loader.exec_module(module)
        except Exception as exc:  # a broken file must say where
            sys.modules.pop(name, None)
            raise ConfigError(f"--import {target} failed: {type(exc).__name__}: {exc}") from exc
        _imported[key] = module
        _importable_by_stem(module, path)
        return module
    try:
        return importlib.import_module(target)
    except ImportError as exc:
        raise ConfigError(
            f"--import {target}: no such module ({exc}); give a .py file or an importable module"
        ) from exc
    except Exception as exc:
        raise ConfigError(f"--import {target} failed: {type(exc).__name__}: {exc}") from exc


def _module_from(path: Path) -> Any:
    """A module imported already from the file ``path`` (by its own name), or None."""
    for module in list(sys.modules.values()):
        origin = getattr(module, "__file__", None)
        if isinstance(origin, str) and Path(origin).name == path.name and Path(origin).resolve() == path:
            return module
    return None


def _importable_by_stem(module: Any, path: Path) -> None:
    """Let ``import <stem>`` of the file ``load_benchmark`` imported give that same module, so a script
    that loads a benchmark file and then imports its classes (``from twenty_questions import Animal``)
    builds items of the registered benchmark's own classes, not of a second copy. Skipped when the name
    is another module's (an installed one, or another file of that name)."""
    stem = path.stem
    if not stem.isidentifier() or stem in sys.modules:
        return
    import importlib.util

    try:
        found = importlib.util.find_spec(stem)
    except (ImportError, ValueError):
        return
    if found is None or (found.origin is not None and Path(found.origin).resolve() == path):
        sys.modules[stem] = module


_trusting_recorded = False


def trust_recorded_imports(trusted: bool = True) -> None:
    """Let code a run directory's config names (``imports:``, a ``file.py:Class`` benchmark) run when
    the run is opened (``--trust-imports``). Off by default: a run directory is data."""
    global _trusting_recorded
    _trusting_recorded = trusted


def imported_already(source: str) -> bool:
    """Whether ``source`` (a file, a module, either with ``:Class``) was imported in this process:
    named on the command line (``--import``), or an installed package's module."""
    target, _ = _split_source(source)
    if _is_file_source(target):
        return str(Path(target).resolve()) in _imported
    return target in sys.modules


def guard_recorded_imports(sources: Iterable[str], where: Path) -> None:
    """Refuse to import code that a run directory's file names, unless it was imported already (named
    on the command line) or recorded imports are trusted (``trust_recorded_imports``).

    Raises:
        ConfigError: a source would run code that nobody named (the message says which, and how to allow it).
    """
    if _trusting_recorded:
        return
    for source in sources:
        if not imported_already(source):
            raise ConfigError(
                f"{where} names code to import: {source}. A run directory is data, so its code runs only when "
                f"you name it: --import {source} (or pass --trust-imports if you trust where the run came from)"
            )


def recorded_sources(data: object) -> list[str]:
    """The code a config's mapping would import: its ``imports`` and a ``module:Class`` / file benchmark."""
    if not isinstance(data, dict):
        return []
    imports = data.get("imports")
    sources = [imports] if isinstance(imports, str) else [s for s in imports or () if isinstance(s, str)]
    benchmark = data.get("benchmark")
    if isinstance(benchmark, str) and (_split_source(benchmark)[1] or _is_file_source(benchmark)):
        sources.append(benchmark)
    return sources


def _registered_again(module: Any) -> list[Benchmark[Any, Any]]:
    """The benchmarks ``module`` defines, each registered again if the registry lost it (a module is
    imported once, so its ``@register_benchmark`` does not run twice)."""
    own = [
        cls
        for cls in vars(module).values()
        if isinstance(cls, type) and issubclass(cls, Benchmark) and cls.__module__ == module.__name__
    ]
    for cls in own:
        if getattr(cls, "name", None) and not isinstance(BENCHMARKS.get(cls.name), cls):
            register_benchmark(cls)
    return [b for b in BENCHMARKS.values() if type(b).__module__ == module.__name__]


BUILTINS = "lateralgym.envs.benchmarks"
"""The package of the built-in benchmarks, which the registry imports by name (the engine imports no
benchmark): its ``BUILTIN`` table names each one's module, imported the first time that benchmark is
looked up. Listing every benchmark imports them all, then the installed plugins."""


def _builtin_modules() -> dict[str, str]:
    """Built-in benchmark name -> the module whose import registers it, in the order they are listed."""
    table = importlib.import_module(BUILTINS).BUILTIN
    return {name: builtin.module for name, builtin in table.items()}


def _load_builtin(name: str) -> None:
    """Register the built-in benchmark ``name`` by importing its module (and none of the others)."""
    module = importlib.import_module(_builtin_modules()[name])
    if name not in BENCHMARKS:  # imported before, then dropped from the registry
        _registered_again(module)


def _load_builtins() -> None:
    """Make sure every built-in benchmark (and installed plugin) is registered."""
    for name in _builtin_modules():
        if name not in BENCHMARKS:
            _load_builtin(name)
    load_plugins()


def _load_named(name: str) -> None:
    """Register the benchmark called ``name`` if it can be: a built-in's module alone, otherwise every
    built-in and plugin (one of them may be it)."""
    if name in BENCHMARKS:
        return
    if name in _builtin_modules():
        _load_builtin(name)
    else:
        _load_builtins()


def get_benchmark(name: str) -> Benchmark[Any, Any]:
    """The registered benchmark called ``name``, or the one ``module:Class`` names (imported first).

    Raises:
        ConfigError: no benchmark has that name (the message lists the known ones).
    """
    _load_named(name)
    if name not in BENCHMARKS and _split_source(name)[1]:
        return load_benchmark(name)[0]
    try:
        return BENCHMARKS[name]
    except KeyError:
        raise ConfigError(
            f"unknown benchmark {name!r}; known: {', '.join(sorted(BENCHMARKS))} (a benchmark in a file of "
            "your own: lateralgym run --import FILE.py ...)"
        ) from None


def all_benchmarks() -> list[Benchmark[Any, Any]]:
    """Every registered benchmark, built-ins first."""
    _load_builtins()
    order = list(_builtin_modules())
    return sorted(BENCHMARKS.values(), key=lambda b: order.index(b.name) if b.name in order else len(order))


def benchmark_of(item: object) -> Benchmark[Any, Any]:
    """The benchmark whose item type ``item`` is (the most derived match wins).

    Raises:
        ConfigError: no registered benchmark has items of that type.
    """
    matches = [b for b in list(BENCHMARKS.values()) if isinstance(item, b.item_type)]
    if not any(b.item_type is type(item) for b in matches):  # one not loaded yet may match it closer
        matches = [b for b in all_benchmarks() if isinstance(item, b.item_type)]
    if not matches:
        raise ConfigError(f"no registered benchmark has items of type {type(item).__name__}")
    return max(matches, key=lambda b: len(b.item_type.__mro__))


def owner_of(record: object) -> Benchmark[Any, Any]:
    """The benchmark a record belongs to: whose item it is, or whose ``data_records`` it is.

    Raises:
        ConfigError: no registered benchmark reads records of that type.
    """
    for benchmark in all_benchmarks():
        if any(isinstance(record, model) for _, model in benchmark.data.records):
            return benchmark
    return benchmark_of(record)
