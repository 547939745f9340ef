"""A run's episodes as an HTML page: browse, filter, search and step through turns offline.

``write_viewer(run_dir)`` streams the step log once, groups the records by episode and writes them
page by page (``_viewer_pages``): the HTML (``_viewer_template.html``, plain CSS and vanilla JS,
nothing fetched from the network) embeds a compact index of every episode and the first page; the
other pages are scripts in ``viewer-pages/`` next to it, loaded when an episode on them is opened,
so a 20,000-episode run opens as fast as a small one and works from ``file://`` on any machine. A
run of one page (up to ``PAGE_SIZE`` episodes) is a single self-contained file. The logs hold
dataset and LLM text, so the JSON is escaped to never close its ``<script>`` tag early, and the
page renders every logged string as text, never as markup. Observations appear once per page,
numbered; large ones are read back from the run's ``observations/`` folder. Each episode
shows its item's reference answer (collapsed: the page is for the researcher) and each model call
the messages it was sent (``_viewer_extras``).
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from lateralgym.envs import ConfigError, LateralGymError, get_benchmark
from lateralgym.episodes._log import STEP_LOG, EpisodeEnd, EpisodeStart, StepLine, read_log
from lateralgym.episodes._manifest import RunRecord, read_run
from lateralgym.episodes._metrics import DuplicateEpisodes, MetricsError, MovesTally, RunMetrics, compute_metrics
from lateralgym.episodes._report import judge_agreement
from lateralgym.episodes._viewer_extras import reference_answers
from lateralgym.episodes._viewer_pages import PAGE_SIZE, EpisodePages, pages_dir_for

VIEWER_FILE = "viewer.html"
"""The page's default name inside the run directory."""

_TEMPLATE = "_viewer_template.html"
_SLOTS = ("__LATERALGYM_TITLE__", "__LATERALGYM_SUMMARY__", "__LATERALGYM_DATA__")

_HEADER_FALLBACK_FIELDS = {"run_id", "config", "benchmark", "mode", "player", "judge"}
"""What the header takes from the first ``EpisodeStart`` when the manifest lacks it."""


class ViewerError(LateralGymError, ValueError):
    """The directory cannot be viewed (it holds no step log)."""


def write_viewer(
    run_dir: str | Path,
    out: str | Path | None = None,
    max_episodes: int | None = None,
    *,
    page_size: int = PAGE_SIZE,
) -> Path:
    """Write a run's viewer page (and, past one page of episodes, its page files); return its path.

    The log is read once and never held whole: memory stays near one page of episodes plus a
    short index row per episode, whatever the run's size.

    Args:
        run_dir: a run directory (holding ``steps.jsonl``; ``manifest.json`` and ``config.yaml``
            are shown when present).
        out: where to write the page (default ``run_dir/viewer.html``); page files go to the
            folder next to it named after it (``viewer-pages/``), which must travel with it.
        max_episodes: show only the first this many episodes in log order (all when None); the
            summary line still scores every episode of the run.
        page_size: episodes per page.

    Returns:
        The path of the written page.

    Raises:
        ViewerError: ``run_dir`` has no step log, or its ``config.yaml`` is not UTF-8 YAML.
        ConfigError: its ``manifest.json`` is damaged (not JSON, not a manifest).
        LogError: a line of the log other than the last is not a valid record.
    """
    run_dir = Path(run_dir)
    target = Path(out) if out is not None else run_dir / VIEWER_FILE
    pages_dir = pages_dir_for(target)
    data = _collect(run_dir, pages_dir, max_episodes, page_size)
    data["pages_dir"] = pages_dir.name
    template = resources.files(__package__).joinpath(_TEMPLATE).read_text(encoding="utf-8")
    title = html.escape(f"LateralGym · {data['header'].get('run_id', run_dir.name)}")
    before, rest = template.split(_SLOTS[2], 1)
    before = before.replace(_SLOTS[0], title).replace(_SLOTS[1], html.escape(data["summary"]["line"]))
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", encoding="utf-8") as page:
        page.write(before)
        page.write(embed_json(data))
        page.write(rest)
    return target


