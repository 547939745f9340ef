"""The viewer's episodes, grouped from a streamed step log and written page by page.

A big run's viewer cannot be one page: 20,000 episodes are tens of MB of JSON that the browser
must parse before it shows anything. ``EpisodePages`` takes the log's records one at a time, keeps
only the episodes still running plus one page of finished ones, and writes each full page as
``<viewer>-pages/page-NNNNN.js``: a script that hands its data to the viewer
(``lateralgymPage(n, {...})``), because a page opened from ``file://`` may load scripts but not
``fetch()`` local JSON. The first page stays in memory and goes inline into the HTML, with a
compact index of every episode (id, item, outcome, reward, steps, metadata, page) that the list,
the filters and the search use without loading any page. A run of one page has no page files.

Each page holds its episodes, the observation texts they use (each once, numbered: an episode's
steps refer to their texts by number), the reference answers of their items and the messages of
their model calls, so a page is shown with nothing else loaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lateralgym.envs import ConfigError, get_benchmark
from lateralgym.episodes._log import EpisodeEnd, EpisodeStart, Observation, StepLine, observation_text
from lateralgym.episodes._viewer_extras import run_prompts

__all__ = ["PAGE_FILE", "PAGE_SIZE", "EpisodePages", "page_json", "pages_dir_for"]

PAGE_SIZE = 250
"""Episodes per page: small enough to parse at once, large enough that a run has few files."""

PAGE_FILE = "page-{:05d}.js"
"""A page's file name inside the pages folder (page 0 is inline in the HTML)."""

_MAX_FACTOR_VALUES = 24
"""A metadata key with more distinct values than this (scenes, groups of a big run) gets no filter."""

_NOT_FACTORS = frozenset({"title"})
"""Metadata that names one item each: searchable with the text filter, useless as a select box."""

_START_FIELDS = {"benchmark", "mode", "seed", "repeat", "player", "judge", "meta"}
"""What an episode's entry takes from its ``EpisodeStart``."""

_END_FIELDS = {"benchmark", "outcome", "reward", "terminated", "truncated", "error", "usage"}
"""What an episode's entry takes from its ``EpisodeEnd``."""

Record = EpisodeStart | StepLine | EpisodeEnd


def pages_dir_for(page: Path) -> Path:
    """The folder of a viewer page's page files: ``viewer.html`` -> ``viewer-pages/``."""
    return page.with_name(f"{page.stem}-pages")


