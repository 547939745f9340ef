"""PNG plots of a run's breakdowns: the figures each benchmark asks for, drawn with matplotlib.

A benchmark describes its figures as data (``Benchmark.metrics.figures`` returns ``BarFigure``s: the
papers' figures for the built-in ones, the headline rates by default); this module only draws
them, on an Agg canvas without pyplot, so no global backend is changed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lateralgym.envs import LateralGymError, get_benchmark
from lateralgym.episodes._metrics import RunMetrics

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLOTS_DIR = "plots"


class ReportError(LateralGymError, RuntimeError):
    """A report cannot be written (a missing optional dependency)."""


Plot = tuple[str, str]
"""(title, path relative to the run directory)."""


def write_plots(metrics: RunMetrics, run_dir: Path) -> dict[str, list[Plot]]:
    """Draw the benchmark's figures under ``run_dir/plots``.

    Returns:
        For each breakdown name, the plots drawn from it.

    Raises:
        ReportError: matplotlib is not installed.
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise ReportError(
            "plots need matplotlib (a core dependency), which is missing: pip install matplotlib"
        ) from exc

    target = run_dir / PLOTS_DIR
    target.mkdir(parents=True, exist_ok=True)
    drawn: dict[str, list[Plot]] = {}

    def save(figure: Figure, breakdown: str, name: str, title: str) -> None:
        FigureCanvasAgg(figure)
        figure.tight_layout()
        figure.savefig(target / name, dpi=100)
        drawn.setdefault(breakdown, []).append((title, f"{PLOTS_DIR}/{name}"))

    for spec in get_benchmark(metrics.benchmark).metrics.figures(metrics):
        figure = Figure(figsize=spec.size)
        panels = spec.panels
        axes = figure.subplots(1, len(panels)) if len(panels) > 1 else [figure.subplots()]
        for ax, panel in zip(axes, panels, strict=True):
            _bars(ax, panel.labels, panel.series, panel.title, panel.ylabel, top=panel.top)
        if len(panels) > 1:
            figure.suptitle(spec.title)
        save(figure, spec.breakdown, spec.file, spec.title)
    return drawn


def _bars(
    axes: Axes, labels: Sequence[str], series: dict[str, list[float]], title: str, ylabel: str, top: float | None
) -> None:
    """Grouped bars: one group per label, one bar per series, each bar labelled with its value."""
    count = max(len(series), 1)
    width = 0.8 / count
    for n, (name, values) in enumerate(series.items()):
        offsets = [x - 0.4 + width * (n + 0.5) for x in range(len(labels))]
        bars = axes.bar(offsets, values, width, label=name)
        axes.bar_label(bars, labels=["" if math.isnan(v) else f"{v:.1f}" for v in values], fontsize=7)
    axes.set_xticks(range(len(labels)), labels)
    axes.set_ylabel(ylabel)
    axes.set_title(title, fontsize=10)
    legend = len(series) > 1
    if top is not None:
        axes.set_ylim(0, top * (1.25 if legend else 1.08))  # headroom for the value labels and legend
        axes.set_yticks([top * k / 5 for k in range(6)])
    else:
        axes.set_ylim(bottom=0)
    if legend:
        axes.legend(fontsize=8, loc="upper center", ncol=len(series), frameon=False)
