"""SPLAT's report figure: Acc and O/A by difficulty band (best of R under repeats, as SPLAT reports)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lateralgym.envs._figures import BarFigure, MetricsView


def figures(metrics: MetricsView) -> list[BarFigure]:
    """Acc and O/A by difficulty band, side by side."""
    from lateralgym.envs._figures import BarFigure, BarPanel, breakdown_value, repeats_note  # a report's only

    rows = metrics.breakdowns.get("by_band", [])
    if not rows:
        return []
    title = f"Acc and O/A by difficulty band{repeats_note(metrics.repeats, 'best')}"
    bands = [str(r["band"]) for r in rows]
    acc = [breakdown_value(r, "acc", metrics.repeats, "best") for r in rows]
    oa = [breakdown_value(r, "oa", metrics.repeats, "best") for r in rows]
    panels = [
        BarPanel(labels=bands, series={"Acc": acc}, title="Acc (solved %)", ylabel="Acc (%)"),
        BarPanel(labels=bands, series={"O/A": oa}, title="O/A = mean(1[solved] / Rnd) x 100", ylabel="O/A", top=None),
    ]
    return [BarFigure(breakdown="by_band", file="splat_bands.png", title=title, panels=panels, size=(9.0, 4.0))]
