"""Which training item comes next: uniform, or an adaptive curriculum over the items' difficulty levels.

A trainer (PPO over an env, GRPO over a prompt set) asks ``Curriculum.next`` for the index of its next
item and tells ``Curriculum.update`` how the episode went (a success in ``[0, 1]``). A benchmark names
an item's level through ``DataPart.level_of`` (``curriculum_for`` reads it).

* ``uniform``: every item equally likely, whatever happens (the trainers' draw without a curriculum).
* ``adaptive``: per level an exponential moving average of recent success (``decay``: the weight of the
  past; a level starts at ``target``, so every level is tried early). A level is drawn with probability
  ``floor / levels + (1 - floor) * w / sum(w)``, ``w = exp(-((ema - target) / width) ** 2)``: the levels
  whose recent success is near ``target`` (0.5: neither always solved nor never, where a policy
  gradient has the most to learn from) come most often, and ``floor`` keeps every level in play, so a
  level that was too hard is tried again as the learner improves. An item is then drawn uniformly
  within its level.

Draws come from the curriculum's own generator (seeded; the same seed and the same successes give the
same draws) and are kept in ``draws`` (item index, level, success) for the run's log.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from pydantic import BaseModel, ConfigDict

from lateralgym.envs._errors import ConfigError

__all__ = ["CURRICULA", "Curriculum", "CurriculumDraw", "CurriculumError", "curriculum_for"]

CurriculumMode = Literal["uniform", "adaptive"]
CURRICULA: tuple[CurriculumMode, ...] = ("uniform", "adaptive")
"""The ``--curriculum`` choices."""

_CURRICULUM_STREAM = 0x43555252
"""Mixed into the run seed, so the curriculum's draws are not a stream an episode seed comes from."""


class CurriculumError(ConfigError):
    """A curriculum that cannot be built: an unknown mode, or ``adaptive`` over items with no levels."""


class CurriculumDraw(BaseModel):
    """One drawn item (a line of a run's curriculum log)."""

    model_config = ConfigDict(extra="forbid")

    index: int
    """The item's position in the trainer's items."""
    level: str
    """Its difficulty level (``DataPart.level_of``)."""
    success: float | None = None
    """How its episode went, in ``[0, 1]``; None until the trainer reports it."""


class Curriculum:
    """Draws item indices uniformly or adaptively (see the module docstring).

    Args:
        levels: each item's level, by index (a string; items of one level are drawn alike).
        mode: ``uniform`` or ``adaptive``.
        seed: the run seed (an integer in ``[0, 2**64)``).
        target: the recent success the adaptive draw favours.
        decay: the weight of the past in each level's moving average (per reported episode of it).
        width: how sharply the adaptive draw prefers levels near ``target``.
        floor: the share of draws spread evenly over the levels, so none starves.

    Raises:
        CurriculumError: an unknown mode, no items, or a setting out of range.
    """

    def __init__(
        self,
        levels: Sequence[str],
        mode: str = "uniform",
        *,
        seed: int = 0,
        target: float = 0.5,
        decay: float = 0.9,
        width: float = 0.25,
        floor: float = 0.2,
    ) -> None:
        if mode not in CURRICULA:
            raise CurriculumError(f"--curriculum is one of {', '.join(CURRICULA)}, got {mode!r}")
        if not levels:
            raise CurriculumError("a curriculum needs at least one item")
        if not (0.0 <= target <= 1.0 and 0.0 <= decay < 1.0 and width > 0.0 and 0.0 <= floor <= 1.0):
            raise CurriculumError("curriculum settings: target and floor in [0, 1], decay in [0, 1), width > 0")
        self.mode: CurriculumMode = "adaptive" if mode == "adaptive" else "uniform"
        self.item_levels = [str(level) for level in levels]
        self.levels = sorted(set(self.item_levels))
        """The distinct levels, sorted."""
        self.members: dict[str, list[int]] = {level: [] for level in self.levels}
        for index, level in enumerate(self.item_levels):
            self.members[level].append(index)
        self.target, self.decay, self.width, self.floor = target, decay, width, floor
        self.ema = dict.fromkeys(self.levels, target)
        """Each level's moving average of recent success (starts at ``target``)."""
        self.draws: list[CurriculumDraw] = []
        """Every draw so far, with its success once reported."""
        self._pending: dict[int, list[int]] = {}
        """Draws not yet reported, by item index (positions in ``draws``)."""
        self._rng = np.random.default_rng(np.random.SeedSequence([seed & 0xFFFFFFFF, seed >> 32, _CURRICULUM_STREAM]))

    def probabilities(self) -> dict[str, float]:
        """The chance of each level at the next draw."""
        if self.mode == "uniform":
            items = len(self.item_levels)
            return {level: len(self.members[level]) / items for level in self.levels}
        weights = [math.exp(-(((self.ema[level] - self.target) / self.width) ** 2)) for level in self.levels]
        total = math.fsum(weights)
        even = 1.0 / len(self.levels)
        return {
            level: self.floor * even + (1.0 - self.floor) * w / total
            for level, w in zip(self.levels, weights, strict=True)
        }

    def next(self) -> int:
        """The index of the next item to train on (recorded in ``draws``)."""
        if self.mode == "uniform":
            index = int(self._rng.integers(len(self.item_levels)))
        else:
            chances = self.probabilities()
            level = self.levels[int(self._rng.choice(len(self.levels), p=[chances[lv] for lv in self.levels]))]
            members = self.members[level]
            index = members[int(self._rng.integers(len(members)))]
        self.drawn(index)
        return index

    def drawn(self, index: int) -> None:
        """Record that the trainer plays item ``index`` (``next`` does; a trainer drawing its own calls it)."""
        self._pending.setdefault(index, []).append(len(self.draws))
        self.draws.append(CurriculumDraw(index=index, level=self.item_levels[index]))

    def update(self, index: int, success: float) -> None:
        """Report how an episode of item ``index`` went (``success`` clipped to ``[0, 1]``): the oldest
        unreported draw of it gets it, and its level's moving average moves towards it."""
        success = min(1.0, max(0.0, float(success)))
        pending = self._pending.get(index)
        if pending:
            self.draws[pending.pop(0)].success = success
        level = self.item_levels[index]
        self.ema[level] = self.decay * self.ema[level] + (1.0 - self.decay) * success

    def state(self) -> dict[str, dict[str, float]]:
        """Per level: its moving average of success, its chance at the next draw and its draws so far."""
        chances = self.probabilities()
        counts = dict.fromkeys(self.levels, 0)
        for draw in self.draws:
            counts[draw.level] += 1
        return {
            level: {"success": self.ema[level], "chance": chances[level], "draws": float(counts[level])}
            for level in self.levels
        }


