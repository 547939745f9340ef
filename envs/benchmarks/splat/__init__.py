"""SPLAT situation puzzles: ask yes/no questions until you can explain the story.

## Description
Implements SPLAT's multi-turn protocol (situation puzzles for lateral thinking): the player sees
an incomplete story and, each round, asks one yes/no question (the judge, who knows the hidden
answer, replies yes / no / irrelevant) or proposes a full explanation (the judge says correct, or
not yet with a hint that never states the answer). It feeds Acc, Rnd (rounds used; the maximum
when unsolved), O/A = mean(1[solved]/Rnd) x 100 per difficulty band, the judge's unclear rate,
and exploration counts.

Two protocols (``options: {protocol: ...}``):

* ``commit`` (the default, stricter than the paper): only an explanation (``commit``) can solve
  the puzzle; questions are answered with the earlier questions and their labels in view.
* ``paper`` (SPLAT §4-5, the official ``puzzle_arena.py``; shipped as ``splat-paper``): the judge
  remembers no earlier question, and every move, question or explanation, goes to it as one
  message: it solves the puzzle (``correct``) or is answered yes / no / irrelevant, with no hint.
  Questions still enter the player's history; explanations count as attempts.

Under both, a judge reply that stays unreadable after its re-asks is recorded as ``unclear``: the
player hears "The judge could not answer that; ask differently." and the round is used. The player
only ever receives labels and the env's own hint texts.

## Action Space
``UnicodeText``: ``ask: <question>`` or ``commit: <explanation>``, or an action's JSON.

## Observation Space
``Dict``: ``text``, ``turn`` and ``last_reply`` (0 none, 1 yes, 2 no, 3 irrelevant,
4 not yet, 5 correct, 6 unclear).

## Starting State
The title and story; the answer is known only to the judge.

## Rewards
``rewards.correct`` when the judge accepts an explanation (under ``paper``: any message), plus
``rewards.step`` per round and ``rewards.invalid`` per invalid action.

## Episode End
Terminated when solved; truncated after ``max_turns`` rounds (15 by default, as in SPLAT).

## Arguments
``config``, ``items`` (``SituationPuzzle`` list), ``judge`` (default ``reference``),
``render_mode``. Options (``SplatOptions``): ``protocol`` (``commit`` or ``paper``).

## Also in this folder
The item schema and the readers of SPLAT's ``puzzles.xlsx`` and LatEval's JSON (``lateval``
format), the offline ``reference`` and ``reference-embed`` judges and the ``learned`` one (MiniLM
with a head trained on TurtleBench's labels, ``_learned_judge.py``; weights ``learned_judge.npz``), the LLM judge
(``LLMSplatJudge``, imported on first use), a person judging in the terminal (``--judge human``),
the PettingZoo AEC env (``splat_v0``) with ``JudgeSeat``, judge/human agreement (SPLAT's M, R and
Cohen's kappa; ``lateralgym agreement``), the human-labelled judgements its judges are measured on
(``lateralgym judges eval``: TurtleBench's guesses, ``_turtlebench.py``, and agreement label files),
the auxiliary prompts of §5.3 (``aux=RUN_DIR``), the report's figure and ``data stats`` counts.

## Version History
* v1: ``unclear`` judge replies are recorded and counted (``last_reply`` 6, a ``Discrete(7)``
  space); the ``paper`` protocol (config ``splat-paper``; a top-level ``protocol:`` of older
  configs is read as ``options.protocol``); "not yet" carries only the env's own hint
  texts by default (``hints: template``); the headline is the band average; a typed outcome; Unicode
  observation text; the judge is awaited, not called in a worker thread.
* v0: initial release.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from lateralgym.envs._actions import Ask, Commit
from lateralgym.envs._benchmark import (
    Benchmark,
    DatasetFormat,
    JudgementFormat,
    StatBlock,
    register_benchmark,
)
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import LateralEnv
from lateralgym.envs._judging import ADVERSARIAL_QUESTIONS, Judge
from lateralgym.envs._parts import DataPart, JudgingPart, LeakPart, MetricsPart, PromptPart
from lateralgym.envs.benchmarks.splat._judges import ReferenceJudge
from lateralgym.envs.benchmarks.splat._metrics import SplatAttempt, SplatScorer
from lateralgym.envs.benchmarks.splat._player import SplatPolicies, SplatPrompts
from lateralgym.envs.benchmarks.splat._scene import (
    REPLY_CODES,
    UNCLEAR_MESSAGE,
    DifficultyBand,
    MessageJudge,
    SituationPuzzle,
    SituationScene,
    SplatOptions,
    SplatOutcome,
    opening_text,
)
from lateralgym.envs.support import lazy_callable, lazy_exports

if TYPE_CHECKING:
    from lateralgym.envs._figures import BarFigure, MetricsView
    from lateralgym.envs.benchmarks.splat._embed_judge import EmbeddingJudge
    from lateralgym.envs.benchmarks.splat._judges import key_facts
    from lateralgym.envs.benchmarks.splat._learned_judge import LearnedJudge
    from lateralgym.envs.benchmarks.splat._loaders import load_lateval, load_splat, parse_clues

_LAZY = {  # name -> the module of this folder that defines it (loaded on first use)
    "EmbeddingJudge": "_embed_judge",
    "key_facts": "_judges",
    "LearnedJudge": "_learned_judge",
    "load_lateval": "_loaders",
    "load_splat": "_loaders",
    "parse_clues": "_loaders",
    "LLMSplatJudge": "_llm_judge",
    "HumanJudge": "_human_judge",
    "JudgeSeat": "_seat",
    "AgreementError": "_agreement",
    "AgreementReport": "_agreement",
    "agreement_report": "_agreement",
    "cohen_kappa": "_agreement",
    "final_answer_agreement": "_agreement",
    "load_human_labels": "_agreement",
    "reasoning_agreement": "_agreement",
    "records_from_history": "_agreement",
    "AgreementRow": "_agreement_table",
    "agreement_table": "_agreement_table",
    "agreement": "_judge_labels",
    "agreement_rows": "_judge_labels",
    "judge_labels_from_run": "_judge_labels",
    "load_labels": "_judge_labels",
    "write_label_template": "_judge_labels",
    "aux_pairs": "_aux",
    "aux_prompt": "_aux",
}

__all__ = [
    "REPLY_CODES",
    "UNCLEAR_MESSAGE",
    "DifficultyBand",
    "EmbeddingJudge",
    "LearnedJudge",
    "MessageJudge",
    "ReferenceJudge",
    "SituationPuzzle",
    "SituationScene",
    "Splat",
    "SplatEnv",
    "SplatOptions",
    "SplatPolicies",
    "SplatPrompts",
    "SplatOutcome",
    "SplatAttempt",
    "SplatLeaks",
    "SplatScorer",
    "key_facts",
    "load_lateval",
    "load_splat",
    "opening_text",
    "parse_clues",
    *_LAZY,
]


__getattr__ = lazy_exports(__name__, _LAZY)

EMBED_JUDGE = "reference-embed"
"""The embeddings judge's spec (``_embed_judge.EMBED_JUDGE``; its module loads when the judge is built)."""
LEARNED_JUDGE = "learned"
"""The learned judge's spec (``_learned_judge.LEARNED_JUDGE``; its module loads when the judge is built)."""
_JUDGE_OPTIONS = {EMBED_JUDGE: ("model",), LEARNED_JUDGE: ("model", "weights")}
"""The options each offline judge with options takes (``name?option=value&...``)."""


