"""BrainTeaser's report figure: instance accuracy by variant, one bar per puzzle kind."""

from __future__ import annotations

from lateralgym.envs._figures import BarFigure, BarPanel, MetricsView, breakdown_value, repeats_note

VARIANTS = ("original", "semantic", "context")


def figures(metrics: MetricsView) -> list[BarFigure]:
    """Instance accuracy by variant (mean of R under repeats), a series per puzzle kind."""
    rows = metrics.breakdowns.get("by_kind", [])
    if not rows:
        return []
    title = f"Instance accuracy by variant and kind{repeats_note(metrics.repeats)}"
    series = {str(r["kind"]): [breakdown_value(r, f"{v}_acc", metrics.repeats, "mean") for v in VARIANTS] for r in rows}
    panel = BarPanel(labels=list(VARIANTS), series=series, title=title, ylabel="accuracy (%)")
    return [BarFigure(breakdown="by_kind", file="brainteaser_variants.png", title=title, panels=[panel])]
