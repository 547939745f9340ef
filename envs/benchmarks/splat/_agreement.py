"""How far a judge agrees with people (or with another judge): SPLAT's M and R, and Cohen's kappa.

* **M, final-answer agreement**: the share of puzzles where both sides give the same final
  verdict (``correct`` / ``not_yet``) on the player's explanation.
* **R, reasoning agreement**: the share of the player's questions where both sides give the same
  yes / no / irrelevant answer.
* **Cohen's kappa** on those question labels: agreement corrected for chance,
  ``(p_o - p_e) / (1 - p_e)``; undefined (NaN) when both sides use one and the same label throughout.

Labels are ``LabelRecord`` lists: one record per question and/or per verdict. People's labels come
from a file (``load_human_labels``): CSV or JSONL with the columns ``item_id``, ``question``
(optional), ``human_answer`` (yes/no/irrelevant) and/or ``human_verdict`` (correct/not_yet;
``not yet`` and ``incorrect`` are read as ``not_yet``), ``rationale`` (optional), ``annotator``
(optional: who labelled the row; default the file's name without extension, so several files are
several annotators) and ``band`` (optional: the puzzle's difficulty band). A CSV row with neither
label is an unlabelled row (a template row left blank) and is skipped. A judge's labels come from
its replies (``records_from_history``), so two judges compare the same way.

With several annotators, each side's labels are split by annotator and every (first annotator,
second annotator) combination is compared: M, R and kappa pool all those comparisons (SPLAT's
eqs. 6-7 summed over annotators). ``lateralgym.envs.benchmarks.splat._agreement_table`` adds the per-annotator,
per-band and annotator-versus-annotator rows.

Questions are paired within a puzzle by their text (case, spacing and punctuation ignored; a
question asked twice pairs in order) when both sides give the text, else by their order. An
item's final verdict is its last verdict record.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from lateralgym.envs._errors import DatasetError, LateralGymError
from lateralgym.envs._judging import ANSWER_LABELS, QA, AnswerLabel
from lateralgym.envs._matching import words
from lateralgym.envs._samples import json_lines, read_text
from lateralgym.envs._text import csv_text

Verdict = Literal["correct", "not_yet"]

_VERDICTS: dict[str, Verdict] = {
    "correct": "correct",
    "not_yet": "not_yet",
    "not yet": "not_yet",
    "not-yet": "not_yet",
    "notyet": "not_yet",
    "incorrect": "not_yet",
}
_FILE_FIELDS = {"answer": "human_answer", "verdict": "human_verdict"}


class AgreementError(LateralGymError, ValueError):
    """Two label sets cannot be compared: they share no puzzle or no question."""


class LabelRecord(BaseModel):
    """One label a person or a judge gave: a question's answer, a final verdict, or both."""

    model_config = ConfigDict(frozen=True)

    item_id: str
    """The puzzle the label is about."""
    question: str | None = None
    """The player's question, when known; questions are paired by it."""
    answer: AnswerLabel | None = None
    """yes / no / irrelevant to ``question``."""
    verdict: Verdict | None = None
    """The final verdict on the player's explanation."""
    rationale: str | None = None
    """Why, in the labeller's words (people's labels)."""
    explanation: str | None = None
    """The player's explanation a verdict is about, when the file gives it (``judges eval`` grades it)."""
    annotator: str | None = None
    """Who gave the label (people's labels; ``None`` for a judge's)."""
    band: str | None = None
    """The puzzle's difficulty band, when the label file gives it."""

    @field_validator("item_id", "annotator", mode="before")
    @classmethod
    def _id_text(cls, value: object) -> object:
        return str(value).strip() if isinstance(value, (int, str)) else value

    @field_validator("answer", mode="before")
    @classmethod
    def _answer(cls, value: object) -> object:
        if isinstance(value, str):
            text = value.strip().strip(".!").lower()
            return text or None
        return value

    @field_validator("verdict", mode="before")
    @classmethod
    def _verdict(cls, value: object) -> object:
        if isinstance(value, str):
            text = value.strip().strip(".!").lower()
            return _VERDICTS.get(text, text) if text else None
        return value


class AgreementReport(BaseModel):
    """Agreement of a first label set (usually a judge) with a second (usually people)."""

    model_config = ConfigDict(frozen=True)

    puzzles: int
    """Puzzles with a final verdict on both sides (once per annotator combination)."""
    final_answer_agreement: float | None
    """SPLAT's M: share of those puzzles with the same verdict; None without any."""
    questions: int
    """Questions answered on both sides."""
    reasoning_agreement: float | None
    """SPLAT's R: share of those questions with the same answer; None without any."""
    kappa: float | None
    """Cohen's kappa on the question answers; NaN when undefined, None without questions."""
    labels: tuple[str, ...] = ANSWER_LABELS
    """Row and column order of ``confusion``."""
    confusion: list[list[int]]
    """Question answers counted by (first side's label, second side's label)."""


