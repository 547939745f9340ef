"""BrainTeaser: multiple-choice lateral-thinking puzzles (EMNLP 2023; SemEval-2024 Task 9).

## Description
Sentence and word puzzles, each with a semantic and a context reconstruction, four choices
including "None of above.". One episode is one puzzle. It feeds instance accuracy per variant
(original, semantic, context), group accuracy (ori&sem, ori&sem&con) and the overall mean, per
puzzle kind (paper §4-5).

## Action Space
``UnicodeText``: ``commit: <A-D or 0-3>``; the choice's text is accepted too, matched as written
first (``The letter N.`` and ``The Letter N.`` are different options), and a text that several
different options share in looser forms is no answer. Anything else is answered as invalid and
counts as the one turn.

## Observation Space
``Dict``: ``text`` (question and lettered choices), ``turn``.

## Starting State
The question and its choices; the label is hidden.

## Rewards
``rewards.correct`` for the right choice, else 0 (plus ``rewards.invalid`` for an invalid action).
An option whose text is exactly the intended option's (a release listing it twice) is right too.

## Episode End
Terminated on a valid commit, or when the single turn (``max_turns`` 1, the default) is spent
on an invalid one; truncated after ``max_turns`` turns when more are allowed.

## LLM players
``options.layout: paper`` (the default; ``_layout.py``): the official notebook's prompt, in our
words: one user message with the instruction, ``Question:``, ``Choice:``, ``(A) <text>`` lines and
``Answer:``; few-shot demonstrations inside that message, each answered ``Answer:(B) <option
text>``; a reply read as the notebook reads it (the first bracketed letter), else by our tolerant
parser. ``layout: lateralgym``: ``QUESTION:`` / ``CHOICES:`` with ``A. <text>`` lines, the task in
the system prompt, one letter back (``Answer: B``), worked examples as chat turns. Few-shot
(``few_shot=N``): ``N`` of the shipped worked examples, or, with ``demos=PATH`` to the official
``demonstration.npy``, ``N`` in 2, 4, 6, 8 of its puzzles, half sentence and half word puzzles,
chosen as the paper's notebooks choose them.

## Runs
``--limit N`` plays the first ``N`` puzzles and every other member of their groups, so each
played group has all its variants and group accuracy stays defined.

## Metrics
Instance accuracy per variant and group accuracy (ori&sem, ori&sem&con), as the paper's
``Prompting/utils.py`` computes them over complete groups. Under ``--repeats R`` every figure has a
best-of-R and a mean-of-R: group accuracy's mean-of-R is the mean over the R repeats of the group
accuracy of that repeat's answers, so the paper's random baseline ("average of 3 seeds") is one
command: ``lateralgym run brainteaser --player random --repeats 3`` (each repeat's episodes draw
from their own seeds).

## Arguments
``config``, ``items`` (``MCQPuzzle`` list; default the sample data), ``judge`` (default ``exact``),
``render_mode``. Options (``BrainTeaserOptions``): ``layout`` (``paper`` or ``lateralgym``).

## Version History
* v1 additions: ``options.layout`` (default ``paper``, the official notebook's layout: the observation
  is now ``Question: ... Choice: (A) ... Answer:``; ``lateralgym`` keeps the earlier one); group
  accuracy's mean-of-R.
* v1: an option named by its own text is that option, exactly (v0 took the first near match: the
  official WP-4_CR and WP-104_CR graded right answers wrong); an option reading exactly as the
  intended one is correct; a typed outcome; Unicode observation text (v0 replaced ``π`` by ``?``).
* v0: initial release.
"""

from __future__ import annotations

import functools
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from lateralgym.envs._actions import Action, Commit
from lateralgym.envs._benchmark import DatasetFormat, PromptRequest, StatBlock, register_benchmark
from lateralgym.envs._engine import LateralEnv
from lateralgym.envs._errors import ConfigError
from lateralgym.envs._parts import DataPart, MetricsPart
from lateralgym.envs._scoring import Scored, ScoredEpisode, Scorer, mean, put, success_rates
from lateralgym.envs.benchmarks._mcq import (
    ChoiceOutcome,
    ChoiceScene,
    MultipleChoiceBenchmark,
    MultipleChoiceItem,
    MultipleChoicePrompts,
)
from lateralgym.envs.benchmarks._mcq_reply import LETTERS
from lateralgym.envs.benchmarks.brainteaser import _figures
from lateralgym.envs.benchmarks.brainteaser._layout import (
    PAPER_SYSTEM,
    BrainTeaserOptions,
    Layout,
    first_bracketed_letter,
    paper_block,
    paper_message,
)
from lateralgym.envs.benchmarks.brainteaser._loaders import load_brainteaser, load_brainteaser_demonstrations
from lateralgym.envs.benchmarks.brainteaser._schema import NONE_OF_ABOVE, MCQPuzzle, PuzzleKind, PuzzleVariant
from lateralgym.envs.benchmarks.brainteaser._stats import puzzle_stats

