"""PNG plots of a run's breakdowns, after the papers' figures (matplotlib, an optional extra).

CreativityBench: gold and entity accuracy by cluster band, gold level, distractor count and
distractor similarity; with an LLM judge, Figure 11's failure attribution (primary and contributing
counts per category). BrainTeaser: instance accuracy by variant, one bar per puzzle kind.
SPLAT: Acc and O/A by difficulty band, with the band average.

Under R > 1 repeats the bars show mean-of-R, except SPLAT's, which show best-of-R as SPLAT
reports. Figures are drawn on an Agg canvas without pyplot, so no global backend is changed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lateralgym.envs._errors import LateralGymError
from lateralgym.episodes._metrics import RunMetrics

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

PLOTS_DIR = "plots"

CREATIVITY_PLOTS = ("cluster_band", "gold_level", "distractor_count", "distractor_similarity")
"""The factors plotted for CreativityBench, each to ``creativity_<factor>.png``."""


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

    note = _repeats_note(metrics)
    if metrics.benchmark == "creativity":
        for factor in CREATIVITY_PLOTS:
            rows = metrics.breakdowns.get(f"by_{factor}", [])
            if not rows:
                continue
            title = f"Accuracy by {factor.replace('_', ' ')}{note}"
            figure = Figure(figsize=(6, 4))
            series = {
                label: [_value(r, metric, metrics.repeats, "mean") for r in rows]
                for label, metric in (("gold correct", "gold_correct_rate"), ("entity correct", "entity_correct_rate"))
            }
            _bars(figure.subplots(), [str(r[factor]) for r in rows], series, title, "accuracy (%)", top=100)
            save(figure, f"by_{factor}", f"creativity_{factor}.png", title)
        rows = metrics.breakdowns.get("failure_attribution", [])
        if rows:
            title = "Failure attribution of wrong answers (CreativityBench Figure 11)"
            figure = Figure(figsize=(7, 4))
            series = {kind: [float(r[kind]) for r in rows] for kind in ("primary", "contributing")}
            _bars(figure.subplots(), [str(r["category"]) for r in rows], series, title, "answers", top=None)
            save(figure, "failure_attribution", "creativity_failure_attribution.png", title)
    elif metrics.benchmark == "brainteaser":
        rows = metrics.breakdowns.get("by_kind", [])
        if rows:
            variants = ("original", "semantic", "context")
            title = f"Instance accuracy by variant and kind{note}"
            figure = Figure(figsize=(6, 4))
            series = {str(r["kind"]): [_value(r, f"{v}_acc", metrics.repeats, "mean") for v in variants] for r in rows}
            _bars(figure.subplots(), list(variants), series, title, "accuracy (%)", top=100)
            save(figure, "by_kind", "brainteaser_variants.png", title)
    elif metrics.benchmark == "splat":
        rows = metrics.breakdowns.get("by_band", [])
        if rows:
            title = f"Acc and O/A by difficulty band{_repeats_note(metrics, 'best')}"
            figure = Figure(figsize=(9, 4))
            acc_axes, oa_axes = figure.subplots(1, 2)
            bands = [str(r["band"]) for r in rows]
            acc = [_value(r, "acc", metrics.repeats, "best") for r in rows]
            oa = [_value(r, "oa", metrics.repeats, "best") for r in rows]
            _bars(acc_axes, bands, {"Acc": acc}, "Acc (solved %)", "Acc (%)", top=100)
            _bars(oa_axes, bands, {"O/A": oa}, "O/A = mean(1[solved] / Rnd) x 100", "O/A", top=None)
            figure.suptitle(title)
            save(figure, "by_band", "splat_bands.png", title)
    else:  # any other registered benchmark: its headline rates
        rates = {k: v for k, v in metrics.headline.items() if 0.0 <= v <= 100.0 and not k.startswith("mean_")}
        if rates:
            title = f"{metrics.benchmark}: headline rates"
            figure = Figure(figsize=(6, 4))
            _bars(figure.subplots(), list(rates), {"rate": list(rates.values())}, title, "%", top=100)
            save(figure, "headline", f"{metrics.benchmark}_headline.png", title)
    return drawn


def _repeats_note(metrics: RunMetrics, prefer: str = "mean") -> str:
    return "" if metrics.repeats == 1 else f" ({prefer} of {metrics.repeats})"


def _value(row: dict[str, Any], metric: str, repeats: int, prefer: str) -> float:
    """The row's value of ``metric`` under the run's repeats; NaN (no bar) when the row has none."""
    key = metric if repeats == 1 else f"{metric}_{prefer}_of_{repeats}"
    value = row.get(key)
    return float(value) if isinstance(value, int | float) else math.nan


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
