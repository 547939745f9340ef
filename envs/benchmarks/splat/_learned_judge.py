"""The learned offline SPLAT judge (``--judge learned``): a frozen sentence embedder with a small trained head.

It answers whether a guess or question is confirmed by the hidden answer with a logistic head over
token-alignment features of the local MiniLM (``_learned_head``: nothing is downloaded, the head is a small
``.npz`` read without pickle), trained on people's labels of players' guesses (TurtleBench, English: the
shipped ``learned_judge.npz``; its source, licence and attribution are in the file's ``source`` and in
``learned_judge.NOTICE``; ``scripts/train_learned_judge.py`` rebuilds it from a TurtleBench folder).

* a question is ``yes`` when the head's probability reaches its threshold; otherwise ``irrelevant`` when
  its tokens are far from both the story's and the hidden answer's (``_learned_head.OFF_TOPIC_BELOW``),
  else ``no``;
* an explanation is graded as ``reference-embed`` grades it (key facts covered, on the same embedder):
  the head was trained on single guesses, not on whole explanations;
* a message under the ``paper`` protocol (``respond``) is ``correct`` when it would be graded correct,
  else answered as a question.

Its measured agreement with people (leave-stories-out cross-validation, ``lateralgym judges eval DATA
--judge learned --cv stories``) is in docs/judges.md: above the majority baseline, far below an LLM judge.
Options: ``learned?weights=PATH`` (another weights file), ``learned?model=st:PATH`` or ``model=lexical``
(another embedder; the weights must have been trained on it). torch and sentence-transformers load only
when the judge is built.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from lateralgym.envs._benchmark import JudgeCase
from lateralgym.envs._errors import ConfigError
from lateralgym.envs._judging import QA, JudgeReply
from lateralgym.envs.benchmarks.splat._embed_judge import EmbeddingJudge
from lateralgym.envs.benchmarks.splat._learned_head import (
    DEFAULT_C,
    OFF_TOPIC_BELOW,
    LearnedHead,
    TokenEmbedder,
    fit_head,
    guess_features,
    topic_closeness,
)
from lateralgym.envs.benchmarks.splat._scene import SituationPuzzle

__all__ = ["LEARNED_JUDGE", "SHIPPED_WEIGHTS", "LearnedJudge", "case_features"]

LEARNED_JUDGE = "learned"
"""The judge's spec name (``--judge learned``, ``learned?weights=PATH&model=st:``)."""
SHIPPED_WEIGHTS = Path(__file__).with_name("learned_judge.npz")
"""The head trained on TurtleBench's English labels (see ``learned_judge.NOTICE``)."""