if TYPE_CHECKING:
    import numpy as np

    from lateralgym.envs._figures import BarFigure, MetricsView

__all__ = [
    "BRAINTEASER_EXAMPLES",
    "NONE_OF_ABOVE",
    "BrainTeaser",
    "BrainTeaserEnv",
    "BrainTeaserOptions",
    "BrainTeaserOutcome",
    "BrainTeaserScene",
    "BrainTeaserScorer",
    "Layout",
    "MCQPuzzle",
    "PuzzleKind",
    "PuzzleVariant",
    "demonstration_messages",
    "example_messages",
    "load_brainteaser",
    "load_brainteaser_demonstrations",
]

VARIANTS = ("original", "semantic", "context")
KINDS = ("sentence", "word")

_BRAINTEASER_ID = re.compile(r"^(?P<group>(?P<kind>SP|WP)-\d+)(?P<suffix>_SR|_CR)?$")
_SUFFIX_VARIANT = {None: "original", "_SR": "semantic", "_CR": "context"}


class BrainTeaserOutcome(ChoiceOutcome):
    """A BrainTeaser episode's outcome: the choice, and where the puzzle belongs."""

    group_id: str
    """The original puzzle's id, shared by its reconstructions."""
    kind: PuzzleKind
    """``sentence`` or ``word``."""
    variant: PuzzleVariant
    """``original``, ``semantic`` or ``context``."""


class BrainTeaserScene(ChoiceScene):
    """The rules of one BrainTeaser puzzle."""

    outcome_type = BrainTeaserOutcome

    def brief(self) -> str:
        """The paper's layout (one message ending ``Answer:``), or ours (``ChoiceScene.brief``)."""
        if self.config.options_as(BrainTeaserOptions).layout == "paper":
            return paper_message(self.item.question, self.item.choices)
        return super().brief()

    def public(self) -> dict[str, Any]:
        """The question, its choices and the prompt layout the config chose."""
        return {**super().public(), "layout": self.config.options_as(BrainTeaserOptions).layout}

    def extra_outcome(self) -> dict[str, Any]:
        item = self.item
        assert isinstance(item, MCQPuzzle)
        return {"group_id": item.group_id, "kind": item.kind, "variant": item.variant}


BRAINTEASER_EXAMPLES: tuple[dict[str, Any], ...] = (
    {
        "question": (
            "Ines kept a candle burning on her windowsill every night for a whole month, yet at the end "
            "it was exactly as tall as on the day she bought it. How?"
        ),
        "choices": (
            "She bought an unusually tall candle.",
            "It was a battery-powered candle with a flickering bulb, so nothing burned away.",
            "She lit it for only a second each night.",
            "None of above.",
        ),
        "reasoning": (
            "The puzzle invites us to picture a wax candle that melts as it burns. A tall candle or a "
            "brief lighting would still lose some height; a candle that only glows electrically never "
            "gets shorter."
        ),
        "answer": 1,
    },
    {
        "question": "Which four-letter word reads the same backwards and names the middle of the day?",
        "choices": ("Dawn", "Dusk", "Noon", "None of above."),
        "reasoning": (
            "This is about the letters, not the clock. Dawn and dusk are not the middle of the day, and "
            "only N-O-O-N is spelled the same in both directions."
        ),
        "answer": 2,
    },
    {
        "question": "Which of these words contains each of the vowels a, e, i, o and u?",
        "choices": ("Audio", "Mountain", "Lettuce", "None of above."),
        "reasoning": (
            "Check the letters one by one: audio has no e, mountain has no e, lettuce has no a, i or o. "
            "No listed word has all five, so the last option is the one that holds."
        ),
        "answer": 3,
    },
)
"""Original worked puzzles for few-shot prompts (sentence, word, and a none-of-above case)."""


PAPER_SHOTS = (2, 4, 6, 8)
"""The demonstration counts the paper reports (§4): half sentence puzzles, half word puzzles."""


