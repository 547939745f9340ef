"""The per-step log: a versioned JSON-lines contract, an append-only writer and a tolerant reader.

A run directory holds ``steps.jsonl``. Every line is one record, told apart by ``type``:

* ``episode_start``: the item, seed, specs, the first observation the player saw and, for an LLM
  player, the messages before it (``prompt``: system prompt, worked examples);
* ``step``: one action of an agent, the observation it acted on, the reply, reward, judge reply,
  the player's model call (``llm``) and the judge's model calls (``judge_calls``), each a
  ``ModelCall`` (role, model, raw text, tokens, latency, cost, cache hit, attempts, error); for a
  player who can go on mid-episode after ``--resume`` facing a judge that is not an offline one,
  every reply the judge gave in full (``judge_replies``), so a resume replays it without asking again;
  under a benchmark's ``reward: dense``, a question's process reward (``process``);
* ``episode_end``: the benchmark's typed outcome (the metrics' inputs; ``turns`` lives there),
  total reward, any error, and the model usage per role.

Lines are written with one ``write`` on a file opened for appending and flushed at once, so a
killed run leaves at worst one torn last line, which the reader skips. A ``write`` reaches the
kernel before it returns, so ``kill -9`` loses nothing written; ``fsync``, which only guards
against the machine itself going down, runs at most once every ``SYNC_INTERVAL_S`` at an
episode's end and always at close (see ``StepLogWriter.sync``). Every line is valid UTF-8:
text that cannot be encoded (a lone surrogate, from a dataset, a judge or an error message) is
written with U+FFFD in its place, never allowed to stop the run. Observations longer than
``INLINE_LIMIT`` characters are stored once under ``observations/<sha256>.txt`` and the line
carries the hash. A model's text is kept up to its role's cap (``REPLY_CHAR_CAPS``, the cut
recorded in ``truncated_chars``) and a judge's raw reply up to ``JUDGE_RAW_CHARS``, whoever made
them, so one looping model cannot fill the disk or stall every reader of the log.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_serializer,
)
from pydantic_core import PydanticSerializationError

from lateralgym.agents import safe_spec
from lateralgym.envs import LateralGymError, ModelCall, ProcessReward
from lateralgym.envs.support import cap_text, capped, writable

__all__ = [
    "INLINE_LIMIT",
    "JUDGE_RAW_CHARS",
    "LOG_SCHEMA_VERSION",
    "LoggedDetail",
    "LoggedJudgeReply",
    "STEP_LOG",
    "SYNC_INTERVAL_S",
    "EpisodeEnd",
    "EpisodeStart",
    "LLMBlock",
    "ModelCall",
    "Usage",
    "LogError",
    "Observation",
    "StepLine",
    "StepLogWriter",
    "observation",
    "observation_text",
    "read_log",
]

LOG_SCHEMA_VERSION = 2
"""Bumped on any incompatible change to the records below (2: typed outcomes with ``turns`` inside,
judge calls logged, usage per role)."""

LLMBlock = ModelCall
"""The ``llm`` block of a step line: the player's model call."""

INLINE_LIMIT = 4096
"""Observations longer than this many characters are stored by hash."""

STEP_LOG = "steps.jsonl"

SYNC_INTERVAL_S = 1.0
"""``StepLogWriter.sync`` calls ``fsync`` at most this often (it cost ~5 ms of an event loop's time an
episode when every episode's end called it)."""


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: int = LOG_SCHEMA_VERSION
    """Version of this contract."""
    run_id: str
    """The run the record belongs to."""
    episode_id: str
    """``<item id>#<repeat>``: unique within a run."""
    item_id: str
    """Id of the dataset item."""


class Observation(BaseModel):
    """An observation text inline, or its hash when large."""

    model_config = ConfigDict(extra="forbid")

    text: str | None = None
    """The text itself when at most ``INLINE_LIMIT`` characters."""
    sha256: str
    """Hash of the full text."""
    path: str | None = None
    """``observations/<sha256>.txt`` relative to the run directory, when not inline."""