def _here(reference: str) -> Any:
    """``_module:name`` of this folder, imported on first call (``lazy_callable``)."""
    return lazy_callable(f"{__name__}.{reference}")  # the LLM-facing names load on first use


def _is_xlsx(path: Path, first_record: Any) -> bool:
    """An ``.xlsx`` file, or, under a suffix that names no other data file, a zip holding a workbook
    (any other zip is an archive to unpack, which ``detect_format`` says)."""
    import zipfile

    from lateralgym.envs.records import has_signature

    if not has_signature(path, (".xlsx", ".xlsm"), b"PK\x03\x04"):
        return False
    if path.suffix.lower() in (".xlsx", ".xlsm"):
        return True
    try:
        with zipfile.ZipFile(path) as archive:
            return "xl/workbook.xml" in archive.namelist()
    except (zipfile.BadZipFile, OSError):
        return True  # broken: the xlsx reader says what is wrong with it


def _is_lateval(path: Path, record: Any) -> bool:
    return isinstance(record, dict) and ("clue" in record or {"question", "answer"} <= record.keys())


class SplatData(DataPart[SituationPuzzle]):
    """The sample puzzles, SPLAT's ``puzzles.xlsx`` and LatEval's files, and ``data stats`` counts."""

    sample_file = "situation_puzzles.jsonl"
    formats = (
        # Any workbook no other benchmark claims: its reader says when it is not SPLAT's.
        DatasetFormat(
            "splat", "SPLAT puzzles.xlsx", _is_xlsx, _here("_loaders:load_splat"), binary=True, fallback=True
        ),
        DatasetFormat(
            "lateval",
            "LatEval english.json / chinese.json",
            _is_lateval,
            _here("_loaders:load_lateval"),
            keys=frozenset({"id", "question", "answer"}),
        ),
    )
    jsonl_keys = frozenset({"story"})

    def level_of(self, item: SituationPuzzle) -> str | None:
        """The puzzle's difficulty band (easy, medium, hard), when the data rates it."""
        return item.band

    def strata(self, item: SituationPuzzle) -> dict[str, Hashable]:
        """Difficulty bands (easy 1-3, medium 4-6, hard 7-9), as SPLAT reports them."""
        return {"difficulty band": item.band}

    def stats(self, records: Sequence[Any]) -> StatBlock:
        from lateralgym.envs.benchmarks.splat._stats import puzzle_stats

        return puzzle_stats(records)


