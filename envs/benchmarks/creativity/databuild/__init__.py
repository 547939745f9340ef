"""CreativityBench's data pipelines (paper §4, App. C–D): build an affordance KB and tasks with any LLM.

They run on the data engine (``lateralgym.databuild``: checkpoints, validated JSON questions,
embedders). The KB annotation pipeline (paper §4.1, App. C; ``lateralgym kb build``):
``KBBuildConfig``, ``build_kb`` / ``run_kb_build``, ``plan_kb_build`` (the dry run) and ``kb_stats``
(Table 2 counts). The task sampling pipeline (paper §4.2, App. D; ``lateralgym tasks build``):
``TaskBuildConfig``, ``build_tasks`` and the official-format writer. Their modules' other names
(prompt builders, stage names) are internal.
"""

from lateralgym.envs.benchmarks.creativity.databuild._kb_build import (
    KB_FILE,
    KB_STAGES,
    KBBuildConfig,
    KBBuildResult,
    build_kb,
    run_kb_build,
)
from lateralgym.envs.benchmarks.creativity.databuild._kb_dryrun import KBPlan, StagePlan, plan_kb_build
from lateralgym.envs.benchmarks.creativity.databuild._kb_stats import (
    KBStats,
    SceneCounts,
    base_entity_id,
    kb_stats,
    read_kb,
)
from lateralgym.envs.benchmarks.creativity.databuild._official import official_task, write_official
from lateralgym.envs.benchmarks.creativity.databuild._tasks_models import (
    GoldRef,
    PartVerdict,
    PartVerdicts,
    TaskBuildConfig,
    TaskSeed,
    TaskText,
)
from lateralgym.envs.benchmarks.creativity.databuild._tasks_pipeline import TaskBuild, assign_splits, build_tasks
from lateralgym.envs.benchmarks.creativity.databuild._tasks_rules import compare_part
from lateralgym.envs.benchmarks.creativity.databuild._tasks_stats import empty_cells, stats_tables

__all__ = [
    "KB_FILE",
    "KB_STAGES",
    "GoldRef",
    "KBBuildConfig",
    "KBBuildResult",
    "KBPlan",
    "KBStats",
    "PartVerdict",
    "PartVerdicts",
    "SceneCounts",
    "StagePlan",
    "TaskBuild",
    "TaskBuildConfig",
    "TaskSeed",
    "TaskText",
    "assign_splits",
    "base_entity_id",
    "build_kb",
    "build_tasks",
    "compare_part",
    "empty_cells",
    "kb_stats",
    "official_task",
    "plan_kb_build",
    "read_kb",
    "run_kb_build",
    "stats_tables",
    "write_official",
]
