"""``EpisodeConfig``: one pydantic model selects the benchmark, mode, allowed actions and judge.

Every mode of every benchmark is a configuration of one engine. The engine's settings are fields
of ``EpisodeConfig``; a benchmark's own settings sit in its ``options:`` block, validated by the
benchmark's ``options_type``. Configs are loaded from YAML or TOML (``EpisodeConfig.from_file``) or
from the names of the configs shipped in the package (``EpisodeConfig.named(name)``).
"""

from __future__ import annotations

import math
import re
import tomllib
import unicodedata
from importlib import resources
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializeAsAny,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from lateralgym.envs._benchmark import NoOptions, get_benchmark, import_reference, load_benchmark
from lateralgym.envs._errors import ConfigError, did_you_mean, validation_problems

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

    Besides ``correct``, ``invalid`` and ``step``, a benchmark may name rewards of its own
    (``Benchmark.metrics.reward_fields``: a partly right answer, an exploration bonus); they are set here by
    name and read with ``extra``. Every reward is a finite number of magnitude at most ``MAX_REWARD``.
    """

    model_config = ConfigDict(frozen=True, extra="allow")

    correct: float = 1.0
    """Reward for a correct final answer."""
    invalid: float = 0.0
    """Reward (usually <= 0) for an invalid action."""
    step: float = 0.0
    """Reward added on every turn (a negative value is a step cost)."""

    @field_validator("correct", "invalid", "step")
    @classmethod
    def _bounded(cls, value: float) -> float:
        return _finite_reward(value)

    @model_validator(mode="after")
    def _extras_bounded(self) -> RewardConfig:
        for name, value in (self.model_extra or {}).items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"reward {name!r} must be a number, got {value!r}")
            _finite_reward(float(value))
        return self

    def extra(self, name: str) -> float:
        """A benchmark's own reward by name (0 when the config sets none)."""
        return float((self.model_extra or {}).get(name, 0.0))


def _finite_reward(value: float) -> float:
    if not math.isfinite(value) or abs(value) > MAX_REWARD:
        raise ValueError(f"a reward must be a finite number between -{MAX_REWARD:g} and {MAX_REWARD:g}")
    return value


OptionsT = TypeVar("OptionsT", bound=BaseModel)

PROCESS_REWARD_OPTION = "reward"
"""The option a benchmark whose items carry key facts declares to offer the per-question process
reward (``reward: dense``; ``lateralgym.envs._process``). Set on another benchmark, it is refused
with one line that says so, not as an unknown option."""


def _no_process_reward(name: str) -> str:
    """Why ``reward`` is refused for benchmark ``name``, and which benchmarks offer it."""
    from lateralgym.envs._benchmark import all_benchmarks

    offering = sorted(b.name for b in all_benchmarks() if PROCESS_REWARD_OPTION in b.options_type.model_fields)
    where = f"; benchmarks that offer one: {', '.join(offering)}" if offering else ""
    return (
        f"{name} has no per-question process reward (reward=dense: questions rewarded for covering the key "
        f"facts a benchmark's items name); drop the reward option{where}"
    )


FREE_HINTS_REFUSED = (
    "hints: free forwards the judge's own words to the player, and no filter stops every way of spelling the "
    "answer (a paraphrase, a code of the judge's own); keep hints: template, or accept the risk with "
    "unsafe_free_hints: true in the config (lateralgym run --unsafe-free-hints)"
)


def check_hints(config: EpisodeConfig) -> None:
    """Refuse ``hints: free`` without ``unsafe_free_hints`` (``FREE_HINTS_REFUSED`` says why).

    Raises:
        ConfigError: the config asks for free hints without accepting the risk.
    """
    if config.hints == "free" and not config.unsafe_free_hints:
        raise ConfigError(f"config {config.name!r}: {FREE_HINTS_REFUSED}")


