"""The learned SPLAT judge's features and head: what it computes from a guess and a puzzle, how it is trained,
and its weights file.

Features of a guess (or question) about a puzzle, from the token vectors of a frozen embedder (the
MiniLM of the ``embed`` extra: its last-layer vector of each word piece, unit length):

* against the hidden answer, then against the story: each guess token is aligned to a soft mix of the
  other text's tokens (softmax of cosine similarities at ``TEMPERATURE``); the mean over guess tokens of
  the element-wise product and of the absolute difference of a token and its alignment (what matches and
  what differs), and the mean, minimum and lower quartile of each token's best similarity;
* the three similarity figures of the answer minus the story's (news, not what the story says);
* the guess's own mean token vector (vague guesses and specific ones are confirmed at different rates).

The head is L2-regularised logistic regression on standardised features (``fit_head``: scipy's L-BFGS on
``C * sum(log loss) + |w|^2 / 2``); a guess is confirmed when the probability reaches ``threshold``.

The weights file is a numpy ``.npz`` of plain arrays and strings, read with ``allow_pickle=False`` (nothing
in it runs): ``kind`` (``WEIGHTS_KIND``), ``version``, ``embedder`` (what made the features), ``temperature``,
``mean``, ``scale``, ``coef``, ``intercept``, ``threshold``, ``C``, ``cases``, ``data_sha256`` and ``source``
(what it was trained on, with its licence and attribution).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from lateralgym.envs._blas import one_blas_thread
from lateralgym.envs._errors import ConfigError

__all__ = [
    "OFF_TOPIC_BELOW",
    "TEMPERATURE",
    "WEIGHTS_KIND",
    "LearnedHead",
    "TokenEmbedder",
    "fit_head",
    "guess_features",
    "topic_closeness",
]

WEIGHTS_KIND = "lateralgym-learned-situation-judge"
"""What a weights file of this judge says it is (another file is refused)."""
WEIGHTS_VERSION = 1
"""The feature layout's version: a file of another layout is refused."""
TEMPERATURE = 0.02
"""Softmax temperature of the token alignment (picked in leave-stories-out cross-validation)."""
DEFAULT_C = 0.003
"""Inverse L2 strength of the head (picked in leave-stories-out cross-validation)."""
OFF_TOPIC_BELOW = 0.4
"""A guess whose ``topic_closeness`` is below this is about neither the story nor the answer (irrelevant).
Only the far-off: on TurtleBench's English guesses people's Unknown ones are no further by this figure than
their Incorrect ones (median 0.56 both), so the no / irrelevant split is not a measured one."""


class TokenEmbedder(Protocol):
    """An embedder that gives each text's token vectors (``databuild``'s MiniLM and lexical embedders)."""

    name: str

    def embed_tokens_now(self, texts: list[str]) -> list[np.ndarray]:
        """Unit rows, one per token, one array per text."""
        ...


def _aligned(guess: np.ndarray, other: np.ndarray) -> np.ndarray:
    """Product and difference of each guess token with its soft alignment in ``other``, then the best
    similarities' mean, minimum and lower quartile."""
    similarity = guess @ other.T
    weights = np.exp((similarity - similarity.max(axis=1, keepdims=True)) / TEMPERATURE)
    weights /= weights.sum(axis=1, keepdims=True)
    aligned = weights @ other
    best = similarity.max(axis=1)
    return np.concatenate(
        [
            (guess * aligned).mean(axis=0),
            np.abs(guess - aligned).mean(axis=0),
            [best.mean(), best.min(), np.percentile(best, 25)],
        ]
    )


def guess_features(guess: np.ndarray, answer: np.ndarray, story: np.ndarray) -> np.ndarray:
    """The feature row of a guess's token vectors against the answer's and the story's (module docstring)."""
    hidden, public = _aligned(guess, answer), _aligned(guess, story)
    mean = guess.mean(axis=0)
    norm = float(np.linalg.norm(mean)) or 1.0
    return np.concatenate([hidden, public, hidden[-3:] - public[-3:], mean / norm])


def topic_closeness(row: np.ndarray) -> float:
    """How close a feature row's guess is to the puzzle: the larger mean best token similarity, to the
    answer or to the story."""
    width = (row.shape[-1] - 9) // 5  # the layout: answer (2w + 3), story (2w + 3), differences 3, mean w
    return float(max(row[2 * width], row[4 * width + 3]))


