"""The figures a benchmark asks the report to draw: grouped bar charts, described as data.

A benchmark's ``figures(metrics)`` returns ``BarFigure``s built from the run's breakdown tables;
``lateralgym.episodes`` draws them with matplotlib (``write_plots``), so a benchmark never imports
a plotting library and its figures can be checked as plain values.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict

__all__ = ["BarFigure", "BarPanel", "MetricsView", "breakdown_value", "headline_figure", "repeats_note"]


class MetricsView(Protocol):
    """What a benchmark's figures read of a run's metrics (``lateralgym.episodes.RunMetrics``)."""

    @property
    def benchmark(self) -> str: ...

    @property
    def repeats(self) -> int: ...

    @property
    def headline(self) -> Mapping[str, float]: ...

    @property
    def breakdowns(self) -> Mapping[str, list[dict[str, Any]]]: ...


class BarPanel(BaseModel):
    """One set of axes: a group of bars per label, one bar per series."""

    model_config = ConfigDict(frozen=True)

    labels: list[str]
    """The groups along the x axis."""
    series: dict[str, list[float]]
    """Bar heights by series name, one per label (NaN: no bar)."""
    title: str
    ylabel: str
    top: float | None = 100.0
    """The y axis' top (rates: 100); None lets it follow the data."""


class BarFigure(BaseModel):
    """A figure of one or more panels side by side, saved as ``plots/<file>``."""

    model_config = ConfigDict(frozen=True)

    breakdown: str
    """The breakdown table it draws (the report puts the figure under that table)."""
    file: str
    """The PNG's file name."""
    title: str
    panels: list[BarPanel]
    size: tuple[float, float] = (6.0, 4.0)
    """Width and height in inches."""


def repeats_note(repeats: int, prefer: str = "mean") -> str:
    """`` (mean of 3)`` under repeats, nothing for one episode per item."""
    return "" if repeats == 1 else f" ({prefer} of {repeats})"


def breakdown_value(row: Mapping[str, Any], metric: str, repeats: int, prefer: str = "mean") -> float:
    """A breakdown row's value of ``metric`` under the run's repeats (``prefer``: ``mean`` or
    ``best`` of R); NaN (no bar) when the row has none."""
    key = metric if repeats == 1 else f"{metric}_{prefer}_of_{repeats}"
    value = row.get(key)
    return float(value) if isinstance(value, int | float) else math.nan


def headline_figure(metrics: MetricsView) -> list[BarFigure]:
    """The default figure: the run's headline rates (values from 0 to 100) as bars."""
    rates = {k: v for k, v in metrics.headline.items() if 0.0 <= v <= 100.0 and not k.startswith("mean_")}
    if not rates:
        return []
    title = f"{metrics.benchmark}: headline rates"
    panel = BarPanel(labels=list(rates), series={"rate": list(rates.values())}, title=title, ylabel="%")
    return [BarFigure(breakdown="headline", file=f"{metrics.benchmark}_headline.png", title=title, panels=[panel])]
