"""RiddleSense: multiple-choice riddles that need commonsense and linguistic creativity (ACL 2021 Findings).

## Description
Each item is a riddle with five options (A-E), one intended. One episode is one riddle; the
metric is accuracy (RiddleSense §4: a question, five lettered options, one answer), best-of-R
and mean-of-R under repeats. It is also the proof that a benchmark is one module: this file
and its registration are all LateralGym needed.

## Action Space
``UnicodeText``: ``commit: <A-E or 0-4>``, or the option's text.

## Observation Space
``Dict``: ``text`` (riddle and lettered options), ``turn``.

## Starting State
The riddle and its options; the label is hidden.

## Rewards
``rewards.correct`` for the right option, else 0 (plus ``rewards.invalid`` for an invalid action).

## Episode End
Terminated on a valid commit, or when the single turn is spent on an invalid one.

## Arguments
``config``, ``items`` (``Riddle`` list; default the 30 sample riddles written for LateralGym, or
the official ``rs_dev.jsonl`` / ``rs_train.jsonl`` via ``--data``), ``judge`` (``exact``),
``render_mode``.

## Version History
* v0: initial release.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from pydantic import ValidationError

from lateralgym.envs._benchmark import DatasetFormat, register_benchmark
from lateralgym.envs._errors import DatasetError
from lateralgym.envs._parts import DataPart, MetricsPart
from lateralgym.envs._scoring import Scorer, SuccessScorer
from lateralgym.envs.benchmarks._mcq import (
    ChoiceOutcome,
    ChoiceScene,
    MultipleChoiceBenchmark,
    MultipleChoiceItem,
    MultipleChoicePrompts,
)

OFFICIAL_LABELS = "ABCDE"
"""The official files letter the five options A-E."""


class Riddle(MultipleChoiceItem):
    """A RiddleSense riddle."""

    concept: str = ""
    """The concept the riddle is about (the release's ``question_concept``). It often names the
    answer, so it is never shown to the player nor logged as metadata."""


def _is_official(path: Path, first_record: Any) -> bool:
    return isinstance(first_record, dict) and isinstance(first_record.get("question"), dict)


def load_riddlesense(path: str | Path) -> list[Riddle]:
    """Read an official RiddleSense file (``rs_train.jsonl``, ``rs_dev.jsonl``).

    Each line is ``{"answerKey": "C", "id": ..., "question": {"question_concept": ..., "choices":
    [{"label": "A", "text": ...}, ...], "stem": ...}}``. The hidden test split has no
    ``answerKey`` and cannot be scored: such a file is refused with a clear error. Every value
    there is text; ids are unique (a line without one is ``rs-line-<n>``).

    Raises:
        DatasetError: naming the file, the line and the field.
    """
    from lateralgym.envs._errors import validation_message
    from lateralgym.envs._samples import brief, json_lines, read_lines
    from lateralgym.envs.records import existing_file, text, unique_id

    path = existing_file(path)
    riddles: list[Riddle] = []
    seen: dict[str, str] = {}
    for number, record in json_lines(path, read_lines(path)):
        where = f"line {number}"
        if not isinstance(record, dict) or not isinstance(record.get("question"), dict):
            raise DatasetError(path, "expected an object with a 'question' object", record=where, field="question")
        question = record["question"]
        choices = question.get("choices")
        if not isinstance(choices, list) or not all(isinstance(c, dict) for c in choices):
            raise DatasetError(path, "expected a list of {label, text} objects", record=where, field="question.choices")
        labels = [
            text(c.get("label"), path, where, f"question.choices[{i}].label").upper() for i, c in enumerate(choices)
        ]
        if "answerKey" not in record:
            raise DatasetError(
                path,
                "has no answerKey (the hidden test split?): it cannot be scored; use rs_dev.jsonl or rs_train.jsonl",
                record=where,
                field="answerKey",
            )
        key = text(record["answerKey"], path, where, "answerKey").upper()
        if key not in labels:
            raise DatasetError(
                path, f"answerKey {brief(key)} is not among the labels {brief(labels)}", record=where, field="answerKey"
            )
        riddle_id = text(record.get("id"), path, where, "id") or f"rs-line-{number}"
        unique_id(seen, riddle_id, path, where, at=where)
        try:
            riddles.append(
                Riddle(
                    id=riddle_id,
                    question=text(question.get("stem"), path, where, "question.stem"),
                    choices=tuple(
                        text(c.get("text"), path, where, f"question.choices[{i}].text") for i, c in enumerate(choices)
                    ),
                    label=labels.index(key),
                    concept=text(question.get("question_concept"), path, where, "question.question_concept"),
                )
            )
        except ValidationError as exc:
            field, message = validation_message(exc)
            raise DatasetError(path, message, record=where, field=field) from exc
    if not riddles:
        raise DatasetError(path, "holds no riddles")
    return riddles


class RiddleScene(ChoiceScene):
    """The rules of one riddle (the shared multiple-choice rules)."""


class RiddleData(DataPart[Riddle]):
    """The 30 sample riddles, the official files, and what ``data stats`` counts."""

    sample_file = "riddlesense.jsonl"
    formats = (
        DatasetFormat(
            "riddlesense",
            "RiddleSense rs_train.jsonl / rs_dev.jsonl",
            _is_official,
            load_riddlesense,
            keys=frozenset({"id", "question", "answerKey"}),
        ),
    )
    jsonl_keys = frozenset({"choices"})

    def stat_axes(self, item: Riddle) -> dict[str, Any]:
        return {"options": len(item.choices), "answer position": "ABCDE"[item.label]}


class RiddlePrompts(MultipleChoicePrompts):
    """RiddleSense §4's protocol in our own words: a riddle, five lettered options, one letter back."""

    intro = """\
You will be given a riddle and five lettered options. A riddle describes something in figurative, \
misleading or playful terms; exactly one option is what it describes. Read every clue literally \
and figuratively, and choose the option that fits all of them.
"""


class RiddleMetrics(MetricsPart[ChoiceOutcome]):
    """Accuracy (best-of-R and mean-of-R under repeats)."""

    headline = ("accuracy",)

    def scorer(self, *, mode: str | None, max_turns: int) -> Scorer[Any, Any]:
        return SuccessScorer(self.benchmark, mode=mode, max_turns=max_turns, metric="accuracy")


@register_benchmark
class RiddleSense(MultipleChoiceBenchmark):
    """RiddleSense (see the module docstring, the env card)."""

    name = "riddlesense"
    title = "RiddleSense (ACL 2021 Findings)"
    item_type = Riddle
    outcome_type = ChoiceOutcome
    scene_type = RiddleScene
    action_forms: ClassVar[dict[str, str]] = {"commit": "commit: <choice letter A-E>"}
    env_ids: ClassVar[dict[str, str]] = {"lateralgym/RiddleSense-v0": "riddlesense"}
    data = RiddleData()
    prompts = RiddlePrompts()
    metrics = RiddleMetrics()
