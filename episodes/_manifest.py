"""What a run directory says about its run: ``manifest.json`` (a ``Manifest``) and ``read_run``, the
one reader the viewer, report, replay, compare and the episode table use.

A manifest holds no secrets: the options a run ran with are recorded without credentials
(``RunOptions.recorded``), and the roles whose URL or spec carried some are named, so a resume can
ask for them again. Version 1 manifests (LateralGym 0.1 before ``RunOptions``: every setting at the
top level, ``judge_base_url`` the judge's server even when it followed ``--base-url``) are read into
the same model, so their runs still resume and view.
"""

from __future__ import annotations

import datetime as dt
import json
import platform
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from lateralgym.agents import ServedModel, display_url, safe_spec
from lateralgym.envs import ConfigError, EpisodeConfig
from lateralgym.envs.support import validation_message
from lateralgym.episodes._log import LOG_SCHEMA_VERSION, STEP_LOG
from lateralgym.episodes._options import EpisodeSpec, RecordedOptions, RunOptions
from lateralgym.episodes._rundir import CONFIG_FILE, MANIFEST, SUMMARY, read_capped, refuse_links
from lateralgym.judges import JudgeCard

__all__ = [
    "MANIFEST_VERSION",
    "Manifest",
    "RunRecord",
    "new_manifest",
    "package_version",
    "read_manifest",
    "read_run",
    "require_run_dir",
]

MANIFEST_VERSION = 2
"""2: the settings under ``options`` (a ``RunOptions``); 1: every setting at the top level."""

_TOP_LEVEL_SETTINGS = ("player", "judge", "judge_samples", "limit", "repeats", "concurrency", "use_cache")
"""Settings a version 1 manifest holds at the top level, under the same names as in ``RunOptions``."""


def new_manifest(
    run_id: str,
    config: EpisodeConfig,
    options: RunOptions,
    raw_judge: str,
    plan: list[EpisodeSpec] | None,
    *,
    player: str | None = None,
) -> Manifest:
    """The manifest of a new run: what ran, with which options (credentials removed), and the plan
    (None: episodes come as they are asked for, a served run's). ``player`` names a player the options
    cannot (``remote``: a server's or a trainer's clients)."""
    judge_url = options.judge_base_url or options.base_url
    spec = options.player or ""
    recorded = options.recorded().merge(judge=safe_spec(raw_judge))
    return Manifest(
        run_id=run_id,
        lateralgym_version=package_version(),
        created=dt.datetime.now(dt.UTC).isoformat(),
        python=platform.python_version(),
        platform=platform.platform(),
        config=config.name,
        benchmark=config.benchmark,
        dataset=config.dataset or "sample",
        seed=config.seed,
        options=recorded if player is None else recorded.model_copy(update={"player": player}),
        redacted_base_urls=[
            role for role, url in (("player", options.base_url), ("judge", judge_url)) if display_url(url) != url
        ],
        redacted_specs=[role for role, spec in (("player", spec), ("judge", raw_judge)) if safe_spec(spec) != spec],
        episodes=plan,
    )


def package_version() -> str:
    """LateralGym's version as installed (the package's metadata), for the manifests runs write."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("lateralgym")
    except PackageNotFoundError:  # pragma: no cover - a source tree used without installing it
        return "0+unknown"


class Manifest(BaseModel):
    """What a run directory's ``manifest.json`` holds (no secrets).

    Only ``run_id`` is required: the tools that look at runs also read manifests written by hand
    or cut down, and say what they hold.
    """

    model_config = ConfigDict(extra="ignore")

    manifest_version: int = MANIFEST_VERSION
    """The layout (``MANIFEST_VERSION``); version 1 manifests are read into this one."""
    run_id: str
    lateralgym_version: str = ""
    log_schema_version: int = LOG_SCHEMA_VERSION
    created: str = ""
    """When the run started (ISO 8601, UTC)."""
    python: str = ""
    platform: str = ""
    config: str = ""
    """The config's name (the config itself is ``config.yaml``)."""
    benchmark: str = ""
    dataset: str = ""
    """The dataset file, or ``sample`` for the data shipped in the package."""
    seed: int | None = None
    """The run seed every episode's seed derives from."""
    options: RecordedOptions = Field(default_factory=RecordedOptions)
    """The settings the run ran with, credentials removed; ``player`` and ``judge`` are the specs
    that ran (the config's when none was given), ``use_cache`` and ``llm_concurrency`` as applied,
    ``judge_base_url`` only when the judge was given a server of its own."""
    redacted_base_urls: list[str] = Field(default_factory=list)
    """Roles (``player``, ``judge``) whose server URL carried credentials, which are never written:
    a resume must be given the URL again."""
    redacted_specs: list[str] = Field(default_factory=list)
    """Roles whose spec itself carried credentials (``openai/m?base_url=http://user:key@...``): the
    written spec lacks them, so such a run cannot be resumed as it was started."""
    episodes: list[EpisodeSpec] | None = None
    """The plan, every episode with its seed (None: not recorded)."""
    served: list[ServedModel] = Field(default_factory=list)
    """The local models (``local/`` specs) the run was served by: each file with its sha256 and the
    server's threads and context; a resume checks the file is still the same."""
    judge_card: JudgeCard | None = None
    """The judge's measured agreement with people (``--judge-card``), None: unmeasured."""

    @model_validator(mode="before")
    @classmethod
    def _version_1(cls, data: Any) -> Any:
        """A version 1 manifest's top-level settings, moved under ``options``."""
        if not isinstance(data, dict) or "options" in data:
            return data
        options = {name: data[name] for name in _TOP_LEVEL_SETTINGS if name in data}
        base_url = data.get("player_base_url")
        options["base_url"] = base_url
        # version 1 wrote the judge's server whether or not it was its own: the same as the
        # player's means it followed --base-url
        judge_url = data.get("judge_base_url")
        options["judge_base_url"] = judge_url if judge_url != base_url else None
        rest = {k: v for k, v in data.items() if k not in (*_TOP_LEVEL_SETTINGS, "player_base_url", "judge_base_url")}
        return {**rest, "manifest_version": 1, "options": options}


