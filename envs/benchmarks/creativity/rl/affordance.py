"""An affordance head for the text policy: what a text says about the kind of use it needs or offers.

## Description
A sentence encoder's cosine says how alike two texts are; it does not know that a waxy bar of soap
eases a sticking drawer. ``AffordanceHead`` maps an encoder vector to a distribution over the
knowledge base's affordance categories (``lubricate``, ``pry``, ``absorb``, ...) twice: one map for
the texts that *need* a use (a task, an affordance's description) and one for the texts that *offer*
one (a part's name and attributes, as the player reads it after inspecting). ``TextCreativity`` puts
the two distributions' element-wise product in every commit row, so a policy can score how well a
revealed part fits the task by its kind of use.

Both maps are multinomial logistic regressions (L2, fitted by L-BFGS) learnt **from the train split
only**: the train tasks' texts with their gold affordance's category, and every affordance of the
knowledge-base entities the train tasks show, except any entity that is a gold entity of a held-out
task (by snake_case name, so no variant of a test gold enters). What a part offers is learnt from
the part's rendered attributes, never from its hidden affordances at play time: the player's
observation is unchanged, the head is a frozen encoder trained before RL starts.

Both maps are **cross-fitted**, so the policy trains under the conditions it is tested in:

* the offer map by entity: entities fall into ``FOLDS`` folds by a hash of their snake_case name,
  and an entity's parts are always read by the map fitted without its fold. Without this, a
  held-out task's gold (never in the fit) read *flatter* than its distractors (most of them in the
  fit, read sharply as what they are): on validation parts of the train tasks, "commit the part
  whose offer is flattest", which never looks at the task, found the gold 18.9 % of the time
  against 6.3 % for random. ``bench_rl_affordance.py`` prints that need-free rule's rate, as a check;
* the need map by task text (its hash, which the player sees; never by the hidden gold): a train
  task's text is read by the map fitted without its fold's tasks and without the uses of their gold
  entities (a gold's use reads almost like its task). Without this, PPO trained on need readings of
  texts the map had fitted, sharper than any held-out task's, and learnt to lean on them: from the
  same start, the held-out gold rate fell as training went on.

The L2 strength ``DEFAULT_C`` and the fit's starting weight ``START_FIT_WEIGHT`` were chosen on
validation parts of the train tasks (``benchmarks/bench_rl_affordance.py``), never on the test tasks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize  # type: ignore[import-untyped]
from scipy.special import log_softmax, softmax  # type: ignore[import-untyped]

from lateralgym.envs._blas import one_blas_thread
from lateralgym.envs._matching import snake
from lateralgym.envs.benchmarks.creativity._schema import Affordance, CreativityTask, Part

__all__ = [
    "DEFAULT_C",
    "FOLDS",
    "START_FIT_WEIGHT",
    "AffordanceHead",
    "affordance_text",
    "entity_fold",
    "fit_affordance_head",
    "part_text",
    "text_fold",
]

DEFAULT_C = 64.0
"""Inverse L2 strength of both maps (scikit-learn's ``C``). With ``START_FIT_WEIGHT``, the best of C in
{16, 64} x weight in {1/5, 1/10, 1/20} on validation parts of the train tasks
(``benchmarks/bench_rl_affordance.py``: a third of the train gold entities held out of the fit, six
draws): 28.2 % [22.2, 34.2] gold against 21.0 % [16.8, 25.3] for the cosines alone."""

START_FIT_WEIGHT = 1 / 10
"""The log fit's weight next to the encoder's cosines (task with part text, plus task with entity
name) where a text policy with a head starts; chosen with ``DEFAULT_C`` (see there)."""


def part_text(part: Part) -> str:
    """A part as ``TextCreativity`` encodes it once revealed: its name in words, then what inspecting shows."""
    return f"{part.name.replace('_', ' ')}: {part.render()}"


def affordance_text(affordance: Affordance) -> str:
    """An affordance as a need: the use, what it acts on and examples (a task-like text)."""
    examples = ", ".join(affordance.example_recipients)
    text = f"{affordance.action}. For: {affordance.recipient_condition}"
    return f"{text} e.g. {examples}" if examples else text


class _Softmax:
    """A fitted multinomial logistic regression over encoder vectors."""

    def __init__(self, weights: np.ndarray, bias: np.ndarray) -> None:
        self.weights, self.bias = weights, bias

    def __call__(self, vectors: np.ndarray) -> np.ndarray:
        return np.asarray(softmax(np.asarray(vectors, np.float64) @ self.weights + self.bias, axis=1))

    @classmethod
    def fit(cls, x: np.ndarray, y: np.ndarray, n_classes: int, c: float) -> _Softmax:
        """Minimise ``c * sum(cross-entropy) + |W|^2 / 2`` (scikit-learn's objective; the bias is not penalised)."""
        x = np.asarray(x, np.float64)
        n, d = x.shape
        onehot = np.eye(n_classes)[y]

        def loss(flat: np.ndarray) -> tuple[float, np.ndarray]:
            w, b = flat[: d * n_classes].reshape(d, n_classes), flat[d * n_classes :]
            logp = log_softmax(x @ w + b, axis=1)
            error = np.exp(logp) - onehot
            value = -c * float((onehot * logp).sum()) + 0.5 * float((w * w).sum())
            grad = np.concatenate([(c * x.T @ error + w).ravel(), c * error.sum(axis=0)])
            return value, grad

        start = np.zeros(d * n_classes + n_classes)
        with one_blas_thread():
            result = minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 500})
        flat = result.x
        return cls(flat[: d * n_classes].reshape(d, n_classes), flat[d * n_classes :])


