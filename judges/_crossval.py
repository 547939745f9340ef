"""A judge that learns from labelled judgements, measured on stories it never saw (``judges eval --cv stories``).

A judge trained on people's labels scores well on those very labels whatever it learnt: the figure that
says how it judges new material comes from cases it was not trained on. ``cross_validate`` splits the
cases by group (``JudgeCase.group``, a story or puzzle: every case of a group falls in one fold), retrains
the judge on the other folds (``TrainableJudge.trained_on``), asks it each case of the held-out fold, and
scores the pooled labels
with ``score_labels``: the same figures, intervals and baseline as a plain evaluation, every label given by
a judge that had seen no case of that group.

Folds are balanced by case count: groups, shuffled with the seed, go largest first into the fold with the
fewest cases so far, so the split is the same for the same cases and seed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from lateralgym.envs import ConfigError, Judge, JudgeCase
from lateralgym.judges._evaluation import DEFAULT_RESAMPLES, JudgeEvaluation, evaluate_labels, score_labels

__all__ = ["DEFAULT_FOLDS", "CrossValidationError", "TrainableJudge", "cross_validate", "group_folds"]

DEFAULT_FOLDS = 8
"""Folds of ``--cv`` unless ``--folds`` says otherwise."""


@runtime_checkable
class TrainableJudge(Protocol):
    """A judge that can be trained anew on labelled judgements (a learned judge)."""

    name: str

    def trained_on(self, cases: Sequence[JudgeCase]) -> Judge:
        """A judge of the same make trained on ``cases`` only (nothing of its shipped training kept)."""
        ...


class CrossValidationError(ConfigError):
    """Cross-validation cannot run on these cases or this judge."""


def group_folds(cases: Sequence[JudgeCase], folds: int, seed: int = 0) -> list[list[int]]:
    """Case indices of each fold, every group whole in one fold (see the module docstring).

    Raises:
        CrossValidationError: a case names no group, or there are fewer groups than folds.
    """
    ungrouped = sum(1 for case in cases if not case.group)
    if ungrouped:
        raise CrossValidationError(
            f"cross-validation by group needs every case to name its group (its story): {ungrouped} of "
            f"{len(cases)} cases name none in this data; evaluate it without --cv"
        )
    sizes = Counter(case.group for case in cases)
    if folds < 2 or len(sizes) < folds:
        raise CrossValidationError(
            f"cross-validation needs at least 2 folds and a group per fold: this data has {len(sizes)} groups "
            f"for {folds} folds; pass --folds between 2 and {len(sizes)}"
            if len(sizes) >= 2
            else f"cross-validation needs at least 2 groups (stories), this data has {len(sizes)}; evaluate it "
            "without --cv"
        )
    order = list(sizes)
    np.random.default_rng(seed).shuffle(order)
    order.sort(key=lambda group: -sizes[group])  # stable: equal sizes keep the shuffled order
    fold_of: dict[str, int] = {}
    load = [0] * folds
    for group in order:
        emptiest = min(range(folds), key=lambda fold: (load[fold], fold))
        fold_of[group] = emptiest
        load[emptiest] += sizes[group]
    return [[i for i, case in enumerate(cases) if fold_of[case.group] == fold] for fold in range(folds)]


def cross_validate(
    judge: Judge,
    cases: Sequence[JudgeCase],
    *,
    folds: int = DEFAULT_FOLDS,
    format: str = "",
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> JudgeEvaluation:
    """Score ``judge``, retrained on the other folds, on each fold of groups it never saw (module docstring).

    Raises:
        CrossValidationError: the judge learns nothing from data, a case names no group, or there are
            fewer groups than folds.
    """
    if not isinstance(judge, TrainableJudge):
        raise CrossValidationError(
            f"judge {getattr(judge, 'name', judge)!r} learns nothing from labelled data, so cross-validation "
            "would repeat the plain figures; drop --cv (it is for a learned judge)"
        )
    split = group_folds(cases, folds, seed)
    labels: list[str | None] = [None] * len(cases)
    first_error: str | None = None
    for held_out in split:
        kept = set(held_out)
        fold_judge = judge.trained_on([case for i, case in enumerate(cases) if i not in kept])
        fold_labels, error = evaluate_labels(fold_judge, [cases[i] for i in held_out])
        first_error = first_error or error
        for index, label in zip(held_out, fold_labels, strict=True):
            labels[index] = label
    result = score_labels(
        cases, labels, judge=judge.name, format=format, resamples=resamples, seed=seed, first_error=first_error
    )
    return result.model_copy(update={"cross_validation": f"stories, {folds} folds"})
