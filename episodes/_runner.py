"""Roll out a player against a config's env for many episodes, concurrently, into a run directory.

A run directory holds ``config.yaml`` (the resolved config, with the player and judge that ran),
``manifest.json`` (a ``Manifest``: package version, specs, the episode plan with every episode's
seed; no secrets, no git), ``steps.jsonl`` (the step log) and ``summary.json`` (the metrics and
the model usage per role). ``run(..., resume=RUN_DIR)`` finishes a killed run: episodes with an end
record are kept, partial ones are dropped from the log and run again, so every episode is counted
exactly once. A run holds an OS lock on its directory (``run.lock``, ``fcntl.flock``) for its whole
life, so a second run or resume of the same directory fails at once instead of writing the log
under the first.

Everything runs on one event loop: the player and the judge (inside ``env.astep``) await their
models directly, so Ctrl-C cancels whatever is in flight at once and ``--llm-concurrency`` bounds
both roles together.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import errno
import hashlib
import json
import os
import platform
import re
import secrets
import shutil
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

import lateralgym
from lateralgym.agents import Agent, display_url, player_factory, safe_spec, set_default_concurrency
from lateralgym.agents._llm_concurrency import DEFAULT_CONCURRENCY
from lateralgym.agents._llm_secrets import scrub_credentials
from lateralgym.envs import ConfigError, EpisodeConfig, Judge, LateralEnv, LateralGymError, ModelCall
from lateralgym.envs._benchmark import benchmark_of
from lateralgym.envs._config import MAX_SEED, check_name
from lateralgym.envs._datasets import load_config_items
from lateralgym.envs._errors import PlayerQuit, validation_message
from lateralgym.episodes._failures import STOP_AFTER_ERRORS, FailureWatch
from lateralgym.episodes._log import (
    LOG_SCHEMA_VERSION,
    STEP_LOG,
    EpisodeEnd,
    EpisodeStart,
    StepLine,
    StepLogWriter,
    Usage,
    observation,
    read_log,
)
from lateralgym.episodes._prompts_log import attach_prompt_store
from lateralgym.judges import make_judge

if TYPE_CHECKING:
    from lateralgym.episodes._metrics import RunMetrics

AgentFactory = Callable[[int], Agent]
"""Builds a fresh player for an episode from the episode's seed."""

MANIFEST = "manifest.json"
LOCK_FILE = "run.lock"
"""The file a running run holds its directory's lock on (it stays behind; the lock does not)."""


class RunLockedError(ConfigError):
    """Another process is running (or resuming) the run directory; wait for it, or stop it first."""


class RunDirError(LateralGymError):
    """A run directory cannot be created or written (a full disk, no permission, ``--out`` not a directory).

    Raised mid-run, the episodes already written are kept: ``--resume`` finishes the run.
    """


class _RunState:
    """The run directory of the run this process is executing (for the CLI's interrupt message)."""

    run_dir: Path | None = None


state = _RunState()


class EpisodeSpec(BaseModel):
    """One planned episode."""

    model_config = ConfigDict(frozen=True)

    episode_id: str
    """``<item id>#<repeat>``."""
    item_id: str
    repeat: int
    seed: int
    """Derived from (run seed, item id, repeat): see ``episode_seed``."""


class Manifest(BaseModel):
    """What a run directory's ``manifest.json`` holds (no secrets)."""

    model_config = ConfigDict(extra="ignore")

    run_id: str
    lateralgym_version: str
    log_schema_version: int = LOG_SCHEMA_VERSION
    created: str
    python: str = ""
    platform: str = ""
    config: str
    benchmark: str
    player: str
    """The player spec that ran (credentials removed: ``safe_spec``)."""
    judge: str
    """The judge spec that ran, options and all (credentials removed: ``safe_spec``)."""
    dataset: str
    seed: int
    limit: int | None = None
    repeats: int = 1
    concurrency: int = 4
    player_base_url: str | None = None
    """``--base-url`` as given (credentials removed)."""
    judge_base_url: str | None = None
    """The judge's server: ``--judge-base-url``, else ``--base-url`` (credentials removed). A value that
    differs from ``player_base_url`` was given on its own and stays the judge's on resume."""
    redacted_base_urls: list[str] = Field(default_factory=list)
    """Roles (``player``, ``judge``) whose server URL carried credentials, which are never written:
    a resume must be given the URL again."""
    redacted_specs: list[str] = Field(default_factory=list)
    """Roles whose spec itself carried credentials (``openai/m?base_url=http://user:key@...``): the
    written spec lacks them, so such a run cannot be resumed as it was started."""
    judge_samples: int | None = None
    """``--judge-samples`` when given (the judge spec's ``samples`` otherwise)."""
    use_cache: bool = True
    episodes: list[EpisodeSpec] = Field(default_factory=list)
    """The plan, every episode with its seed."""