FOLDS = 5
"""Folds of the offer map's cross-fitting (by entity name)."""


def entity_fold(name: str, folds: int = FOLDS) -> int:
    """The fold of an entity (its snake_case name's SHA-256, so every process and run agrees)."""
    return _fold(snake(name), folds)


def text_fold(text: str, folds: int = FOLDS) -> int:
    """The fold of a task text (its SHA-256): which need map reads it. Public, unlike the task's gold."""
    return _fold(text, folds)


def _fold(key: str, folds: int) -> int:
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") % folds


def _folded(maps: tuple[np.ndarray, np.ndarray]) -> list[_Softmax]:
    weights, biases = np.asarray(maps[0]), np.asarray(maps[1])
    if weights.ndim != 3 or biases.shape != (weights.shape[0], weights.shape[2]):
        raise ValueError("an affordance head's maps must be folds x dim x categories")
    return [_Softmax(w, b) for w, b in zip(weights, biases, strict=True)]


def _by_fold(maps: list[_Softmax], vectors: np.ndarray, folds: list[int], size: int) -> np.ndarray:
    vectors = np.asarray(vectors)
    if len(folds) != len(vectors):
        raise ValueError(f"{len(vectors)} vectors but {len(folds)} names or texts")
    found = np.zeros((len(vectors), size))
    where = np.array(folds, dtype=int)
    for fold in set(folds):
        found[where == fold] = maps[fold](vectors[where == fold])
    return found


