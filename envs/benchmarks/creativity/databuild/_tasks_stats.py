"""``tasks stats``: the paper's Table 8-style counts of a task set and its tier balance."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.table import Table

from lateralgym.envs.benchmarks.creativity import SCENES, CreativityTask
from lateralgym.envs.benchmarks.creativity._splits import task_split
from lateralgym.envs.benchmarks.creativity.databuild._tasks_models import DISTRACTOR_COUNTS
from lateralgym.envs.benchmarks.creativity.databuild._tiers import SIMILARITIES

__all__ = ["empty_cells", "stats_tables"]

LEVELS = tuple(range(6))
BAND_NAMES = {"small": "2-4", "medium": "5-10", "large": "10-50"}


def _grid(title: str, rows: Sequence[str], columns: Sequence[str], counts: Counter[tuple[str, str]]) -> Table:
    table = Table(title=title)
    table.add_column("")
    for column in columns:
        table.add_column(column, justify="right")
    table.add_column("total", justify="right")
    for row in rows:
        table.add_row(row, *(str(counts[(row, c)]) for c in columns), str(sum(counts[(row, c)] for c in columns)))
    return table


def empty_cells(tasks: Sequence[CreativityTask]) -> list[str]:
    """The (band x level) and (similarity x count) cells no task fills, as ``band/level`` or ``similarity/count``."""
    bands: Counter[tuple[str, int]] = Counter((t.factors.cluster_band, t.factors.gold_level) for t in tasks)
    tiers: Counter[tuple[str, int]] = Counter(
        (t.factors.distractor_similarity, t.factors.distractor_count) for t in tasks
    )
    empty = [f"{b}/{lv}" for b in BAND_NAMES for lv in LEVELS if not bands[(b, lv)]]
    return empty + [f"{s}/{n}" for s in SIMILARITIES for n in DISTRACTOR_COUNTS if not tiers[(s, n)]]


def stats_tables(tasks: Sequence[CreativityTask]) -> list[Table]:
    """Counts per scene (Table 8's columns), then the (band x level) and (similarity x count) grids."""
    overview = Table(title=f"{len(tasks)} tasks")
    for column in ("scene", "tasks", "gold affordances", "gold entities", "entities", "test tasks"):
        overview.add_column(column, justify="left" if column == "scene" else "right")
    present = [s for s in SCENES if any(t.scene == s for t in tasks)]
    for scene in [*present, "all"]:
        chosen = [t for t in tasks if scene in ("all", t.scene)]
        overview.add_row(
            scene,
            str(len(chosen)),
            str(len({(t.scene, t.gold.entity, t.gold.part, t.gold.affordance.action) for t in chosen})),
            str(len({(t.scene, t.gold.entity) for t in chosen})),
            str(len({e.id for t in chosen for e in t.entities})),
            str(sum(task_split(t) == "test" for t in chosen)),
        )
    bands = Counter((BAND_NAMES[t.factors.cluster_band], str(t.factors.gold_level)) for t in tasks)
    tiers: Counter[tuple[str, str]] = Counter(
        (t.factors.distractor_similarity, str(t.factors.distractor_count)) for t in tasks
    )
    counts = sorted({t.factors.distractor_count for t in tasks} | set(DISTRACTOR_COUNTS))
    return [
        overview,
        _grid("cluster band x gold level", list(BAND_NAMES.values()), [str(lv) for lv in LEVELS], bands),
        _grid("distractor similarity x count", list(SIMILARITIES), [str(n) for n in counts], tiers),
    ]
