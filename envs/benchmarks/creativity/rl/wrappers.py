"""RL wrappers for CreativityBench: a discrete action space and numeric observation features.

## Description
``DiscreteCreativity`` turns ``lateralgym/Creativity-*-v1`` into an env an RL library (Stable-Baselines3,
``sb3-contrib``'s ``MaskablePPO``, CleanRL-style loops) can train on: a discrete action per
(inspect entity slot) and (commit part slot of entity slot), and fixed-shape numeric features that
make tool repurposing learnable from the words the player sees. It feeds the same CreativityBench
metrics (gold correct, entity correct, gold-inspection rate) through ``info["outcome"]``.

## Action Space
``Discrete(E + E * P)`` (``E = max_entities``, ``P = max_parts`` of the config's options): ``a < E`` inspects
entity slot ``a``; otherwise ``(i, j) = divmod(a - E, P)`` commits part ``j`` of entity ``i``. A
part is only known by name once its entity is revealed (static mode: all; interactive: after
inspection); committing an unrevealed part commits a placeholder name, which is wrong. Empty slots
are invalid actions (answered by the env, counted as a turn).

``action_masks()`` says which actions are worth taking now, in the form ``sb3-contrib``'s
``MaskablePPO`` reads (on vector envs: ``env_method("action_masks")``): inspecting an entity slot in
use that is not yet inspected (when the mode allows inspection), and committing a part of a
revealed entity; everything else is masked. The same mask is in ``info["action_mask"]``.

## Observation Space
``Box(0, 1, (4E + 2EP + 1 + (E + EP) * K,), float32)``, all features in ``[0, 1]``. Word overlap
is the Jaccard overlap of content-word stems with the task text plus the scene items' names (what
the player reads); nothing hidden enters a feature. First the scene block, in this order:

* ``entity_mask`` (E), ``inspected_mask`` (E), the turn fraction ``turn / max_turns`` (1);
* ``name_overlap`` (E): each entity name's overlap with the task; ``revealed`` (E);
* ``part_mask`` (E x P): the part slot holds a revealed part; ``part_overlap`` (E x P): the
  part's name and attributes' overlap with the task.

Then the action block: ``K = len(ACTION_FEATURES)`` features for every action, in action order
(row ``a`` describes action ``a``), so a policy can score every action with one shared function
(the ``MaskablePPO`` policy of ``lateralgym.envs.benchmarks.creativity.rl.ppo`` does):

* every action: ``is_inspect``, ``is_commit``, ``turn``, ``turns_left``, ``last_turn`` (commit now
  or get nothing), ``inspected_share`` (share of the scene's entities inspected), ``name_overlap``
  and ``name_relative`` (divided by the scene's largest) of the action's entity;
* inspect rows: ``name_rank`` (1 for the best-matching name down to 0 for the worst),
  ``already_inspected``;
* commit rows (0 until the part is revealed): ``part_revealed``, ``part_overlap``,
  ``part_relative`` (divided by the largest revealed), ``best_overall`` (the best-matching revealed
  part), ``best_in_entity``, ``physical_overlap`` and ``state_overlap`` (the part's physical and
  state attributes separately), ``part_name_overlap``.

## Starting State, Rewards, Episode End
Those of the wrapped env (its config's ``rewards``, ``max_turns`` and modes).

## Arguments
``env``: a CreativityBench env (``CreativityEnv`` or ``gymnasium.make`` of a ``Creativity`` id).

``part_order``: ``shuffled`` (default) puts an entity's revealed parts in its part slots in an order
drawn per episode (from the reset seed, a stream of the wrapper's own: the env's draws are untouched);
``file`` keeps the dataset's order. Why shuffled: in the shipped sample the gold part is listed first
in about two thirds of the tasks, so with the file's order "commit slot 0" is a strong rule that
knows nothing about tool repurposing (the best one-feature rule scored 15.5 % gold on the test tasks
with the file's order, mostly from ties going to slot 0, and 5.7 % with parts shuffled). The env
(and an LLM's prompt) keeps the dataset's order; only the slots a policy sees are shuffled.

``lean`` (default True) steps the wrapped env lean (``LateralEnv(lean=True)``): its reward reads the
config's scoring rule alone, so the other two rules (which only a run's report shows) are never
graded, and the outcome in ``info`` keeps its flags and counts. Rewards, masks, observations and
``info["outcome"]`` are the same as with ``lean=False`` (a test replays seeded episodes both ways).

``info`` has the same keys and value types in every step of every episode (``item``, ``turn``,
``valid_action``, ``public``, ``action_mask``, and at the end a flat ``outcome`` of numbers and
flags), so vector envs can merge it. ``make_vector_env`` builds a ``SyncVectorEnv`` (or
``AsyncVectorEnv``) of them.

## Version History
* v3 (issue 39): ``lean``, on by default (the same figures, fewer rules graded); the mask is built
  once per step.
* v3 (issue 20): ``part_order``, shuffled by default.
* v2 (issue 12): the per-action feature block, documented here.
* v1: scene block and action masks.
"""

