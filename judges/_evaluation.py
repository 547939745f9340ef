"""A judge measured against people: any judge (offline, LLM, a local model) on human-labelled judgements.

A benchmark reads its human-labelled judgements through its ``judgement_formats`` (a ``JudgeCase``
per judgement: the item the judge sees, the message it judges, the people's label); this module asks
the judge each case, the way the benchmark's scenes ask it (``Judge.answer`` for a question or a
guess, ``Judge.grade`` for an explanation), and scores its labels against the people's:

* accuracy: the share of cases where the judge's label (collapsed as the case says: a binary task
  reads a judge's ``no`` and ``irrelevant`` both as "not confirmed") is the people's;
* precision, recall and F1 of the case's positive label (``yes``: the guess is confirmed; ``correct``:
  the explanation solves the puzzle), pooled over cases;
* the majority baseline: the accuracy of always answering the most common label;
* Cohen's kappa: agreement beyond what the two sides' label rates give by chance (``(p_o - p_e) /
  (1 - p_e)``), on the compared labels; 0 is chance, 1 is full agreement;
* the confusion matrix on the compared labels, and as labelled (people's labels as the file writes them,
  ``Correct`` / ``Incorrect`` / ``Unknown``, against the judge's own, ``yes`` / ``no`` / ``irrelevant``);
* per group (a story): the accuracy, their mean (every story weighing the same) and spread;
* 95 % intervals: percentile bootstrap over cases (``resamples``, seeded), for every figure.

A judge call that fails for good (``LateralGymError``: a server down after its retries, a request
the server refuses) is counted as ``failed`` and left out, the first such error kept as
``first_error`` so the caller can say what went wrong; a label the judge could not give
(``unclear``) counts as wrong. The benchmark's format documents whose published figures these
reproduce.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import BaseModel, Field

from lateralgym.envs import Commit, Judge, JudgeCase, LateralGymError

__all__ = [
    "GroupAccuracy",
    "JudgeEvaluation",
    "cohen_kappa",
    "evaluate_judge",
    "evaluate_judge_async",
    "evaluate_labels",
    "score_labels",
]

DEFAULT_RESAMPLES = 1000
"""Bootstrap resamples of the 95 % intervals."""


class GroupAccuracy(BaseModel):
    """A judge's accuracy on one group of cases (a story)."""

    group: str
    cases: int
    accuracy: float


class JudgeEvaluation(BaseModel):
    """A judge's labels scored against people's (fractions, not percentages)."""

    judge: str
    """The judge's name."""
    format: str = ""
    """The judgement format the cases came in."""
    n: int
    """Cases scored (failed calls left out)."""
    failed: int = 0
    """Cases whose judge call failed for good."""
    first_error: str | None = None
    """The first failed call's error, in case order (None when none failed)."""
    accuracy: float | None
    precision: float | None
    """Of the cases the judge gave the positive label, the share people gave it too (None when it gave none)."""
    recall: float | None
    """Of the cases people gave the positive label, the share the judge gave it too."""
    f1: float | None
    majority: float | None
    """The accuracy of always answering the most common label (``majority_label``)."""
    kappa: float | None = None
    """Cohen's kappa of the compared labels (None when both sides use one label only)."""
    majority_label: str | None = None
    positive: str = "yes"
    """The positive label (the commonest across cases, when they differ)."""
    mean_group_accuracy: float | None = None
    """The mean of the groups' accuracies (every group weighs the same)."""
    groups: list[GroupAccuracy] = Field(default_factory=list)
    intervals: dict[str, tuple[float, float]] = Field(default_factory=dict)
    """95 % percentile bootstrap intervals over cases, by figure name."""
    confusion: dict[str, dict[str, int]] = Field(default_factory=dict)
    """People's label -> judge's label -> cases (compared labels)."""
    confusion_as_labelled: dict[str, dict[str, int]] = Field(default_factory=dict)
    """People's label as the file writes it -> the judge's own label -> cases (three-way where the data is:
    a file's Correct / Incorrect / Unknown against yes / no / irrelevant)."""
    cross_validation: str | None = None
    """How the labels were given when cross-validated (``stories, 8 folds``: each fold's cases by a judge
    retrained on the other folds' stories); None: one judge labelled every case."""

    def group_spread(self) -> dict[str, float] | None:
        """The per-group accuracies' standard deviation, minimum and maximum (None without groups)."""
        if not self.groups:
            return None
        values = np.array([g.accuracy for g in self.groups])
        return {"sd": float(values.std()), "min": float(values.min()), "max": float(values.max())}

    def json_line(self) -> dict[str, Any]:
        """``judges eval --json``: the headline, then kappa with its interval, the confusion matrices, the
        mean group accuracy and its spread."""
        low, high = self.intervals.get("kappa", (None, None))
        return {
            **self.headline(),
            "kappa": self.kappa,
            "kappa_low": low,
            "kappa_high": high,
            "majority_label": self.majority_label,
            "confusion": self.confusion,
            "confusion_as_labelled": self.confusion_as_labelled,
            "mean_group_accuracy": self.mean_group_accuracy,
            "group_spread": self.group_spread(),
            "cv": self.cross_validation,
        }

    def headline(self) -> dict[str, Any]:
        """The one-line JSON figures: ``n``, ``accuracy``, ``precision``, ``recall``, ``f1``, ``majority``."""
        return {
            "n": self.n,
            "accuracy": self.accuracy,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "majority": self.majority,
        }


