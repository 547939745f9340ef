"""The CreativityBench data engine (paper §4, App. C–D): build an affordance KB and tasks with any LLM.

Shared infrastructure every pipeline builds on:

- ``CheckpointStore``: append-only JSONL records per stage, so a killed build resumes and a rerun is free.
- ``ask_json`` / ``StageCounters``: one checkpointed, validated JSON question through the one client
  layer, re-asked with the validation error when the reply does not fit.
- ``make_embedder`` / ``Embedder``: a lexical fallback, a local sentence-transformers model, or any
  OpenAI-compatible ``/v1/embeddings`` endpoint.

The task sampling pipeline's public names (``databuild/_tasks*.py``) are re-exported here too.
"""

from lateralgym.databuild._embed import (
    EMBED_INSTALL_HINT,
    Embedder,
    LexicalEmbedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    cosine_matrix,
    make_embedder,
    shipped_minilm_path,
)
from lateralgym.databuild._errors import DataBuildError
from lateralgym.databuild._llm import StageCounters, ask_json, extract_json_object, validation_feedback
from lateralgym.databuild._store import CheckpointStore

__all__ = [
    "EMBED_INSTALL_HINT",
    "CheckpointStore",
    "DataBuildError",
    "Embedder",
    "LexicalEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "StageCounters",
    "ask_json",
    "cosine_matrix",
    "extract_json_object",
    "make_embedder",
    "shipped_minilm_path",
    "validation_feedback",
]
