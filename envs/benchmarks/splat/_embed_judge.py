"""The offline SPLAT judge by sentence embeddings (``--judge reference-embed``).

A stand-in for SPLAT's LLM judge that, unlike the word-overlap ``reference`` judge, tolerates
paraphrase: it compares meanings as cosine similarities of sentence vectors from the local MiniLM
the ``embed`` extra ships (``st:``; nothing is downloaded).

* a question is ``yes`` when it is at least ``YES_SIMILARITY`` close to a sentence of the hidden
  answer or one of its clues, and at least ``YES_MARGIN`` closer to it than to the story (a
  question about what the story already says is not news); ``no`` when it is at least
  ``RELEVANT_SIMILARITY`` close to the story or the hidden answer; ``irrelevant`` otherwise;
* an explanation is ``correct`` when at least ``COVERAGE`` of the key facts (the clues, else the
  answer's sentences) are each ``FACT_SIMILARITY`` close to the explanation or one of its
  sentences, or when the whole explanation is ``ANSWER_SIMILARITY`` close to the whole answer;
  otherwise ``not_yet`` with the count-only hint of the reference judge;
* a message under the ``paper`` protocol (``respond``) is ``correct`` when it would be graded
  correct, else answered as a question; it sees no history either way.

The thresholds were picked on the labelled questions and explanations of the shipped sample
puzzles in ``tests/judges/splat_judge_labels.csv`` (see the README's "The offline SPLAT judge").
Like the reference judge it only returns labels and a hint the env rebuilds from two numbers, so
nothing of the hidden answer reaches the player. sentence-transformers is imported only when the
judge is built.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import numpy as np

from lateralgym.envs._actions import Commit
from lateralgym.envs._errors import ConfigError
from lateralgym.envs._judging import QA, JudgeReply
from lateralgym.envs.benchmarks.splat._scene import SituationPuzzle

__all__ = [
    "ANSWER_SIMILARITY",
    "COVERAGE",
    "EMBED_JUDGE",
    "FACT_SIMILARITY",
    "RELEVANT_SIMILARITY",
    "YES_MARGIN",
    "YES_SIMILARITY",
    "EmbeddingJudge",
    "load_embedder",
]

EMBED_JUDGE = "reference-embed"
"""The judge's spec name (``--judge reference-embed``, ``reference-embed?model=st:PATH``)."""

YES_SIMILARITY = 0.63
"""A question at least this close to a hidden sentence (answer or clue) can be answered yes."""
YES_MARGIN = 0.15
"""... and at least this much closer to the hidden sentences than to the story's."""
RELEVANT_SIMILARITY = 0.47
"""A question at least this close to the story or the hidden answer is about the puzzle (no, not
irrelevant)."""
FACT_SIMILARITY = 0.45
"""A key fact is covered when the explanation (or one of its sentences) is at least this close to it."""
COVERAGE = 0.75
"""An explanation covering at least this share of the key facts is correct."""
ANSWER_SIMILARITY = 0.8
"""An explanation at least this close to the whole hidden answer is correct whatever its coverage."""

_SENTENCE = re.compile(r"(?<=[.!?;])\s+")


class SyncEmbedder(Protocol):
    """An embedder with a synchronous ``embed_now`` (the shipped MiniLM, or the lexical fallback)."""

    name: str

    def embed_now(self, texts: list[str]) -> np.ndarray:
        """float32 rows, L2-normalised, one per text."""
        ...


_LOADED: dict[str, SyncEmbedder] = {}


def load_embedder(model: str) -> SyncEmbedder:
    """The embedder ``model`` names (``st:`` the shipped MiniLM, ``st:PATH`` a local model, ``lexical``
    the no-model fallback), loaded once per process.

    Raises:
        ConfigError: the ``embed`` extra is missing, or the model cannot be loaded offline (one line
            that says what to install or give).
    """
    if model in _LOADED:
        return _LOADED[model]
    if model != "lexical" and not model.startswith("st:"):
        raise ConfigError(
            f"judge {EMBED_JUDGE}: unknown model {model!r}; use 'st:' (the shipped MiniLM), 'st:PATH' (a local "
            "sentence-transformers model) or 'lexical'"
        )
    from lateralgym.databuild import EMBED_INSTALL_HINT, DataBuildError, LexicalEmbedder, SentenceTransformerEmbedder

    embedder: SyncEmbedder
    if model == "lexical":
        embedder = LexicalEmbedder()
    else:
        try:
            embedder = SentenceTransformerEmbedder(model[3:].strip())
        except DataBuildError as exc:
            if "extra" in str(exc) or "not installed" in str(exc):
                raise ConfigError(
                    f"judge {EMBED_JUDGE} needs the embed extra (a local sentence-transformers model): "
                    f"run {EMBED_INSTALL_HINT}"
                ) from None
            raise ConfigError(f"judge {EMBED_JUDGE}: {exc}") from None
    _LOADED[model] = embedder
    return embedder


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s.strip()]


