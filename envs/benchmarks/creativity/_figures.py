"""CreativityBench's report figures: accuracy by sampling factor, and Figure 11's failure attribution."""

from __future__ import annotations

from lateralgym.envs._figures import BarFigure, BarPanel, MetricsView, breakdown_value, repeats_note

FACTOR_PLOTS = ("cluster_band", "gold_level", "distractor_count", "distractor_similarity")
"""The sampling factors plotted, each to ``creativity_<factor>.png``."""


def figures(metrics: MetricsView) -> list[BarFigure]:
    """Gold and entity accuracy by each sampling factor (mean of R under repeats); with an LLM
    judge, the failure attribution of wrong answers (primary and contributing counts per category)."""
    drawn: list[BarFigure] = []
    note = repeats_note(metrics.repeats)
    for factor in FACTOR_PLOTS:
        rows = metrics.breakdowns.get(f"by_{factor}", [])
        if not rows:
            continue
        title = f"Accuracy by {factor.replace('_', ' ')}{note}"
        series = {
            label: [breakdown_value(r, metric, metrics.repeats, "mean") for r in rows]
            for label, metric in (("gold correct", "gold_correct_rate"), ("entity correct", "entity_correct_rate"))
        }
        panel = BarPanel(labels=[str(r[factor]) for r in rows], series=series, title=title, ylabel="accuracy (%)")
        drawn.append(BarFigure(breakdown=f"by_{factor}", file=f"creativity_{factor}.png", title=title, panels=[panel]))
    rows = metrics.breakdowns.get("failure_attribution", [])
    if rows:
        title = "Failure attribution of wrong answers (CreativityBench Figure 11)"
        series = {kind: [float(r[kind]) for r in rows] for kind in ("primary", "contributing")}
        panel = BarPanel(
            labels=[str(r["category"]) for r in rows], series=series, title=title, ylabel="answers", top=None
        )
        drawn.append(
            BarFigure(
                breakdown="failure_attribution",
                file="creativity_failure_attribution.png",
                title=title,
                panels=[panel],
                size=(7.0, 4.0),
            )
        )
    return drawn
