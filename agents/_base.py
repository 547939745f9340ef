"""The player interface: ``Agent.act(observation, info) -> Action`` and its async twin."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from lateralgym.envs import Action


class PlayedTurn(BaseModel):
    """One turn of an episode played before a resume, as the player had it."""

    model_config = ConfigDict(frozen=True)

    turn: int
    """1-based turn number."""
    action: dict[str, Any]
    """The move as the env read it (``kind`` and its fields)."""
    reply: str
    """What the env answered."""


class Agent(ABC):
    """A player. ``reset`` starts an episode; ``act`` returns the next action.

    ``info["public"]`` carries the structured facts the env lets the player see (entity names,
    revealed attributes, choices, question history); agents never get the hidden item.
    """

    name: str = "agent"
    """Spec of the agent, as written in configs and logs."""

    resumes_mid_episode: ClassVar[bool] = False
    """Whether ``lateralgym run --resume`` may hand this player an episode left under way at its next
    turn (its earlier moves replayed from the log, ``show_played`` called); otherwise such an
    episode starts again at turn 1. Only a player whose state is rebuilt exactly from what the log
    keeps says so: a person (who is shown the turns again)."""

    def __init__(self, seed: int | None = None) -> None:
        self._rng_seed = seed
        self._rng: np.random.Generator | None = None

    @property
    def rng(self) -> np.random.Generator:
        """The agent's own randomness, seeded by the last ``reset(seed=...)`` (else the constructor's
        seed). Made on first use: a model player never draws from it, and a generator costs a seeding."""
        if self._rng is None:
            self._rng = np.random.default_rng(self._rng_seed)
        return self._rng

    @rng.setter
    def rng(self, generator: np.random.Generator) -> None:
        self._rng = generator

    def reset(self, observation: dict[str, Any], info: dict[str, Any], seed: int | None = None) -> None:
        """Start an episode; ``seed`` re-seeds the agent's own randomness."""
        if seed is not None:
            self._rng_seed, self._rng = seed, None

    @abstractmethod
    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        """The next action for this observation."""

    def prompt_messages(self) -> list[dict[str, str]] | None:
        """The chat messages the player is given before the first observation (a model's system
        prompt and worked examples), once ``reset``; ``None`` for a player that reads no prompt. The
        runner logs them, so a rollout's messages can be rebuilt exactly from the step log."""
        return None

    def first_message(self, observation_text: str) -> str | None:
        """The first user message the player reads when it differs from the first observation (a paper
        layout that puts worked examples inside it), once ``reset``; ``None`` otherwise. The runner logs it
        beside ``prompt_messages``."""
        return None

    def show_played(self, opening: str, turns: Sequence[PlayedTurn]) -> None:
        """Called (after ``reset``) for a resumed episode that goes on at turn ``len(turns) + 1``, with
        the first observation and the turns played before; the next ``act`` gets the last reply.
        Only players that set ``resumes_mid_episode`` are called."""
        return None

    def episode_over(self, message: str, outcome: dict[str, Any], solution: str) -> None:
        """Called by the runner once an episode has ended and is logged: the env's last message, the
        outcome, and the item's reference solution. Only a person playing is shown it (the human
        agent); every other agent ignores it, so no model ever sees a solution."""
        return None

    async def act_async(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        """Async twin of ``act``; LLM agents override it, offline agents run ``act`` in place."""
        await asyncio.sleep(0)
        return self.act(observation, info)