class EpisodeStart(_Record):
    """The first record of an episode."""

    type: Literal["episode_start"] = "episode_start"
    repeat: int = 0
    """Repeat index (``--repeats``)."""
    seed: int
    """Seed passed to ``env.reset`` and to the player."""
    config: str
    """Config name."""
    benchmark: str
    mode: str
    player: str
    """Player spec (no secrets: credentials in it are removed on validation, see ``safe_spec``)."""
    judge: str
    """Judge spec (no secrets: credentials in it are removed on validation, see ``safe_spec``)."""
    observation: Observation
    """The first observation the player saw."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Public item metadata for filtering (factors, variant, band)."""
    prompt: list[dict[str, str]] | None = None
    """The chat messages the player was given before ``observation`` (an LLM player's system prompt
    and worked examples, ``{"role", "content"}``), so its whole chat can be rebuilt from the log;
    absent for players that read no prompt, and in logs written before it was recorded."""
    first_message: str | None = None
    """The player's first user message when it is not ``observation`` as written (a paper layout that
    puts worked examples inside it); absent otherwise, and in older logs."""

    @field_validator("player", "judge")
    @classmethod
    def _without_credentials(cls, spec: str) -> str:
        return safe_spec(spec)


class LoggedDetail(BaseModel):
    """A judge reply's ``detail`` as logged: its type and its fields."""

    model_config = ConfigDict(extra="forbid")

    type: str
    """``module:QualifiedName`` of the benchmark's model (read back only when that module is loaded)."""
    data: dict[str, Any]
    """Its fields, as JSON."""


class LoggedJudgeReply(BaseModel):
    """One reply a judge gave during a step, in full, so that a resumed episode replays it instead of
    asking the judge again (a model could answer otherwise, and would cost again; a person would be
    asked twice). The raw text and the model calls are the step's ``judge_raw`` and ``judge_calls``."""

    model_config = ConfigDict(extra="forbid")

    call: str
    """The judge's method that was asked (``answer``, ``grade``, ``respond``, ...)."""
    inputs: str
    """A digest of what it was asked (everything but the item): a replay that would ask something
    else is told apart."""
    label: str
    hint: str | None = None
    detail: LoggedDetail | None = None
    rubric: dict[str, float] = Field(default_factory=dict)
    assessment: dict[str, Any] = Field(default_factory=dict)


JUDGE_RAW_CHARS = 8_000
"""The most characters of a judge's raw reply a step line keeps (its start and end; the rest is cut)."""


class StepLine(_Record):
    """One action of one agent."""

    type: Literal["step"] = "step"
    step: int = Field(ge=1)
    """1-based turn number (a step line numbered 0 or less is damage, refused when read)."""
    agent: Literal["player", "judge"] = "player"
    action: dict[str, Any]
    """The parsed action (``kind`` and its fields)."""
    valid: bool
    observation: Observation
    """The observation the agent acted on."""
    reply: Observation
    """The observation returned by the env after the action."""
    reward: float
    judge_label: str | None = None
    judge_raw: str | None = None
    terminated: bool = False
    truncated: bool = False
    llm: ModelCall | None = None
    """The player's model call for this step (LLM players)."""
    judge_calls: list[ModelCall] = Field(default_factory=list)
    """The judge's model calls for this step (LLM judges), in order."""
    judge_replies: list[LoggedJudgeReply] | None = None
    """Every reply the judge gave this step, in full and in order, where a resume may replay them
    (a player who goes on mid-episode, a judge other than the benchmark's offline ones); absent
    otherwise, and in logs written before it was kept."""
    process: ProcessReward | None = None
    """The question's process reward (``reward``, already inside the step's ``reward``; ``covered``,
    the key facts it covered first; ``repeat_of``, the step it nearly repeats), under a benchmark's
    ``reward: dense``; absent otherwise, and in logs written before it existed."""

    @field_validator("judge_raw")
    @classmethod
    def _raw_capped(cls, raw: str | None) -> str | None:
        return None if raw is None else cap_text(raw, JUDGE_RAW_CHARS)[0]

    @field_validator("llm")
    @classmethod
    def _call_capped(cls, call: ModelCall | None) -> ModelCall | None:
        return None if call is None else capped(call)

    @field_validator("judge_calls")
    @classmethod
    def _calls_capped(cls, calls: list[ModelCall]) -> list[ModelCall]:
        return [capped(call) for call in calls]


