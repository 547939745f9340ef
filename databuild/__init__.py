"""The CreativityBench data engine (paper §4, App. C–D): build an affordance KB and tasks with any LLM.

Shared infrastructure every pipeline builds on:

- ``CheckpointStore``: append-only JSONL records per stage, so a killed build resumes and a rerun is free.
- ``ask_json`` / ``StageCounters``: one checkpointed, validated JSON question through the one client
  layer, re-asked with the validation error when the reply does not fit (the reasons counted);
  opt-in constrained output sends the stage model's JSON schema in ``response_format``
  (``response_format_for``, ``JsonForm``: ``--constrained-json`` on both build commands).
- ``make_embedder`` / ``Embedder``: a lexical fallback, a local sentence-transformers model, or any
  OpenAI-compatible ``/v1/embeddings`` endpoint; ``embed_cached`` checkpoints vectors.

The KB annotation pipeline (paper §4.1, App. C; ``lateralgym kb build``): ``KBBuildConfig``,
``build_kb`` / ``run_kb_build``, ``plan_kb_build`` (the dry run) and ``kb_stats`` (Table 2 counts).

The task sampling pipeline's public API (``databuild/_tasks*.py``, ``_official.py``) is re-exported here too:
the names below, as its engineer chose them; its modules' other names (CLI helpers, prompt builders,
stage names) are internal.
"""

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
from lateralgym.databuild._kb_build import KB_FILE, KB_STAGES, KBBuildConfig, KBBuildResult, build_kb, run_kb_build
from lateralgym.databuild._kb_dryrun import KBPlan, StagePlan, plan_kb_build
from lateralgym.databuild._kb_stats import KBStats, SceneCounts, base_entity_id, kb_stats, read_kb
from lateralgym.databuild._llm import (
    JsonForm,
    StageCounters,
    ask_json,
    extract_json_object,
    response_format_for,
    validation_feedback,
)
from lateralgym.databuild._official import official_task, write_official
from lateralgym.databuild._progress import StageProgress, counters_table, invalid_reasons
from lateralgym.databuild._store import CheckpointStore
from lateralgym.databuild._tasks_models import GoldRef, PartVerdict, PartVerdicts, TaskBuildConfig, TaskSeed, TaskText
from lateralgym.databuild._tasks_pipeline import TaskBuild, assign_splits, build_tasks
from lateralgym.databuild._tasks_rules import compare_part
from lateralgym.databuild._tasks_stats import empty_cells, stats_tables

__all__ = [
    "EMBED_INSTALL_HINT",
    "KB_FILE",
    "KB_STAGES",
    "CheckpointStore",
    "DataBuildError",
    "Embedder",
    "GoldRef",
    "JsonForm",
    "KBBuildConfig",
    "KBBuildResult",
    "KBPlan",
    "KBStats",
    "LexicalEmbedder",
    "OpenAIEmbedder",
    "PartVerdict",
    "PartVerdicts",
    "SceneCounts",
    "SentenceTransformerEmbedder",
    "StageCounters",
    "StagePlan",
    "StageProgress",
    "TaskBuild",
    "TaskBuildConfig",
    "TaskSeed",
    "TaskText",
    "ask_json",
    "assign_splits",
    "base_entity_id",
    "build_kb",
    "build_tasks",
    "compare_part",
    "cosine_matrix",
    "counters_table",
    "embed_cached",
    "empty_cells",
    "extract_json_object",
    "invalid_reasons",
    "kb_stats",
    "make_embedder",
    "official_task",
    "plan_kb_build",
    "read_kb",
    "response_format_for",
    "run_kb_build",
    "shipped_minilm_path",
    "stats_tables",
    "validation_feedback",
    "write_official",
]