from __future__ import annotations

import functools
from typing import Any, Literal

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from lateralgym.envs._actions import Commit, Inspect, Invalid
from lateralgym.envs._matching import content_stems
from lateralgym.envs.benchmarks.creativity._options import CreativityOptions

ACTION_FEATURES: tuple[str, ...] = (
    "is_inspect",
    "is_commit",
    "turn",
    "turns_left",
    "last_turn",
    "inspected_share",
    "name_overlap",
    "name_relative",
    "name_rank",
    "already_inspected",
    "part_revealed",
    "part_overlap",
    "part_relative",
    "best_overall",
    "best_in_entity",
    "physical_overlap",
    "state_overlap",
    "part_name_overlap",
)
"""Names of the per-action features (the columns of the action block; see the module docstring)."""

_COLUMN = {name: n for n, name in enumerate(ACTION_FEATURES)}

PartOrder = Literal["shuffled", "file"]
"""How an entity's revealed parts fill its part slots (see the module docstring's Arguments)."""

_PART_STREAM = 0x9A27
"""Mixed into the reset seed for the part-order draws, so they are not the env's own stream."""


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


@functools.lru_cache(maxsize=16384)
def _part_scores(need: frozenset[str], part: str, text: str) -> tuple[float, float, float, float]:
    """A revealed part's overlap with the task: whole text, physical and state attributes, name
    (cached: the same parts are scored on every step of an episode)."""
    words = part.replace("_", " ")
    physical, _, state = text.partition("; state")
    return (
        _overlap(need, content_stems(f"{words} {text}")),
        _overlap(need, content_stems(physical.partition("physical")[2])),
        _overlap(need, content_stems(state)),
        _overlap(need, content_stems(words)),
    )


def _relative(values: np.ndarray, where: np.ndarray) -> np.ndarray:
    """``values`` divided by their largest value where ``where`` holds (0 elsewhere, and when all are 0)."""
    top = float(values[where].max()) if where.any() else 0.0
    return np.where(where, values / top, 0.0).astype(np.float32) if top > 0 else np.zeros_like(values)