def embed_json(data: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` appear raw.

    ``\\u003c`` is the same string to ``JSON.parse``, but the HTML parser cannot see ``</script>``
    or ``<!--`` in it, so logged text cannot end the tag or hide its end.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def viewer_data(run_dir: str | Path, max_episodes: int | None = None) -> dict[str, Any]:
    """What a one-page viewer embeds: header, summary, factor values, the index and every episode."""
    return _collect(Path(run_dir), None, max_episodes, PAGE_SIZE)


def _collect(run_dir: Path, pages_dir: Path | None, max_episodes: int | None, page_size: int) -> dict[str, Any]:
    """Read the log once: write the pages, score the run, and return the HTML's data."""
    if not (run_dir / STEP_LOG).is_file():
        raise ViewerError(f"{run_dir} has no {STEP_LOG}: pass a run directory made by `lateralgym run`")
    run = read_run(run_dir)  # a damaged manifest stops the page before any file is written
    config_yaml = _config_text(run.config_path)
    references, reference_note = reference_answers(run_dir)
    pages = EpisodePages(run_dir, pages_dir, references, page_size=page_size, max_episodes=max_episodes)
    seen: set[str] = set()
    duplicates = DuplicateEpisodes()
    first_start: list[EpisodeStart] = []

    moves = MovesTally()

    def starts_and_ends() -> Iterator[EpisodeStart | EpisodeEnd]:
        for record in read_log(run_dir / STEP_LOG):
            seen.add(record.episode_id)
            duplicates.add(record)
            moves.add(record)
            pages.add(record)
            if isinstance(record, EpisodeStart) and not first_start:
                first_start.append(record)
            if not isinstance(record, StepLine):
                yield record

    records = starts_and_ends()
    try:
        metrics: RunMetrics | None = compute_metrics(records)
    except MetricsError:  # mixed benchmarks, or no episode at all: the page still shows the episodes
        metrics = None
    for _ in records:  # what the metrics did not read
        pass
    data = pages.finish()
    summary = _summary(metrics, len(seen), pages.shown)
    if duplicates.episodes:
        n = len(duplicates.episodes)
        summary["line"] += f" · {n} recorded more than once (two processes wrote the log?)"
    summary["duplicates"] = len(duplicates.episodes)
    counted = moves.totals()
    if counted.total:
        summary["line"] += f" · player {counted.line()}"
    summary["moves"] = counted.model_dump()
    return {
        "header": _header(run, first_start[0] if first_start else None),
        "config_yaml": config_yaml,
        "summary": summary,
        "reference_note": reference_note,
        **data,
    }


def _config_text(path: Path) -> str | None:
    """The run's ``config.yaml`` as shown on the page, None when there is none.

    Raises:
        ViewerError: it is not UTF-8 text or not YAML.
    """
    if not path.is_file():
        return None
    try:
        text = path.read_text(encoding="utf-8")
        yaml.safe_load(text)
    except UnicodeDecodeError as exc:
        raise ViewerError(f"{path}: not UTF-8 text (byte {exc.start}); was it overwritten?") from exc
    except yaml.YAMLError as exc:
        raise ViewerError(f"{path}: not valid YAML ({' '.join(str(exc).split())})") from exc
    return text


def _header(run: RunRecord, start: EpisodeStart | None) -> dict[str, Any]:
    header: dict[str, Any] = {}
    if run.manifest is not None:
        manifest, options = run.manifest, run.manifest.options
        facts = {
            "run_id": manifest.run_id,
            "config": manifest.config,
            "benchmark": manifest.benchmark,
            "player": options.player,
            "judge": options.judge,
            "judge_agreement": judge_agreement(run, manifest.benchmark),
            "dataset": manifest.dataset,
            "seed": manifest.seed,
            "limit": options.limit,
            "sample": options.sample,
            "repeats": options.repeats,
            "created": manifest.created,
            "lateralgym_version": manifest.lateralgym_version,
        }
        header = {key: value for key, value in facts.items() if value not in (None, "")}
    if start is not None:  # a run without a manifest (copied logs) still says what it ran
        for key, value in start.model_dump(include=_HEADER_FALLBACK_FIELDS).items():
            header.setdefault(key, value)
    header.setdefault("run_id", run.run_dir.name)
    return header


def _summary(metrics: RunMetrics | None, total: int, shown: int) -> dict[str, Any]:
    """The summary line and the run's headline metrics, scored over every finished episode."""
    parts = [f"{total} episode{'s' if total != 1 else ''}"]
    if shown < total:
        parts[0] += f" ({shown} shown)"
    headline: dict[str, str] = {}
    if metrics is not None:
        if metrics.errored:
            parts.append(f"{metrics.errored} errored")
        unfinished = total - metrics.episodes
        if unfinished > 0:
            parts.append(f"{unfinished} unfinished")
        headline = {name: f"{value:.1f}" for name, value in metrics.headline.items()}
        try:
            first: tuple[str, ...] = get_benchmark(metrics.benchmark).metrics.headline
        except ConfigError:
            first = ()
        named = [n for p in first for n in metrics.headline if n == p or n.startswith(f"{p}_best_of_")]
        parts.extend(f"{name} {headline[name]}" for name in (named or list(headline)[:1]))
    return {"line": " · ".join(parts), "headline": headline, "episodes": total, "shown": shown}