class EmbeddingJudge:
    """Sentence-embedding judge for situation puzzles (see the module docstring).

    Args:
        model: the embedder: ``st:`` (the MiniLM of the ``embed`` extra, for which the thresholds
            were picked), ``st:PATH`` (another local sentence-transformers model) or ``lexical``
            (hashed words, no model: a check of the wiring, not a judge to trust).

    Raises:
        ConfigError: the ``embed`` extra is missing (the message names ``pip install 'lateralgym[embed]'``).
    """

    name = EMBED_JUDGE
    limits = (
        "offline stand-in for SPLAT's LLM judge by sentence-embedding similarity (local MiniLM) to the hidden "
        "answer: it accepts paraphrases the word-overlap judge misses, but embeddings barely see negation or "
        "opposites ('Was the audience not deaf?' still gets yes) and a question close to the answer's topic can "
        "get yes, so its numbers are for offline runs, tests and RL warm-up, not measurement: use an LLM judge "
        "(--judge openai/...) or a person (--judge human)"
    )
    """What this judge can and cannot do, said wherever it is chosen (CLI help, the run's first line, reports)."""
    synchronous = True
    """Its coroutines never suspend (the model runs in the calling thread): ``LateralEnv.step`` drives them
    without an event loop."""

    def __init__(self, model: str = "st:") -> None:
        self.model = model
        self._embedder = load_embedder(model)
        self._vectors: dict[str, np.ndarray] = {}

    def _embed(self, texts: list[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._vectors))
        if missing:
            for text, vector in zip(missing, self._embedder.embed_now(missing), strict=True):
                self._vectors[text] = vector
        return np.stack([self._vectors[t] for t in texts])

    def _closeness(self, text: str, others: list[str]) -> float:
        """The highest cosine similarity of ``text`` to any of ``others`` (0 when there are none)."""
        if not others:
            return 0.0
        vectors = self._embed([text, *others])
        return float(np.max(vectors[1:] @ vectors[0]))

    def similarities(self, item: SituationPuzzle, question: str) -> tuple[float, float]:
        """(closeness to the hidden answer and clues, closeness to the title and story) of a question."""
        hidden = [*_sentences(item.answer), *item.clues]
        story = [s for s in [item.title, *_sentences(item.story)] if s]
        return self._closeness(question, hidden), self._closeness(question, story)

    def coverage(self, item: SituationPuzzle, explanation: str) -> tuple[int, int, float]:
        """(key facts covered, key facts, closeness to the whole answer) of an explanation."""
        facts = list(item.clues) or _sentences(item.answer)
        pieces = list(dict.fromkeys([explanation, *_sentences(explanation)]))
        vectors = self._embed([*facts, *pieces, item.answer])
        fact_vectors, piece_vectors = vectors[: len(facts)], vectors[len(facts) : -1]
        best = (fact_vectors @ piece_vectors.T).max(axis=1)
        covered = int(np.sum(best >= FACT_SIMILARITY))
        return covered, len(facts), float(vectors[-1] @ piece_vectors[0])

    async def answer(self, item: Any, question: str, history: tuple[QA, ...]) -> JudgeReply:
        """yes / no / irrelevant by closeness to the hidden answer and the story."""
        if not isinstance(item, SituationPuzzle) or not question.strip():
            return JudgeReply(label="irrelevant")
        hidden, story = self.similarities(item, question)
        if hidden >= YES_SIMILARITY and hidden - story >= YES_MARGIN:
            return JudgeReply(label="yes")
        if max(hidden, story) >= RELEVANT_SIMILARITY:
            return JudgeReply(label="no")
        return JudgeReply(label="irrelevant")

    async def grade(self, item: Any, commit: Commit, history: tuple[QA, ...]) -> JudgeReply:
        """correct when enough key facts are covered (or the whole answer is met), else not_yet with a
        count-only hint."""
        if not isinstance(item, SituationPuzzle):
            raise TypeError(f"the {EMBED_JUDGE} judge grades situation puzzles only")
        explanation = (commit.answer or "").strip() or "-"
        covered, facts, whole = self.coverage(item, explanation)
        if (facts and covered / facts >= COVERAGE) or whole >= ANSWER_SIMILARITY:
            return JudgeReply(label="correct")
        return JudgeReply(label="not_yet", hint=f"Your explanation covers {covered} of {facts} key points.")

    async def respond(self, item: Any, message: str) -> JudgeReply:
        """``paper`` protocol: correct when ``message`` would be graded correct, else its answer."""
        graded = await self.grade(item, Commit(answer=message), ())
        if graded.label == "correct":
            return graded
        return await self.answer(item, message, ())