def _manifest_json(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``, None when there is no such file.

    Raises:
        ConfigError: it cannot be read, or is not a JSON object (the message names it).
    """
    try:
        text = read_capped(path).decode("utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); was it overwritten?") from exc
    try:
        data = json.loads(text)
    except RecursionError:
        raise ConfigError(f"{path}: nested too deeply to be a run's file; was it replaced?") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); was it cut short or edited?"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def _manifest(path: Path) -> Manifest | None:
    data = _manifest_json(path)
    if data is None:
        return None
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        field, message = validation_message(exc, "manifest")
        raise ConfigError(f"{path}: not a LateralGym manifest (field {field!r}: {message})") from None


def require_run_dir(run_dir: Path) -> None:
    """Refuse a directory that holds no manifest (without reading it), or a symbolic link (``refuse_links``).

    Raises:
        ConfigError: ``run_dir`` is not a run directory, or holds a link.
    """
    if not (run_dir / MANIFEST).exists():
        raise _not_a_run_dir(run_dir)
    refuse_links(run_dir)


def read_manifest(run_dir: str | Path) -> Manifest:
    """A run directory's manifest (either version).

    Raises:
        ConfigError: the directory has no manifest, or it is not valid JSON or not a manifest.
    """
    run_dir = Path(run_dir)
    manifest = _manifest(run_dir / MANIFEST)
    if manifest is None:
        raise _not_a_run_dir(run_dir)
    return manifest


def _not_a_run_dir(run_dir: Path) -> ConfigError:
    return ConfigError(f"{run_dir} is not a run directory (no {MANIFEST}); pass the directory a run created")


@dataclass(frozen=True)
class RunRecord:
    """A run directory as the tools that look at runs read it (``read_run``)."""

    run_dir: Path
    manifest: Manifest | None
    """None for a directory without one (a copied log)."""
    log_path: Path
    """``steps.jsonl`` (it may not exist yet)."""
    summary_path: Path
    """``summary.json``, written when a run ends (it may not exist)."""
    config_path: Path
    """``config.yaml``, the config the run ran (it may not exist)."""

    @cached_property
    def config(self) -> EpisodeConfig | None:
        """The run's config, read on first use; None when there is no ``config.yaml``.

        Raises:
            ConfigError: ``config.yaml`` is not UTF-8, not YAML or not a config (named).
        """
        return recorded_config(self.config_path) if self.config_path.exists() else None

    @property
    def planned(self) -> int | None:
        """How many episodes the run planned (None when its manifest does not say)."""
        if self.manifest is None or self.manifest.episodes is None:
            return None
        return len(self.manifest.episodes)


def _import_benchmarks(config_path: Path) -> None:
    """Import the benchmarks a run's config names in ``imports`` (a benchmark of your own, from a file
    or module), so a new process can score, view and replay its log, once they are allowed: named on
    the command line (``--import``) or trusted (``--trust-imports``); a run directory is data. A config
    that cannot be read is left to whoever needs it (a report reads only the log and the manifest).

    Raises:
        ConfigError: a listed benchmark file or module was not named or cannot be imported (the message
            names it).
    """
    import yaml

    from lateralgym.envs import load_benchmark
    from lateralgym.envs.support import guard_recorded_imports, recorded_sources

    try:
        data = yaml.safe_load(read_capped(config_path).decode("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return
    sources = recorded_sources(data)
    guard_recorded_imports(sources, config_path)
    for source in sources:
        try:
            load_benchmark(source)
        except ConfigError as exc:
            raise ConfigError(f"{config_path}: the run's benchmark comes from {source}: {exc}") from None


def recorded_config(config_path: Path) -> EpisodeConfig:
    """A run directory's ``config.yaml``, its code imported only once allowed (``_import_benchmarks``).

    Raises:
        ConfigError: the config is unreadable or not a config, or names code nobody named (all named).
    """
    _import_benchmarks(config_path)
    return EpisodeConfig.from_file(config_path)


def read_run(run_dir: str | Path) -> RunRecord:
    """What a run directory holds: its manifest (read now), its config (read on first use) and the
    paths of its step log and summary. A directory without a manifest (a copied log) reads too.

    Raises:
        ConfigError: ``manifest.json`` is there but unreadable, not JSON or not a manifest (named).
    """
    run_dir = Path(run_dir)
    refuse_links(run_dir)
    _import_benchmarks(run_dir / CONFIG_FILE)
    return RunRecord(
        run_dir=run_dir,
        manifest=_manifest(run_dir / MANIFEST),
        log_path=run_dir / STEP_LOG,
        summary_path=run_dir / SUMMARY,
        config_path=run_dir / CONFIG_FILE,
    )
