"""``RunOptions``: every setting of a run, in one typed, validated, frozen model.

The command line builds one from its flags, ``run(config, player=..., limit=...)`` from its
keywords, ``--dry-run`` estimates with one, the manifest records the one a run ran with (without
credentials: ``recorded``), and Ray workers are sent it. Its values are checked once, here, and
a bad one raises ``ConfigError`` with a one-line message naming the flag, whatever the caller:
a dry run refuses what a run refuses.

What a run plays on (its items, an agent factory, a judge object) and which run it finishes
(``resume``) are not settings: ``run`` and ``run_async`` take them as their own arguments.

The settings make the run's plan (``plan_episodes``): which episodes it plays (all items, the first
``--limit`` or a ``--sample``, in dataset order, each ``repeats`` times), each an ``EpisodeSpec`` with
the seed it gets from (run seed, item id, repeat).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, field_validator, model_validator

from lateralgym.agents import check_player_spec, display_url, safe_spec
from lateralgym.envs import ConfigError, EpisodeConfig, LateralGymError, benchmark_of
from lateralgym.envs.support import MAX_SEED, validation_message
from lateralgym.judges import check_judge_spec

if TYPE_CHECKING:
    from lateralgym.envs import DataPart

__all__ = [
    "HUMAN",
    "STOP_AFTER_ERRORS",
    "EpisodeSpec",
    "RecordedOptions",
    "RunOptions",
    "check_people",
    "episode_seed",
    "limit_note",
    "plan_episodes",
]

_FLAGS = {"ray_actors": "--actors", "ray_address": "--address"}
"""The flags spelled otherwise than their option; every other flag is the option's name with
dashes (``--judge-base-url`` for ``judge_base_url``)."""

STOP_AFTER_ERRORS = 10
"""The default number of errored episodes in a row that stops a run (``FailureWatch``)."""

HUMAN = "human"
"""The spec of a person playing or judging at this terminal."""


def _flag(name: str) -> str:
    return _FLAGS.get(name, "--" + name.replace("_", "-"))


def check_people(player: str | None, judge: str | None, backend: str) -> None:
    """Refuse what a person at this terminal cannot do: play or judge on Ray workers, or both play
    and judge (the judge sees the hidden answer).

    Raises:
        ConfigError: one of those.
    """
    if HUMAN in (player, judge) and backend == "ray":
        raise ConfigError("a person plays or judges at this terminal: drop --backend ray")
    if player == judge == HUMAN:
        raise ConfigError("a person cannot both play and judge: the judge sees the hidden answer")


class RunOptions(BaseModel):
    """The settings of one run: who plays and judges, how much, how fast, where it goes.

    Build it with keywords (``RunOptions(player="oracle", limit=5)``) and derive others with
    ``merge``; both check every value and raise ``ConfigError`` with the flag's name
    (``--repeats must be at least 1, got 0``). It is frozen.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    player: str | None = None
    """Player spec: ``random``, ``heuristic``, ``oracle``, ``human``, or a model
    ``provider/model[?options]``; None: the config's."""
    judge: str | None = None
    """Judge spec: one of the benchmark's offline judges, ``human`` (a person, where the benchmark has
    one), or a model spec; None: the config's. A ``Judge`` object goes to ``run(judge_obj=...)``."""
    judge_samples: int | None = None
    """LLM judge: majority vote over this many samples (wins over the spec's ``samples``); at least 1."""
    limit: int | None = None
    """Run only the first ``limit`` items (None: all). 0 is refused: it selects nothing to run."""
    sample: int | None = None
    """Run a sample of about ``sample`` items drawn with the config's seed, spread over the benchmark's
    groups (its scenes, difficulty bands, puzzle groups: ``Benchmark.data.strata``); the same items,
    size and seed draw the same sample. None: ``limit`` or all; at least 1; not with ``limit``."""
    repeats: int = 1
    """Episodes per item (best-of-R and mean-of-R metrics); at least 1."""
    concurrency: int = 4
    """Episodes in flight at once; at least 1."""
    out: Path = Path("runs")
    """The folder a new run directory is made in."""
    progress: bool = True
    """Show a progress bar."""
    base_url: str | None = None
    """OpenAI-compatible server of the LLM player (and of the judge, unless ``judge_base_url``)."""
    judge_base_url: str | None = None
    """OpenAI-compatible server of the LLM judge, when it differs from ``base_url``."""
    cache_dir: Path | None = None
    """LLM response cache (None: ``.lateralgym-cache/llm``)."""
    use_cache: bool | None = None
    """Read and write the LLM response cache; None: yes for a new run, as it was started for a resume."""
    llm_concurrency: int | None = None
    """Cap on LLM requests in flight, players and judges together (None: ``concurrency``, at least 8)."""
    adaptive_concurrency: bool = False
    """Let the cap find the server's pace: start at 20, halve on HTTP 429, grow up to the cap while
    latency holds (``lateralgym.agents.AdaptiveLimiter``)."""
    backend: Literal["local", "ray"] = "local"
    """``local``: this process plays every episode on one event loop; ``ray``: Ray workers play them
    and this process alone writes the log (the ``ray`` extra)."""
    ray_address: str | None = None
    """With ``backend="ray"``: the cluster to join (``auto``, ``ray://host:10001``); None starts a local Ray."""
    ray_actors: int | None = None
    """With ``backend="ray"``: worker actors (None: one per CPU, at most ``concurrency``); at least 1."""
    check: bool = True
    """Before anything is made, ask each model server for its model list (free) and stop with
    ``EndpointCheckError`` when one is down or refuses the key."""
    judge_card: Path | None = None
    """A judge card (``lateralgym judges eval --save-card``) of the run's judge: it is checked against the
    judge, benchmark and model file, copied into the manifest, and the report shows the judge's measured
    agreement with people beside the judged scores."""
    stop_after_errors: int | None = STOP_AFTER_ERRORS
    """Stop after this many episodes in a row end in an error (None or 0: never); the rest stay for a resume."""

    def __init__(self, **values: Any) -> None:
        unknown = sorted(set(values) - set(type(self).model_fields))
        if unknown:
            raise ConfigError(
                f"unknown run option {unknown[0]!r}; the options are: {', '.join(type(self).model_fields)}"
            )
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise _one_line(exc) from None

    def merge(self, **changes: Any) -> RunOptions:
        """A copy with ``changes`` applied, checked like a new one.

        Raises:
            ConfigError: an unknown option or a bad value.
        """
        if not changes:
            return self
        return type(self)(**{**self.model_dump(), **changes})

    def with_config(self, config: EpisodeConfig) -> RunOptions:
        """These options with the config's player and judge where they name none."""
        return self.merge(player=self.player or config.player, judge=self.judge or config.judge)

    def recorded(self) -> RecordedOptions:
        """These options fit to write to a manifest: specs and URLs without credentials
        (``safe_spec``, ``display_url``). Not for running: a key in a spec is gone."""
        return RecordedOptions(
            **{
                **self.model_dump(),
                "player": None if self.player is None else safe_spec(self.player),
                "judge": None if self.judge is None else safe_spec(self.judge),
                "base_url": display_url(self.base_url),
                "judge_base_url": display_url(self.judge_base_url),
                "ray_address": display_url(self.ray_address),
            }
        )

    @field_validator("judge_samples", "sample", "repeats", "concurrency", "llm_concurrency", "ray_actors")
    @classmethod
    def _at_least_one(cls, value: int | None, info: ValidationInfo) -> int | None:
        # ``concurrency=0`` would run nothing, ``judge_samples=0`` vote on nothing
        if value is not None and value < 1:
            raise ConfigError(f"{_flag(str(info.field_name))} must be at least 1, got {value}")
        return value

    @field_validator("limit")
    @classmethod
    def _some_items(cls, value: int | None) -> int | None:
        if value is not None and value < 0:
            raise ConfigError(f"--limit must be 0 or more, got {value}")
        if value == 0:
            raise ConfigError("nothing to run: --limit 0 selects no item")
        return value

    @field_validator("stop_after_errors")
    @classmethod
    def _never_or_more(cls, value: int | None) -> int | None:
        if value is not None and value < 0:
            raise ConfigError(f"--stop-after-errors must be 0 (never) or more, got {value}")
        return value

    @field_validator("backend", mode="before")
    @classmethod
    def _known_backend(cls, value: Any) -> Any:
        if value not in ("local", "ray"):
            raise ConfigError(f"--backend is 'local' or 'ray', got {value!r}")
        return value

    @field_validator("player", mode="before")
    @classmethod
    def _known_player(cls, value: Any) -> Any:
        if isinstance(value, str):
            check_player_spec(value)
        return value

    @field_validator("judge", mode="before")
    @classmethod
    def _known_judge(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, str):
            raise ConfigError(f"judge takes a judge spec, got a {type(value).__name__}: pass a Judge as judge_obj")
        if value is not None:
            check_judge_spec(value)
        return value

    @model_validator(mode="after")
    def _people(self) -> RunOptions:
        check_people(self.player, self.judge, self.backend)
        return self

    @model_validator(mode="after")
    def _one_choice_of_items(self) -> RunOptions:
        if self.limit is not None and self.sample is not None:
            raise ConfigError("--limit and --sample both choose the items: give one of them")
        return self