def load_human_labels(path: str | Path) -> list[LabelRecord]:
    """Read people's labels from a ``.csv`` or ``.jsonl`` file (columns in the module docstring).

    Raises:
        DatasetError: the file is missing or unreadable, has another extension, lacks the
            ``item_id`` column or both label columns, or a row has a bad value (the message
            names the file, the line and the field).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in {".csv", ".jsonl", ".ndjson"}:
        raise DatasetError(path, f"human labels must be a .csv or .jsonl file, not {suffix or 'no extension'!r}")
    text = read_text(path)  # capped; unreadable or not UTF-8 is one line
    rows = _csv_rows(path, text) if suffix == ".csv" else _jsonl_rows(path, text)
    records = [_record(path, line, row) for line, row in rows]
    records = [r if r.annotator else r.model_copy(update={"annotator": path.stem}) for r in records]
    if not records:
        raise DatasetError(path, "the file holds no labels")
    return records


def _csv_rows(path: Path, text: str) -> Iterable[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(text.splitlines())
    columns = [c.strip() for c in reader.fieldnames or []]
    if "item_id" not in columns:
        raise DatasetError(path, f"no item_id column (columns: {columns})", record="line 1", field="item_id")
    if not {"human_answer", "human_verdict"} & set(columns):
        raise DatasetError(path, "needs a human_answer and/or a human_verdict column", record="line 1")
    for row in reader:
        # a template's cells were escaped against formulas (``csv_cell``): read the text as written
        cleaned = {(k or "").strip(): csv_text(v) if isinstance(v, str) else v for k, v in row.items()}
        if any((cleaned.get(k) or "").strip() for k in ("human_answer", "human_verdict")):
            yield reader.line_num, cleaned  # a row with neither label is left unlabelled (a template's)


def _jsonl_rows(path: Path, text: str) -> Iterable[tuple[int, dict[str, Any]]]:
    for number, row in json_lines(path, text.splitlines()):
        if not isinstance(row, dict):
            raise DatasetError(path, "each line must be a JSON object", record=f"line {number}")
        yield number, row


def _record(path: Path, line: int, row: Mapping[str, Any]) -> LabelRecord:
    where = f"line {line}"
    if not str(row.get("item_id") or "").strip():
        raise DatasetError(path, "item_id is missing or empty", record=where, field="item_id")
    data = {
        "item_id": row["item_id"],
        "question": _text(row.get("question")),
        "answer": row.get("human_answer") or None,
        "verdict": row.get("human_verdict") or None,
        "rationale": _text(row.get("rationale")),
        "explanation": _text(row.get("explanation")),
        "annotator": _text(row.get("annotator")),
        "band": _text(row.get("band")),
    }
    try:
        record = LabelRecord.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        name = str(error["loc"][0]) if error["loc"] else "item_id"
        field = _FILE_FIELDS.get(name, name)
        allowed = "yes, no or irrelevant" if name == "answer" else "correct or not_yet"
        hint = f"; use {allowed}" if name in _FILE_FIELDS else ""
        raise DatasetError(path, f"bad value {row.get(field)!r}{hint}", record=where, field=field) from None
    if record.answer is None and record.verdict is None:
        raise DatasetError(path, "a row needs human_answer or human_verdict", record=where, field="human_answer")
    return record


def _text(value: object) -> str | None:
    if value is None:
        return None
    text = str(value).strip()
    return text or None


def records_from_history(
    item_id: str, history: Sequence[QA | Sequence[str]], verdict: str | None = None
) -> list[LabelRecord]:
    """A judge's labels for one puzzle: its answers to ``history`` and its final verdict.

    Args:
        item_id: The puzzle.
        history: ``QA`` pairs, or ``[question, label]`` pairs as in ``info["public"]["history"]``.
        verdict: The final verdict (``correct``, ``not_yet``; ``incorrect`` reads as ``not_yet``).
    """
    records = []
    for entry in history:
        question, label = (entry.question, entry.label) if isinstance(entry, QA) else (entry[0], entry[1])
        records.append(LabelRecord.model_validate({"item_id": item_id, "question": question, "answer": label}))
    if verdict is not None:
        records.append(LabelRecord.model_validate({"item_id": item_id, "verdict": verdict}))
    return records


def final_verdicts(records: Iterable[LabelRecord]) -> dict[str, Verdict]:
    """Each item's final verdict: its last verdict record (records of one annotator)."""
    return {r.item_id: r.verdict for r in records if r.verdict is not None}


def by_annotator(records: Iterable[LabelRecord]) -> dict[str | None, list[LabelRecord]]:
    """Records split by annotator, in first-seen order (a judge's all fall under ``None``)."""
    groups: dict[str | None, list[LabelRecord]] = {}
    for record in records:
        groups.setdefault(record.annotator, []).append(record)
    return groups


def verdict_pairs(first: Iterable[LabelRecord], second: Iterable[LabelRecord]) -> list[tuple[str, str, str]]:
    """(item, first's final verdict, second's) for every item and annotator combination with a verdict
    on both sides."""
    pairs: list[tuple[str, str, str]] = []
    for a_records in by_annotator(first).values():
        a = final_verdicts(a_records)
        for b_records in by_annotator(second).values():
            b = final_verdicts(b_records)
            pairs += [(item, a[item], b[item]) for item in sorted(a.keys() & b.keys())]
    return pairs