class LearnedJudge(EmbeddingJudge):
    """Frozen MiniLM plus a trained logistic head (see the module docstring).

    Args:
        model: the embedder (``st:`` the shipped MiniLM the shipped weights were trained on, ``st:PATH``,
            or ``lexical``).
        weights: the head's ``.npz`` (default: the shipped one); its embedder must be ``model``'s.
        untrained: no head at all: a judge to train (``trained_on``), which answers nothing until then.

    Raises:
        ConfigError: the ``embed`` extra is missing, or the weights file is another judge's, damaged, or
            trained on another embedder (one line each).
    """

    name = LEARNED_JUDGE
    limits = (
        "offline judge learned from people's labels of players' guesses (frozen MiniLM plus a logistic head): "
        "measured on stories it never saw it agrees with people a little above always saying no (docs/judges.md, "
        "'Where the offline judges stand'), far below an LLM judge, and it grades explanations like "
        "reference-embed; its numbers are for offline runs, tests and RL warm-up, not measurement: use an LLM "
        "judge (--judge openai/...) or a person (--judge human)"
    )
    """What this judge can and cannot do, said wherever it is chosen (CLI help, the run's first line, reports)."""

    def __init__(self, model: str = "st:", weights: str | Path | None = None, *, untrained: bool = False) -> None:
        super().__init__(model=model)
        self._tokens: dict[str, np.ndarray] = {}
        self._head: LearnedHead | None = None if untrained else self._load(Path(weights) if weights else None)

    def _load(self, path: Path | None) -> LearnedHead:
        if path is not None and not path.is_file():
            raise ConfigError(
                f"judge {LEARNED_JUDGE}: no weights file {path}; give learned?weights=PATH of a file written by "
                "scripts/train_learned_judge.py"
            )
        if path is None and not SHIPPED_WEIGHTS.is_file():
            raise ConfigError(
                f"judge {LEARNED_JUDGE}: the shipped weights {SHIPPED_WEIGHTS.name} are missing; reinstall "
                "lateralgym, or give learned?weights=PATH of a file written by scripts/train_learned_judge.py"
            )
        head = LearnedHead.load(path or SHIPPED_WEIGHTS)
        if head.embedder != self._embedder.name:
            raise ConfigError(
                f"judge {LEARNED_JUDGE}: the weights were trained on the embedder {head.embedder} and this judge "
                f"embeds with {self._embedder.name}; use learned?model= of that embedder, or retrain the weights"
            )
        return head

    @property
    def head(self) -> LearnedHead:
        """The trained head.

        Raises:
            ConfigError: the judge was built untrained and not trained since.
        """
        if self._head is None:
            raise ConfigError(f"judge {LEARNED_JUDGE}: this judge is untrained; train it first (trained_on)")
        return self._head

    @property
    def training_data_sha256(self) -> str:
        """The sha256 of the labelled data its head was trained on ('' when unknown or untrained), so
        ``judges eval`` can say when it is scored on its own training data."""
        return self._head.data_sha256 if self._head is not None else ""

    def _token_vectors(self, texts: list[str]) -> list[np.ndarray]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._tokens))
        if missing:
            embedder: TokenEmbedder = self._embedder  # type: ignore[assignment]  # st: and lexical both have it
            for text, rows in zip(missing, embedder.embed_tokens_now(missing), strict=True):
                self._tokens[text] = rows
        return [self._tokens[t] for t in texts]

    def features(self, item: SituationPuzzle, messages: Sequence[str]) -> np.ndarray:
        """The head's feature rows of ``messages`` about ``item`` (``_learned_head.guess_features``)."""
        answer, story, *guesses = self._token_vectors([item.answer, item.story, *messages])
        return np.stack([guess_features(guess, answer, story) for guess in guesses])

    def confirmed(self, item: SituationPuzzle, question: str) -> float:
        """The head's probability that the hidden answer confirms ``question``."""
        return float(self.head.probability(self.features(item, [question]))[0])

    async def answer(self, item: Any, question: str, history: tuple[QA, ...]) -> JudgeReply:
        """yes when the head says confirmed, else irrelevant (far from the puzzle) or no."""
        if not isinstance(item, SituationPuzzle) or not question.strip():
            return JudgeReply(label="irrelevant")
        row = self.features(item, [question])
        if float(self.head.probability(row)[0]) >= self.head.threshold:
            return JudgeReply(label="yes")
        if topic_closeness(row[0]) >= OFF_TOPIC_BELOW:
            return JudgeReply(label="no")
        return JudgeReply(label="irrelevant")

    def trained_on(
        self, cases: Sequence[JudgeCase], *, c: float | None = None, data_sha256: str = "", source: str = ""
    ) -> LearnedJudge:
        """A judge on the same embedder with a head trained on ``cases`` only (their questions and guesses:
        positive label = confirmed); any head this one has plays no part but its regularisation ``c``.

        Raises:
            ConfigError: no questions or guesses among the cases, or only one label among them.
        """
        asked = [case for case in cases if case.kind == "question" and isinstance(case.item, SituationPuzzle)]
        if not asked:
            raise ConfigError(f"judge {LEARNED_JUDGE}: no labelled questions or guesses to train on")
        groups = _by_item(asked)
        rows = np.concatenate([case_features(self, group) for group in groups])
        confirmed = np.array([case.expected == case.positive for group in groups for case in group])
        strength = c if c is not None else (self._head.c if self._head is not None else DEFAULT_C)
        trained = LearnedJudge.__new__(LearnedJudge)
        trained.__dict__.update(self.__dict__)  # the same embedder and caches: only the head differs
        trained._head = fit_head(
            rows, confirmed, embedder=self._embedder.name, c=strength, data_sha256=data_sha256, source=source
        )
        return trained


def _by_item(cases: Sequence[JudgeCase]) -> list[list[JudgeCase]]:
    """Cases grouped by the puzzle they ask about, in first-seen order (one embedding pass a puzzle)."""
    grouped: dict[int, list[JudgeCase]] = {}
    for case in cases:
        grouped.setdefault(id(case.item), []).append(case)
    return list(grouped.values())


def case_features(judge: LearnedJudge, cases: Sequence[JudgeCase]) -> np.ndarray:
    """Feature rows of cases that all ask about one puzzle."""
    return judge.features(cases[0].item, [case.message for case in cases])