class EpisodeConfig(BaseModel):
    """How an episode runs: which benchmark and mode, what the player may do, who judges."""

    model_config = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False)

    name: str
    """Config name, e.g. ``my-benchmark-paper``: one plain file name (it starts the names of the
    run directories; see ``check_name``)."""
    benchmark: str
    """Which registered benchmark's items, rules and scoring the episode uses (see ``lateralgym
    configs``), or ``module:Class`` / ``path.py:Class`` of one of your own (imported and recorded in
    ``imports``)."""
    imports: tuple[str, ...] = ()
    """Benchmark modules or files imported before ``benchmark`` is looked up (``lateralgym run
    --import``), so a run of your own benchmark resumes, replays and reports in a new process."""
    mode: str
    """One of the benchmark's modes (its env card lists them: e.g. ``static``, ``interactive``,
    ``mcq``, ``multiturn``)."""
    allowed_actions: tuple[ActionKind, ...]
    """Actions the player may take; others are answered as invalid and counted as a turn."""
    max_turns: int = Field(default=1, ge=1)
    """Turns (a multi-turn game's rounds) before the episode is truncated."""
    reveal: str = "full"
    """What the first observation shows, one of the benchmark's ``reveals`` (e.g. ``full`` or
    ``names``, ``question``, ``story``). Defaults to the benchmark's first."""
    judge: str = "exact"
    """Judge spec: ``exact``, ``kb``, ``reference`` (offline) or an LLM model string."""
    player: str = "heuristic"
    """Default player spec for ``lateralgym run``: ``random``, ``heuristic``, ``oracle``, ``human`` or a model."""
    temperature: float | None = Field(default=None, ge=0.0)
    """Sampling temperature of an LLM player, and of an LLM judge, when its spec sets none
    (``...?temperature=0.7`` wins); None leaves the server's default. A paper config sets the
    paper's decoding."""
    reasks: int | None = Field(default=None, ge=0, le=3)
    """Format re-asks of an LLM player after a reply it cannot read, when its spec sets none
    (``...?reasks=1`` wins); None: the benchmark's default (``Benchmark.prompts.player_reasks``). A paper
    config that gives one shot sets 0: an unreadable answer is wrong, as the paper grades it."""
    rewards: RewardConfig = RewardConfig()
    """Reward shaping."""
    seed: int = 0
    """Run seed, an integer in ``[0, 2**64)``; each episode's seed is derived from (run seed, item id,
    repeat), so runs with different seeds draw unrelated streams and an item keeps its seed whatever
    ``--limit`` is."""
    dataset: str | None = None
    """Path to a dataset file; None uses the package's sample data."""
    dataset_format: str | None = None
    """The format of ``dataset``: one of the benchmark's own (``lateralgym data stats --help``); None
    detects it among the benchmark's formats."""
    options: SerializeAsAny[BaseModel] = Field(default_factory=NoOptions, validate_default=True)
    """The benchmark's own settings (its ``options_type``; an env card lists them), e.g.
    ``options: {scoring: strict}``. A setting of the benchmark's given at the top level of the file,
    as configs written before options existed do, is read into here."""
    hints: Literal["template", "free"] = "template"
    """What a "not yet" may carry to the player: ``template`` (default) forwards a judge's hint only
    when it is one of the env's fixed hint texts, so no judge can hand over the answer in any
    encoding; ``free`` forwards the judge's own words when they pass the leak check (an explicit
    opt-out: a determined judge can encode the answer past any check, so it needs
    ``unsafe_free_hints``)."""
    unsafe_free_hints: bool = False
    """Accept ``hints: free`` knowing what it risks: the filter (``clean_hint``: plain words only,
    the answer checked in decoded forms, acrostics and letter shifts) stops the encodings it knows,
    not a paraphrase or a code of the judge's own. Off: ``hints: free`` is refused.
    ``lateralgym run --unsafe-free-hints`` sets it."""

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
    def _benchmark_settings(cls, data: Any) -> Any:
        """Import ``imports``, resolve a ``module:Class`` benchmark, default ``reveal`` and validate
        ``options`` with the benchmark's own model."""
        if not isinstance(data, dict) or not isinstance(data.get("benchmark"), str):
            return data
        data = dict(data)
        imports = data.get("imports") or ()
        if isinstance(imports, str):
            imports = (imports,)
        if isinstance(imports, list | tuple) and all(isinstance(source, str) for source in imports):
            imports = tuple(dict.fromkeys(import_reference(source) for source in imports))
            for source in imports:
                load_benchmark(source)
            data["imports"] = imports
        try:
            benchmark = get_benchmark(data["benchmark"])
        except ConfigError:
            return data  # reported by the field check below
        if benchmark.name != data["benchmark"]:  # module:Class: recorded so a new process imports it
            data["imports"] = (*imports, import_reference(data["benchmark"])) if isinstance(imports, tuple) else imports
            data["benchmark"] = benchmark.name
        data.setdefault("reveal", benchmark.reveals[0])
        kind = benchmark.options_type
        legacy = {k: data.pop(k) for k in list(data) if k in kind.model_fields and k not in cls.model_fields}
        given = data.get("options")
        if isinstance(given, BaseModel):
            given = given.model_dump()
        if legacy and isinstance(given, dict):
            clash = sorted(k for k, v in legacy.items() if k in given and given[k] != v)
            if clash:
                raise ValueError(f"{clash[0]} is set both at the top level and in options, differently; keep one")
            data["options"] = {**given, **legacy}
        elif legacy and given is None:
            data["options"] = legacy
        return data

    @field_validator("options", mode="before")
    @classmethod
    def _benchmark_options(cls, value: Any, info: ValidationInfo) -> Any:
        """``options`` as the benchmark's own model (validated against its ``options_type``)."""
        name = info.data.get("benchmark")
        if not isinstance(name, str):
            return NoOptions()  # the benchmark itself is reported
        try:
            kind = get_benchmark(name).options_type
        except ConfigError:
            return NoOptions()
        if value is None:
            value = {}
        if isinstance(value, BaseModel) and not isinstance(value, kind):
            value = value.model_dump()
        if isinstance(value, kind):
            return value
        if not isinstance(value, dict):
            raise ValueError(f"expected a mapping of {name}'s settings, got {type(value).__name__}")
        if PROCESS_REWARD_OPTION in value and PROCESS_REWARD_OPTION not in kind.model_fields:
            raise ValueError(_no_process_reward(name))
        try:
            return kind.model_validate(value)
        except ValidationError as exc:
            found = validation_problems(exc, "options", kind.model_fields)
            problems = "; ".join(p.removeprefix("field ") for p in found)
            known = ", ".join(kind.model_fields) or "none"
            raise ValueError(f"{problems} ({name}'s options: {known})") from None

    @model_validator(mode="after")
    def _consistent(self) -> EpisodeConfig:
        try:
            benchmark = get_benchmark(self.benchmark)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        if "commit" not in self.allowed_actions:
            raise ValueError("allowed_actions must include 'commit', or no episode can be answered")
        if self.mode not in benchmark.modes:
            raise ValueError(
                f"mode for {self.benchmark} must be one of {benchmark.modes}, got {self.mode!r}"
                + did_you_mean(self.mode, benchmark.modes)
            )
        benchmark.validate_config(self)
        unknown = [a for a in self.allowed_actions if a not in benchmark.action_forms]
        if unknown:
            raise ValueError(
                f"{self.benchmark} has no {', '.join(unknown)} action; it knows {list(benchmark.action_forms)}"
            )
        if self.reveal not in benchmark.reveals:
            guess = did_you_mean(self.reveal, benchmark.reveals)
            raise ValueError(f"reveal for {self.benchmark} must be one of {benchmark.reveals}{guess}")
        if not isinstance(self.options, benchmark.options_type):
            raise ValueError(f"options must be {benchmark.name}'s {benchmark.options_type.__name__}")
        if self.dataset_format is not None:
            from lateralgym.envs._loaders import formats

            names = sorted(formats(benchmark.name))
            if self.dataset_format not in names:
                guess = did_you_mean(self.dataset_format, names)
                raise ValueError(f"dataset_format for {self.benchmark} must be one of its formats {names}{guess}")
        known = {"correct", "invalid", "step", *benchmark.metrics.reward_fields}
        unknown_rewards = sorted(set(self.rewards.model_extra or {}) - known)
        if unknown_rewards:
            name = unknown_rewards[0]
            raise ValueError(
                f"rewards: {self.benchmark} has no reward {name!r}{did_you_mean(name, known)}; "
                f"it knows {', '.join(sorted(known))}"
            )
        return self

    def with_options(self, **changes: Any) -> EpisodeConfig:
        """A copy with some of the benchmark's options changed, validated like a config file
        (``config.with_options(scoring="strict")``).

        Raises:
            ConfigError: an option the benchmark does not have, or a value it refuses.
        """
        data = self.model_dump(mode="json")
        return type(self).from_dict({**data, "options": {**data["options"], **changes}}, source=f"config {self.name!r}")

    def options_as(self, kind: type[OptionsT]) -> OptionsT:
        """``options`` as the benchmark's own model (a scene reads its settings with this).

        Raises:
            ConfigError: the config is another benchmark's.
        """
        if not isinstance(self.options, kind):
            raise ConfigError(f"config {self.name!r} holds {type(self.options).__name__}, not {kind.__name__}")
        return self.options

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
            problems = validation_problems(exc, "config", known=cls.model_fields)
            count = f"{len(problems)} fields are wrong: " if len(problems) > 1 else ""
            raise ConfigError(f"{source}: {count}{'; '.join(problems)}") from exc

    @classmethod
    def named(cls, name: str, imports: tuple[str, ...] = ()) -> EpisodeConfig:
        """A shipped config by name, a YAML / TOML file path, or a registered benchmark's name (its
        ``default_config``: how a benchmark of your own runs with no config file).

        Args:
            name: the config.
            imports: benchmark files or modules to import first (``lateralgym run --import``); the
                config records them, so a resume, replay or report in a new process imports them too.
        """
        if imports:
            for source in imports:
                load_benchmark(source)
            config = cls.named(name)
            data = config.model_dump(mode="json")
            return cls.from_dict({**data, "imports": [*data["imports"], *imports]}, source=f"config {config.name!r}")
        if name in SHIPPED_CONFIGS:
            ref = resources.files("lateralgym").joinpath("configs", f"{name}.yaml")
            return cls.from_dict(yaml.safe_load(ref.read_text(encoding="utf-8")), source=f"{name}.yaml")
        if Path(name).is_file():
            return cls.from_file(name)
        from lateralgym.envs._benchmark import BENCHMARKS, _load_named

        _load_named(name)
        if name in BENCHMARKS:
            return cls.from_dict(BENCHMARKS[name].default_config(), source=f"benchmark {name!r}")
        guess = did_you_mean(name, [*SHIPPED_CONFIGS, *BENCHMARKS])
        raise ConfigError(
            f"unknown config {name!r}{guess}: use one of {', '.join(SHIPPED_CONFIGS)}, the path of a YAML or TOML "
            "file, or the name of a benchmark (yours: lateralgym run --import FILE.py NAME)"
        )