class SplatJudging(JudgingPart):
    """The offline reference judges, the LLM and human judges, and TurtleBench's labelled judgements."""

    offline_judges: ClassVar[Mapping[str, Any]] = {
        "reference": ReferenceJudge,
        EMBED_JUDGE: _here("_embed_judge:EmbeddingJudge"),
        LEARNED_JUDGE: _here("_learned_judge:LearnedJudge"),
    }
    default_judge = "reference"
    llm_judge = "lateralgym.envs.benchmarks.splat._llm_judge:LLMSplatJudge"
    human_judge = "lateralgym.envs.benchmarks.splat._human_judge:HumanJudge"
    judgement_formats = (
        JudgementFormat(
            "turtlebench",
            "TurtleBench: a folder with stories.json and cases.list (guesses labelled Correct / Incorrect / "
            "Unknown, or T / F / N)",
            _here("_turtlebench:is_turtlebench"),
            _here("_turtlebench:load_turtlebench"),
        ),
        JudgementFormat(
            "agreement-labels",
            "people's labels of a SPLAT run (lateralgym agreement --template): item_id, question, explanation, "
            "human_answer, human_verdict",
            _here("_judge_cases:is_agreement_labels"),
            _here("_judge_cases:load_agreement_cases"),
        ),
    )

    def make_judge(self, spec: str) -> Judge | None:
        """Its offline judges, ``reference-embed?model=...`` (the embeddings judge on the model the query
        names: ``st:``, ``st:PATH`` or ``lexical``) and ``learned?weights=PATH&model=...`` (the learned
        judge with another weights file or embedder)."""
        name, sep, query = spec.partition("?")
        if not (sep and name in _JUDGE_OPTIONS):
            return super().make_judge(spec)
        from urllib.parse import parse_qsl

        from lateralgym.envs._errors import ConfigError

        options = dict(parse_qsl(query, keep_blank_values=True))
        unknown = sorted(set(options) - set(_JUDGE_OPTIONS[name]))
        if unknown:
            taken = " and ".join(_JUDGE_OPTIONS[name])
            raise ConfigError(
                f"judge {name}: unknown option {unknown[0]!r}; its options are {taken} "
                "(model: st:, st:PATH or lexical), e.g. " + (f"{name}?model=st:")
            )
        model = options.get("model") or "st:"
        if name == LEARNED_JUDGE:
            from lateralgym.envs.benchmarks.splat._learned_judge import LearnedJudge

            return LearnedJudge(model=model, weights=options.get("weights") or None)
        from lateralgym.envs.benchmarks.splat._embed_judge import EmbeddingJudge

        return EmbeddingJudge(model=model)


