"""The data engine: what every pipeline that builds benchmark data with an LLM builds on.

- ``CheckpointStore``: append-only JSONL records per stage, so a killed build resumes and a rerun is free.
- ``ask_json`` / ``StageCounters``: one checkpointed, validated JSON question through the one client
  layer, re-asked with the validation error when the reply does not fit (the reasons counted);
  opt-in constrained output sends the stage model's JSON schema in ``response_format``
  (``response_format_for``, ``JsonForm``).
- ``make_embedder`` / ``Embedder``: a lexical fallback, a local sentence-transformers model, or any
  OpenAI-compatible ``/v1/embeddings`` endpoint; ``embed_cached`` checkpoints vectors.
- ``StageProgress``, ``counters_table``, ``invalid_reasons``: progress and the counts a build prints.

A benchmark's own pipelines live in its folder (a ``databuild`` package beside its commands).
"""

from lateralgym.databuild._cost import estimate_cost_usd, format_cost
from lateralgym.databuild._embed import (
    EMBED_INSTALL_HINT,
    Embedder,
    LexicalEmbedder,
    OpenAIEmbedder,
    SentenceTransformerEmbedder,
    cosine_matrix,
    embed_cached,
    make_embedder,
    shipped_minilm_path,
)
from lateralgym.databuild._errors import DataBuildError
from lateralgym.databuild._llm import (
    DEFAULT_REASK_TEMPERATURE,
    JsonForm,
    StageCounters,
    ask_json,
    extract_json_object,
    response_format_for,
    validation_feedback,
)
from lateralgym.databuild._progress import StageProgress, counters_table, invalid_reasons
from lateralgym.databuild._store import CheckpointStore

__all__ = [
    "DEFAULT_REASK_TEMPERATURE",
    "EMBED_INSTALL_HINT",
    "CheckpointStore",
    "DataBuildError",
    "Embedder",
    "JsonForm",
    "LexicalEmbedder",
    "OpenAIEmbedder",
    "SentenceTransformerEmbedder",
    "StageCounters",
    "StageProgress",
    "ask_json",
    "cosine_matrix",
    "counters_table",
    "embed_cached",
    "estimate_cost_usd",
    "extract_json_object",
    "format_cost",
    "invalid_reasons",
    "make_embedder",
    "response_format_for",
    "shipped_minilm_path",
    "validation_feedback",
]
