"""``EpisodeConfig``: one pydantic model selects the benchmark, mode, allowed actions and judge.

The static, interactive and SPLAT multi-turn modes are configurations of one engine. Configs are
loaded from YAML or TOML (``EpisodeConfig.from_file``) or from the names of the configs shipped in the
package (``EpisodeConfig.named("splat")``).
"""

from __future__ import annotations

import math
import re
import tomllib
import unicodedata
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from lateralgym.envs._benchmark import get_benchmark
from lateralgym.envs._errors import ConfigError, validation_message

ActionKind = Literal["inspect", "ask", "commit"]

SHIPPED_CONFIGS: tuple[str, ...] = tuple(
    sorted(
        ref.name[: -len(".yaml")]
        for ref in resources.files("lateralgym").joinpath("configs").iterdir()
        if ref.name.endswith(".yaml")
    )
)
"""Names of the configs that ship in ``lateralgym/configs`` (one YAML file each)."""

MAX_REWARD = 1e12
"""Largest reward magnitude a config may set: any episode's total then stays a finite number that
the step log can write and read back (NaN and infinity cannot be)."""

MAX_SEED = 2**64
"""Run seeds are integers in ``[0, MAX_SEED)``: ``numpy.random.SeedSequence`` takes non-negative
entropy, and the two 32-bit words of a seed below 2**64 each reach it (see ``episode_seed``)."""

MAX_NAME_BYTES = 100
"""Longest config name in UTF-8 bytes: it starts the run directory's name (a file name has 255)."""

_PATH_UNSAFE = re.compile(r'[/\\:*?"<>|]')


def check_name(name: str) -> str:
    """``name`` when it is a safe single path component (it names run directories under ``--out``).

    Raises:
        ValueError: it is empty, ``.`` or ``..``, has a path separator or a character some file
            systems refuse (``\\ : * ? " < > |``), a control character, a lone surrogate, leading or
            trailing space, or more than ``MAX_NAME_BYTES`` bytes.
    """
    if not name or name != name.strip():
        raise ValueError(f"name must be non-empty with no leading or trailing space, got {name!r}")
    unsafe = any(_PATH_UNSAFE.match(c) or unicodedata.category(c) in ("Cc", "Cs") for c in name)
    if unsafe or name in (".", ".."):
        raise ValueError(
            f"name must be one plain file name (it names the run directory): no '/', '\\', ':', '*', '?', "
            f"'\"', '<', '>', '|' or control characters, and not '.' or '..'; got {name!r}"
        )
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise ValueError(f"name must be at most {MAX_NAME_BYTES} bytes in UTF-8, got {len(name.encode('utf-8'))}")
    return name


