"""Judge labels from a run's step log, for agreement with people or with another judge (SPLAT's M and R),
and the blank label file people fill (``write_label_template``)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lateralgym.envs._judging import ANSWER_LABELS
from lateralgym.envs._text import csv_cell
from lateralgym.envs.benchmarks.splat._agreement import (
    AgreementReport,
    LabelRecord,
    agreement_report,
    load_human_labels,
)
from lateralgym.envs.benchmarks.splat._agreement_table import AgreementRow, agreement_table

TEMPLATE_COLUMNS = (
    "annotator",
    "item_id",
    "band",
    "story",
    "question",
    "explanation",
    "human_answer",
    "human_verdict",
    "rationale",
)
"""The columns of a blank label file: people fill ``annotator``, ``human_answer`` (question rows),
``human_verdict`` (the final-answer row of each puzzle) and, optionally, ``rationale``."""

_VERDICTS = frozenset({"correct", "not_yet", "incorrect"})


def _run_log(run_dir: Path) -> Iterator[tuple[Any, str | None]]:
    """A run's step-log records, each with its observation's full text for an episode start (else None).

    The one place this benchmark reads the log: the episodes layer, above the benchmarks, owns it, so it
    is imported only here, when a run is read (README, Architecture: a named lazy upward import)."""
    from lateralgym.episodes import STEP_LOG, observation_text, read_log

    for record in read_log(run_dir / STEP_LOG):
        if record.type == "episode_start":
            yield record, observation_text(record.observation, run_dir)
        else:
            yield record, None


def judge_labels_from_run(run_dir: str | Path) -> list[LabelRecord]:
    """Every question the judge answered (item, question, yes/no/irrelevant) and each verdict it gave,
    in log order; the last verdict of an item is its final one. Only repeat 0 of each item is read:
    human labels are per item, and repeats would overwrite each other's verdicts."""
    records = []
    for record, _ in _run_log(Path(run_dir)):
        if record.type != "step" or record.judge_label is None:
            continue
        if not record.episode_id.endswith("#0"):
            continue
        # An unclear reply is no label to agree with; under SPLAT's paper protocol a question may also
        # be answered "correct" (it solved the puzzle), which is a verdict.
        label = record.judge_label
        data: dict[str, Any]
        if label in _VERDICTS:
            data = {"item_id": record.item_id, "verdict": label}
        elif record.action.get("kind") == "ask" and label in ANSWER_LABELS:
            data = {"item_id": record.item_id, "question": record.action.get("question"), "answer": label}
        else:
            continue
        records.append(LabelRecord.model_validate(data))
    return records


def load_labels(source: str | Path) -> list[LabelRecord]:
    """Labels from a run directory (the judge's) or a CSV/JSONL label file (people's or a judge's)."""
    path = Path(source)
    if path.is_dir():
        return judge_labels_from_run(path)
    return load_human_labels(path)


def agreement(first: str | Path, second: str | Path, *more: str | Path) -> AgreementReport:
    """SPLAT's final-answer agreement M, reasoning agreement R and Cohen's kappa between a first label
    source and people's (one or several sources; pooled over every annotator)."""
    return agreement_report(load_labels(first), [r for source in (second, *more) for r in load_labels(source)])


def bands_from_run(run_dir: str | Path) -> dict[str, str]:
    """Item id -> difficulty band of a run's puzzles (from its episode starts)."""
    bands = {}
    for record, _ in _run_log(Path(run_dir)):
        if record.type == "episode_start" and record.meta.get("band"):
            bands[record.item_id] = str(record.meta["band"])
    return bands


def agreement_rows(first: str | Path, *people: str | Path) -> list[AgreementRow]:
    """Every row of SPLAT's agreement tables for a first source (usually a judge's run) against people's
    label files: pooled, per annotator, per band, and people against each other (``agreement_table``)."""
    bands: dict[str, str] = {}
    for source in (first, *people):
        if Path(source).is_dir():
            bands.update(bands_from_run(source))
    return agreement_table(load_labels(first), [r for source in people for r in load_labels(source)], bands)


def write_label_template(run_dir: str | Path, out: str | Path | None = None) -> Path:
    """Write a blank label file (CSV) of a SPLAT run's questions and final answers for people to fill.

    One row per question the judge answered (fill ``human_answer``: yes / no / irrelevant) and one per
    puzzle for the player's final message the judge gave its verdict on (fill ``human_verdict``:
    correct / not_yet), for repeat 0 of each puzzle, in log order. The judge's own labels are left out
    so they cannot sway the annotators. Each annotator fills a copy (or one file with an ``annotator``
    column); ``lateralgym agreement RUN_DIR FILE...`` then compares. Returns the path written
    (default ``RUN_DIR/labels-template.csv``).
    """
    run_dir = Path(run_dir)
    path = Path(out) if out is not None else run_dir / "labels-template.csv"
    rows: list[dict[str, str]] = []
    stories: dict[str, str] = {}
    bands: dict[str, str] = {}
    finals: dict[str, dict[str, str]] = {}
    for record, opening in _run_log(run_dir):
        if not record.episode_id.endswith("#0"):
            continue
        if opening is not None:
            stories[record.item_id] = _story(opening)
            bands[record.item_id] = str(record.meta.get("band") or "")
        elif record.type == "step" and record.judge_label is not None:
            base = {"item_id": record.item_id, "band": bands.get(record.item_id, ""), "story": ""}
            if record.judge_label in _VERDICTS:
                text = record.action.get("answer") or record.action.get("question") or ""
                finals[record.item_id] = {**base, "explanation": str(text)}
            elif record.action.get("kind") == "ask" and record.judge_label in ANSWER_LABELS:
                rows.append({**base, "question": str(record.action.get("question") or "")})
    ordered: list[dict[str, str]] = []
    for item in dict.fromkeys([*(r["item_id"] for r in rows), *finals]):
        item_rows = [r for r in rows if r["item_id"] == item] + ([finals[item]] if item in finals else [])
        item_rows[0] = {**item_rows[0], "story": stories.get(item, "")}  # the story once, on the puzzle's first row
        ordered += item_rows
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=TEMPLATE_COLUMNS, restval="")
        writer.writeheader()
        # stories, questions and explanations come from datasets and models: no cell may run as a formula
        writer.writerows({name: csv_cell(value) for name, value in row.items()} for row in ordered)
    return path


def _story(observation: str) -> str:
    """The story of a SPLAT opening observation (``STORY: ...``), else the whole first paragraph."""
    marker = "STORY: "
    start = observation.find(marker)
    if start < 0:
        return observation.split("\n\n")[0].strip()
    text = observation[start + len(marker) :]
    return " ".join(text.split("\nFind out what really happened")[0].split())