def paired_answers(first: Iterable[LabelRecord], second: Iterable[LabelRecord]) -> list[tuple[str, str]]:
    """The (first, second) answer pairs of the questions both sides answered (see the module docstring),
    over every annotator combination."""
    pairs: list[tuple[str, str]] = []
    for a_records in by_annotator(first).values():
        for b_records in by_annotator(second).values():
            pairs += _paired_answers(a_records, b_records)
    return pairs


def _paired_answers(first: Iterable[LabelRecord], second: Iterable[LabelRecord]) -> list[tuple[str, str]]:
    a, b = _answers_by_item(first), _answers_by_item(second)
    pairs: list[tuple[str, str]] = []
    for item in sorted(a.keys() & b.keys()):
        left, right = a[item], b[item]
        if all(q for q, _ in left) and all(q for q, _ in right):
            by_text: dict[str, list[str]] = defaultdict(list)
            for question, label in right:
                by_text[_key(question)].append(label)
            for question, label in left:
                queue = by_text.get(_key(question))
                if queue:
                    pairs.append((label, queue.pop(0)))
        else:
            pairs += [(x, y) for (_, x), (_, y) in zip(left, right, strict=False)]
    return pairs


def _answers_by_item(records: Iterable[LabelRecord]) -> dict[str, list[tuple[str | None, str]]]:
    grouped: dict[str, list[tuple[str | None, str]]] = defaultdict(list)
    for r in records:
        if r.answer is not None:
            grouped[r.item_id].append((r.question, r.answer))
    return grouped


def _key(question: str | None) -> str:
    return " ".join(words(question or ""))


def final_answer_agreement(first: Iterable[LabelRecord], second: Iterable[LabelRecord]) -> float:
    """SPLAT's M: the share of puzzles, with a final verdict on both sides, where the verdicts agree
    (over every annotator combination).

    Raises:
        AgreementError: no puzzle has a verdict on both sides.
    """
    pairs = verdict_pairs(first, second)
    if not pairs:
        raise AgreementError("no puzzle has a final verdict on both sides; check the item ids")
    return sum(x == y for _, x, y in pairs) / len(pairs)


def reasoning_agreement(first: Iterable[LabelRecord], second: Iterable[LabelRecord]) -> float:
    """SPLAT's R: the share of questions answered on both sides where the answers agree.

    Raises:
        AgreementError: no question is answered on both sides.
    """
    pairs = paired_answers(first, second)
    if not pairs:
        raise AgreementError("no question is answered on both sides; check the item ids and question texts")
    return sum(x == y for x, y in pairs) / len(pairs)


def confusion_matrix(pairs: Sequence[tuple[str, str]], labels: Sequence[str] = ANSWER_LABELS) -> np.ndarray:
    """Counts of (first, second) label pairs; rows follow the first side, columns the second."""
    index = {label: n for n, label in enumerate(labels)}
    matrix = np.zeros((len(labels), len(labels)), dtype=np.int64)
    for x, y in pairs:
        matrix[index[x], index[y]] += 1
    return matrix


def cohen_kappa(pairs: Sequence[tuple[str, str]], labels: Sequence[str] = ANSWER_LABELS) -> float:
    """Cohen's kappa of paired labels: ``(p_o - p_e) / (1 - p_e)``; NaN when ``p_e`` is 1.

    Raises:
        AgreementError: there are no pairs.
    """
    if not pairs:
        raise AgreementError("Cohen's kappa needs at least one pair of labels")
    matrix = confusion_matrix(pairs, labels).astype(float)
    total = matrix.sum()
    observed = np.trace(matrix) / total
    expected = float(matrix.sum(axis=1) @ matrix.sum(axis=0)) / total**2
    if expected == 1.0:
        return float("nan")
    return float((observed - expected) / (1.0 - expected))


def agreement_report(first: Sequence[LabelRecord], second: Sequence[LabelRecord]) -> AgreementReport:
    """M, R, kappa and the confusion matrix of ``first`` (a judge) against ``second`` (people or a judge),
    pooled over every annotator combination.

    Raises:
        AgreementError: the two share neither a verdict nor a question.
    """
    verdicts = verdict_pairs(first, second)
    pairs = paired_answers(first, second)
    if not verdicts and not pairs:
        raise AgreementError("the two label sets share no puzzle verdict and no question; check the item ids")
    return AgreementReport(
        puzzles=len(verdicts),
        final_answer_agreement=sum(x == y for _, x, y in verdicts) / len(verdicts) if verdicts else None,
        questions=len(pairs),
        reasoning_agreement=sum(x == y for x, y in pairs) / len(pairs) if pairs else None,
        kappa=cohen_kappa(pairs) if pairs else None,
        confusion=confusion_matrix(pairs).tolist(),
    )
