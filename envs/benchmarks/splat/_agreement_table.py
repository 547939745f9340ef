"""SPLAT's agreement tables (§4.4, eqs. 6-7, Tables 2-3): the judge against people, per annotator and
per difficulty band, and people against each other.

Rows (``AgreementRow``), each an ``AgreementReport`` with who is compared and on which band:

* ``judge`` vs ``people``: every annotator's labels against the judge's, pooled (band ``all``, then
  each band that has labels);
* ``judge`` vs each annotator (when there are several);
* ``people`` vs ``people``: every pair of annotators, pooled (band ``all``, then each band): the
  human-human agreement the judge's is read against;
* each annotator pair.

Kappa is Cohen's kappa on the pooled label pairs of a row. A row is left out when its two sides
share no verdict and no question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations

from lateralgym.envs._judging import ANSWER_LABELS
from lateralgym.envs.benchmarks.splat._agreement import (
    AgreementError,
    AgreementReport,
    LabelRecord,
    agreement_report,
    by_annotator,
    cohen_kappa,
)

ALL = "all"
BANDS = ("easy", "medium", "hard")


class AgreementRow(AgreementReport):
    """One comparison of ``AgreementReport`` numbers, with what was compared."""

    first: str
    """``judge`` (or the first source), or an annotator."""
    second: str
    """``people``, or an annotator."""
    band: str = ALL
    """``all``, or a difficulty band (``easy``, ``medium``, ``hard``)."""


def _row(first: str, second: str, band: str, a: Sequence[LabelRecord], b: Sequence[LabelRecord]) -> AgreementRow | None:
    try:
        report = agreement_report(a, b)
    except AgreementError:
        return None
    return AgreementRow(first=first, second=second, band=band, **report.model_dump())


def _in_band(records: Sequence[LabelRecord], bands: Mapping[str, str], band: str) -> list[LabelRecord]:
    return [r for r in records if (r.band or bands.get(r.item_id)) == band]


def _pool(reports: Sequence[AgreementReport]) -> AgreementReport:
    """Reports added together: counts summed, shares weighted by their counts, kappa from the summed
    confusion matrix."""
    puzzles = sum(r.puzzles for r in reports)
    questions = sum(r.questions for r in reports)
    size = len(ANSWER_LABELS)
    confusion = [[sum(r.confusion[i][j] for r in reports) for j in range(size)] for i in range(size)]
    pairs = [
        (ANSWER_LABELS[i], ANSWER_LABELS[j]) for i in range(size) for j in range(size) for _ in range(confusion[i][j])
    ]
    agreed_m = sum((r.final_answer_agreement or 0.0) * r.puzzles for r in reports)
    agreed_r = sum((r.reasoning_agreement or 0.0) * r.questions for r in reports)
    return AgreementReport(
        puzzles=puzzles,
        final_answer_agreement=agreed_m / puzzles if puzzles else None,
        questions=questions,
        reasoning_agreement=agreed_r / questions if questions else None,
        kappa=cohen_kappa(pairs) if pairs else None,
        confusion=confusion,
    )


def _people_row(band: str, groups: Mapping[str | None, Sequence[LabelRecord]]) -> AgreementRow | None:
    """Every annotator pair, pooled: people against people on ``band``."""
    reports = []
    for a, b in combinations(groups, 2):
        try:
            reports.append(agreement_report(groups[a], groups[b]))
        except AgreementError:
            continue  # these two labelled no common puzzle
    if not reports:
        return None
    return AgreementRow(first="people", second="people", band=band, **_pool(reports).model_dump())


def agreement_table(
    judge: Sequence[LabelRecord], people: Sequence[LabelRecord], bands: Mapping[str, str] | None = None
) -> list[AgreementRow]:
    """Every agreement row (see the module docstring).

    Args:
        judge: The judge's labels (or any first source).
        people: People's labels, each with its ``annotator``.
        bands: Item id -> difficulty band (a run's puzzles); a label's own ``band`` wins.

    Raises:
        AgreementError: the judge and the people share neither a verdict nor a question.
    """
    bands = dict(bands or {})
    present = [b for b in BANDS if any((r.band or bands.get(r.item_id)) == b for r in (*judge, *people))]
    overall = _row("judge", "people", ALL, judge, people)
    if overall is None:
        raise AgreementError("the judge and the people share no puzzle verdict and no question; check the item ids")
    rows = [overall]
    rows += [
        r for b in present if (r := _row("judge", "people", b, _in_band(judge, bands, b), _in_band(people, bands, b)))
    ]
    groups = by_annotator(people)
    if len(groups) > 1:
        rows += [r for name, records in groups.items() if (r := _row("judge", str(name), ALL, judge, records))]
        for band in (ALL, *present):
            chosen = groups if band == ALL else {k: _in_band(v, bands, band) for k, v in groups.items()}
            if row := _people_row(band, chosen):
                rows.append(row)
        for a, b in combinations(groups, 2):
            if row := _row(str(a), str(b), ALL, groups[a], groups[b]):
                rows.append(row)
    return rows