class RunResult(BaseModel):
    """Where a run is and what it measured."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    run_dir: Path
    run_id: str
    planned: int
    ran: int
    """Episodes run in this call (the rest were done before a resume)."""
    errored: int = 0
    """Episodes run in this call that ended with an error (all of ``ran``: nothing worked)."""
    first_error: str | None = None
    """The error that ended the first of those episodes, for a one-line diagnosis."""
    error_kinds: dict[str, int] = {}
    """Errored episodes of this call by kind of error (``HTTP 401``, ``connection``, ...)."""
    stopped: str | None = None
    """Why the run stopped before its plan was done (errored episodes in a row), None when it did not."""
    metrics: Any
    """``RunMetrics`` of all finished episodes."""
    usage: dict[str, Usage] = {}
    """Model usage of the whole run per role (``player``, ``judge``), summed from the step log."""


def episode_seed(run_seed: int, item_id: str, repeat: int) -> int:
    """An episode's seed from (run seed, item id, repeat), through ``numpy.random.SeedSequence``.

    Runs with different seeds draw unrelated streams (not the same stream shifted by one item),
    and an item keeps its seed whatever ``--limit`` or the dataset's order is.

    Raises:
        ConfigError: ``run_seed`` is outside ``[0, 2**64)``.
    """
    if not 0 <= run_seed < MAX_SEED:
        raise ConfigError(f"the run seed must be an integer from 0 to 2**64 - 1, got {run_seed}")
    digest = hashlib.sha256(item_id.encode("utf-8")).digest()
    entropy = [run_seed & 0xFFFFFFFF, run_seed >> 32 & 0xFFFFFFFF, *np.frombuffer(digest[:16], dtype=np.uint32)]
    state = np.random.SeedSequence([int(x) for x in entropy], spawn_key=(repeat,)).generate_state(1, np.uint32)
    return int(state[0])


def plan_episodes(items: Sequence[Any], seed: int, limit: int | None = None, repeats: int = 1) -> list[EpisodeSpec]:
    """The first ``limit`` items (all when None) in dataset order, each ``repeats`` times, each
    episode with its own seed (``episode_seed``). The items' benchmark says what the first
    ``limit`` are (``Benchmark.first_items``: BrainTeaser completes every puzzle group it touches).

    Raises:
        ConfigError: ``limit`` is negative or ``repeats`` is below 1.
    """
    if limit is not None and limit < 0:
        raise ConfigError(f"--limit must be 0 or more, got {limit}")
    if repeats < 1:
        raise ConfigError(f"--repeats must be at least 1, got {repeats}")
    chosen = list(items)
    if limit is not None and chosen:
        try:
            chosen = benchmark_of(chosen[0]).first_items(chosen, limit)
        except ConfigError:  # items of no registered benchmark: the plain cut
            chosen = chosen[:limit]
    plan: list[EpisodeSpec] = []
    for item in chosen:
        item_id = str(item.id)
        for r in range(repeats):
            plan.append(
                EpisodeSpec(episode_id=f"{item_id}#{r}", item_id=item_id, repeat=r, seed=episode_seed(seed, item_id, r))
            )
    return plan


def _add(usage: dict[str, Usage], calls: Sequence[ModelCall]) -> None:
    for call in calls:
        usage.setdefault(call.role, Usage()).add(call)


async def run_episode(
    spec: EpisodeSpec,
    env: LateralEnv,
    agent: Agent,
    writer: StepLogWriter,
    run_id: str,
    run_dir: Path | None,
    player: str,
) -> EpisodeEnd:
    """Play one episode, logging every step; an agent or judge failure ends the episode with ``error`` set.

    ``writer`` is anything with ``write(record)`` and ``sync()``; ``run_dir`` None keeps every
    observation inline (a Ray worker's records, which the driver stores).
    """
    config = env.config
    obs, info = env.reset(seed=spec.seed, options={"item_id": spec.item_id})
    meta = env.benchmark.item_meta(env.item)
    ids = {"run_id": run_id, "episode_id": spec.episode_id, "item_id": spec.item_id}
    agent.reset(obs, info, seed=spec.seed)  # before the start record, which logs the prompt it picks
    writer.write(
        EpisodeStart(
            **ids,
            repeat=spec.repeat,
            seed=spec.seed,
            config=config.name,
            benchmark=config.benchmark,
            mode=config.mode,
            player=player,
            judge=getattr(env.judge, "name", "?"),
            observation=observation(obs["text"], run_dir),
            meta=meta,
            prompt=agent.prompt_messages(),
        )
    )
    total, error = 0.0, None
    terminated = truncated = False
    usage: dict[str, Usage] = {}
    while not (terminated or truncated):
        if hasattr(agent, "last_llm"):
            agent.last_llm = None  # so a failure below is never blamed on the previous call
        try:
            action = await agent.act_async(obs, info)
        except PlayerQuit:
            raise  # a person stopping: the run stops, the episode stays unfinished for --resume
        except Exception as exc:  # noqa: BLE001 - a failing agent ends its episode, not the run
            error = scrub_credentials(f"{type(exc).__name__}: {exc}")
            failed: ModelCall | None = getattr(agent, "last_llm", None)
            _add(usage, [failed] if failed is not None else [])
            break
        llm: ModelCall | None = getattr(agent, "last_llm", None)
        _add(usage, [llm] if llm is not None else [])
        before = obs["text"]
        try:
            obs, reward, terminated, truncated, info = await env.astep(action)
        except PlayerQuit:
            raise  # a person judging stopped: as when a person playing does
        except Exception as exc:  # noqa: BLE001 - a failing judge ends its episode, not the run
            error = scrub_credentials(f"{type(exc).__name__}: {exc}")
            _add(usage, getattr(exc, "calls", ()))
            break
        total += reward
        record = env.records[-1]
        _add(usage, record.judge_calls)
        writer.write(
            StepLine(
                **ids,
                step=record.turn,
                action=record.action,
                valid=record.valid,
                observation=observation(before, run_dir),
                reply=observation(obs["text"], run_dir),
                reward=reward,
                judge_label=record.judge_label,
                judge_raw=record.judge_raw,
                terminated=terminated,
                truncated=truncated,
                llm=llm,
                judge_calls=list(record.judge_calls),
            )
        )
    end = EpisodeEnd(
        **ids,
        repeat=spec.repeat,
        benchmark=config.benchmark,
        outcome=env.outcome().model_dump(mode="json"),
        meta=meta,
        reward=total,
        terminated=terminated,
        truncated=truncated,
        error=error,
        usage=usage,
    )
    writer.write(end)
    writer.sync()
    if error is None:  # only a person is shown the verdict and the solution (every other agent ignores it)
        agent.episode_over(str(obs["text"]), end.outcome or {}, env.benchmark.solution_text(env.item))
    return end


def finished_episodes(log_path: Path) -> set[str]:
    """Episode ids that ended without an error; errored ones (an API outage) are run again on resume."""
    if not log_path.exists():
        return set()
    return {r.episode_id for r in read_log(log_path) if isinstance(r, EpisodeEnd) and r.error is None}


def drop_partial_episodes(log_path: Path) -> int:
    """Rewrite the log without the lines of episodes that never ended or ended in an error
    (atomically), so that resuming runs them afresh. Returns the number of lines dropped."""
    if not log_path.exists():
        return 0
    done = finished_episodes(log_path)
    kept = [r.model_dump_json(exclude_none=True) for r in read_log(log_path) if r.episode_id in done]
    raw_lines = sum(1 for line in log_path.read_text(encoding="utf-8").splitlines() if line.strip())
    dropped = raw_lines - len(kept)
    if dropped:
        tmp = log_path.with_suffix(".jsonl.tmp")
        tmp.write_text("".join(line + "\n" for line in kept), encoding="utf-8")
        os.replace(tmp, log_path)
    return dropped


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (a temporary file, then a rename)."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def player_slug(player: str | None) -> str:
    """The player's model (or offline player) as a folder-name part: ``openai/gpt-4o-mini?temperature=0``
    gives ``gpt-4o-mini``, ``anthropic/claude-3-5-haiku-latest`` ``claude-3-5-haiku-latest``; at most 40
    characters of letters, digits, ``.``, ``_`` and ``-``."""
    if not player:
        return ""
    model = safe_spec(player).split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return re.sub(r"[^A-Za-z0-9._]+", "-", model).strip("-.")[:40].strip("-.")


def new_run_dir(root: Path, config_name: str, player: str | None = None) -> tuple[Path, str]:
    """A fresh ``root/<config>-<player model>-<timestamp>-<random>`` directory and its run id (the model
    part from ``player_slug``; absent when no player is given).

    Raises:
        ConfigError: ``config_name`` is not one plain file name (the directory would not be in ``root``).
        RunDirError: the directory cannot be created (``root`` is a file, read-only, on a full disk).
    """
    try:
        check_name(config_name)
    except ValueError as exc:
        raise ConfigError(f"config {exc}") from None
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S")
    slug = player_slug(player)
    run_id = f"{config_name}-{slug + '-' if slug else ''}{stamp}-{secrets.token_hex(3)}"
    path = root / run_id
    if path.resolve().parent != root.resolve():  # a second guard: the name is checked above
        raise ConfigError(f"config name {config_name!r} would put the run outside {root}")
    try:
        path.mkdir(parents=True, exist_ok=False)
    except OSError as exc:
        raise RunDirError(f"cannot create a run directory in {root} (--out): {_reason(exc)}") from exc
    return path, run_id


def _reason(exc: OSError) -> str:
    """An OS error in a few words (``Not a directory``, ``No space left on device``), with its file."""
    reason = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno == errno.ENOTDIR:
        reason += " (a path on the way is a file)"
    return f"{reason}: {exc.filename}" if exc.filename else reason


@contextmanager
def locked(run_dir: Path) -> Iterator[None]:
    """Hold the run directory's lock (``run.lock``, an exclusive ``flock``) for the ``with`` block.

    The OS drops the lock when the process ends however it ends, so a killed run never leaves a
    stale one. The file holds the owner's pid while it is held (for the message a second process
    gets) and is emptied on release.

    Raises:
        RunLockedError: another process holds the lock (the message names its pid).
        RunDirError: the lock file cannot be made or locked (a read-only or full disk, a file
            system without locks).
    """
    try:
        fd = os.open(run_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise RunDirError(f"cannot lock {run_dir}: {_reason(exc)}") from exc
    try:
        _lock(fd, run_dir)
        try:
            yield
        finally:
            with suppress(OSError):  # empty while nobody holds it: a reader waits for the pid
                os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # releases the lock


def _lock(fd: int, run_dir: Path) -> None:
    try:
        if sys.platform != "win32":  # no flock on Windows: one run per directory is then up to you
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        pid = f"{os.getpid()}\n".encode("ascii")
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, pid)  # written, then cut to length: never empty once written
        os.ftruncate(fd, len(pid))
    except BlockingIOError:
        raise RunLockedError(
            f"another process (pid {_holder(fd)}) is running {run_dir}; wait for it to finish, or stop it and "
            "then resume"
        ) from None
    except OSError as exc:
        raise RunDirError(f"cannot lock {run_dir}: {_reason(exc)}") from exc


def _holder(fd: int) -> str:
    """The lock holder's pid from the lock file; the holder writes it just after taking the lock, so
    an empty file is read again for a moment before the pid is called unknown."""
    for _ in range(50):
        os.lseek(fd, 0, os.SEEK_SET)
        holder = os.read(fd, 32).decode("ascii", "replace").strip()
        if holder:
            return holder
        time.sleep(0.01)
    return "unknown"


def manifest_data(run_dir: Path) -> dict[str, Any]:
    """A run directory's ``manifest.json`` as a mapping, ``{}`` when there is none (copied logs).

    Raises:
        ConfigError: the file exists but is not a JSON object (the message names it).
    """
    path = run_dir / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it ({exc.strerror or exc})") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); was it overwritten?") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}); was it cut short or edited?"
        ) from exc
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object, got {type(data).__name__}")
    return data


def read_manifest(run_dir: Path) -> Manifest:
    """A run directory's manifest.

    Raises:
        ConfigError: the directory has no manifest, or it is not valid JSON or not a manifest.
    """
    path = run_dir / MANIFEST
    if not path.exists():
        raise ConfigError(f"{run_dir} is not a run directory (no {MANIFEST}); pass the directory a run created")
    data = manifest_data(run_dir)
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        field, message = validation_message(exc, "manifest")
        raise ConfigError(f"{path}: not a LateralGym manifest (field {field!r}: {message})") from None


class UsageTally:
    """Model usage per role over a stream of episode ends, the last end of each episode counting.

    Each episode's usage is kept as a tuple of numbers (not its ``EpisodeEnd``, which carries the
    whole outcome), so a report over a million-line log stays small."""

    _FIELDS = tuple(Usage.model_fields)

    def __init__(self) -> None:
        self._latest: dict[str, tuple[tuple[str, tuple[Any, ...]], ...]] = {}

    def add(self, record: object) -> None:
        """Note ``record`` if it is an episode end (others are ignored)."""
        if isinstance(record, EpisodeEnd):
            self._latest[record.episode_id] = tuple(
                (role, tuple(getattr(usage, name) for name in self._FIELDS)) for role, usage in record.usage.items()
            )

    def totals(self) -> dict[str, Usage]:
        """The usage per role summed over the episodes noted."""
        totals: dict[str, Usage] = {}
        for roles in self._latest.values():
            for role, values in roles:
                totals.setdefault(role, Usage()).merge(
                    Usage.model_construct(**dict(zip(self._FIELDS, values, strict=True)))
                )
        return totals


def usage_from_log(log_path: Path) -> dict[str, Usage]:
    """Model usage per role over every episode end of a step log (the last record of each episode)."""
    tally = UsageTally()
    if log_path.exists():
        for record in read_log(log_path):
            tally.add(record)
    return tally.totals()


def metrics_and_usage(log_path: Path) -> tuple[RunMetrics, dict[str, Usage]]:
    """The run's metrics and its model usage per role, in one pass over the step log.

    Raises:
        MetricsError: the log does not exist or holds no episodes.
        LogError: a line other than the last is not a valid record.
    """
    from lateralgym.episodes._metrics import metrics_from_log

    tally = UsageTally()
    metrics = metrics_from_log(log_path, on_record=tally.add)
    return metrics, tally.totals()


def _check_counts(**counts: int | None) -> None:
    """Refuse a count below 1 (``concurrency=0`` would run nothing, ``judge_samples=0`` vote on nothing)."""
    for name, value in counts.items():
        if value is not None and value < 1:
            raise ConfigError(f"--{name.replace('_', '-')} must be at least 1, got {value}")


def _resume_urls(manifest: Manifest, base_url: str | None, judge_base_url: str | None) -> tuple[str | None, str | None]:
    """The player's and the judge's server on resume: the command line's, else the run's.

    ``--base-url`` moves every role that followed it when the run started (the judge too, unless the
    run gave it its own ``--judge-base-url``); ``--judge-base-url`` moves the judge. A role whose spec
    names its own ``base_url`` keeps it either way (the spec wins, as when the run started).

    Raises:
        ConfigError: a role's URL carried credentials (never written) and the command line gives none.
    """
    if manifest.redacted_specs:
        raise ConfigError(
            f"this run's {' and '.join(manifest.redacted_specs)} spec carried credentials, which are never written, "
            "so it cannot be resumed as it was started; start a new run, and keep keys in environment variables "
            "(api_key_env=NAME) or give server credentials with --base-url"
        )
    own_judge_url = manifest.judge_base_url is not None and manifest.judge_base_url != manifest.player_base_url
    player_url = base_url or manifest.player_base_url
    judge_url = judge_base_url or (manifest.judge_base_url if own_judge_url else None) or player_url
    missing = []
    if "player" in manifest.redacted_base_urls and base_url is None:
        missing.append("--base-url")
    if "judge" in manifest.redacted_base_urls and judge_base_url is None and (own_judge_url or base_url is None):
        missing.append("--judge-base-url" if own_judge_url else "--base-url")
    if missing:
        raise ConfigError(
            f"this run's server URL carried credentials, which are never written; give it again with "
            f"{' and '.join(dict.fromkeys(missing))} to resume"
        )
    return player_url, judge_url


def _redacted_roles(base_url: str | None, judge_base_url: str | None) -> list[str]:
    return [role for role, url in (("player", base_url), ("judge", judge_base_url)) if display_url(url) != url]


async def run_async(
    config: EpisodeConfig | None,
    *,
    player: str | None = None,
    judge: Judge | str | None = None,
    items: Sequence[Any] | None = None,
    agent_factory: AgentFactory | None = None,
    limit: int | None = None,
    repeats: int = 1,
    concurrency: int = 4,
    out: str | Path = "runs",
    resume: str | Path | None = None,
    progress: bool = True,
    base_url: str | None = None,
    judge_base_url: str | None = None,
    judge_samples: int | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool | None = None,
    llm_concurrency: int | None = None,
    backend: str = "local",
    ray_address: str | None = None,
    ray_actors: int | None = None,
    adaptive_concurrency: bool = False,
    check: bool = True,
    stop_after_errors: int | None = STOP_AFTER_ERRORS,
) -> RunResult:
    """Run ``limit`` items x ``repeats`` episodes of ``config``; see ``run``."""
    _check_counts(
        concurrency=concurrency, llm_concurrency=llm_concurrency, judge_samples=judge_samples, actors=ray_actors
    )
    if backend not in ("local", "ray"):
        raise ConfigError(f"--backend is 'local' or 'ray', got {backend!r}")
    if stop_after_errors is not None and stop_after_errors < 0:
        raise ConfigError(f"--stop-after-errors must be 0 (never) or more, got {stop_after_errors}")
    manifest: Manifest | None = None
    with ExitStack() as held:
        if resume is not None:
            run_dir = Path(resume)
            read_manifest(run_dir)  # "not a run directory" before a lock file is made in it
            state.run_dir = run_dir
            held.enter_context(locked(run_dir))
            manifest = read_manifest(run_dir)  # again under the lock: its last holder may have just written it
            # a resumed run continues exactly as it was started: same config, player, judge and plan;
            # how it reaches its servers and whether it uses the cache are this call's to say
            config = EpisodeConfig.from_file(run_dir / "config.yaml")
            player, judge, run_id = manifest.player, manifest.judge, manifest.run_id
            base_url, judge_base_url = _resume_urls(manifest, base_url, judge_base_url)
            judge_samples = manifest.judge_samples
            use_cache = manifest.use_cache if use_cache is None else use_cache
        elif config is None:
            raise ConfigError("give a config to run, or a run directory to resume")
        else:
            # validated again: model_copy(update=...) skips the checks (a name with '/', a seed of -1)
            config = EpisodeConfig.from_dict(config.model_dump(mode="json"), source=f"config {config.name!r}")
        use_cache = True if use_cache is None else use_cache
        # unless given, the LLM cap follows --concurrency, so 64 episodes in flight are not held to 8 requests
        llm_cap = llm_concurrency if llm_concurrency is not None else max(DEFAULT_CONCURRENCY, concurrency)
        set_default_concurrency(llm_cap, adaptive=adaptive_concurrency)
        player = player or config.player
        judge_name = getattr(judge, "name", None) if judge is not None and not isinstance(judge, str) else judge
        judge_name = judge_name or config.judge
        if "human" in (player, judge_name) and backend == "ray":
            raise ConfigError("a person plays or judges at this terminal: drop --backend ray")
        if "human" in (player, judge_name):
            if player == judge_name:
                raise ConfigError("a person cannot both play and judge: the judge sees the hidden answer")
            concurrency, progress = 1, False  # one person, one episode at a time; no bar redrawn over the prompt
        if items is None:
            items = load_config_items(config)
        if judge is None or isinstance(judge, str):
            judge = judge or config.judge
            judge_obj = make_judge(
                judge,
                benchmark=config.benchmark,
                base_url=judge_base_url or base_url,
                cache_dir=cache_dir,
                use_cache=use_cache,
                samples=judge_samples,
                temperature=_config_temperature(judge, config.temperature),
            )
            # the spec as given, options and all (the judge's name is only provider/model), so a
            # resume builds the same judge
            raw_judge = judge
        else:
            judge_obj = judge
            raw_judge = getattr(judge_obj, "name", str(judge))
        judge_spec = safe_spec(raw_judge)
        factory = agent_factory or player_factory(
            player, items, base_url=base_url, cache_dir=cache_dir, use_cache=use_cache, temperature=config.temperature
        )
        # config.yaml tells the truth: the player and judge that actually run.
        config = config.model_copy(update={"player": safe_spec(player), "judge": judge_spec})
        envs = [LateralEnv(config, items=items, judge=judge_obj)]  # fail now (e.g. a wrong judge), not mid-run
        if check:  # a dead server or a wrong key stops the run now, before anything is made
            await check_model_servers(factory, judge_obj, resuming=manifest is not None)
        if manifest is not None:
            plan = list(manifest.episodes)
        else:
            plan = plan_episodes(items, config.seed, limit, repeats)
        if not plan:
            raise ConfigError(
                "nothing to run: " + ("--limit 0 selects no item" if limit == 0 else "the dataset is empty")
            )
        if manifest is None:
            # created only now, so a run that fails to set up leaves no directory behind
            run_dir, run_id = new_run_dir(Path(out), config.name, player)
            state.run_dir = run_dir
            manifest = Manifest(
                run_id=run_id,
                lateralgym_version=lateralgym.__version__,
                created=dt.datetime.now(dt.UTC).isoformat(),
                python=platform.python_version(),
                platform=platform.platform(),
                config=config.name,
                benchmark=config.benchmark,
                player=safe_spec(player),
                judge=judge_spec,
                dataset=config.dataset or "sample",
                seed=config.seed,
                limit=limit,
                repeats=repeats,
                concurrency=concurrency,
                player_base_url=display_url(base_url),
                judge_base_url=display_url(judge_base_url or base_url),
                redacted_base_urls=_redacted_roles(base_url, judge_base_url or base_url),
                redacted_specs=[
                    role for role, spec in (("player", player), ("judge", raw_judge)) if safe_spec(spec) != spec
                ],
                judge_samples=judge_samples,
                use_cache=use_cache,
                episodes=plan,
            )
            try:
                held.enter_context(locked(run_dir))
                (run_dir / "config.yaml").write_text(
                    yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True),
                    encoding="utf-8",
                )
                write_json(run_dir / MANIFEST, manifest.model_dump(mode="json"))
            except (OSError, RunDirError) as exc:
                shutil.rmtree(run_dir, ignore_errors=True)  # ours, just made: no half-made run to resume
                reason = _reason(exc) if isinstance(exc, OSError) else str(exc)
                raise RunDirError(f"cannot create a run directory in {out} (--out): {reason}") from exc
        ray_setup = None
        if backend == "ray":
            if agent_factory is not None:
                raise ConfigError(
                    "--backend ray builds players from the player spec: pass player=..., not agent_factory"
                )
            ray_setup = {
                "config": config.model_dump(mode="json"),
                "player": player,
                "player_label": safe_spec(player),
                "judge": judge if isinstance(judge, str) else judge_obj,  # a spec is rebuilt in each worker
                "base_url": base_url,
                "judge_base_url": judge_base_url,
                "cache_dir": str(Path(cache_dir).resolve()) if cache_dir is not None else None,
                "use_cache": use_cache,
                "judge_samples": judge_samples,
                "llm_concurrency": llm_cap,
                "adaptive_concurrency": adaptive_concurrency,
                "run_id": run_id,
                "address": ray_address,
                "actors": ray_actors,
            }
        attach_prompt_store(run_dir, factory, judge_obj)  # each distinct prompt sent, once, in prompts/
        try:
            return await _roll_out(
                config,
                plan,
                run_dir,
                run_id,
                envs,
                judge_obj,
                items,
                factory,
                player,
                concurrency,
                progress,
                FailureWatch(stop_after_errors),
                ray_setup,
            )
        except OSError as exc:
            raise RunDirError(
                f"cannot write the run in {run_dir}: {_reason(exc)}; the episodes already written are kept: "
                f"fix that, then finish the run with: lateralgym run --resume {run_dir}"
            ) from exc


async def _roll_out(
    config: EpisodeConfig,
    plan: list[EpisodeSpec],
    run_dir: Path,
    run_id: str,
    envs: list[LateralEnv],
    judge: Judge,
    items: Sequence[Any],
    factory: AgentFactory,
    player: str,
    concurrency: int,
    progress: bool,
    watch: FailureWatch,
    ray_setup: dict[str, Any] | None = None,
) -> RunResult:
    """Run the plan's episodes that have no end record yet into ``run_dir`` (locked by the caller),
    here or, given ``ray_setup``, on Ray workers (``episodes/_ray.py``)."""
    from lateralgym.episodes._progress import RunProgress

    log_path = run_dir / STEP_LOG
    drop_partial_episodes(log_path)
    done = finished_episodes(log_path)
    todo = [s for s in plan if s.episode_id not in done]
    if ray_setup is not None:
        return await _roll_out_ray(
            config, plan, todo, done, run_dir, run_id, items, concurrency, progress, ray_setup, watch
        )
    # The first env's checked, indexed items: each further env costs nothing per item.
    envs += [LateralEnv(config, items=envs[0].items, judge=judge) for _ in range(min(concurrency, len(todo)) - 1)]
    free: asyncio.Queue[LateralEnv] = asyncio.Queue()
    for env in envs:
        free.put_nowait(env)
    writer = StepLogWriter(log_path)
    bar = RunProgress(total=len(plan), done=len(done), label=config.name, enabled=progress)
    errors: list[str] = []

    async def play(spec: EpisodeSpec) -> EpisodeEnd:
        env = await free.get()  # an env per episode in flight, reused: building one indexes every item
        try:
            return await run_episode(spec, env, factory(spec.seed), writer, run_id, run_dir, safe_spec(player))
        finally:
            free.put_nowait(env)

    try:
        await _play_all(todo, play, bar, errors, watch)
    finally:
        writer.close()
        # Release the model clients' connections on this loop, before asyncio.run closes it.
        clients = (getattr(factory, "client", None), getattr(judge, "client", None))
        for client in {id(c): c for c in clients if c}.values():
            await client.aclose()
    return _finish(run_dir, run_id, plan, todo, errors, watch)


def _finish(
    run_dir: Path,
    run_id: str,
    plan: list[EpisodeSpec],
    todo: list[EpisodeSpec],
    errors: list[str],
    watch: FailureWatch,
) -> RunResult:
    """Compute the metrics from the log, write ``summary.json`` and say where the run is."""
    from lateralgym.episodes._metrics import compute_metrics

    log_path = run_dir / STEP_LOG
    tally = UsageTally()

    def ends_noted(records: Iterator[Any]) -> Iterator[Any]:  # one pass over the log for both
        for record in records:
            tally.add(record)
            yield record

    metrics = compute_metrics(ends_noted(read_log(log_path)))
    usage = tally.totals()
    summary = {**metrics.model_dump(mode="json"), "llm_usage": {role: u.model_dump() for role, u in usage.items()}}
    write_json(run_dir / "summary.json", summary)
    return RunResult(
        run_dir=run_dir,
        run_id=run_id,
        planned=len(plan),
        ran=watch.finished if watch.stopped else len(todo),
        errored=len(errors),
        first_error=errors[0] if errors else None,
        error_kinds=dict(watch.kinds),
        stopped=watch.stopped,
        metrics=metrics,
        usage=usage,
    )


async def _roll_out_ray(
    config: EpisodeConfig,
    plan: list[EpisodeSpec],
    todo: list[EpisodeSpec],
    done: set[str],
    run_dir: Path,
    run_id: str,
    items: Sequence[Any],
    concurrency: int,
    progress: bool,
    setup: dict[str, Any],
    watch: FailureWatch,
) -> RunResult:
    """``_roll_out`` on Ray workers: they play, this process alone writes the log (an episode at a time)."""
    from lateralgym.episodes._progress import RunProgress
    from lateralgym.episodes._ray import RayExecutor

    writer = StepLogWriter(run_dir / STEP_LOG)
    bar = RunProgress(total=len(plan), done=len(done), label=config.name, enabled=progress)
    errors: list[str] = []
    executor = RayExecutor(
        {k: v for k, v in setup.items() if k not in ("address", "actors")},
        items,
        concurrency=min(concurrency, max(1, len(todo))),
        address=setup["address"],
        actors=setup["actors"],
    )
    by_id = {str(item.id): item for item in items}

    async def play(spec: EpisodeSpec) -> EpisodeEnd:
        try:
            records = await executor.episode(spec.model_dump(mode="json"), run_dir)
        except Exception as exc:  # noqa: BLE001 - its workers kept dying: logged as errored, rerun on resume
            item = by_id[spec.item_id]
            records = [
                EpisodeEnd(
                    run_id=run_id,
                    episode_id=spec.episode_id,
                    item_id=spec.item_id,
                    repeat=spec.repeat,
                    benchmark=config.benchmark,
                    meta=benchmark_of(item).item_meta(item),
                    error=scrub_credentials(f"{type(exc).__name__}: {exc}"),
                )
            ]
        for record in records:
            writer.write(record)
        writer.sync()
        end = records[-1]
        assert isinstance(end, EpisodeEnd)
        return end

    try:
        await _play_all(todo, play, bar, errors, watch)
    finally:
        writer.close()
        executor.shutdown()
    return _finish(run_dir, run_id, plan, todo, errors, watch)


class _Stopped(Exception):
    """Raised inside the roll-out when ``FailureWatch`` says stop."""


async def _play_all(
    todo: list[EpisodeSpec],
    play: Callable[[EpisodeSpec], Awaitable[EpisodeEnd]],
    bar: Any,
    errors: list[str],
    watch: FailureWatch,
) -> None:
    """Play every episode of ``todo`` at once (``play`` bounds how many really run), counting errors,
    advancing the bar and stopping when ``watch`` says so. On a stop, a failure (a full disk) or
    Ctrl-C, every episode still running is cancelled before this returns, so none writes after the
    caller closes the log."""

    async def one(spec: EpisodeSpec) -> None:
        end = await play(spec)
        if end.error is not None:
            errors.append(end.error)
        bar.advance(end)
        if watch.episode_ended(end):
            raise _Stopped

    tasks = [asyncio.ensure_future(one(spec)) for spec in todo]
    try:
        with bar:
            await asyncio.gather(*tasks)
    except _Stopped:
        pass  # the episodes still running are cancelled below; resume runs them
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def check_model_servers(factory: Any, judge: Any, *, resuming: bool) -> None:
    """Check the player's and the judge's model servers before a run (see ``agents._llm_probe``).

    Raises:
        EndpointCheckError: a server cannot be reached or refuses the key; the clients are closed.
    """
    owners = (("player", factory), ("judge", judge))
    clients: list[tuple[str, Any]] = [(role, getattr(owner, "client", None)) for role, owner in owners]
    clients = [(role, client) for role, client in clients if client is not None]
    if not clients:
        return  # offline players and judges: nothing to reach (and the openai SDK is never imported)
    from lateralgym.agents._llm_probe import EndpointCheckError, check_endpoints

    problems = await check_endpoints(clients)
    if problems:
        for client in {id(c): c for _, c in clients}.values():
            await client.aclose()
        then = "fix that, then resume" if resuming else "nothing was run; fix that and run again"
        raise EndpointCheckError("; ".join(p.describe() for p in problems) + f"; {then} (--no-check skips the check)")


def run(config: EpisodeConfig | str | None = None, **kwargs: Any) -> RunResult:
    """Run episodes of ``config`` (an ``EpisodeConfig``, a shipped config name or a YAML path), or
    finish the run in ``resume`` (``config`` is then ignored: the run's own is used).

    Keyword Args:
        player: player spec (default ``config.player``): ``random``, ``heuristic``, ``oracle``, ``human``,
            or a model ``provider/model[?options]``.
        judge: a judge or judge spec (default ``config.judge``).
        items: items to run on (default ``config.dataset`` or the sample data).
        agent_factory: builds a player from a seed (overrides ``player``'s construction).
        limit: run only the first ``limit`` items (0 or more; 0 is refused: nothing to run).
        repeats: run each item this many times (SPLAT reports best-of-R); at least 1.
        concurrency: episodes in flight at once; at least 1.
        out: directory under which the run directory is created (default ``runs``).
        resume: a run directory to finish instead of starting a new run; its config, player, judge
            and plan are kept, while ``base_url``, ``judge_base_url``, ``use_cache``, ``concurrency``
            and ``llm_concurrency`` given here apply (``base_url`` to every role that followed it).
        progress: show a progress bar.
        base_url: OpenAI-compatible server for an LLM player (and judge, unless ``judge_base_url``).
        judge_base_url: OpenAI-compatible server for an LLM judge.
        judge_samples: LLM judge: majority vote over this many samples (wins over the spec's ``samples``).
        cache_dir: LLM response cache (default ``.lateralgym-cache/llm``).
        use_cache: read and write the LLM response cache (reruns and replays then cost nothing);
            None: yes for a new run, as the run was started for a resume.
        llm_concurrency: cap on LLM requests in flight, players and judges together (default: ``concurrency``,
            at least 8).
        adaptive_concurrency: let the cap find the server's pace: start at 20 (or the cap), halve on 429,
            grow up to the cap while latency holds (``lateralgym.agents.AdaptiveLimiter``).
        backend: ``local`` (this process, one event loop) or ``ray`` (Ray workers play, this process
            writes the log; see ``lateralgym.episodes._ray``; needs the ``ray`` extra).
        ray_address: a Ray cluster to join (``auto``, ``ray://host:10001``); None starts a local Ray.
        ray_actors: Ray workers (default: one per CPU of the cluster, at most ``concurrency``).
        check: before anything is made, ask each distinct model server for its model list (free),
            and stop with ``EndpointCheckError`` when one cannot be reached or refuses the key.
        stop_after_errors: stop the run after this many episodes in a row end in an error (None or
            0: never); the rest stay for ``resume``. The first error of each kind is printed on
            stderr as it happens either way.

    Returns:
        The run directory, counts (``errored``: episodes of this call that ended in an error),
        metrics and model usage per role.

    Raises:
        ConfigError: a bad config or argument, or nothing to run; ``RunLockedError`` when another
            process is running the directory.
        RunDirError: the run directory cannot be created or written (the episodes already written
            are kept; resume to finish).
        EndpointCheckError: ``check`` found a model server down or refusing the key (nothing made).
    """
    if config is None or isinstance(config, EpisodeConfig) or kwargs.get("resume") is not None:
        cfg = config if isinstance(config, EpisodeConfig) else None
    else:
        cfg = EpisodeConfig.named(config)
    return asyncio.run(run_async(cfg, **kwargs))


def _config_temperature(spec: str, temperature: float | None) -> float | None:
    """The config's temperature for a model judge whose spec sets none (the spec's own wins)."""
    if temperature is None:
        return None
    from lateralgym.agents._llm_spec import ModelSpec, is_model_spec

    return temperature if is_model_spec(spec) and ModelSpec.parse(spec).temperature is None else None