class AffordanceHead:
    """Maps from encoder vectors to affordance categories: ``need`` (task texts, one map per text
    fold) and ``offer`` (parts, one map per entity fold); a text or an entity is always read by the map
    fitted without its fold.

    Args:
        categories: the category names, in column order.
        need: the need maps' weights (``folds x dim x C``) and biases (``folds x C``).
        offer: the offer maps' weights and biases, the same shapes.
        encoder: the name of the encoder whose vectors the maps read (a head only fits its own encoder).
    """

    def __init__(
        self,
        categories: Sequence[str],
        need: tuple[np.ndarray, np.ndarray],
        offer: tuple[np.ndarray, np.ndarray],
        encoder: str,
    ) -> None:
        self.categories = tuple(categories)
        self._need, self._offer = _folded(need), _folded(offer)
        self.encoder = encoder
        shapes = {m.weights.shape for m in [*self._need, *self._offer]}
        if len(shapes) != 1 or next(iter(shapes))[1] != len(categories):
            raise ValueError("an affordance head's maps must all read one vector size and give one column per category")
        self.dim = int(self._need[0].weights.shape[0])

    @property
    def size(self) -> int:
        """The number of categories (columns a row gets)."""
        return len(self.categories)

    def need(self, vectors: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        """Category distributions of texts needing a use: row ``i`` is the vector of ``texts[i]``,
        read by the map fitted without that text's fold."""
        return _by_fold(self._need, vectors, [text_fold(t, len(self._need)) for t in texts], self.size)

    def offer(self, vectors: np.ndarray, entities: Sequence[str]) -> np.ndarray:
        """Category distributions of parts offering a use; row ``i`` is a part of entity ``entities[i]``,
        read by the map fitted without that entity's fold."""
        return _by_fold(self._offer, vectors, [entity_fold(e, len(self._offer)) for e in entities], self.size)

    def save(self, path: Path) -> None:
        """Write the head as a NumPy ``.npz`` (arrays and names only: loading runs no code)."""
        np.savez(
            path,
            categories=np.array(self.categories),
            need_w=np.stack([m.weights for m in self._need]),
            need_b=np.stack([m.bias for m in self._need]),
            offer_w=np.stack([m.weights for m in self._offer]),
            offer_b=np.stack([m.bias for m in self._offer]),
            encoder=np.array(self.encoder),
        )

    @classmethod
    def load(cls, path: Path) -> AffordanceHead:
        """A head ``save`` wrote (``allow_pickle`` stays off).

        Raises:
            ValueError: the file is not an affordance head (the message names it).
        """
        try:
            with np.load(path, allow_pickle=False) as data:
                arrays: dict[str, Any] = {key: data[key] for key in data.files}
            return cls(
                [str(c) for c in arrays["categories"]],
                (arrays["need_w"], arrays["need_b"]),
                (arrays["offer_w"], arrays["offer_b"]),
                str(arrays["encoder"]),
            )
        except (OSError, KeyError, ValueError) as error:
            raise ValueError(f"{path} is not an affordance head: {error}") from error


def fit_affordance_head(
    train: Sequence[CreativityTask], held_out: Sequence[CreativityTask], encoder: Any, *, c: float = DEFAULT_C
) -> AffordanceHead:
    """Fit both maps on the train split only (see the module docstring).

    Args:
        train: the tasks the policy trains on: their texts, gold categories and the entities they show.
        held_out: the tasks it is tested on: no entity named as one of their golds enters the fit.
        encoder: a ``text.TextEncoder`` (the policy's own).
        c: inverse L2 strength.

    Raises:
        ValueError: nothing to learn from (no train task, or fewer than two categories).
    """
    banned = {snake(task.gold.entity) for task in held_out}
    entities = {e.id: e for task in train for e in task.entities if snake(e.name) not in banned}
    owners = [(e.name, part, a) for e in entities.values() for part in e.parts for a in part.affordances]
    offered = [(part, a) for _, part, a in owners]
    categories = sorted({a.category for _, a in offered} | {t.gold.affordance.category for t in train})
    if not train or len(categories) < 2:
        raise ValueError("an affordance head needs train tasks showing at least two affordance categories")
    column = {name: k for k, name in enumerate(categories)}
    task_x = encoder.encode([t.task for t in train])
    task_y = np.array([column[t.gold.affordance.category] for t in train])
    use_x = encoder.encode([affordance_text(a) for _, a in offered])
    use_y = np.array([column[a.category] for _, a in offered], dtype=int)
    task_fold = np.array([text_fold(t.task) for t in train], dtype=int)
    needs = []
    for fold in range(FOLDS):  # without the fold's tasks, nor the uses of their gold entities
        golds = {snake(t.gold.entity) for t, f in zip(train, task_fold, strict=True) if f == fold}
        uses = np.array([snake(name) not in golds for name, _, _ in owners], dtype=bool)
        x = np.concatenate([task_x[task_fold != fold], use_x[uses]])
        y = np.concatenate([task_y[task_fold != fold], use_y[uses]])
        needs.append(_Softmax.fit(x, y, len(categories), c))
    offer_y = np.array([column[a.category] for _, a in offered]) if offered else np.zeros(0, int)
    if len(set(offer_y.tolist())) < 2:
        raise ValueError(
            "an affordance head needs the train tasks' entities to carry affordances of at least two categories "
            "(the official release's do not: use tasks built from a knowledge base with `lateralgym tasks build`, "
            "or the shipped sample)"
        )
    offer_x = encoder.encode([part_text(p) for p, _ in offered])
    fold_of = np.array([entity_fold(name) for name, _, _ in owners], dtype=int)
    maps = []
    for fold in range(FOLDS):
        keep = fold_of != fold
        if len(set(offer_y[keep].tolist())) < 2:
            raise ValueError(f"too few knowledge-base entities outside fold {fold} to fit an affordance head")
        maps.append(_Softmax.fit(offer_x[keep], offer_y[keep], len(categories), c))
    weights = (np.stack([m.weights for m in maps]), np.stack([m.bias for m in maps]))
    need = (np.stack([m.weights for m in needs]), np.stack([m.bias for m in needs]))
    return AffordanceHead(categories, need, weights, getattr(encoder, "name", "?"))
