"""Judge labels from a run's step log, for agreement with people or with another judge (SPLAT's M and R)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lateralgym.envs._judging import ANSWER_LABELS
from lateralgym.episodes._log import STEP_LOG, StepLine, read_log
from lateralgym.judges._agreement import AgreementReport, LabelRecord, agreement_report, load_human_labels

_VERDICTS = frozenset({"correct", "not_yet", "incorrect"})


def judge_labels_from_run(run_dir: str | Path) -> list[LabelRecord]:
    """Every question the judge answered (item, question, yes/no/irrelevant) and each verdict it gave,
    in log order; the last verdict of an item is its final one. Only repeat 0 of each item is read:
    human labels are per item, and repeats would overwrite each other's verdicts."""
    records = []
    for record in read_log(Path(run_dir) / STEP_LOG):
        if not isinstance(record, StepLine) or record.judge_label is None:
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


def agreement(first: str | Path, second: str | Path) -> AgreementReport:
    """SPLAT's final-answer agreement M, reasoning agreement R and Cohen's kappa between two label sources."""
    return agreement_report(load_labels(first), load_labels(second))
