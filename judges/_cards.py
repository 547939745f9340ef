"""Judge cards: a judge's measured agreement with people, written by ``judges eval --save-card`` and carried
by the runs it judges (``lateralgym run --judge-card CARD``), so a report of judged scores says how far
the judge that produced them agrees with human labels, or that nobody measured it.

A card names the judge spec it measured, its benchmark, the model file's sha256 for a ``local/`` judge,
and the labelled data (its format, file name and sha256), with the figures: cases, accuracy and Cohen's
kappa with their 95 % intervals, and the majority baseline. A run refuses a card of another judge,
benchmark or model in one line.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from lateralgym.envs import ConfigError

__all__ = ["JudgeCard", "check_card", "data_digest", "make_card", "read_card", "write_card"]

MAX_CARD_BYTES = 1 << 20
"""A card is a few hundred bytes; a larger file is not one."""


class JudgeCard(BaseModel):
    """A judge's agreement with people on one labelled data set (see the module docstring)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["lateralgym-judge-card"] = "lateralgym-judge-card"
    judge: str
    """The judge spec measured (credentials removed), as a run names it with ``--judge``."""
    benchmark: str
    model_sha256: str | None = None
    """The GGUF file's sha256 of a ``local/`` judge (None: an offline judge, or a hosted model by name)."""
    data: str
    """The labelled data's file or folder name."""
    data_sha256: str
    format: str
    n: int
    accuracy: float | None
    accuracy_low: float | None = None
    accuracy_high: float | None = None
    kappa: float | None
    kappa_low: float | None = None
    kappa_high: float | None = None
    majority: float | None
    majority_label: str | None = None
    cross_validation: str | None = None
    """How a learned judge was measured when cross-validated (``stories, 8 folds``); None: as it is."""
    measured: str
    """When it was measured (UTC, ISO 8601)."""
    lateralgym: str = ""
    """The LateralGym version that measured it."""

    def short(self) -> str:
        """A few words for a table cell: accuracy and kappa against people, and on how many cases."""
        accuracy = "n/a" if self.accuracy is None else f"{self.accuracy:.3f}"
        kappa = "n/a" if self.kappa is None else f"{self.kappa:.3f}"
        return f"vs people: acc {accuracy}, kappa {kappa}, n={self.n}"

    def summary(self) -> str:
        """One line: the judge's agreement with people, with intervals and the majority baseline."""

        def figure(value: float | None, low: float | None, high: float | None) -> str:
            if value is None:
                return "n/a"
            return f"{value:.3f}" + (f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else "")

        majority = "n/a" if self.majority is None else f"{self.majority:.3f}"
        return (
            f"judge {self.judge} agrees with people on {self.format} ({self.data}, n={self.n}, measured "
            f"{self.measured[:10]}): accuracy {figure(self.accuracy, self.accuracy_low, self.accuracy_high)}, "
            f"Cohen's kappa {figure(self.kappa, self.kappa_low, self.kappa_high)}; always "
            f"{self.majority_label!r} scores {majority}"
            + (f" (cross-validated by {self.cross_validation})" if self.cross_validation else "")
        )


def data_digest(path: Path) -> str:
    """The sha256 of a labelled data file, or of a folder's files (names and bytes, sorted)."""
    digest = hashlib.sha256()
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    for file in files:
        digest.update(file.relative_to(path).as_posix().encode() if path.is_dir() else b"")
        with file.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def make_card(evaluation: Any, *, judge: str, benchmark: str, data: Path, model_sha256: str | None) -> JudgeCard:
    """The card of a ``JudgeEvaluation`` of ``judge`` on ``data``."""
    from importlib.metadata import PackageNotFoundError, version

    from lateralgym.agents import safe_spec

    try:
        measured_by = version("lateralgym")
    except PackageNotFoundError:
        measured_by = ""
    accuracy = evaluation.intervals.get("accuracy", (None, None))
    kappa = evaluation.intervals.get("kappa", (None, None))
    return JudgeCard(
        judge=safe_spec(judge),
        benchmark=benchmark,
        model_sha256=model_sha256,
        data=data.name,
        data_sha256=data_digest(data),
        format=evaluation.format,
        n=evaluation.n,
        accuracy=evaluation.accuracy,
        accuracy_low=accuracy[0],
        accuracy_high=accuracy[1],
        kappa=evaluation.kappa,
        kappa_low=kappa[0],
        kappa_high=kappa[1],
        majority=evaluation.majority,
        majority_label=evaluation.majority_label,
        cross_validation=evaluation.cross_validation,
        measured=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        lateralgym=measured_by,
    )


def write_card(card: JudgeCard, path: Path) -> None:
    """Write ``card`` as JSON (a new file, then a rename)."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(card.model_dump_json(indent=2) + "\n", encoding="utf-8")
    tmp.replace(path)


def read_card(path: Path) -> JudgeCard:
    """A judge card from ``path``.

    Raises:
        ConfigError: no such file, too large, or not a judge card (one line naming the file).
    """
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_CARD_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"--judge-card {path}: cannot read it ({exc.strerror or exc})") from None
    if len(data) > MAX_CARD_BYTES:
        raise ConfigError(f"--judge-card {path}: not a judge card (larger than 1 MB)")
    try:
        return JudgeCard.model_validate_json(data)
    except ValidationError as exc:
        problem = exc.errors()[0]
        where = ".".join(str(part) for part in problem["loc"]) or "the file"
        raise ConfigError(
            f"--judge-card {path}: not a judge card ({where}: {problem['msg']}); write one with "
            "'lateralgym judges eval DATA --judge SPEC --save-card FILE'"
        ) from None


def check_card(card: JudgeCard, *, judge: str, benchmark: str, model_sha256: str | None, path: Path) -> None:
    """Refuse a card that measured another judge, benchmark or model file than the run's.

    Raises:
        ConfigError: the card does not describe this run's judge (one line saying what differs).
    """
    from lateralgym.agents import safe_spec

    if card.benchmark != benchmark:
        raise ConfigError(f"--judge-card {path} measured a judge of {card.benchmark}, and this run is {benchmark}")
    if card.judge != safe_spec(judge):
        raise ConfigError(f"--judge-card {path} measured the judge {card.judge!r}, and this run's judge is {judge!r}")
    if card.model_sha256 is not None and model_sha256 is not None and card.model_sha256 != model_sha256:
        raise ConfigError(
            f"--judge-card {path} measured {card.judge} with the model file sha256 {card.model_sha256[:12]}..., "
            f"and this run's judge serves {model_sha256[:12]}...: measure this model again"
        )