class RecordedOptions(RunOptions):
    """The options a manifest records (``RunOptions.recorded``): specs and URLs without credentials.

    Read back, their numbers are checked as always, but not their specs: they are the written,
    credential-free form, and a judge may belong to a plugin that is not installed where the run
    is read. Options a newer version records are ignored.
    """

    def __init__(self, **values: Any) -> None:
        super().__init__(**{name: value for name, value in values.items() if name in type(self).model_fields})

    @field_validator("player", mode="before")
    @classmethod
    def _known_player(cls, value: Any) -> Any:
        return value

    @field_validator("judge", mode="before")
    @classmethod
    def _known_judge(cls, value: Any) -> Any:
        return value

    @model_validator(mode="after")
    def _people(self) -> RecordedOptions:
        return self


def _one_line(exc: ValidationError) -> LateralGymError:
    """The error a check raised (``ConfigError``, ``LLMConfigError``), or a ``ConfigError`` naming the
    option pydantic refused."""
    error = exc.errors()[0].get("ctx", {}).get("error")
    if isinstance(error, LateralGymError):
        return error
    field, message = validation_message(exc, "run options")
    return ConfigError(f"{_flag(field)}: {message}")


class EpisodeSpec(BaseModel):
    """One planned episode."""

    model_config = ConfigDict(frozen=True)

    episode_id: str
    """``<item id>#<repeat>``."""
    item_id: str
    repeat: int
    seed: int
    """Derived from (run seed, item id, repeat): see ``episode_seed``."""


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


