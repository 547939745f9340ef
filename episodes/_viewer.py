"""A run's episodes as one self-contained HTML page: browse, filter and step through turns offline.

``write_viewer(run_dir)`` streams the step log, groups the records by episode and embeds them as
JSON in ``_viewer_template.html`` (plain CSS and vanilla JS, nothing fetched), so the page works
from ``file://`` on any machine. The logs hold dataset and LLM text, so the JSON is escaped to
never close its ``<script>`` tag early, and the page renders every logged string as text, never
as markup. Observations appear once each, keyed by hash; large ones are read back from the run's
``observations/`` folder. Each episode shows its item's reference answer (collapsed: the page is for
the researcher) and each model call the messages it was sent (``_viewer_extras``).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from lateralgym.envs import ConfigError, get_benchmark
from lateralgym.envs._errors import LateralGymError
from lateralgym.episodes._log import (
    STEP_LOG,
    EpisodeEnd,
    EpisodeStart,
    Observation,
    StepLine,
    observation_text,
    read_log,
)
from lateralgym.episodes._metrics import DuplicateEpisodes, MetricsError, compute_metrics
from lateralgym.episodes._runner import manifest_data
from lateralgym.episodes._viewer_extras import reference_answers, run_prompts

VIEWER_FILE = "viewer.html"
"""The page's default name inside the run directory."""

_TEMPLATE = "_viewer_template.html"
_SLOTS = re.compile(r"__LATERALGYM_(DATA|SUMMARY|TITLE)__")


_MANIFEST_KEYS = (
    "run_id",
    "config",
    "benchmark",
    "player",
    "judge",
    "dataset",
    "seed",
    "limit",
    "repeats",
    "created",
    "lateralgym_version",
)

_START_FIELDS = {"benchmark", "mode", "seed", "repeat", "player", "judge", "meta"}
"""What an episode's entry takes from its ``EpisodeStart``."""

_END_FIELDS = {"benchmark", "outcome", "reward", "terminated", "truncated", "error", "usage"}
"""What an episode's entry takes from its ``EpisodeEnd``."""

_HEADER_FALLBACK_FIELDS = {"run_id", "config", "benchmark", "mode", "player", "judge"}
"""What the header takes from the first ``EpisodeStart`` when the manifest lacks it."""

_MAX_FACTOR_VALUES = 24
"""A metadata key with more distinct values than this (scenes, groups of a big run) gets no filter."""

_NOT_FACTORS = frozenset({"title"})
"""Metadata that names one item each: searchable with the text filter, useless as a select box."""


class ViewerError(LateralGymError, ValueError):
    """The directory cannot be viewed (it holds no step log)."""


def write_viewer(run_dir: str | Path, out: str | Path | None = None, max_episodes: int | None = None) -> Path:
    """Write a self-contained HTML page of a run's episodes and return its path.

    Args:
        run_dir: a run directory (holding ``steps.jsonl``; ``manifest.json`` and ``config.yaml``
            are shown when present).
        out: where to write the page (default ``run_dir/viewer.html``).
        max_episodes: embed only the first this many episodes in log order (all when None); the
            summary line still scores every episode of the run.

    Returns:
        The path of the written page.

    Raises:
        ViewerError: ``run_dir`` has no step log, or its ``config.yaml`` is not UTF-8 YAML.
        ConfigError: its ``manifest.json`` is not a JSON object.
        LogError: a line of the log other than the last is not a valid record.
    """
    run_dir = Path(run_dir)
    if not (run_dir / STEP_LOG).is_file():
        raise ViewerError(f"{run_dir} has no {STEP_LOG}: pass a run directory made by `lateralgym run`")
    data = viewer_data(run_dir, max_episodes)
    template = resources.files(__package__).joinpath(_TEMPLATE).read_text(encoding="utf-8")
    slots = {
        "DATA": embed_json(data),
        "SUMMARY": html.escape(data["summary"]["line"]),
        "TITLE": html.escape(f"LateralGym · {data['header'].get('run_id', run_dir.name)}"),
    }
    page = _SLOTS.sub(lambda match: slots[match.group(1)], template)
    target = Path(out) if out is not None else run_dir / VIEWER_FILE
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(page, encoding="utf-8")
    return target


def embed_json(data: Any) -> str:
    """JSON that is safe inside ``<script type="application/json">``: no ``<``, ``>`` or ``&`` appear raw.

    ``\\u003c`` is the same string to ``JSON.parse``, but the HTML parser cannot see ``</script>``
    or ``<!--`` in it, so logged text cannot end the tag or hide its end.
    """
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def viewer_data(run_dir: str | Path, max_episodes: int | None = None) -> dict[str, Any]:
    """What the page embeds: header, summary, factor values, observation texts and episodes."""
    run_dir = Path(run_dir)
    episodes: dict[str, dict[str, Any]] = {}
    texts: dict[str, str] = {}
    first_start: EpisodeStart | None = None
    ends: list[EpisodeEnd] = []
    seen: set[str] = set()
    duplicates = DuplicateEpisodes()
    for record in read_log(run_dir / STEP_LOG):
        seen.add(record.episode_id)
        duplicates.add(record)
        if isinstance(record, EpisodeEnd):
            ends.append(record)
        elif isinstance(record, EpisodeStart) and first_start is None:
            first_start = record
        episode = episodes.get(record.episode_id)
        if episode is None:
            if max_episodes is not None and len(episodes) >= max_episodes:
                continue
            episode = episodes[record.episode_id] = _new_episode(record)
        _add_record(episode, record, texts, run_dir)
    for episode in episodes.values():
        episode["status"], episode["badge"] = _status(episode)
    header = _header(run_dir, first_start)
    summary = _summary(first_start, ends, len(seen), len(episodes))
    if duplicates.episodes:
        n = len(duplicates.episodes)
        summary["line"] += f" · {n} recorded more than once (two processes wrote the log?)"
    summary["duplicates"] = len(duplicates.episodes)
    config_yaml = _config_text(run_dir / "config.yaml")
    references, reference_note = reference_answers(run_dir, {e["item"] for e in episodes.values()})
    return {
        "header": header,
        "config_yaml": config_yaml,
        "summary": summary,
        "factors": _factors(episodes.values()),
        "texts": texts,
        "episodes": list(episodes.values()),
        "references": references,
        "reference_note": reference_note,
        "prompts": run_prompts(run_dir, episodes.values()),
    }


