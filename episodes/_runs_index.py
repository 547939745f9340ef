"""An index of every run under a folder (``lateralgym view runs/``), like ``inspect view``.

``write_runs_index(folder)`` writes each run's viewer (``<run>/viewer.html``) and one page,
``folder/index.html``, listing the runs newest first: benchmark and mode, player, judge, dataset,
date, episodes (errored, partial) and the paper's headline metric, each run linked to its viewer.
Like the viewer, the page is self-contained (no network), embeds its data as escaped JSON and sets
every logged string as text.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from lateralgym.envs import LateralGymError
from lateralgym.episodes._compare import leaderboard, run_dirs_under
from lateralgym.episodes._viewer import VIEWER_FILE, embed_json, write_viewer

__all__ = ["INDEX_FILE", "write_runs_index"]

INDEX_FILE = "index.html"

_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>__TITLE__</title>
<style>
body { margin: 0; padding: 14px 18px; font: 14px/1.45 system-ui, sans-serif; color: #1d232a; background: #f6f7f9; }
h1 { font-size: 17px; margin: 0 0 8px; }
input { padding: 4px 6px; font: inherit; width: 320px; margin-bottom: 8px; }
table { border-collapse: collapse; background: #fff; font-size: 13px; }
td, th { border: 1px solid #dde1e6; padding: 4px 8px; text-align: left; vertical-align: top; }
th { color: #5f6b7a; font-weight: 500; cursor: pointer; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.problem { color: #8a5a00; }
a { color: #2f5fd0; }
</style></head><body>
<h1>__TITLE__</h1>
<input id="q" type="search" placeholder="filter: benchmark, player, judge, dataset..." aria-label="filter runs">
<table id="runs"><thead><tr></tr></thead><tbody></tbody></table>
<script type="application/json" id="lateralgym-runs">__DATA__</script>
<script>
"use strict";
const RUNS = JSON.parse(document.getElementById("lateralgym-runs").textContent);
const COLUMNS = ["run", "benchmark", "player", "judge", "dataset", "date", "episodes", "headline"];
const state = { key: "date", down: true };
function cell(row, key) {
  const td = document.createElement("td");
  if (key === "run") {
    const a = document.createElement("a");
    a.href = row.href; a.textContent = row.run; td.append(a);
  } else td.textContent = row[key] ?? "";
  if (key === "episodes" || key === "headline") td.className = "num";
  if (row.problem && key === "headline") { td.className = "problem"; td.textContent = row.problem; }
  return td;
}
function render() {
  const q = document.getElementById("q").value.trim().toLowerCase();
  const body = document.querySelector("#runs tbody");
  body.replaceChildren();
  const rows = RUNS.filter((r) => !q || COLUMNS.map((k) => r[k] ?? "").join(" ").toLowerCase().includes(q));
  rows.sort((a, b) => (String(a[state.key] ?? "") < String(b[state.key] ?? "") ? -1 : 1) * (state.down ? -1 : 1));
  for (const row of rows) {
    const tr = document.createElement("tr");
    tr.dataset.run = row.run;
    for (const key of COLUMNS) tr.append(cell(row, key));
    body.append(tr);
  }
}
const head = document.querySelector("#runs thead tr");
for (const key of COLUMNS) {
  const th = document.createElement("th");
  th.textContent = key;
  th.addEventListener("click", () => {
    state.down = state.key === key ? !state.down : false;
    state.key = key;
    render();
  });
  head.append(th);
}
document.getElementById("q").addEventListener("input", render);
render();
</script></body></html>
"""


def _row(run_dir: Path, folder: Path) -> dict[str, Any]:
    href = (run_dir / VIEWER_FILE).relative_to(folder).as_posix()
    base: dict[str, Any] = {"run": run_dir.name, "href": href}
    try:
        write_viewer(run_dir)
        (row,) = leaderboard([run_dir], resamples=0).rows
    except LateralGymError as exc:
        return {**base, "problem": " ".join(str(exc).split())[:200]}
    first = next(iter(leaderboard_primary(row.benchmark, list(row.metrics))), None)
    episodes = f"{row.episodes}" + (f" ({row.errored} errored)" if row.errored else "")
    if row.partial:
        episodes += f", partial {row.episodes}/{row.planned}"
    return {
        **base,
        "benchmark": row.benchmark + (f" ({row.mode})" if row.mode else ""),
        "player": row.player,
        "judge": row.judge,
        "dataset": row.dataset,
        "date": row.created[:19].replace("T", " "),
        "episodes": episodes,
        "headline": f"{first} {row.metrics[first].value:.1f}" if first else "",
    }


def leaderboard_primary(benchmark: str, names: list[str]) -> list[str]:
    """The run's paper headline metric names among ``names`` (the first of them leads)."""
    from lateralgym.envs import get_benchmark

    try:
        wanted = get_benchmark(benchmark).metrics.headline
    except LateralGymError:
        wanted = ()
    return [n for p in wanted for n in names if n == p or n.startswith(f"{p}_best_of_")] or names[:1]


def write_runs_index(folder: str | Path, out: str | Path | None = None) -> Path:
    """Write every run's viewer and an index page of the runs under ``folder``; return the page's path.

    A run that cannot be read is listed with the reason instead of its metric.

    Raises:
        LateralGymError: ``folder`` holds no run directories.
    """
    folder = Path(folder)
    runs = [d for d in run_dirs_under([folder]) if d != folder]
    if not runs:
        raise LateralGymError(f"{folder} holds no run directories: pass a folder of runs made by 'lateralgym run'")
    rows = [_row(run_dir, folder) for run_dir in runs]
    title = html.escape(f"LateralGym runs in {folder.resolve().name}")
    page = _PAGE.replace("__TITLE__", title).replace("__DATA__", embed_json(rows))
    target = Path(out) if out is not None else folder / INDEX_FILE
    target.write_text(page, encoding="utf-8")
    return target