def curriculum_for(benchmark: Any, items: Sequence[Any], mode: str, seed: int = 0, **settings: float) -> Curriculum:
    """A ``Curriculum`` over ``items`` with the levels ``benchmark.data.level_of`` gives them.

    Raises:
        CurriculumError: ``adaptive`` for a benchmark (or items) with fewer than two levels; an unknown mode.
    """
    level_of: Callable[[Any], Hashable | None] = benchmark.data.level_of
    levels = [level_of(item) for item in items]
    named = ["unrated" if level is None else str(level) for level in levels]
    if mode == "adaptive" and len({level for level in levels if level is not None}) < 2:
        raise CurriculumError(
            f"--curriculum adaptive needs items of at least two difficulty levels; benchmark {benchmark.name!r} "
            f"gives these {len(items)} items {'none' if all(v is None for v in levels) else 'one'}: "
            "use --curriculum uniform"
        )
    return Curriculum(named, mode, seed=seed, **settings)


class CurriculumEnv(gym.Wrapper[Any, Any, Any, Any]):
    """An env whose resets draw their item from a ``Curriculum`` (shared by a trainer's envs).

    ``uniform`` leaves the draw to the env (its own seeded draw, exactly as without the wrapper) and only
    records the item played; ``adaptive`` passes the curriculum's choice as ``options["index"]``. A
    reset that names its item (``index`` / ``item_id``) is left alone. Every ``info`` carries the
    episode's level (``curriculum_level``); when an episode ends ``success_of(info)`` is reported.

    Args:
        env: a wrapped (or bare) ``LateralEnv`` over the curriculum's items, in its order.
        curriculum: the curriculum (``curriculum_for`` over the env's items).
        success_of: how the last step's ``info`` of an episode says it went, in ``[0, 1]``.
    """

    def __init__(self, env: Any, curriculum: Curriculum, success_of: Callable[[dict[str, Any]], float]) -> None:
        super().__init__(env)
        self.curriculum, self.success_of = curriculum, success_of
        self._index: int | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        options = dict(options or {})
        chosen = self.curriculum.mode == "adaptive" and "index" not in options and "item_id" not in options
        if chosen:
            options["index"] = self.curriculum.next()
        obs, info = self.env.reset(seed=seed, options=options)
        base: Any = self.env.unwrapped  # a LateralEnv (its items and current item id)
        self._index = options["index"] if chosen else base.items.positions[str(base.item_id)]
        if not chosen:
            self.curriculum.drawn(self._index)
        return obs, {**info, "curriculum_level": self.curriculum.item_levels[self._index]}

    def step(self, action: Any) -> tuple[Any, Any, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        if self._index is not None:
            info = {**info, "curriculum_level": self.curriculum.item_levels[self._index]}
            if terminated or truncated:
                self.curriculum.update(self._index, self.success_of(info))
                self._index = None
        return obs, reward, terminated, truncated, info
