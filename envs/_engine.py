"""The one engine: a scene (one item of a benchmark) stepped under an ``EpisodeConfig``.

``LateralEnv`` is the Gymnasium env of every benchmark: the config names the benchmark, the
registry gives its scene class and item type. The engine owns what all modes share: parsing
actions, the allowed-action check, turn counting and truncation, reward shaping, the per-step
record, Unicode observation text and the ``info`` dict. A ``Scene`` owns what one benchmark does
with an action.

Stepping is a coroutine, ``astep``: the scene awaits its judge (an LLM judge awaits its model on
the caller's event loop, so the runner gets no thread round trip and judge calls are cancelled
with the run). ``step`` is the synchronous Gymnasium API over it: with a judge whose coroutines
never suspend (every offline judge) the coroutine is driven in place; otherwise it runs on one
shared background event loop.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import secrets
from abc import ABC, abstractmethod
from collections.abc import Coroutine, Sequence
from typing import Any, ClassVar, Generic, TypeVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from pydantic import BaseModel, ConfigDict

from lateralgym.envs._actions import Ask, Commit, Inspect, Invalid, parse_action
from lateralgym.envs._benchmark import Benchmark, Outcome, get_benchmark
from lateralgym.envs._calls import ModelCall
from lateralgym.envs._config import EpisodeConfig, check_hints
from lateralgym.envs._errors import ConfigError, LateralGymError
from lateralgym.envs._items import ItemTable, item_table, load_config_items
from lateralgym.envs._judging import ANSWER_LABELS, QA, Judge, JudgeReply, check_verdict
from lateralgym.envs._text import MAX_TEXT, is_clean, sanitise, text_space

_ACTION_TYPES = (Inspect, Ask, Commit, Invalid)

MAX_ACTION = 4096
"""Longest action, in characters (the action space's ``max_length``). A longer action is answered
as invalid without being parsed; a dict or an ``Action`` counts the characters of its values."""


def action_length(action: Any) -> int:
    """How many characters ``action`` is, as ``MAX_ACTION`` counts them: text as is, a dict or an
    ``Action`` by its values (each as text; anything else is left to the parser, which refuses it)."""
    if isinstance(action, str):
        return len(action)
    if type(action) in _ACTION_TYPES:
        # What ``model_dump(exclude_none=True)`` gives, read off the fields (flat: text, numbers, an
        # empty ``fields`` the dump leaves out): a trainer sends an ``Action`` every step.
        length = 0
        for value in action.__dict__.values():
            if type(value) is str:
                length += len(value)
            elif value is not None and value != {}:
                length += len(str(value))
        return length
    if isinstance(action, BaseModel):
        action = action.model_dump(exclude_none=True)
    if isinstance(action, dict):
        return sum(len(value) if isinstance(value, str) else len(str(value)) for value in action.values())
    return len(action) if isinstance(action, str) else 0


def too_long(action: Any, length: int) -> Invalid:
    """The invalid action standing for ``action``, ``length`` characters long (over ``MAX_ACTION``):
    its reason says so, and only its start is kept for the log."""
    if isinstance(action, BaseModel):
        action = action.model_dump(exclude_none=True)
    start = action if isinstance(action, str) else json.dumps(action, ensure_ascii=False, default=str)
    return Invalid(
        raw=start[:200],
        reason=f"the action is {length} characters long; at most {MAX_ACTION} are read, so write a shorter one",
    )


def usage_text(config: EpisodeConfig) -> str:
    """One line telling the player how to write each allowed action."""
    benchmark = get_benchmark(config.benchmark)
    key = (config.benchmark, config.allowed_actions)
    known = _usage_lines.get(key)
    if known is None or known[0] is not benchmark:  # a benchmark registered again under its name
        forms = benchmark.action_forms
        line = "Allowed actions: " + "; ".join(forms[a] for a in config.allowed_actions if a in forms)
        known = _usage_lines[key] = (benchmark, line)
    return known[1]


_usage_lines: dict[tuple[str, tuple[str, ...]], tuple[Benchmark[Any, Any], str]] = {}
"""Each (benchmark, allowed actions)'s usage line, built once (every brief and invalid reply has one)."""


_KEY_SALT = secrets.token_bytes(16)


@functools.lru_cache(maxsize=65_536)
def item_key(item_id: str) -> str:
    """The opaque name of an item that agents see in ``info["item"]``.

    Dataset ids can give the answer away (a release's ids may spell out the intended answer), so
    agents get a keyed hash, salted per process so it cannot be reversed by trying
    candidate ids; the runner, the logs and ``LateralEnv.item_id`` keep the id. Keys are stable
    within a process (seed determinism holds) and differ between processes.
    """
    return "item-" + hashlib.blake2b(item_id.encode("utf-8"), key=_KEY_SALT, digest_size=8).hexdigest()


class EpisodeOverError(LateralGymError, RuntimeError):
    """``step`` was called after the episode ended; call ``reset()`` first."""


class ProcessReward(BaseModel):
    """One question's process reward: a dense reward for the way to the answer, and what earned it.

    A scene that rewards questions (a benchmark's ``reward: dense`` option; ``lateralgym.envs._process``
    prices them) puts it in ``Handled.process``; the engine adds ``reward`` to the step's reward, and the
    step log keeps the whole record (``process`` of a step line).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    reward: float
    """What the question earned: the key facts it newly covered, less the penalty for a repeat."""
    covered: tuple[int, ...] = ()
    """The key facts (indices into the item's) the question covered for the first time."""
    repeat_of: int | None = None
    """The step (1-based turn) of the earlier question this one nearly repeats; None when it is new."""


class Handled(BaseModel):
    """What a scene made of one action."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    message: str
    """Text shown to the player next."""
    valid: bool = True
    """False for unknown entities, out-of-range choices, missing fields."""
    reward: float = 0.0
    terminated: bool = False
    judge: JudgeReply | None = None
    """The judge's reply, when a judge was asked."""
    process: ProcessReward | None = None
    """The question's process reward, when the scene rewards questions (added to the step's reward)."""
    clean: bool = False
    """The message is already what ``sanitise`` makes of it (the scene built it from pieces it checked
    once): the engine scans only what it appends."""


ItemT = TypeVar("ItemT", bound=BaseModel)
OutcomeT = TypeVar("OutcomeT", bound=Outcome)


class Scene(ABC, Generic[ItemT, OutcomeT]):
    """One benchmark's rules for one item. Subclasses keep all hidden knowledge inside.

    Args:
        item: the item.
        config: the episode configuration.
        judge: the judge the scene asks (``None`` when the config needs none).
        rng: the env's ``np_random``; scenes draw any per-episode randomness from it.
    """

    answer_labels: ClassVar[tuple[str, ...]] = ANSWER_LABELS
    """The question labels this scene records as they are; any other becomes ``irrelevant``
    (a scene may add ``unclear``)."""

    lean: bool = False
    """Set by a lean env (``LateralEnv(lean=True)``, what RL trainers step): the scene may skip work
    whose results only logs and reports read (a benchmark's other scoring rules, say). Rewards,
    observations and the outcome's other fields must be what the full path gives."""

    def __init__(self, item: ItemT, config: EpisodeConfig, judge: Judge | None, rng: np.random.Generator) -> None:
        self.item = item
        self.config = config
        self.judge = judge
        self.rng = rng
        self.history: list[QA] = []
        self.turn = 0
        """The current turn number, kept up to date by the engine."""

    def turn_notice(self, turn: int) -> str:
        """Text the engine appends to every reply, valid or not, while the episode goes on after
        ``turn`` (the turns remaining, say); none by default."""
        return ""

    def final_reward(self) -> float:
        """Reward paid when the episode ends, however it ends (shaping that must not mark a step)."""
        return 0.0

    @abstractmethod
    def brief(self) -> str:
        """The first observation text: the problem and how to act."""

    def opening(self) -> str:
        """``brief()`` as the player gets it, sanitised. A scene that joins its brief from pieces it
        already knows are clean may return it unscanned (a long brief built from checked parts)."""
        return sanitise(self.brief())

    @abstractmethod
    async def handle(self, action: Inspect | Ask | Commit) -> Handled:
        """Apply an allowed, parsed action (awaiting the judge where the rules need it)."""

    @abstractmethod
    def outcome(self, turns: int, invalid_actions: int) -> OutcomeT:
        """The typed outcome so far (final once the episode ended), given the engine's counts."""

    def fields(self) -> dict[str, Any]:
        """Extra structured observation fields (must match ``extra_spaces``)."""
        return {}

    def public(self) -> dict[str, Any]:
        """Structured facts the player may see now (``info["public"]``): never anything hidden."""
        return {}

    @classmethod
    def extra_spaces(cls, config: EpisodeConfig) -> dict[str, spaces.Space[Any]]:
        """Spaces of ``fields``."""
        return {}

    def common(self, turns: int, invalid_actions: int, committed: bool) -> dict[str, Any]:
        """The engine's counts every outcome carries, as keyword arguments for ``outcome_type``."""
        return {
            "turns": turns,
            "max_turns": self.config.max_turns,
            "invalid_actions": invalid_actions,
            "committed": committed,
        }

    async def ask_judge(self, question: str) -> JudgeReply:
        """Ask the judge and remember the exchange (labels outside ``answer_labels`` become irrelevant)."""
        if self.judge is None:
            raise ConfigError(f"config {self.config.name!r} needs a judge to answer questions")
        reply = await self.judge.answer(self.item, question, tuple(self.history))
        label = reply.label if reply.label in self.answer_labels else "irrelevant"
        self.history.append(QA.model_validate({"question": question, "label": label}))
        return reply if reply.label == label else reply.model_copy(update={"label": label})

    async def grade(self, commit: Commit) -> JudgeReply:
        """Ask the judge to grade a final answer.

        Raises:
            JudgeLabelError: the judge gave a verdict outside the benchmark's ``verdict_labels``.
        """
        if self.judge is None:
            raise ConfigError(f"config {self.config.name!r} needs a judge to grade answers")
        reply = await self.judge.grade(self.item, commit, tuple(self.history))
        check_verdict(reply, self.config.benchmark, getattr(self.judge, "name", "?"))
        return reply


class StepRecord(BaseModel):
    """What happened in one turn; the episodes layer writes these to the step log."""

    model_config = ConfigDict(frozen=True)

    turn: int
    action: dict[str, Any]
    """The parsed action (``kind`` plus fields; ``invalid`` keeps the raw text)."""
    valid: bool
    message: str
    """The observation text the player got back."""
    reward: float
    terminated: bool
    truncated: bool
    judge_label: str | None = None
    judge_raw: str | None = None
    judge_calls: tuple[ModelCall, ...] = ()
    """The model calls the judge made this turn (LLM judges), logged and counted like the player's."""
    process: ProcessReward | None = None
    """The move's process reward (``Handled.process``), already inside ``reward``; None when none was priced."""


StepResult = tuple[dict[str, Any], float, bool, bool, dict[str, Any]]


class LateralEnv(gym.Env[dict[str, Any], Any]):
    """The Gymnasium env of every LateralGym benchmark (see each benchmark's env card).

    Args:
        config: the episode configuration (benchmark, mode, allowed actions, max turns, rewards).
        items: the items to draw episodes from; None loads ``config.dataset`` or the sample data. Another
            env's ``items`` (an ``ItemTable``) is shared as it is; anything else is checked and indexed.
        judge: the judge; None builds the one ``config.judge`` names.
        render_mode: ``None`` or ``"ansi"`` (a transcript string).
        lean: step for a trainer (``Scene.lean``): each scene skips what only logs and reports
            read, and ``info["outcome"]`` holds the outcome's flags and counts (``outcome_numbers``);
            rewards, observations and those figures are the full path's. Runs keep the full path (False).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 1}  # noqa: RUF012 - Gymnasium API
    benchmark_name: ClassVar[str | None] = None
    """Subclasses fixed to one benchmark (each benchmark's own ``...Env``) refuse configs of another."""

    def __init__(
        self,
        config: EpisodeConfig,
        items: Sequence[Any] | None = None,
        judge: Judge | None = None,
        render_mode: str | None = None,
        lean: bool = False,
    ) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ConfigError(f"render_mode {render_mode!r} is not supported; use None or 'ansi'")
        if self.benchmark_name is not None and config.benchmark != self.benchmark_name:
            raise ConfigError(f"{type(self).__name__} runs {self.benchmark_name} configs, got {config.name!r}")
        check_hints(config)  # a config copied without validation (model_copy) is checked all the same
        self.config = config
        self.render_mode = render_mode
        self.lean = lean
        """Step for a trainer: see ``Scene.lean`` (read at every ``reset``)."""
        self.benchmark: Benchmark[Any, Any] = get_benchmark(config.benchmark)
        if items is None:
            items = load_config_items(config)
        # Checked and indexed once per table: an env given another env's ``items`` costs no work per item.
        self.items: ItemTable = item_table(self.benchmark, items, label=f"config {config.name!r}")
        self._index = self.items.positions
        if judge is None:
            from lateralgym.judges import make_judge

            judge = make_judge(config.judge, benchmark=config.benchmark)
        self.judge = judge
        self.action_space = text_space(MAX_ACTION)
        self.observation_space = spaces.Dict(
            {
                "text": text_space(),
                "turn": spaces.Discrete(config.max_turns + 1),
                **self.benchmark.scene_type.extra_spaces(config),
            }
        )
        self.scene: Scene[Any, Any] | None = None
        self.turn = 0
        self.invalid_actions = 0
        self.done = True
        self._records: list[StepRecord] = []
        self._pending: list[tuple[int, Inspect | Ask | Commit | Invalid, Handled, str, float, bool, bool]] = []
        self._brief = ""
        self._outcome: Outcome | None = None
        """The ended episode's outcome, built once (scenes are done changing when the episode is)."""
        self._key = ""
        """The current item's ``item_key``."""

    # -- Gymnasium API -------------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """Start an episode on ``options["item_id"]`` / ``options["index"]``, else a seeded random item."""
        super().reset(seed=seed)
        options = options or {}
        if "item_id" in options:
            key = str(options["item_id"])
            if key not in self._index:
                raise ConfigError(f"no item with id {key!r} in this env ({len(self.items)} items)")
            index = self._index[key]
        elif "index" in options:
            if not isinstance(options["index"], int):
                raise ConfigError(f"options['index'] must be an int, got {options['index']!r}")
            index = options["index"]
            if not 0 <= index < len(self.items):
                raise ConfigError(f"item index {index} is out of range 0..{len(self.items) - 1}")
        else:
            index = int(self.np_random.integers(len(self.items)))
        item = self.items[index]
        self.scene = self.benchmark.scene_type(item, self.config, self.judge, self.np_random)
        if self.lean:
            self.scene.lean = True
        self._key = item_key(self.benchmark.item_id(item))
        self.turn = 0
        self.invalid_actions = 0
        self.done = False
        self._records, self._pending = [], []
        self._outcome = None
        self._brief = self.scene.opening()
        return self._observation(self._brief), self._info(None, valid=True)

    def step(self, action: Any) -> StepResult:
        """Apply one action (text, dict or ``Action``); invalid ones are answered, never raised.

        The synchronous face of ``astep`` for Gymnasium users.
        """
        coroutine = self.astep(action)
        if getattr(self.judge, "synchronous", False):
            return drive(coroutine)
        from lateralgym.envs._sync import run_sync  # a judge that awaits a model: the background loop

        return run_sync(coroutine)

    async def astep(self, action: Any) -> StepResult:
        """``step`` as a coroutine: the runner awaits it, so an LLM judge runs on the runner's loop."""
        if self.scene is None or self.done:
            raise EpisodeOverError("the episode is over (or was never started): call reset() first")
        length = action_length(action)
        # Refused unread: the parser scans its input, and the log would carry it whole.
        parsed = too_long(action, length) if length > MAX_ACTION else parse_action(action)
        self.turn += 1
        rewards = self.config.rewards
        if isinstance(parsed, Invalid):
            handled = Handled(message=f"Invalid action: {parsed.reason}.\n{self.usage()}", valid=False)
        elif parsed.kind not in self.config.allowed_actions:
            handled = Handled(
                message=f"The action '{parsed.kind}' is not allowed in this mode.\n{self.usage()}", valid=False
            )
        else:
            self.scene.turn = self.turn
            handled = await self.scene.handle(parsed)
        reward = handled.reward + rewards.step + (0.0 if handled.valid else rewards.invalid)
        if handled.process is not None:
            reward += handled.process.reward
        out_of_turns = not handled.terminated and self.turn >= self.config.max_turns
        # A single-answer mode ends by its rules when its one turn is spent (even on an invalid
        # answer): that is termination. Running out of a longer budget is truncation.
        terminated = handled.terminated or (out_of_turns and self.config.max_turns == 1)
        truncated = out_of_turns and not terminated
        added = f"\nNo turns left ({self.config.max_turns} used). The episode is over." if out_of_turns else ""
        self.done = terminated or truncated
        if not self.done:
            added += self.scene.turn_notice(self.turn)
        if self.done:
            reward += self.scene.final_reward()
        self.invalid_actions += not handled.valid
        message = handled.message + added
        # Clean pieces join clean (no carriage return to pair with a newline): only the added text is scanned.
        text = message if handled.clean and len(message) <= MAX_TEXT and is_clean(added) else sanitise(message)
        # Built into a ``StepRecord`` when ``records`` is read (the runner does, an RL loop need not).
        self._pending.append((self.turn, parsed, handled, text, reward, terminated, truncated))
        return self._observation(text), reward, terminated, truncated, self._info(handled, handled.valid)

    def render(self) -> str | None:
        """The transcript so far as text (``render_mode="ansi"``)."""
        if self.render_mode != "ansi":
            return None
        lines = [f"[brief]\n{self._brief}"]
        for r in self.records:
            lines.append(f"[turn {r.turn}] player: {r.action}\n[turn {r.turn}] env: {r.message} (reward {r.reward})")
        return "\n".join(lines)

    # -- helpers -------------------------------------------------------------------------------
    @property
    def records(self) -> list[StepRecord]:
        """The episode's step records so far, one per turn."""
        if self._pending:
            self._records.extend(_record(*step) for step in self._pending)
            self._pending.clear()
        return self._records

    def usage(self) -> str:
        """How to write this mode's allowed actions."""
        return usage_text(self.config)

    def _observation(self, text: str) -> dict[str, Any]:
        """The observation around ``text``, already sanitised."""
        assert self.scene is not None
        return {"text": text, "turn": np.int64(self.turn), **self.scene.fields()}

    def _info(self, handled: Handled | None, valid: bool) -> dict[str, Any]:
        assert self.scene is not None
        info: dict[str, Any] = {
            "item": self._key,
            "benchmark": self.config.benchmark,
            "mode": self.config.mode,
            "turn": self.turn,
            "max_turns": self.config.max_turns,
            "valid_action": valid,
            "public": self.scene.public(),
        }
        if self.config.reasks is not None:  # the config's protocol for LLM players (a paper's single shot)
            info["reasks"] = self.config.reasks
        if handled is not None and handled.judge is not None:
            info["judge_label"] = handled.judge.label
        if self.done:
            outcome = self.outcome()
            info["outcome"] = outcome_numbers(outcome) if self.lean else outcome.model_dump(mode="json")
        return info

    def outcome(self) -> Outcome:
        """The typed outcome: the scene's fields plus the engine's counts (turns, limit, invalid actions)."""
        assert self.scene is not None
        if self._outcome is not None:
            return self._outcome
        result: Outcome = self.scene.outcome(self.turn, self.invalid_actions)
        if self.done:
            self._outcome = result
        return result

    @property
    def item_id(self) -> str:
        """Id of the current item (privileged: agents see only ``info["item"]``, an opaque key)."""
        return self.benchmark.item_id(self.item)

    @property
    def item(self) -> Any:
        """The current item (privileged: agents must not read it, except the oracle)."""
        if self.scene is None:
            raise EpisodeOverError("no episode yet: call reset() first")
        return self.scene.item


def outcome_numbers(outcome: Outcome) -> dict[str, bool | int | float]:
    """The outcome's flags and counts (its fields that are a bool or a finite number), as they are in
    its JSON: what a lean env's ``info["outcome"]`` holds (``LateralEnv.outcome()`` has the rest)."""
    numbers: dict[str, bool | int | float] = {}
    for name, value in outcome.__dict__.items():
        kind = type(value)
        if kind is bool or kind is int or (kind is float and math.isfinite(value)):
            numbers[name] = value  # the common types first: one look each
        elif isinstance(value, int) or (isinstance(value, float) and math.isfinite(value)):
            numbers[name] = value
    return numbers


def _record(
    turn: int,
    action: Inspect | Ask | Commit | Invalid,
    handled: Handled,
    text: str,
    reward: float,
    terminated: bool,
    truncated: bool,
) -> StepRecord:
    judge = handled.judge
    return StepRecord(
        turn=turn,
        action=action.model_dump(exclude_none=True),
        valid=handled.valid,
        message=text,
        reward=reward,
        terminated=terminated,
        truncated=truncated,
        judge_label=judge.label if judge else None,
        judge_raw=judge.raw if judge else None,
        judge_calls=judge.calls if judge else (),
        process=handled.process,
    )


T = TypeVar("T")


def drive(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine that never suspends (an offline judge's) to its result, with no event loop.

    Raises:
        RuntimeError: the coroutine suspended: it needs an event loop (use ``run_sync``).
    """
    try:
        coroutine.send(None)
    except StopIteration as done:
        result: T = done.value
        return result
    coroutine.close()
    raise RuntimeError("a judge marked synchronous awaited something; run the step on an event loop")