def plan_episodes(
    items: Sequence[Any], seed: int, limit: int | None = None, repeats: int = 1, *, sample: int | None = None
) -> list[EpisodeSpec]:
    """The items a run plays, in dataset order, each ``repeats`` times, each episode with its own seed
    (``episode_seed``): all of them, the first ``limit`` (``Benchmark.data.first_items``: a benchmark
    scored by groups completes every group it touches) or a sample of ``sample`` drawn with ``seed``
    and spread over the benchmark's strata (``Benchmark.data.sampled_items``).

    Raises:
        ConfigError: ``limit`` is negative, ``sample`` below 1, both are given, or ``repeats`` is below 1.
    """
    if limit is not None and limit < 0:
        raise ConfigError(f"--limit must be 0 or more, got {limit}")
    if sample is not None and sample < 1:
        raise ConfigError(f"--sample must be at least 1, got {sample}")
    if limit is not None and sample is not None:
        raise ConfigError("--limit and --sample both choose the items: give one of them")
    if repeats < 1:
        raise ConfigError(f"--repeats must be at least 1, got {repeats}")
    chosen = list(items)
    data = _data_of(chosen)
    if limit is not None:
        chosen = data.first_items(chosen, limit) if data is not None else chosen[:limit]
    elif sample is not None:
        if data is None:
            raise ConfigError("--sample draws from a registered benchmark's items; these belong to none")
        chosen = data.sampled_items(chosen, sample, seed)
    plan: list[EpisodeSpec] = []
    for item in chosen:
        item_id = str(item.id)
        for r in range(repeats):
            plan.append(
                EpisodeSpec(episode_id=f"{item_id}#{r}", item_id=item_id, repeat=r, seed=episode_seed(seed, item_id, r))
            )
    return plan


def limit_note(items: Sequence[Any], limit: int | None) -> str | None:
    """One line when the items ``--limit limit`` plays all fall in one of the benchmark's strata (one
    scene, one difficulty band) where the data has several, naming ``--sample``; else None."""
    if limit is None or limit < 2 or not items:
        return None
    data = _data_of(items)
    return None if data is None else data.cut_note(items, limit)


def _data_of(items: Sequence[Any]) -> DataPart[Any] | None:
    """The data part of the items' benchmark (None for no items, or items of no registered benchmark)."""
    if not items:
        return None
    try:
        return benchmark_of(items[0]).data
    except ConfigError:
        return None