def _new_episode(record: EpisodeStart | StepLine | EpisodeEnd) -> dict[str, Any]:
    return {
        "id": record.episode_id,
        "item": record.item_id,
        "benchmark": getattr(record, "benchmark", None),
        "meta": {},
        "steps": [],
        "ended": False,
    }


def _add_record(
    episode: dict[str, Any], record: EpisodeStart | StepLine | EpisodeEnd, texts: dict[str, str], run_dir: Path
) -> None:
    if isinstance(record, EpisodeStart):
        episode.update(record.model_dump(include=_START_FIELDS))
        episode["observation"] = _text_key(record.observation, texts, run_dir)
    elif isinstance(record, StepLine):
        step = record.model_dump(
            exclude={"schema_version", "run_id", "episode_id", "item_id", "type", "observation", "reply"},
            exclude_none=True,
        )
        step["observation"] = _text_key(record.observation, texts, run_dir)
        step["reply"] = _text_key(record.reply, texts, run_dir)
        episode["steps"].append(step)
    else:
        episode.update(record.model_dump(include=_END_FIELDS), ended=True)
        episode["turns"] = (record.outcome or {}).get("turns", 0)
        episode["meta"] = episode["meta"] or record.meta


def _text_key(obs: Observation, texts: dict[str, str], run_dir: Path) -> str:
    """Store an observation's text once under its hash and return the hash."""
    if obs.sha256 not in texts:
        try:
            texts[obs.sha256] = observation_text(obs, run_dir)
        except OSError as exc:
            texts[obs.sha256] = f"[observation {obs.path} could not be read: {exc.strerror or exc}]"
    return obs.sha256


def _status(episode: dict[str, Any]) -> tuple[str, str]:
    """The outcome class the page filters on (correct / wrong / errored / unfinished) and its badge text."""
    if not episode["ended"]:
        return "unfinished", "unfinished"
    if episode.get("error"):
        return "errored", "errored"
    outcome = episode.get("outcome")
    if not outcome:
        return "wrong", "wrong"
    try:
        typed = get_benchmark(str(episode["benchmark"])).outcome_of(outcome)
    except (ConfigError, ValidationError):
        return "wrong", "unreadable outcome"
    return ("correct" if typed.succeeded() else "wrong"), typed.badge()


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


def _header(run_dir: Path, start: EpisodeStart | None) -> dict[str, Any]:
    manifest = manifest_data(run_dir)
    header = {key: manifest[key] for key in _MANIFEST_KEYS if manifest.get(key) is not None}
    if start is not None:  # a run without a manifest (copied logs) still says what it ran
        for key, value in start.model_dump(include=_HEADER_FALLBACK_FIELDS).items():
            header.setdefault(key, value)
    header.setdefault("run_id", run_dir.name)
    return header


def _summary(start: EpisodeStart | None, ends: list[EpisodeEnd], total: int, shown: int) -> dict[str, Any]:
    """The summary line and the run's headline metrics, scored over every finished episode."""
    parts = [f"{total} episode{'s' if total != 1 else ''}"]
    if shown < total:
        parts[0] += f" ({shown} shown)"
    headline: dict[str, str] = {}
    try:
        metrics = compute_metrics([*([start] if start else []), *ends])
    except MetricsError:
        metrics = None
    if metrics is not None:
        if metrics.errored:
            parts.append(f"{metrics.errored} errored")
        unfinished = total - metrics.episodes
        if unfinished > 0:
            parts.append(f"{unfinished} unfinished")
        headline = {name: f"{value:.1f}" for name, value in metrics.headline.items()}
        try:
            first: tuple[str, ...] = get_benchmark(metrics.benchmark).headline
        except ConfigError:
            first = ()
        named = [n for p in first for n in metrics.headline if n == p or n.startswith(f"{p}_best_of_")]
        parts.extend(f"{name} {headline[name]}" for name in (named or list(headline)[:1]))
    return {"line": " · ".join(parts), "headline": headline, "episodes": total, "shown": shown}


def _factors(episodes: Iterable[dict[str, Any]]) -> dict[str, list[Any]]:
    """Each metadata key's distinct values, for the page's filter boxes (numbers sorted as numbers)."""
    values: dict[str, set[Any]] = {}
    for episode in episodes:
        for key, value in episode["meta"].items():
            if isinstance(value, str | int | float | bool) and key not in _NOT_FACTORS:
                values.setdefault(key, set()).add(value)
    return {
        key: sorted(found, key=lambda v: (isinstance(v, str), v if not isinstance(v, str) else 0, str(v)))
        for key, found in values.items()
        if 1 <= len(found) <= _MAX_FACTOR_VALUES
    }