class DiscreteCreativity(gym.Wrapper[np.ndarray, int, dict[str, Any], Any], gym.utils.RecordConstructorArgs):
    """Discrete actions and numeric features over a CreativityBench env (see the module docstring)."""

    def __init__(
        self, env: gym.Env[dict[str, Any], Any], part_order: PartOrder = "shuffled", lean: bool = True
    ) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, part_order=part_order, lean=lean)
        super().__init__(env)  # type: ignore[arg-type]  # Gymnasium types `env` with the wrapper's own types
        self._inner = env  # the same env, with its real types
        config = env.unwrapped.config  # type: ignore[attr-defined]
        if config.benchmark != "creativity":
            raise ValueError(f"DiscreteCreativity wraps CreativityBench envs, not {config.benchmark!r}")
        env.unwrapped.lean = lean  # type: ignore[attr-defined]  # a LateralEnv (the benchmark check above)
        options = config.options_as(CreativityOptions)
        self.E, self.P = options.max_entities, options.max_parts
        self.max_turns = config.max_turns
        self.n_actions = self.E + self.E * self.P
        self.action_space = spaces.Discrete(self.n_actions)  # type: ignore[assignment]
        self.scene_size = 4 * self.E + 2 * self.E * self.P + 1
        self.K = len(ACTION_FEATURES)
        size = self.scene_size + self.n_actions * self.K
        self.observation_space = spaces.Box(0.0, 1.0, shape=(size,), dtype=np.float32)
        self._public: dict[str, Any] = {}
        if part_order not in ("shuffled", "file"):
            raise ValueError(f"part_order is 'shuffled' or 'file', got {part_order!r}")
        self.part_order: PartOrder = part_order
        self._part_rng = np.random.default_rng()
        self._slots: dict[str, list[tuple[str, str]]] = {}
        self._mask = np.zeros(self.n_actions, dtype=bool)
        """This step's action mask (``info["action_mask"]``), built once: ``action_masks`` hands out copies."""

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = self._inner.reset(seed=seed, options=options)
        if seed is not None:
            self._part_rng = np.random.default_rng([seed, _PART_STREAM])
        self._slots = {}
        self._public = info["public"]
        return self._features(obs), self._info(info)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self._inner.step(self.decode(int(action)))
        self._public = info["public"]
        return self._features(obs), float(reward), terminated, truncated, self._info(info)

    def parts(self, entity: str) -> list[tuple[str, str]]:
        """``entity``'s revealed parts (name, text) in its part slots' order (at most ``P``; empty
        until revealed). A shuffled order is drawn once per entity and episode."""
        revealed: dict[str, str] = self._public.get("revealed", {}).get(entity, {})
        known = self._slots.get(entity)
        if known is None or len(known) != min(len(revealed), self.P):
            items = list(revealed.items())
            if self.part_order == "shuffled" and len(items) > 1:
                items = [items[k] for k in self._part_rng.permutation(len(items))]
            known = self._slots[entity] = items[: self.P]
        return known

    def action_masks(self) -> np.ndarray:
        """Which discrete actions are valid and useful now (True), in the order of the action space."""
        return self._mask.copy()

    def _masks_now(self) -> np.ndarray:
        mask = np.zeros(self.n_actions, dtype=bool)
        entities: list[str] = self._public.get("entities", [])[: self.E]
        revealed: dict[str, dict[str, str]] = self._public.get("revealed", {})
        if "inspect" in self._inner.unwrapped.config.allowed_actions:  # type: ignore[attr-defined]
            for slot, name in enumerate(entities):
                mask[slot] = name not in revealed
        for slot, name in enumerate(entities):
            for part in range(min(len(revealed.get(name, {})), self.P)):
                mask[self.E + slot * self.P + part] = True
        if not mask.any():  # nothing revealed and nothing to inspect: any slot in use may be committed
            for slot in range(len(entities)):
                mask[self.E + slot * self.P] = True
        return mask

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        """The same keys and value types every step, so vector envs can merge infos."""
        self._mask = self._masks_now()
        flat: dict[str, Any] = {
            "item": info["item"],
            "turn": int(info["turn"]),
            "valid_action": bool(info["valid_action"]),
            "public": info["public"],
            "action_mask": self._mask.copy(),
        }
        outcome = info.get("outcome")
        if outcome is not None:
            flat["outcome"] = {k: v for k, v in outcome.items() if isinstance(v, bool | int | float)}
        return flat

    def decode(self, action: int) -> Inspect | Commit | Invalid:
        """The env action a discrete action index stands for."""
        entities: list[str] = self._public.get("entities", [])
        if not 0 <= action < self.n_actions:
            return Invalid(raw=str(action), reason=f"action index out of range 0..{self.n_actions - 1}")
        slot, part = (action, None) if action < self.E else divmod(action - self.E, self.P)
        if slot >= len(entities):
            return Invalid(raw=str(action), reason=f"entity slot {slot} is empty")
        name = entities[slot]
        if part is None:
            return Inspect(entity=name)
        parts = self.parts(name)
        part_name = parts[part][0] if part < len(parts) else f"part_{part}"
        return Commit(entity=name, part=part_name, how_to_use="")

    def _features(self, obs: dict[str, Any]) -> np.ndarray:
        E, P = self.E, self.P
        need = content_stems(self._public.get("task", "") + " " + " ".join(self._public.get("items", [])))
        entities: list[str] = self._public.get("entities", [])[:E]
        revealed: dict[str, dict[str, str]] = self._public.get("revealed", {})
        in_use = obs["entity_mask"].astype(bool)
        name_overlap = np.zeros(E, dtype=np.float32)
        revealed_entity = np.zeros(E, dtype=np.float32)
        part_mask = np.zeros((E, P), dtype=bool)
        overlaps = np.zeros((3, E, P), dtype=np.float32)  # whole part, physical, state
        part_name = np.zeros((E, P), dtype=np.float32)
        for i, name in enumerate(entities):
            name_overlap[i] = _overlap(need, content_stems(name))
            if name in revealed:
                revealed_entity[i] = 1.0
                for j, (part, text) in enumerate(self.parts(name)):
                    part_mask[i, j] = True
                    overlaps[0, i, j], overlaps[1, i, j], overlaps[2, i, j], part_name[i, j] = _part_scores(
                        need, part, text
                    )
        turn = min(1.0, float(obs["turn"]) / self.max_turns)
        scene = np.concatenate(
            [
                in_use.astype(np.float32),
                obs["inspected_mask"].astype(np.float32),
                np.array([turn], dtype=np.float32),
                name_overlap,
                revealed_entity,
                part_mask.astype(np.float32).ravel(),
                overlaps[0].ravel(),
            ]
        )
        # the action block: row a describes action a (inspect rows first, then commit rows)
        block = np.zeros((self.n_actions, self.K), dtype=np.float32)
        inspect, commit = block[:E], block[E:].reshape(E, P, self.K)  # views: writes land in block
        n_used = max(1, int(in_use.sum()))
        block[:, _COLUMN["turn"]] = turn
        block[:, _COLUMN["turns_left"]] = 1.0 - turn
        block[:, _COLUMN["last_turn"]] = float(obs["turn"] >= self.max_turns - 1)
        block[:, _COLUMN["inspected_share"]] = float(obs["inspected_mask"].sum()) / n_used
        relative = _relative(name_overlap, in_use)
        order = np.argsort(np.where(in_use, -name_overlap, np.inf), kind="stable")
        rank = np.zeros(E, dtype=np.float32)
        rank[order[:n_used]] = 1.0 - np.arange(n_used) / max(1, n_used - 1) if n_used > 1 else 1.0
        inspect[:, _COLUMN["is_inspect"]] = in_use
        inspect[:, _COLUMN["name_overlap"]] = name_overlap
        inspect[:, _COLUMN["name_relative"]] = relative
        inspect[:, _COLUMN["name_rank"]] = rank * in_use
        inspect[:, _COLUMN["already_inspected"]] = obs["inspected_mask"]
        commit[..., _COLUMN["is_commit"]] = in_use[:, None]
        commit[..., _COLUMN["name_overlap"]] = name_overlap[:, None]
        commit[..., _COLUMN["name_relative"]] = relative[:, None]
        commit[..., _COLUMN["part_revealed"]] = part_mask
        commit[..., _COLUMN["part_overlap"]] = overlaps[0]
        part_relative = _relative(overlaps[0], part_mask)
        commit[..., _COLUMN["part_relative"]] = part_relative
        commit[..., _COLUMN["best_overall"]] = part_mask & (part_relative == 1.0)
        row_top = np.where(part_mask, overlaps[0], -1.0).max(axis=1, keepdims=True)
        commit[..., _COLUMN["best_in_entity"]] = part_mask & (overlaps[0] == row_top) & (row_top > 0)
        commit[..., _COLUMN["physical_overlap"]] = overlaps[1]
        commit[..., _COLUMN["state_overlap"]] = overlaps[2]
        commit[..., _COLUMN["part_name_overlap"]] = part_name
        return np.concatenate([scene, block.ravel()])


def _make_discrete(env_id: str, part_order: PartOrder, kwargs: dict[str, Any]) -> DiscreteCreativity:
    import lateralgym.envs  # noqa: F401 - the package's import registers the env ids (in AsyncVectorEnv's workers too)

    return DiscreteCreativity(gym.make(env_id, **kwargs), part_order=part_order)


def make_vector_env(
    env_id: str = "lateralgym/Creativity-Interactive-v2",
    num_envs: int = 4,
    *,
    asynchronous: bool = False,
    part_order: PartOrder = "shuffled",
    **kwargs: Any,
) -> Any:
    """A ``SyncVectorEnv`` (or, with ``asynchronous=True``, an ``AsyncVectorEnv`` of worker
    processes) of ``num_envs`` ``DiscreteCreativity`` envs of ``env_id``."""
    factories = [functools.partial(_make_discrete, env_id, part_order, kwargs) for _ in range(num_envs)]
    if asynchronous:
        return gym.vector.AsyncVectorEnv(factories)
    return gym.vector.SyncVectorEnv(factories)