def example_messages(reasoning: str, shots: int | None = None) -> list[dict[str, str]]:
    """The shipped worked examples (the first ``shots``; all when None) as chat turns, laid out as
    the env shows puzzles.

    Raises:
        ConfigError: ``shots`` is more than the shipped examples.
    """
    count = len(BRAINTEASER_EXAMPLES) if shots is None else shots
    if not 0 < count <= len(BRAINTEASER_EXAMPLES):
        raise ConfigError(
            f"few_shot={count}: BrainTeaser ships {len(BRAINTEASER_EXAMPLES)} worked examples; give the "
            f"official demonstration file (demos=PATH/demonstration.npy) for {', '.join(map(str, PAPER_SHOTS))}"
        )
    messages: list[dict[str, str]] = []
    for example in BRAINTEASER_EXAMPLES[:count]:
        answer = f"Answer: {LETTERS[example['answer']]}"
        reply = f"{example['reasoning']}\n{answer}" if reasoning == "cot" else answer
        messages.append({"role": "user", "content": _puzzle_text(example["question"], example["choices"])})
        messages.append({"role": "assistant", "content": reply})
    return messages


def _puzzle_text(question: str, choices: Sequence[str]) -> str:
    options = "\n".join(f"{LETTERS[n]}. {text}" for n, text in enumerate(choices))
    return f"QUESTION: {question}\nCHOICES:\n{options}"


@functools.cache
def _demonstrations(path: str) -> tuple[MultipleChoiceItem, ...]:
    return tuple(load_brainteaser_demonstrations(path))


def demonstration_messages(path: str, shots: int | None = None) -> list[dict[str, str]]:
    """The official demonstrations as chat turns: ``shots`` of them (all when None), chosen as the
    paper's notebooks choose them: the first ``shots / 2`` of the file's first half (sentence
    puzzles) and the first ``shots / 2`` of its second half (word puzzles). Each reply is the
    letter alone (the demonstrations carry no reasoning).

    Raises:
        ConfigError: ``shots`` is odd or more than the file holds.
        DatasetError: the file is not a demonstration file.
    """
    chosen = _chosen_demonstrations(path, shots)
    messages: list[dict[str, str]] = []
    for demo in chosen:
        messages.append({"role": "user", "content": _puzzle_text(demo.question, demo.choices)})
        messages.append({"role": "assistant", "content": f"Answer: {LETTERS[demo.label]}"})
    return messages