class Usage(BaseModel):
    """Model calls summed: an episode's per role, or a run's."""

    model_config = ConfigDict(extra="forbid")

    calls: int = 0
    """Requests answered by a server (cache hits and failures excluded)."""
    cache_hits: int = 0
    """Calls answered from the on-disk cache, at no cost."""
    failed_calls: int = 0
    """Calls that failed for good (or whose reply could not be used)."""
    attempts: int = 0
    """HTTP requests sent, retries included."""
    prompt_tokens: int = 0
    """Prompt tokens of the calls (of the original call, on a cache hit)."""
    completion_tokens: int = 0
    """Completion tokens of the calls (of the original call, on a cache hit)."""
    cost_usd: float | None = 0.0
    """Total cost; None when any call's price is unknown."""
    format_reasks: int = 0
    """Player moves re-asked for the expected format after an unparsable reply (one per re-ask)."""
    fallbacks: int = 0
    """Player replies still unparsable after the re-asks, read by the benchmark's fallback."""
    retries: int = 0
    """Requests sent again after a failed attempt (a timeout, HTTP 429 or 5xx, a dropped connection):
    ``attempts`` less the requests the calls needed."""
    truncated: int = 0
    """Replies cut to their role's cap (``REPLY_CHAR_CAPS``): a looping model, or a server ignoring ``max_tokens``."""

    @model_serializer(mode="wrap")
    def _unknown_cost_kept(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """An unknown cost is written as ``null``: the log leaves ``None`` fields out, and a missing
        ``cost_usd`` would read back as the default 0.0 ("free") instead of "unknown"."""
        data: dict[str, Any] = handler(self)
        if self.cost_usd is None:
            data["cost_usd"] = None
        return data

    def add(self, call: ModelCall) -> None:
        """Count one call (a player's move record with re-asks counts each request it made)."""
        self.attempts += call.attempts
        self.prompt_tokens += call.prompt_tokens
        self.completion_tokens += call.completion_tokens
        self.format_reasks += call.format_reasks
        self.fallbacks += call.fallback is not None
        self.retries += max(0, call.attempts - (0 if call.cache_hit else 1 + call.format_reasks))
        self.truncated += call.truncated_chars > 0
        if call.cache_hit:
            self.cache_hits += 1 + call.format_reasks
        else:
            self.calls += 1 + call.format_reasks
        if call.error is not None and not call.text:
            self.failed_calls += 1
        if call.cost_usd is None and not call.cache_hit and not call.error:
            self.cost_usd = None
        elif self.cost_usd is not None and call.cost_usd is not None:
            self.cost_usd += call.cost_usd

    def merge(self, other: Usage) -> None:
        """Add another total to this one."""
        for name in (
            "calls",
            "cache_hits",
            "failed_calls",
            "attempts",
            "prompt_tokens",
            "completion_tokens",
            "format_reasks",
            "fallbacks",
            "retries",
            "truncated",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.cost_usd = None if self.cost_usd is None or other.cost_usd is None else self.cost_usd + other.cost_usd


class EpisodeEnd(_Record):
    """The last record of an episode: its outcome."""

    type: Literal["episode_end"] = "episode_end"
    repeat: int = 0
    benchmark: str
    outcome: dict[str, Any] | None = None
    """The benchmark's typed outcome (``Benchmark.outcome_type``; the metrics' inputs, ``turns``
    included); partial when the episode errored, None when it never started."""
    meta: dict[str, Any] = Field(default_factory=dict)
    reward: float = 0.0
    """Total reward."""
    terminated: bool = False
    truncated: bool = False
    error: str | None = None
    """Why the episode could not finish (API failure, agent crash); it still counts as unsolved."""
    usage: dict[str, Usage] = Field(default_factory=dict)
    """Model usage summed over the episode, per role (``player``, ``judge``)."""


Record = Annotated[EpisodeStart | StepLine | EpisodeEnd, Field(discriminator="type")]
_RECORD: TypeAdapter[EpisodeStart | StepLine | EpisodeEnd] = TypeAdapter(Record)


class LogError(LateralGymError, ValueError):
    """A step log is unreadable beyond a torn last line."""


def observation(text: str, run_dir: Path | None = None) -> Observation:
    """Inline ``text``, or store it by hash in ``run_dir/observations`` when large (lone surrogates
    replaced, as everywhere in the log)."""
    text = writable(text)
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    if len(text) <= INLINE_LIMIT or run_dir is None:
        return Observation(text=text, sha256=digest)
    rel = f"observations/{digest}.txt"
    target = run_dir / rel
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, target)
    return Observation(sha256=digest, path=rel)


def observation_text(obs: Observation, run_dir: Path) -> str:
    """The full text of a logged observation."""
    if obs.text is not None:
        return obs.text
    assert obs.path is not None
    return (run_dir / obs.path).read_text(encoding="utf-8")


class StepLogWriter:
    """Appends records to a step log, one ``write`` per line, flushed immediately.

    Args:
        path: The log file, created (with its folder) when missing, appended to otherwise.
        sync_interval_s: ``sync`` calls ``fsync`` when this long has passed since the last one
            (0: every time); None: ``SYNC_INTERVAL_S``.
        on_write: Called with each record and its line (without the newline) once written.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        sync_interval_s: float | None = None,
        on_write: Callable[[EpisodeStart | StepLine | EpisodeEnd, str], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | getattr(os, "O_NOFOLLOW", 0)  # never through a link
        self._fd = os.open(self.path, flags, 0o644)
        self.sync_interval_s = SYNC_INTERVAL_S if sync_interval_s is None else sync_interval_s
        self._synced_at = time.monotonic()
        self._unsynced = False
        self.fsyncs = 0
        """``fsync`` calls made so far."""
        self.on_write = on_write

    def write(self, record: EpisodeStart | StepLine | EpisodeEnd) -> None:
        """Append one record as one line; text that cannot be UTF-8 is written with U+FFFD in its place."""
        line = _json_line(record)
        data = (line + "\n").encode("utf-8")
        written = os.write(self._fd, data)
        if written != len(data):  # pragma: no cover - regular files write whole buffers
            raise OSError(f"short write to {self.path}: {written} of {len(data)} bytes")
        self._unsynced = True
        if self.on_write is not None:
            self.on_write(record, line)

    def sync(self, *, force: bool = False) -> None:
        """Make what was written durable, at most once every ``sync_interval_s`` unless ``force``d
        (the runner calls it at the end of each episode).

        Resume stays exactly-once either way: every line is in the kernel once ``write`` returns, so
        a killed process loses nothing, and the log is append-only, so a machine that goes down can
        only lose a tail of it (at most the last interval's lines, the last perhaps torn); resume
        drops the lines of every episode without an end record and runs those episodes again.
        """
        if not self._unsynced:
            return
        now = time.monotonic()
        if force or now - self._synced_at >= self.sync_interval_s:
            os.fsync(self._fd)
            self.fsyncs += 1
            self._synced_at = now
            self._unsynced = False

    def close(self) -> None:
        """``fsync`` what is not yet durable, then close the file."""
        try:
            self.sync(force=True)
        finally:
            os.close(self._fd)

    def __enter__(self) -> StepLogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _json_line(record: EpisodeStart | StepLine | EpisodeEnd) -> str:
    try:
        return record.model_dump_json(exclude_none=True)
    except PydanticSerializationError:
        # Text UTF-8 cannot hold (a lone surrogate from a dataset, a judge, an error message): the
        # record is rebuilt with it replaced. Anything else that cannot be JSON still raises.
        clean = type(record).model_validate(writable(record.model_dump()))
        return clean.model_dump_json(exclude_none=True)


MAX_LINE = 256 * 2**20
"""The longest step-log line read (far above any record's): a longer one is damage, not a record."""


def read_log(path: str | Path) -> Iterator[EpisodeStart | StepLine | EpisodeEnd]:
    """Stream the records of a step log; a torn *last* line is skipped, any other bad line raises.

    Raises:
        LogError: a line other than the last is not a valid record, is not UTF-8 or is longer than
            ``MAX_LINE`` (names the line); the log is a link or not a regular file.
    """
    path = Path(path)
    pending: tuple[int, bytes] | None = None
    with _open_log(path) as handle:
        number = 0
        while line := handle.readline(MAX_LINE + 1):
            number += 1
            if len(line) > MAX_LINE:
                raise LogError(f"{path}, line {number}: longer than {MAX_LINE // 2**20} MB, not a step-log record")
            if pending is not None:
                yield _parse(path, *pending)
            pending = (number, line) if line.strip() else None
    if pending is not None:
        number, line = pending
        if line.endswith(b"\n"):
            yield _parse(path, number, line)
        else:
            try:
                yield _parse(path, number, line)
            except LogError:
                return  # the torn tail of a killed run


def _open_log(path: Path) -> Any:
    """The log opened for reading in binary, never through a link, never a device or a pipe."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise LogError(f"{path} is a symbolic link: a run directory's files must be its own") from None
        raise
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise LogError(f"{path} is not a regular file: not a step log (was it replaced?)")
    return os.fdopen(fd, "rb")


def _parse(path: Path, number: int, line: bytes) -> EpisodeStart | StepLine | EpisodeEnd:
    try:
        return _RECORD.validate_python(json.loads(line.decode("utf-8")))
    except UnicodeDecodeError as exc:
        raise LogError(f"{path}, line {number}: not UTF-8 text (byte {exc.start}); was the log edited?") from exc
    except RecursionError:
        raise LogError(f"{path}, line {number}: nested too deeply to be a step-log record") from None
    except (json.JSONDecodeError, ValidationError) as exc:
        raise LogError(f"{path}, line {number}: not a step-log record ({str(exc).splitlines()[0]})") from exc