class RewardConfig(BaseModel):
    """Reward shaping. Defaults give 1 for a correct answer and nothing else.

    Every reward is a finite number of magnitude at most ``MAX_REWARD``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    correct: float = 1.0
    """Reward for a correct final answer (CreativityBench: gold entity and part)."""
    entity_only: float = 0.0
    """CreativityBench: reward when the entity is right but the part is wrong."""
    invalid: float = 0.0
    """Reward (usually <= 0) for an invalid action."""
    step: float = 0.0
    """Reward added on every turn (a negative value is a step cost)."""
    gold_inspection: float = 0.0
    """CreativityBench interactive: reward at the end of an episode in which the gold entity was inspected."""

    @field_validator("*")
    @classmethod
    def _bounded(cls, value: float) -> float:
        if not math.isfinite(value) or abs(value) > MAX_REWARD:
            raise ValueError(f"a reward must be a finite number between -{MAX_REWARD:g} and {MAX_REWARD:g}")
        return value


class EpisodeConfig(BaseModel):
    """How an episode runs: which benchmark and mode, what the player may do, who judges."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    name: str
    """Config name, e.g. ``creativity-interactive``: one plain file name (it starts the names of the
    run directories; see ``check_name``)."""
    benchmark: str
    """Which registered benchmark's items, rules and scoring the episode uses
    (``creativity``, ``brainteaser``, ``splat``, ``riddlesense``, or one you registered)."""
    mode: str
    """One of the benchmark's modes: CreativityBench ``static``/``cot`` show everything and take one
    answer, ``interactive`` reveals entities by inspection; ``mcq`` for multiple choice;
    ``multiturn`` for the SPLAT question loop."""
    allowed_actions: tuple[ActionKind, ...]
    """Actions the player may take; others are answered as invalid and counted as a turn."""
    max_turns: int = Field(default=1, ge=1)
    """Turns before the episode is truncated (SPLAT's rounds: 15)."""
    reveal: str = "full"
    """What the first observation shows: CreativityBench ``full`` (every attribute) or ``names``;
    multiple choice ``question``; SPLAT ``story``. Defaults to the benchmark's first option."""
    judge: str = "exact"
    """Judge spec: ``exact``, ``kb``, ``reference`` (offline) or an LLM model string."""
    player: str = "heuristic"
    """Default player spec for ``lateralgym run``: ``random``, ``heuristic``, ``oracle``, ``human`` or a model."""
    temperature: float | None = Field(default=None, ge=0.0)
    """Sampling temperature of an LLM player, and of an LLM judge, when its spec sets none
    (``...?temperature=0.7`` wins); None leaves the server's default. The CreativityBench paper
    configs use 0, the paper's decoding (its official judge uses 0 too)."""
    rewards: RewardConfig = RewardConfig()
    """Reward shaping."""
    seed: int = 0
    """Run seed, an integer in ``[0, 2**64)``; each episode's seed is derived from (run seed, item id,
    repeat), so runs with different seeds draw unrelated streams and an item keeps its seed whatever
    ``--limit`` is."""
    dataset: str | None = None
    """Path to a dataset file; None uses the package's sample data."""
    max_entities: int = Field(default=16, ge=2)
    """Size of the entity masks in observations (CreativityBench)."""
    max_parts: int = Field(default=8, ge=1)
    """Parts per entity in the discrete RL action space."""
    shuffle_entities: bool = True
    """CreativityBench: present the entities in an order drawn from the reset seed (releases may
    list the gold first)."""
    scoring: Literal["paper", "strict"] = "paper"
    """CreativityBench correctness rules: ``paper`` follows the official evaluation (entity resolved by
    word overlap, exact part; unparsable, errored and timed-out episodes leave the denominator);
    ``strict`` counts every episode and matches names tolerantly. See the README's metrics section."""
    protocol: Literal["commit", "paper"] = "commit"
    """SPLAT: ``commit`` (questions and explicit explanations, the judge sees earlier questions);
    ``paper`` as in the official game: the judge remembers no earlier questions and every player
    message may solve the puzzle (the judge decides). The leak guard applies in both."""
    hints: Literal["template", "free"] = "template"
    """What a "not yet" may carry to the player: ``template`` (default) forwards a judge's hint only
    when it is one of the env's fixed hint texts, so no judge can hand over the answer in any
    encoding; ``free`` forwards the judge's own words when they pass the leak check (an explicit
    opt-out: a determined judge can encode the answer past any check)."""

    @field_validator("name")
    @classmethod
    def _safe_name(cls, name: str) -> str:
        return check_name(name)

    @field_validator("seed")
    @classmethod
    def _seed_in_range(cls, seed: int) -> int:
        # Refused rather than folded into range: -1 would silently draw the streams of 2**64 - 1.
        if not 0 <= seed < MAX_SEED:
            raise ValueError(
                f"the run seed must be an integer from 0 to 2**64 - 1 (numpy's SeedSequence takes "
                f"non-negative entropy), got {seed}"
            )
        return seed

    @model_validator(mode="before")
    @classmethod
    def _default_reveal(cls, data: Any) -> Any:
        if isinstance(data, dict) and "reveal" not in data and isinstance(data.get("benchmark"), str):
            try:
                reveals = get_benchmark(data["benchmark"]).reveals
            except ConfigError:
                return data  # reported by the field check below
            return {**data, "reveal": reveals[0]}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> EpisodeConfig:
        try:
            benchmark = get_benchmark(self.benchmark)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        if "commit" not in self.allowed_actions:
            raise ValueError("allowed_actions must include 'commit', or no episode can be answered")
        if self.mode not in benchmark.modes:
            raise ValueError(f"mode for {self.benchmark} must be one of {benchmark.modes}, got {self.mode!r}")
        benchmark.validate_config(self)
        unknown = [a for a in self.allowed_actions if a not in benchmark.action_forms]
        if unknown:
            raise ValueError(
                f"{self.benchmark} has no {', '.join(unknown)} action; it knows {list(benchmark.action_forms)}"
            )
        if self.reveal not in benchmark.reveals:
            raise ValueError(f"reveal for {self.benchmark} must be one of {benchmark.reveals}")
        return self

    @classmethod
    def from_file(cls, path: str | Path) -> EpisodeConfig:
        """Load a YAML, JSON or TOML (``.toml``) config file; errors name the file and field."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the config ({exc.strerror or exc})") from exc
        except UnicodeDecodeError as exc:
            raise ConfigError(f"{path}: not UTF-8 text (byte {exc.start}); save the config as UTF-8") from exc
        if path.suffix == ".toml":
            try:
                data: Any = tomllib.loads(text)
            except tomllib.TOMLDecodeError as exc:
                raise ConfigError(f"{path}: not valid TOML: {exc}") from exc
        else:
            try:
                data = yaml.safe_load(text)
            except yaml.YAMLError as exc:
                raise ConfigError(f"{path}: not valid YAML: {' '.join(str(exc).split())}") from exc
        return cls.from_dict(data, source=str(path))

    @classmethod
    def from_dict(cls, data: Any, source: str = "config") -> EpisodeConfig:
        """Validate a mapping; errors name the source and field."""
        if not isinstance(data, dict):
            raise ConfigError(f"{source}: expected a mapping of config fields, got {type(data).__name__}")
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            field, message = validation_message(exc, "config")
            raise ConfigError(f"{source}: field {field!r}: {message}") from exc

    @classmethod
    def named(cls, name: str) -> EpisodeConfig:
        """A shipped config by name, or a YAML file path."""
        if name in SHIPPED_CONFIGS:
            ref = resources.files("lateralgym").joinpath("configs", f"{name}.yaml")
            return cls.from_dict(yaml.safe_load(ref.read_text(encoding="utf-8")), source=f"{name}.yaml")
        if Path(name).is_file():
            return cls.from_file(name)
        raise ConfigError(
            f"unknown config {name!r}: use one of {', '.join(SHIPPED_CONFIGS)} or the path of a YAML or TOML file"
        )
