"""RL wrappers for CreativityBench: a discrete action space and numeric observation features.

``DiscreteCreativity`` turns ``lateralgym/Creativity-*-v1`` into an env an RL library can train on:

* actions ``Discrete(E + E * P)`` (``E = max_entities``, ``P = max_parts``): ``a < E`` inspects
  entity slot ``a``; otherwise ``(i, j) = divmod(a - E, P)`` commits part ``j`` of entity ``i``.
  A part is only known by name once its entity is revealed (static mode: all; interactive: after
  inspection); committing an unrevealed part commits a placeholder name, which is wrong. Empty
  slots are invalid actions (answered by the env, counted as a turn);
* observations ``Box(0, 1)`` of ``4E + 2EP + 1`` features: entity mask, inspected mask, the turn
  fraction, each entity name's word overlap with the task, whether each entity is revealed, and
  per (entity, part) slot a revealed mask and the part's attribute overlap with the task.

``action_masks()`` says which actions are worth taking now (the form ``sb3-contrib``'s
``MaskablePPO`` reads): inspecting an entity slot in use that is not yet inspected (when the mode
allows inspection), and committing a part of a revealed entity; everything else is masked.

``info`` has the same keys and value types in every step of every episode (``item``, ``turn``,
``valid_action``, ``public``, ``action_mask``, and at the end a flat ``outcome`` of numbers and
flags), so vector envs can merge it.
``make_vector_env`` builds a ``SyncVectorEnv`` (or ``AsyncVectorEnv``) of them.
"""

from __future__ import annotations

import functools
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from lateralgym.envs._actions import Commit, Inspect, Invalid
from lateralgym.envs._matching import content_stems


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


class DiscreteCreativity(gym.Wrapper[np.ndarray, int, dict[str, Any], Any], gym.utils.RecordConstructorArgs):
    """Discrete actions and numeric features over a CreativityBench env (see the module docstring)."""

    def __init__(self, env: gym.Env[dict[str, Any], Any]) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        super().__init__(env)  # type: ignore[arg-type]  # Gymnasium types `env` with the wrapper's own types
        self._inner = env  # the same env, with its real types
        config = env.unwrapped.config  # type: ignore[attr-defined]
        if config.benchmark != "creativity":
            raise ValueError(f"DiscreteCreativity wraps CreativityBench envs, not {config.benchmark!r}")
        self.E, self.P = config.max_entities, config.max_parts
        self.max_turns = config.max_turns
        self.n_actions = self.E + self.E * self.P
        self.action_space = spaces.Discrete(self.n_actions)  # type: ignore[assignment]
        size = 4 * self.E + 2 * self.E * self.P + 1
        self.observation_space = spaces.Box(0.0, 1.0, shape=(size,), dtype=np.float32)
        self._public: dict[str, Any] = {}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        obs, info = self._inner.reset(seed=seed, options=options)
        self._public = info["public"]
        return self._features(obs), self._info(info)

    def step(self, action: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self._inner.step(self.decode(int(action)))
        self._public = info["public"]
        return self._features(obs), float(reward), terminated, truncated, self._info(info)

    def action_masks(self) -> np.ndarray:
        """Which discrete actions are valid and useful now (True), in the order of the action space."""
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
        flat: dict[str, Any] = {
            "item": info["item"],
            "turn": int(info["turn"]),
            "valid_action": bool(info["valid_action"]),
            "public": info["public"],
            "action_mask": self.action_masks(),
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
        parts = list(self._public.get("revealed", {}).get(name, {}))
        part_name = parts[part] if part < len(parts) else f"part_{part}"
        return Commit(entity=name, part=part_name, how_to_use="")

    def _features(self, obs: dict[str, Any]) -> np.ndarray:
        E, P = self.E, self.P
        need = content_stems(self._public.get("task", "") + " " + " ".join(self._public.get("items", [])))
        name_overlap = np.zeros(E, dtype=np.float32)
        revealed_entity = np.zeros(E, dtype=np.float32)
        part_mask = np.zeros((E, P), dtype=np.float32)
        part_overlap = np.zeros((E, P), dtype=np.float32)
        revealed = self._public.get("revealed", {})
        for i, name in enumerate(self._public.get("entities", [])[:E]):
            name_overlap[i] = _overlap(need, content_stems(name))
            if name in revealed:
                revealed_entity[i] = 1.0
                for j, (part, attrs) in enumerate(list(revealed[name].items())[:P]):
                    part_mask[i, j] = 1.0
                    part_overlap[i, j] = _overlap(need, content_stems(f"{part.replace('_', ' ')} {attrs}"))
        turn = np.array([min(1.0, float(obs["turn"]) / self.max_turns)], dtype=np.float32)
        return np.concatenate(
            [
                obs["entity_mask"].astype(np.float32),
                obs["inspected_mask"].astype(np.float32),
                turn,
                name_overlap,
                revealed_entity,
                part_mask.ravel(),
                part_overlap.ravel(),
            ]
        )


def _make_discrete(env_id: str, kwargs: dict[str, Any]) -> DiscreteCreativity:
    import lateralgym  # noqa: F401 - registers the env ids (also inside AsyncVectorEnv's worker processes)

    return DiscreteCreativity(gym.make(env_id, **kwargs))


def make_vector_env(
    env_id: str = "lateralgym/Creativity-Interactive-v2",
    num_envs: int = 4,
    *,
    asynchronous: bool = False,
    **kwargs: Any,
) -> Any:
    """A ``SyncVectorEnv`` (or, with ``asynchronous=True``, an ``AsyncVectorEnv`` of worker
    processes) of ``num_envs`` ``DiscreteCreativity`` envs of ``env_id``."""
    factories = [functools.partial(_make_discrete, env_id, kwargs) for _ in range(num_envs)]
    if asynchronous:
        return gym.vector.AsyncVectorEnv(factories)
    return gym.vector.SyncVectorEnv(factories)
