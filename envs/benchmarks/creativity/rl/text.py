"""A policy input made of the text the player reads: ``TextCreativity`` and its sentence encoder.

## Description
``TextCreativity`` is ``DiscreteCreativity`` (the same actions, masks and ``info``) with another
observation: instead of the hand-made word-overlap scores, every action's row holds what a text
encoder makes of the texts involved, so a policy must learn from the text which part repurposes
well. Nothing hidden enters a row; nothing in it is an overlap score someone chose.

## Observation Space
``Box(-1, 1, (2E + 1 + (E + EP) * R,), float32)`` with ``R = 2d + A + 8 + P`` (``A`` = 0 without an
affordance head): first the scene block
(``entity_mask`` E, ``inspected_mask`` E, the turn fraction 1), then one row per action, in action
order (``E`` inspect rows, then ``E x P`` commit rows):

* ``t * a`` (d): the task's vector times the action's text vector, element by element (inspect:
  the entity's name; commit: the part's name and attributes once revealed, else zeros). A linear
  layer over it learns a weighted similarity of its own;
* ``t * e`` (d): the task's vector times the action's entity name vector;
* with an affordance head (``affordance.AffordanceHead``, ``A`` categories), commit rows of revealed
  parts: the head's distribution of what the task needs times that of what the part offers, per
  category (its sum is how likely both are the same kind of use); 0 on every other row;
* structure (8 + P): is inspect, is commit, slot in use, turn fraction, turns left, last turn, share
  of the scene inspected, already inspected (inspect rows) or part revealed (commit rows), and the
  part's slot (one-hot of P).

Vectors are L2-normalised sentence embeddings (``TextEncoder``: the ``embed`` extra's MiniLM by
default, 384 dimensions kept whole; ``lexical`` hashed words without torch, reduced to 64 by a fixed
random orthonormal projection, seeded, so every process and run sees the same inputs, and
normalised again). Encodings are cached by text: a task's texts are encoded once per process
(``encode_tasks`` encodes every task's texts at once, in batches, as ``train_ppo`` does before
training; the shipped sample's 2,198 tasks hold 2,455 distinct texts: 3.8 MB of MiniLM vectors). A
policy over these rows (``ppo.ActionScorer``) reads the ``2d`` text columns through one linear layer
(a similarity it learns) and the structure through a small MLP.

## Arguments
``env``: a CreativityBench env; ``encoder``: a ``TextEncoder`` (``make_encoder``); ``part_order``: as
``DiscreteCreativity``'s (shuffled by default); ``head``: an ``AffordanceHead`` over the encoder's
vectors (``affordance.fit_affordance_head``), or None.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from lateralgym.envs.benchmarks.creativity._render import task_text
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask
from lateralgym.envs.benchmarks.creativity.rl.affordance import AffordanceHead
from lateralgym.envs.benchmarks.creativity.rl.wrappers import DiscreteCreativity, PartOrder

__all__ = [
    "TEXT_FLAGS",
    "CachedEncoder",
    "TextCreativity",
    "TextEncoder",
    "encode_tasks",
    "make_encoder",
    "part_text",
    "task_texts",
]

TEXT_FLAGS: tuple[str, ...] = (
    "is_inspect",
    "is_commit",
    "in_use",
    "turn",
    "turns_left",
    "last_turn",
    "inspected_share",
    "inspected_or_revealed",
)
"""The structure columns of a row, before the part slot's one-hot."""


class TextEncoder(Protocol):
    """Turns texts into L2-normalised vectors of ``dim`` dimensions."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class CachedEncoder:
    """An embedder (``lateralgym.databuild``) projected to ``dim`` dimensions, cached by text.

    Args:
        embedder: anything with ``embed_now(texts) -> rows`` (L2-normalised rows).
        name: what the summary records (``st:`` for the MiniLM, ``lexical``).
        dim: dimensions after a random projection; None keeps the embedder's own.
        seed: seeds the projection (the same seed gives the same inputs in every process).
    """

    def __init__(self, embedder: Any, *, name: str, dim: int | None = None, seed: int = 0) -> None:
        if dim is not None and dim < 1:
            raise ValueError(f"dim must be at least 1, got {dim}")
        native = int(np.asarray(embedder.embed_now(["a"])).shape[1])
        self.embedder, self.name, self.seed = embedder, name, seed
        self.dim = native if dim is None or dim >= native else dim
        self._projection: np.ndarray | None = None
        if self.dim < native:
            basis, _ = np.linalg.qr(np.random.default_rng(seed).standard_normal((native, self.dim)))
            self._projection = basis[:, : self.dim]
        self._cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """The texts' projected, normalised vectors (``len(texts) x dim``; a blank text is zeros)."""
        new = [t for t in dict.fromkeys(texts) if t not in self._cache and t.strip()]
        if new:
            raw = np.asarray(self.embedder.embed_now(new), dtype=np.float64)
            reduced = raw @ self._projection if self._projection is not None else raw
            norms = np.linalg.norm(reduced, axis=1, keepdims=True)
            reduced = np.where(norms > 0, reduced / np.where(norms > 0, norms, 1.0), 0.0)
            for text, vector in zip(new, reduced, strict=True):
                self._cache[text] = vector.astype(np.float32)
        zero = np.zeros(self.dim, dtype=np.float32)
        return np.stack([self._cache.get(t, zero) for t in texts]) if texts else np.zeros((0, self.dim), np.float32)

    @property
    def cached(self) -> int:
        """Distinct texts encoded so far."""
        return len(self._cache)

    @property
    def nbytes(self) -> int:
        """Bytes the cached vectors take (the texts and the dict not counted)."""
        return sum(vector.nbytes for vector in self._cache.values())