@dataclass(frozen=True)
class LearnedHead:
    """A trained head: standardisation, logistic weights and the threshold, with what it was trained on."""

    embedder: str
    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float
    threshold: float = 0.5
    c: float = DEFAULT_C
    cases: int = 0
    data_sha256: str = ""
    source: str = ""

    def probability(self, features: np.ndarray) -> np.ndarray:
        """The probability that each row's guess is confirmed by the hidden answer."""
        if features.shape[-1] != self.coef.shape[0]:
            raise ConfigError(
                f"judge learned: its weights take {self.coef.shape[0]} features and the embedder {self.embedder} "
                f"gives {features.shape[-1]}; use the embedder the weights were trained with, or retrain them"
            )
        logits = ((features - self.mean) / self.scale) @ self.coef + self.intercept
        return np.asarray(1.0 / (1.0 + np.exp(-logits)))

    def save(self, path: Path) -> None:
        """Write the weights file (see the module docstring)."""
        with path.open("wb") as handle:
            np.savez_compressed(
                handle,
                kind=np.array(WEIGHTS_KIND),
                version=np.array(WEIGHTS_VERSION),
                embedder=np.array(self.embedder),
                temperature=np.array(TEMPERATURE),
                mean=self.mean.astype(np.float32),
                scale=self.scale.astype(np.float32),
                coef=self.coef.astype(np.float32),
                intercept=np.array(self.intercept),
                threshold=np.array(self.threshold),
                C=np.array(self.c),
                cases=np.array(self.cases),
                data_sha256=np.array(self.data_sha256),
                source=np.array(self.source),
            )

    @classmethod
    def load(cls, path: Path) -> LearnedHead:
        """Read a weights file, checking it is this judge's.

        Raises:
            ConfigError: unreadable, not a numpy ``.npz`` of plain arrays, or the weights of another judge
                or feature layout (one line naming the file and what to do).
        """
        retrain = "retrain with scripts/train_learned_judge.py, or drop weights= for the shipped file"
        try:
            with np.load(path, allow_pickle=False) as found:
                arrays = {name: found[name] for name in found.files}
        except (OSError, ValueError, EOFError) as exc:
            raise ConfigError(f"judge learned: cannot read the weights file {path} ({exc}); {retrain}") from None
        kind = str(arrays.get("kind", ""))
        if kind != WEIGHTS_KIND:
            raise ConfigError(
                f"judge learned: {path} holds no weights of this judge (kind {kind or 'missing'!r}, expected "
                f"{WEIGHTS_KIND!r}); {retrain}"
            )
        version = int(arrays.get("version", -1))
        if version != WEIGHTS_VERSION or float(arrays.get("temperature", -1)) != TEMPERATURE:
            raise ConfigError(
                f"judge learned: {path} was trained on another feature layout (version {version}); {retrain}"
            )
        missing = sorted({"embedder", "mean", "scale", "coef", "intercept", "threshold"} - arrays.keys())
        width = {arrays[k].shape for k in ("mean", "scale", "coef") if k in arrays}
        if missing or len(width) != 1 or len(next(iter(width))) != 1:
            raise ConfigError(
                f"judge learned: {path} is damaged ({'missing ' + missing[0] if missing else 'mismatched shapes'}); "
                f"{retrain}"
            )
        return cls(
            embedder=str(arrays["embedder"]),
            mean=arrays["mean"].astype(np.float64),
            scale=arrays["scale"].astype(np.float64),
            coef=arrays["coef"].astype(np.float64),
            intercept=float(arrays["intercept"]),
            threshold=float(arrays["threshold"]),
            c=float(arrays.get("C", DEFAULT_C)),
            cases=int(arrays.get("cases", 0)),
            data_sha256=str(arrays.get("data_sha256", "")),
            source=str(arrays.get("source", "")),
        )


def fit_head(
    features: np.ndarray,
    confirmed: np.ndarray,
    *,
    embedder: str,
    c: float = DEFAULT_C,
    data_sha256: str = "",
    source: str = "",
) -> LearnedHead:
    """Logistic regression of ``confirmed`` (0/1) on standardised ``features`` (see the module docstring).

    Raises:
        ConfigError: no cases, or only one label among them (nothing to learn a boundary from).
    """
    from scipy.optimize import minimize  # type: ignore[import-untyped]

    labels = np.asarray(confirmed, dtype=np.float64)
    if len(labels) == 0 or labels.min() == labels.max():
        raise ConfigError(
            "judge learned: training needs cases of both labels (confirmed and not); give more labelled guesses"
        )
    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale < 1e-9] = 1.0
    x = (features - mean) / scale
    signs = 2.0 * labels - 1.0

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        weights, bias = theta[:-1], theta[-1]
        margin = signs * (x @ weights + bias)
        value = c * float(np.logaddexp(0.0, -margin).sum()) + 0.5 * float(weights @ weights)
        pull = -signs / (1.0 + np.exp(margin))  # d loss / d logit, per case
        gradient = np.concatenate([c * (x.T @ pull) + weights, [c * pull.sum()]])
        return value, gradient

    with one_blas_thread():
        found = minimize(loss, np.zeros(x.shape[1] + 1), jac=True, method="L-BFGS-B", options={"maxiter": 2000})
    return LearnedHead(
        embedder=embedder,
        mean=mean,
        scale=scale,
        coef=found.x[:-1],
        intercept=float(found.x[-1]),
        c=c,
        cases=len(labels),
        data_sha256=data_sha256,
        source=source,
    )