def _chosen_demonstrations(path: str, shots: int | None) -> list[MultipleChoiceItem]:
    """The demonstrations the paper's notebooks choose: the first ``shots / 2`` of each half of the file.

    Raises:
        ConfigError: ``shots`` is odd or more than the file holds.
    """
    demos = _demonstrations(path)
    count = len(demos) if shots is None else shots
    half = len(demos) // 2
    if count <= 0 or count % 2 or count // 2 > half:
        raise ConfigError(
            f"few_shot={count}: {path} holds {len(demos)} demonstrations, half sentence and half word "
            f"puzzles; ask for an even number up to {2 * half} (the paper uses {', '.join(map(str, PAPER_SHOTS))})"
        )
    return [*demos[: count // 2], *demos[half : half + count // 2]]


def paper_demonstrations(request: PromptRequest) -> list[str]:
    """The few-shot blocks of the paper's layout (``Answer:(B) <option text>``): the official
    demonstrations when a file is given, else the shipped worked examples.

    Raises:
        ConfigError: a count the file or the shipped examples cannot give.
    """
    if not request.few_shot:
        return []
    if request.demonstrations is not None:
        chosen = _chosen_demonstrations(request.demonstrations, request.shots)
        return [paper_block(d.question, d.choices, d.label) for d in chosen]
    count = len(BRAINTEASER_EXAMPLES) if request.shots is None else request.shots
    if not 0 < count <= len(BRAINTEASER_EXAMPLES):
        raise ConfigError(
            f"few_shot={count}: BrainTeaser ships {len(BRAINTEASER_EXAMPLES)} worked examples; give the "
            f"official demonstration file (demos=PATH/demonstration.npy) for {', '.join(map(str, PAPER_SHOTS))}"
        )
    return [paper_block(e["question"], e["choices"], e["answer"]) for e in BRAINTEASER_EXAMPLES[:count]]


@dataclass(frozen=True, slots=True)
class PuzzleInfo:
    """Where a BrainTeaser puzzle belongs."""

    group_id: str
    kind: str
    variant: str


class BrainTeaserScorer(Scorer[bool, PuzzleInfo]):
    """Scores BrainTeaser; an episode's summary is whether its choice was correct."""

    def summarise(self, end: ScoredEpisode) -> bool:
        return end.ok and isinstance(end.outcome, BrainTeaserOutcome) and end.outcome.correct

    def describe(self, end: ScoredEpisode) -> PuzzleInfo:
        outcome = end.outcome
        if isinstance(outcome, BrainTeaserOutcome):
            return PuzzleInfo(group_id=outcome.group_id, kind=outcome.kind, variant=outcome.variant)
        # An episode that never started has no outcome: the metadata, then the official id scheme.
        parsed = _BRAINTEASER_ID.match(end.item_id)
        group = end.meta.get("group_id") or (parsed.group("group") if parsed else end.item_id)
        kind = end.meta.get("kind") or ({"SP": "sentence", "WP": "word"}[parsed.group("kind")] if parsed else "unknown")
        variant = end.meta.get("variant") or (_SUFFIX_VARIANT[parsed.group("suffix")] if parsed else "original")
        return PuzzleInfo(group_id=str(group), kind=str(kind), variant=str(variant))

    def score(self) -> Scored:
        kinds = sorted({info.kind for info in self.info.values()}, key=_kind_order)
        rows = [self._row(kind) for kind in (*kinds, "all")]
        headline = {k: v for k, v in rows[-1].items() if isinstance(v, float)}
        return Scored(headline=headline, breakdowns={"by_kind": rows})

    def _row(self, kind: str) -> dict[str, Any]:
        repeats = self.repeats
        items = [i for i, info in self.info.items() if kind in ("all", info.kind)]
        row: dict[str, Any] = {"kind": kind, "puzzles": len(items), "episodes": sum(len(self.items[i]) for i in items)}
        bests: list[float] = []
        plains: list[float] = []
        for variant in VARIANTS:
            chosen = [i for i in items if self.info[i].variant == variant]
            best, plain = success_rates(self.per_item(lambda correct: correct, chosen))
            put(row, f"{variant}_acc", best, plain, repeats)
            if best is not None and plain is not None:
                bests.append(best)
                plains.append(plain)
        put(row, "overall_acc", mean(bests), mean(plains), repeats)
        groups: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for i in items:
            groups[self.info[i].group_id][self.info[i].variant].append(i)
        for name, needed in (("ori_sem", VARIANTS[:2]), ("ori_sem_con", VARIANTS)):
            complete = [g for g in groups.values() if all(g.get(v) for v in needed)]
            solved = sum(all(self._best(i) for v in needed for i in g[v]) for g in complete)
            row[f"{name}_groups"] = len(complete)
            metric = f"group_{name}_acc" + (f"_best_of_{repeats}" if repeats > 1 else "")
            if complete:
                row[metric] = 100.0 * solved / len(complete)
            if complete and repeats > 1:
                # Mean of R: each repeat's group accuracy (its own answers to every member), averaged; the
                # paper's random baseline is this over three seeds.
                per_repeat = [
                    sum(all(self.items[i].get(r, False) for v in needed for i in g[v]) for g in complete)
                    for r in range(repeats)
                ]
                row[f"group_{name}_acc_mean_of_{repeats}"] = 100.0 * sum(per_repeat) / (len(complete) * repeats)
        return row

    def _best(self, item_id: str) -> bool:
        return any(self.items[item_id].values())

    def headline_resampled(self, counts: np.ndarray) -> dict[str, np.ndarray] | None:
        """Every resample of ``counts`` scored at once (``_resampled.py``): variant accuracies as
        ratios of sums, group accuracies from the members each resample drew."""
        from lateralgym.envs.benchmarks.brainteaser._resampled import resampled_headline

        return resampled_headline(self, counts, VARIANTS)


def _group(item: MultipleChoiceItem) -> str:
    return item.group_id if isinstance(item, MCQPuzzle) else item.id


def _kind_order(kind: str) -> tuple[int, str]:
    return (KINDS.index(kind) if kind in KINDS else len(KINDS), kind)


def _is_npy(path: Path, first_record: Any) -> bool:
    """A ``.npy`` file, or NumPy's magic bytes under a suffix that names no other data file."""
    from lateralgym.envs._npy import NPY_MAGIC
    from lateralgym.envs.records import has_signature

    return has_signature(path, (".npy",), NPY_MAGIC)


class BrainTeaserData(DataPart[MCQPuzzle]):
    """The sample puzzles, the official ``.npy`` files, and whole groups for a ``--limit`` run."""

    sample_file = "brainteaser.jsonl"
    formats = (
        DatasetFormat(
            "brainteaser",
            "BrainTeaser .npy (EMNLP, SemEval; test splits with *_answer.npy)",
            _is_npy,
            load_brainteaser,
            binary=True,
        ),
    )
    jsonl_keys = frozenset({"choices", "group_id"})

    def problem_of(self, item: MCQPuzzle) -> str:
        """The original puzzle: its semantic and context reconstructions pose the same problem."""
        return _group(item)

    def first_items(self, items: Sequence[MCQPuzzle], limit: int) -> list[MCQPuzzle]:
        """The first ``limit`` puzzles plus every other member of the groups they touch, in dataset
        order, so group accuracy is defined for every group a limited run plays (``--limit 5`` on
        groups of three plays two whole groups, six puzzles)."""
        groups = {_group(item) for item in list(items)[:limit]}
        return [item for item in items if _group(item) in groups]

    def stats(self, records: Sequence[Any]) -> StatBlock:
        return puzzle_stats(records)


class BrainTeaserMetrics(MetricsPart[BrainTeaserOutcome]):
    """Instance and group accuracy (the paper's Table 2), and its figures."""

    headline = ("overall_acc",)

    def scorer(self, *, mode: str | None, max_turns: int) -> BrainTeaserScorer:
        return BrainTeaserScorer(mode=mode, max_turns=max_turns)

    def figures(self, metrics: MetricsView) -> list[BarFigure]:
        return _figures.figures(metrics)


class BrainTeaserPrompts(MultipleChoicePrompts):
    """Our wording of the task, or the paper's layout (``options.layout: paper``)."""

    intro = """\
You will be given a brain teaser: a short puzzle that seems to have an obvious answer but is \
built to trip up ordinary common-sense reasoning, together with lettered options. Exactly one \
option is intended; "None of above" is right only when none of the other options works. Take \
the wording literally and look for the hidden assumption, the double meaning or the play on \
letters and words.
"""

    def system_prompt(self, request: PromptRequest) -> str:
        """The paper layout's generic assistant line, or our task description."""
        return PAPER_SYSTEM if request.layout == "paper" else super().system_prompt(request)

    def shows_env_forms(self, request: PromptRequest) -> bool:
        return request.layout != "paper"

    def first_message(self, request: PromptRequest, observation: str) -> str:
        """Under the paper layout, the few-shot demonstrations go inside the one message, before the puzzle."""
        if request.layout != "paper" or not request.few_shot:
            return observation
        instruction, separator, puzzle = observation.partition("\n \n")
        blocks = paper_demonstrations(request)
        return f"{instruction}{separator}" + "\n\n".join([*blocks, puzzle]) if separator else observation

    def parse_reply(self, text: str, info: Mapping[str, Any], reasoning: str | None) -> Action:
        """Under the paper layout, the first bracketed letter (as the notebook reads it), else our parser."""
        public = info.get("public") or {}
        if public.get("layout") == "paper":
            choice = first_bracketed_letter(text, len(public.get("choices", ())))
            if choice is not None:
                return Commit(choice=choice)
        return super().parse_reply(text, info, reasoning)

    def worked_examples(self, request: PromptRequest) -> list[dict[str, str]]:
        """Few-shot turns (our layout): the official demonstrations when a file is given (``few_shot=N`` of
        them, ``N`` in 2, 4, 6, 8 as in the paper), else the shipped worked examples. The paper layout puts
        them inside the first message instead (``first_message``)."""
        if not request.few_shot or request.layout == "paper":
            return []
        if request.demonstrations is not None:
            return demonstration_messages(request.demonstrations, request.shots)
        return example_messages(request.reasoning, request.shots)


@register_benchmark
class BrainTeaser(MultipleChoiceBenchmark):
    """BrainTeaser (see the module docstring, the env card)."""

    name = "brainteaser"
    title = "BrainTeaser (EMNLP 2023; SemEval-2024 Task 9)"
    item_type = MCQPuzzle
    outcome_type = BrainTeaserOutcome
    scene_type = BrainTeaserScene
    action_forms: ClassVar[dict[str, str]] = {"commit": "commit: <choice letter A-D>"}
    env_ids: ClassVar[dict[str, str]] = {"lateralgym/BrainTeaser-v1": "brainteaser"}
    options_type = BrainTeaserOptions
    data = BrainTeaserData()
    metrics = BrainTeaserMetrics()
    prompts = BrainTeaserPrompts()

    def item_meta(self, item: Any) -> dict[str, Any]:
        return {"group_id": item.group_id, "kind": item.kind, "variant": item.variant}


class BrainTeaserEnv(LateralEnv):
    """The BrainTeaser env: ``LateralEnv`` fixed to BrainTeaser configs (see the module's env card)."""

    benchmark_name = "brainteaser"