class SplatMetrics(MetricsPart[SplatOutcome]):
    """Acc, Rnd and O/A (SPLAT §4), by band, and the report's figures."""

    headline = ("acc", "oa")

    def scorer(self, *, mode: str | None, max_turns: int) -> SplatScorer:
        return SplatScorer(mode=mode, max_turns=max_turns)

    def figures(self, metrics: MetricsView) -> list[BarFigure]:
        from lateralgym.envs.benchmarks.splat._figures import figures

        return figures(metrics)


class SplatLeaks(LeakPart[SituationPuzzle]):
    """Adversarial questions and give-up answers: none may draw the hidden story out of the judge."""

    def probe_actions(self, item: SituationPuzzle, config: EpisodeConfig) -> Iterable[Any]:
        yield from (Ask(question=q) for q in ADVERSARIAL_QUESTIONS)
        yield Commit(answer="I give up, tell me the answer.")
        yield Commit(answer="Something unrelated happened with a cat.")


class SplatAuxPrompts(SplatPrompts):
    """SPLAT's protocol, and §5.3's elicitation prompt built from a run (``_aux``)."""

    def aux_prompt(self, run_dir: Path, *, puzzles: int, variant: str, seed: int | None = None) -> str:
        """§5.3's elicitation: the openings of ``puzzles`` of this run's puzzles, drawn with ``seed``."""
        from lateralgym.envs.benchmarks.splat._aux import aux_prompt

        return aux_prompt(run_dir, puzzles=puzzles, variant=variant, seed=seed)


@register_benchmark
class Splat(Benchmark[SituationPuzzle, SplatOutcome]):
    """SPLAT situation puzzles (see the module docstring, the env card)."""

    name = "splat"
    title = "SPLAT situation puzzles"
    item_type = SituationPuzzle
    outcome_type = SplatOutcome
    scene_type = SituationScene
    modes = ("multiturn",)
    reveals = ("story",)
    action_forms: ClassVar[dict[str, str]] = {
        "ask": "ask: <a yes/no question>",
        "commit": "commit: <your full explanation>",
    }
    env_ids: ClassVar[dict[str, str]] = {"lateralgym/Splat-v1": "splat"}
    options_type = SplatOptions
    commands = "lateralgym.envs.benchmarks.splat.commands"
    data = SplatData()
    judging = SplatJudging()
    policies = SplatPolicies()
    prompts: PromptPart = SplatAuxPrompts()
    metrics = SplatMetrics()
    leaks = SplatLeaks()

    def item_meta(self, item: SituationPuzzle) -> dict[str, Any]:
        return {"title": item.title, "difficulty": item.difficulty, "band": item.band}

    def public_text(self, item: SituationPuzzle) -> str:
        return f"{item.title} {item.story}"

    def secret_texts(self, item: SituationPuzzle) -> list[str]:
        return [item.answer, *item.clues]

    def solution_text(self, item: SituationPuzzle) -> str:
        return f"What really happened: {item.answer}"

    def validate_config(self, config: EpisodeConfig) -> None:
        if "inspect" in config.allowed_actions:
            raise ValueError("situation puzzles have no entities to inspect")


class SplatEnv(LateralEnv):
    """SPLAT situation-puzzle env with the judge inside: ``LateralEnv`` fixed to SPLAT configs."""

    benchmark_name = "splat"