def page_json(data: Any) -> str:
    """ASCII JSON that cannot end a ``<script>`` element early (``<``, ``>``, ``&`` as ``\\u`` escapes).

    ASCII so a page file reads the same whatever encoding the browser assumes for it; the escapes
    are the same string to ``JSON.parse`` and to JavaScript.
    """
    text = json.dumps(data, ensure_ascii=True, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


class _Episode:
    """One episode being collected: its page entry and the texts it refers to."""

    __slots__ = ("entry", "number", "texts")

    def __init__(self, number: int, record: Record) -> None:
        self.number = number
        self.texts: dict[str, str] = {}
        self.entry: dict[str, Any] = {
            "n": number,
            "id": record.episode_id,
            "item": record.item_id,
            "benchmark": getattr(record, "benchmark", None),
            "meta": {},
            "steps": [],
            "ended": False,
        }


class EpisodePages:
    """Collects episodes from log records and writes them a page at a time.

    Args:
        run_dir: the run directory (observations too large to log inline are read from it).
        pages_dir: where page files go; None keeps every episode in the first page (no files).
        references: item id -> reference answer, for the items the run may hold.
        page_size: episodes per page.
        max_episodes: keep only the first this many episodes in log order (all when None).
    """

    def __init__(
        self,
        run_dir: Path,
        pages_dir: Path | None,
        references: dict[str, str],
        *,
        page_size: int = PAGE_SIZE,
        max_episodes: int | None = None,
    ) -> None:
        self._run_dir = run_dir
        self._pages_dir = pages_dir
        self._references = references
        self._page_size = page_size if pages_dir is not None else None
        self._max = max_episodes
        self._open: dict[str, _Episode] = {}
        self._done: dict[str, _Episode] = {}
        self._index: list[list[Any] | None] = []
        self._factors: dict[str, set[Any]] = {}
        self._too_many: set[str] = set()
        self.pages = 0
        """Pages finished so far (page 0 included)."""
        self.first_page: dict[str, Any] | None = None
        """Page 0's data, inline in the HTML."""
        if pages_dir is not None and pages_dir.is_dir():
            for stale in pages_dir.glob("page-*.js"):
                stale.unlink()

    @property
    def shown(self) -> int:
        """Episodes taken so far."""
        return len(self._index)

    def add(self, record: Record) -> None:
        """Take the log's next record."""
        episode = self._open.get(record.episode_id) or self._done.get(record.episode_id)
        if episode is None:
            if self._max is not None and len(self._index) >= self._max:
                return
            # A record after the episode's page was written (two processes wrote the log; the
            # summary says so) starts a second entry: a written page is not rewritten.
            episode = self._open[record.episode_id] = _Episode(len(self._index), record)
            self._index.append(None)
        self._add_record(episode, record)
        if isinstance(record, EpisodeEnd) and record.episode_id in self._open:
            self._finish(self._open.pop(record.episode_id))

    def finish(self) -> dict[str, Any]:
        """Close the unfinished episodes, write the last page and return the index data.

        Returns:
            ``index`` (one compact row per episode, in log order: id, item, status, badge,
            reward, steps, page, meta), ``factors`` (each metadata key's values for the filter
            boxes), ``pages`` and the first page's ``episodes``, ``texts``, ``references`` and
            ``prompts``. ``texts`` is a list; an episode's ``observation`` and each step's
            ``observation`` and ``reply`` are indexes into its page's list.
        """
        for episode in list(self._open.values()):
            self._finish(episode)
        self._open.clear()
        if self._done or self.first_page is None:
            self._flush()
        assert self.first_page is not None
        if self._pages_dir is not None and self._pages_dir.is_dir() and not any(self._pages_dir.iterdir()):
            self._pages_dir.rmdir()
        return {
            "index": self._index,
            "factors": self._factor_values(),
            "pages": self.pages,
            **self.first_page,
        }

    def _add_record(self, episode: _Episode, record: Record) -> None:
        entry = episode.entry
        if isinstance(record, EpisodeStart):
            entry.update(record.model_dump(include=_START_FIELDS))
            entry["observation"] = self._text_key(record.observation, episode)
        elif isinstance(record, StepLine):
            step = record.model_dump(
                exclude={"schema_version", "run_id", "episode_id", "item_id", "type", "observation", "reply"},
                exclude_none=True,
            )
            if not step.get("judge_calls"):
                step.pop("judge_calls", None)
            step["observation"] = self._text_key(record.observation, episode)
            step["reply"] = self._text_key(record.reply, episode)
            entry["steps"].append(step)
        else:
            entry.update(record.model_dump(include=_END_FIELDS), ended=True)
            entry["turns"] = (record.outcome or {}).get("turns", 0)
            entry.update(_sections(entry))
            entry["meta"] = entry["meta"] or record.meta

    def _text_key(self, obs: Observation, episode: _Episode) -> str:
        """Keep an observation's text once per episode under its hash and return the hash."""
        if obs.sha256 not in episode.texts:
            try:
                episode.texts[obs.sha256] = observation_text(obs, self._run_dir)
            except OSError as exc:
                episode.texts[obs.sha256] = f"[observation {obs.path} could not be read: {exc.strerror or exc}]"
        return obs.sha256

    def _finish(self, episode: _Episode) -> None:
        """An episode is complete (ended, or the log is over): it joins the page being filled."""
        self._done[episode.entry["id"]] = episode
        if self._page_size is not None and len(self._done) >= self._page_size:
            self._flush()

    def _flush(self) -> None:
        """Write the page being filled (page 0 is kept for the HTML) and index its episodes."""
        number = self.pages
        self.pages += 1
        episodes = sorted(self._done.values(), key=lambda e: e.number)
        self._done = {}
        texts: list[str] = []
        numbers: dict[str, int] = {}

        def number_of(sha: str, episode: _Episode) -> int:
            """A text's number on this page: a short key, where a 64-digit hash per step doubles a page."""
            if sha not in numbers:
                numbers[sha] = len(texts)
                texts.append(episode.texts[sha])
            return numbers[sha]

        for episode in episodes:
            entry = episode.entry
            if "observation" in entry:
                entry["observation"] = number_of(entry["observation"], episode)
            for step in entry["steps"]:
                step["observation"] = number_of(step["observation"], episode)
                step["reply"] = number_of(step["reply"], episode)
            entry["status"], entry["badge"] = _status(entry)
            self._count_factors(entry["meta"])
            self._index[episode.number] = [
                entry["id"],
                entry["item"],
                entry["status"],
                entry["badge"],
                entry.get("reward"),
                len(entry["steps"]),
                number,
                entry["meta"],
            ]
        entries = [e.entry for e in episodes]
        items = {e["item"] for e in entries}
        page = {
            "episodes": entries,
            "texts": texts,
            "references": {item: self._references[item] for item in items if item in self._references},
            "prompts": run_prompts(self._run_dir, entries),
        }
        if number == 0:
            self.first_page = page
            return
        assert self._pages_dir is not None
        self._pages_dir.mkdir(parents=True, exist_ok=True)
        target = self._pages_dir / PAGE_FILE.format(number)
        target.write_text(f"lateralgymPage({number},{page_json(page)});\n", encoding="ascii")

    def _count_factors(self, meta: dict[str, Any]) -> None:
        for key, value in meta.items():
            if isinstance(value, str | int | float | bool) and key not in _NOT_FACTORS and key not in self._too_many:
                values = self._factors.setdefault(key, set())
                values.add(value)
                if len(values) > _MAX_FACTOR_VALUES:
                    self._too_many.add(key)
                    del self._factors[key]

    def _factor_values(self) -> dict[str, list[Any]]:
        """Each metadata key's distinct values, for the page's filter boxes (numbers sorted as numbers)."""
        return {
            key: sorted(found, key=lambda v: (isinstance(v, str), v if not isinstance(v, str) else 0, str(v)))
            for key, found in self._factors.items()
        }


def _sections(episode: dict[str, Any]) -> dict[str, Any]:
    """The benchmark's own view of an ended episode (``Outcome.view_sections``) and the outcome
    fields its table then leaves out; nothing for an unreadable outcome."""
    outcome = episode.get("outcome")
    if not outcome:
        return {}
    try:
        typed = get_benchmark(str(episode["benchmark"])).metrics.outcome_of(outcome)
    except (ConfigError, ValidationError):
        return {}
    sections = [s.model_dump(mode="json", exclude_none=True) for s in typed.view_sections()]
    return {"sections": sections, "outcome_skip": sorted(typed.view_hidden)} if sections or typed.view_hidden else {}


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
        typed = get_benchmark(str(episode["benchmark"])).metrics.outcome_of(outcome)
    except (ConfigError, ValidationError):
        return "wrong", "unreadable outcome"
    return ("correct" if typed.succeeded() else "wrong"), typed.badge()