def part_text(part: str, text: str) -> str:
    """A revealed part as the encoder reads it: its name in words, then its attributes."""
    return f"{part.replace('_', ' ')}: {text}"


def task_texts(task: CreativityTask) -> list[str]:
    """Every text an episode of ``task`` can give the encoder: the task, each entity's name and each part."""
    view = task_text(task)
    texts = [task.task, *view.names]
    for name in view.names:
        texts += [part_text(part, text) for part, text in view.text_by_name[name].parts.items()]
    return texts


def encode_tasks(encoder: TextEncoder, tasks: Sequence[CreativityTask]) -> int:
    """Encode every text of ``tasks`` in one call (the embedder batches them), so a cached encoder
    (``CachedEncoder``) has them all before the first episode; returns how many distinct texts there are."""
    texts = list(dict.fromkeys(text for task in tasks for text in task_texts(task)))
    encoder.encode(texts)
    return len(texts)


def make_encoder(spec: str = "st:", *, dim: int | None = None, seed: int = 0) -> CachedEncoder:
    """The encoder ``spec`` names: ``st:`` (the shipped MiniLM, the ``embed`` extra; 384 dimensions),
    ``st:PATH`` or ``lexical`` (hashed words, no model; projected to 64 unless ``dim`` says otherwise).

    Raises:
        DataBuildError: the ``embed`` extra is missing for ``st:`` (the message names the pip command).
    """
    from lateralgym.databuild import make_embedder

    if dim is None and spec == "lexical":
        dim = 64
    return CachedEncoder(make_embedder(spec), name=spec, dim=dim, seed=seed)


class TextCreativity(DiscreteCreativity):
    """``DiscreteCreativity`` whose observation is built from the text (see the module docstring)."""

    def __init__(
        self,
        env: gym.Env[dict[str, Any], Any],
        encoder: TextEncoder,
        part_order: PartOrder = "shuffled",
        head: AffordanceHead | None = None,
    ) -> None:
        super().__init__(env, part_order=part_order)
        self.encoder, self.head = encoder, head
        if head is not None and head.dim != encoder.dim:
            raise ValueError(
                f"the affordance head reads {head.dim}-dimensional vectors, the encoder gives {encoder.dim}"
            )
        self.afford_dims = head.size if head is not None else 0
        """The affordance head's columns (the last of the text columns; 0 without a head)."""
        self.text_dims = 2 * encoder.dim + self.afford_dims
        """The leading columns of a row that come from the text (the rest is its structure)."""
        self.row_width = self.text_dims + len(TEXT_FLAGS) + self.P
        self.scene_size = 2 * self.E + 1
        size = self.scene_size + self.n_actions * self.row_width
        self.observation_space = spaces.Box(-1.0, 1.0, shape=(size,), dtype=np.float32)

    def _features(self, obs: dict[str, Any]) -> np.ndarray:
        E, P, d = self.E, self.P, self.encoder.dim
        public = self._public
        entities: list[str] = public.get("entities", [])[:E]
        in_use = obs["entity_mask"].astype(np.float32)
        inspected = obs["inspected_mask"].astype(np.float32)
        turn = min(1.0, float(obs["turn"]) / self.max_turns)
        texts = [str(public.get("task", "")), *entities]
        parts: list[tuple[int, int, str]] = []
        for i, name in enumerate(entities):
            for j, (part, text) in enumerate(self.parts(name)):
                parts.append((i, j, part_text(part, text)))
        vectors = self.encoder.encode(texts + [t for _, _, t in parts])
        task, names = vectors[0], np.zeros((E, d), dtype=np.float32)
        names[: len(entities)] = vectors[1 : 1 + len(entities)]
        rows = np.zeros((self.n_actions, self.row_width), dtype=np.float32)
        inspect, commit = rows[:E], rows[E:].reshape(E, P, self.row_width)  # views: writes land in rows
        flags = self.text_dims
        inspect[:, :d] = names * task  # an inspect's text is its entity's name
        inspect[:, d : 2 * d] = names * task
        commit[:, :, d : 2 * d] = (names * task)[:, None, :]
        part_vectors = vectors[1 + len(entities) :]
        for (i, j, _), vector in zip(parts, part_vectors, strict=True):
            commit[i, j, :d] = vector * task
            commit[i, j, flags + 7] = 1.0  # part revealed
        if self.head is not None and parts:
            owners = [entities[i] for i, _, _ in parts]
            fits = self.head.offer(part_vectors, owners) * self.head.need(task[None, :], [texts[0]])
            for (i, j, _), fit in zip(parts, fits, strict=True):
                commit[i, j, 2 * d : flags] = fit
        rows[:, flags + 3] = turn
        rows[:, flags + 4] = 1.0 - turn
        rows[:, flags + 5] = float(obs["turn"] >= self.max_turns - 1)
        rows[:, flags + 6] = float(inspected.sum()) / max(1.0, float(in_use.sum()))
        inspect[:, flags + 0] = 1.0
        inspect[:, flags + 2] = in_use
        inspect[:, flags + 7] = inspected
        commit[:, :, flags + 1] = 1.0
        commit[:, :, flags + 2] = in_use[:, None]
        commit[:, :, flags + len(TEXT_FLAGS) :] = np.eye(P, dtype=np.float32)[None, :, :]
        scene = np.concatenate([in_use, inspected, np.array([turn], dtype=np.float32)])
        return np.concatenate([scene, rows.ravel()])