def _ratio(numerator: float, denominator: float) -> float | None:
    return numerator / denominator if denominator else None


def _figures(expected: np.ndarray, got: np.ndarray, positive: np.ndarray) -> dict[str, float | None]:
    """Accuracy, precision, recall and F1 of arrays of labels (positive: each case's positive label)."""
    right = expected == got
    judged_positive = got == positive
    truly_positive = expected == positive
    true_positive = float(np.sum(judged_positive & truly_positive))
    precision = _ratio(true_positive, float(np.sum(judged_positive)))
    recall = _ratio(true_positive, float(np.sum(truly_positive)))
    f1 = (
        None
        if precision is None or recall is None
        else (2 * precision * recall / (precision + recall) if precision + recall else 0.0)
    )
    return {
        "accuracy": _ratio(float(np.sum(right)), len(right)),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "kappa": cohen_kappa(expected, got),
    }


def cohen_kappa(expected: np.ndarray, got: np.ndarray) -> float | None:
    """Cohen's kappa of two equally long arrays of labels: ``(p_o - p_e) / (1 - p_e)``, ``p_e`` from each
    side's label rates; None when chance agreement is already total (both use one and the same label)."""
    n = len(expected)
    if not n:
        return None
    observed = float(np.mean(expected == got))
    people, judge = Counter(expected.tolist()), Counter(got.tolist())
    chance = sum(people[label] * judge[label] for label in people) / (n * n)
    return None if chance >= 1.0 else (observed - chance) / (1.0 - chance)


def score_labels(
    cases: Sequence[JudgeCase],
    labels: Sequence[str | None],
    *,
    judge: str = "",
    format: str = "",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    first_error: str | None = None,
) -> JudgeEvaluation:
    """Score a judge's labels (``None``: the call failed, ``first_error`` saying why) against the cases'
    people's labels."""
    kept = [(case, case.compared(label)) for case, label in zip(cases, labels, strict=True) if label is not None]
    expected = np.array([c.expected for c, _ in kept], dtype=object)
    got = np.array([label for _, label in kept], dtype=object)
    positive = np.array([c.positive for c, _ in kept], dtype=object)
    figures = _figures(expected, got, positive)
    counts = Counter(c.expected for c, _ in kept)
    majority_label, majority_count = counts.most_common(1)[0] if counts else (None, 0)
    by_group: dict[str, list[bool]] = {}
    for case, label in kept:
        by_group.setdefault(case.group, []).append(case.expected == label)
    groups = [GroupAccuracy(group=g, cases=len(v), accuracy=sum(v) / len(v)) for g, v in by_group.items()]
    confusion: dict[str, dict[str, int]] = {}
    for case, label in kept:
        row = confusion.setdefault(case.expected, {})
        row[label] = row.get(label, 0) + 1
    as_labelled: dict[str, dict[str, int]] = {}
    for case, raw in zip(cases, labels, strict=True):
        if raw is not None:
            row = as_labelled.setdefault(case.source or case.expected, {})
            row[raw] = row.get(raw, 0) + 1
    intervals: dict[str, tuple[float, float]] = {}
    if len(kept) > 1 and resamples > 0:
        rng = np.random.default_rng(seed)
        draws: dict[str, list[float]] = {}
        for _ in range(resamples):
            index = rng.integers(0, len(kept), size=len(kept))
            for name, value in _figures(expected[index], got[index], positive[index]).items():
                if value is not None:
                    draws.setdefault(name, []).append(value)
        intervals = {
            name: (float(np.percentile(values, 2.5)), float(np.percentile(values, 97.5)))
            for name, values in draws.items()
        }
    positives = Counter(c.positive for c, _ in kept)
    return JudgeEvaluation(
        judge=judge,
        format=format,
        n=len(kept),
        failed=len(labels) - len(kept),
        first_error=first_error if len(labels) > len(kept) else None,
        majority=_ratio(majority_count, len(kept)),
        majority_label=majority_label,
        positive=positives.most_common(1)[0][0] if positives else "yes",
        mean_group_accuracy=_ratio(sum(g.accuracy for g in groups), len(groups)),
        groups=groups,
        intervals=intervals,
        confusion=confusion,
        confusion_as_labelled=as_labelled,
        **figures,
    )


async def _label(judge: Judge, case: JudgeCase, gate: asyncio.Semaphore) -> str | LateralGymError:
    """The judge's label for ``case``, or the error its call failed with for good."""
    async with gate:
        try:
            if case.kind == "verdict":
                reply = await judge.grade(case.item, Commit(answer=case.message), ())
            else:
                reply = await judge.answer(case.item, case.message, ())
        except LateralGymError as exc:
            return exc
    return reply.label


async def evaluate_judge_async(
    judge: Judge,
    cases: Sequence[JudgeCase],
    *,
    format: str = "",
    concurrency: int = 8,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> JudgeEvaluation:
    """``evaluate_judge`` on the running event loop."""
    labels, first_error = await _labels_async(judge, cases, concurrency)
    name = str(getattr(judge, "name", type(judge).__name__))
    return score_labels(
        cases, labels, judge=name, format=format, resamples=resamples, seed=seed, first_error=first_error
    )


async def _labels_async(
    judge: Judge, cases: Sequence[JudgeCase], concurrency: int
) -> tuple[list[str | None], str | None]:
    gate = asyncio.Semaphore(max(1, concurrency))
    answers = await asyncio.gather(*(_label(judge, case, gate) for case in cases))
    labels = [a if isinstance(a, str) else None for a in answers]
    return labels, next((str(a) for a in answers if isinstance(a, LateralGymError)), None)


def evaluate_labels(
    judge: Judge, cases: Sequence[JudgeCase], *, concurrency: int = 8
) -> tuple[list[str | None], str | None]:
    """The judge's label of each case (None where its call failed for good) and the first failure's error."""
    return asyncio.run(_labels_async(judge, cases, concurrency))


def evaluate_judge(
    judge: Judge,
    cases: Sequence[JudgeCase],
    *,
    format: str = "",
    concurrency: int = 8,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> JudgeEvaluation:
    """Ask ``judge`` every case (``concurrency`` at once), then score its labels (see the module docstring).

    Raises:
        ConfigError: no cases.
    """
    if not cases:
        from lateralgym.envs import ConfigError

        raise ConfigError("no judgements to evaluate the judge on; give a file of human-labelled cases")
    return asyncio.run(
        evaluate_judge_async(judge, cases, format=format, concurrency=concurrency, resamples=resamples, seed=seed)
    )
