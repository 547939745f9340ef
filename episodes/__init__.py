"""Episodes: ``EpisodeSession`` (one episode, the one object every driver steps and the one writer of
its records) and ``EpisodeSessions`` (sessions for servers and trainers, logged as one run), the runner
(one ``RunOptions`` per run), the step log, resume, ``read_run``, replay, the viewer, the papers'
metrics and reports, and rollout export for training LLMs.

Every name loads its module on first use (``_LAZY``), so a command imports only the parts it runs: a
run never loads the viewer, replay, export or the runs compared.
"""

from typing import TYPE_CHECKING

from lateralgym.envs.support import lazy_exports

if TYPE_CHECKING:
    from lateralgym.envs import EpisodeConfig, judge_note
    from lateralgym.episodes._compare import (
        Interval,
        Leaderboard,
        PairedDifference,
        RunRow,
        leaderboard,
        paired_difference,
    )
    from lateralgym.episodes._dryrun import DryRun, RoleEstimate, dry_run
    from lateralgym.episodes._episode_table import episode_rows, episodes_csv, to_pandas
    from lateralgym.episodes._export import (
        EXPORT_FORMATS,
        ExportFormat,
        ExportResult,
        export_run,
        trl_row,
        verifiers_record,
    )
    from lateralgym.episodes._item_view import render_item
    from lateralgym.episodes._judge_tape import JudgeTape, ReplayMismatch, is_offline_judge, taped
    from lateralgym.episodes._leaderboard import compare_markdown, compare_runs
    from lateralgym.episodes._log import (
        JUDGE_RAW_CHARS,
        LOG_SCHEMA_VERSION,
        STEP_LOG,
        EpisodeEnd,
        EpisodeStart,
        LLMBlock,
        LogError,
        LoggedDetail,
        LoggedJudgeReply,
        ModelCall,
        Observation,
        StepLine,
        StepLogWriter,
        Usage,
        observation_text,
        read_log,
    )
    from lateralgym.episodes._manifest import (
        MANIFEST_VERSION,
        Manifest,
        RunRecord,
        package_version,
        read_manifest,
        read_run,
    )
    from lateralgym.episodes._metrics import (
        INVALID_WARNING_RATE,
        DuplicateEpisodes,
        MetricsAccumulator,
        MetricsError,
        Moves,
        MovesTally,
        RunMetrics,
        UsageTally,
        compute_metrics,
        metrics_and_usage,
        metrics_from_log,
        usage_from_log,
    )
    from lateralgym.episodes._options import EpisodeSpec, RunOptions, episode_seed, plan_episodes
    from lateralgym.episodes._play import RunResult
    from lateralgym.episodes._plots import ReportError
    from lateralgym.episodes._replay import Divergence, EpisodeReplay, replay, transcript
    from lateralgym.episodes._report import cost_text, local_roles, print_metrics, render_metrics, write_report
    from lateralgym.episodes._resume import ResumeRequest
    from lateralgym.episodes._rollouts import (
        ExportError,
        Rollout,
        RolloutTurn,
        outcome_fields,
        outcome_succeeded,
        rollouts_from_log,
        turn_from_call,
    )
    from lateralgym.episodes._rundir import RunDirError, RunLockedError
    from lateralgym.episodes._runner import current_run_dir, run, run_async
    from lateralgym.episodes._runs_index import write_runs_index
    from lateralgym.episodes._served import REMOTE_PLAYER, EpisodeSessions
    from lateralgym.episodes._session import EpisodeSession, RecordWriter, SessionStep
    from lateralgym.episodes._viewer import VIEWER_FILE, ViewerError, write_viewer

_LAZY = {  # name -> the module that defines it, imported on first use
    **dict.fromkeys(("EpisodeConfig", "judge_note"), "lateralgym.envs"),
    **dict.fromkeys(
        ("Interval", "Leaderboard", "PairedDifference", "RunRow", "leaderboard", "paired_difference"), "_compare"
    ),
    **dict.fromkeys(("DryRun", "RoleEstimate", "dry_run"), "_dryrun"),
    **dict.fromkeys(("episode_rows", "episodes_csv", "to_pandas"), "_episode_table"),
    **dict.fromkeys(
        ("EXPORT_FORMATS", "ExportFormat", "ExportResult", "export_run", "trl_row", "verifiers_record"), "_export"
    ),
    "render_item": "_item_view",
    **dict.fromkeys(("JudgeTape", "ReplayMismatch", "is_offline_judge", "taped"), "_judge_tape"),
    **dict.fromkeys(("compare_markdown", "compare_runs"), "_leaderboard"),
    **dict.fromkeys(
        (
            "JUDGE_RAW_CHARS",
            "LOG_SCHEMA_VERSION",
            "STEP_LOG",
            "EpisodeEnd",
            "EpisodeStart",
            "LLMBlock",
            "LogError",
            "LoggedDetail",
            "LoggedJudgeReply",
            "ModelCall",
            "Observation",
            "StepLine",
            "StepLogWriter",
            "Usage",
            "observation_text",
            "read_log",
        ),
        "_log",
    ),
    **dict.fromkeys(
        ("MANIFEST_VERSION", "Manifest", "RunRecord", "package_version", "read_manifest", "read_run"), "_manifest"
    ),
    **dict.fromkeys(
        (
            "DuplicateEpisodes",
            "MetricsAccumulator",
            "MetricsError",
            "RunMetrics",
            "compute_metrics",
            "metrics_from_log",
        ),
        "_metrics",
    ),
    **dict.fromkeys(("INVALID_WARNING_RATE", "Moves", "MovesTally"), "_metrics"),
    "RunOptions": "_options",
    **dict.fromkeys(("EpisodeSpec", "episode_seed", "plan_episodes"), "_options"),
    "RunResult": "_play",
    "ReportError": "_plots",
    **dict.fromkeys(("Divergence", "EpisodeReplay", "replay", "transcript"), "_replay"),
    **dict.fromkeys(("print_metrics", "render_metrics", "write_report"), "_report"),
    **dict.fromkeys(("cost_text", "local_roles"), "_report"),
    "ResumeRequest": "_resume",
    **dict.fromkeys(
        (
            "ExportError",
            "Rollout",
            "RolloutTurn",
            "outcome_fields",
            "outcome_succeeded",
            "rollouts_from_log",
            "turn_from_call",
        ),
        "_rollouts",
    ),
    **dict.fromkeys(("RunDirError", "RunLockedError"), "_rundir"),
    **dict.fromkeys(("current_run_dir", "run", "run_async"), "_runner"),
    "write_runs_index": "_runs_index",
    **dict.fromkeys(("REMOTE_PLAYER", "EpisodeSessions"), "_served"),
    **dict.fromkeys(("EpisodeSession", "RecordWriter", "SessionStep"), "_session"),
    **dict.fromkeys(("UsageTally", "metrics_and_usage", "usage_from_log"), "_metrics"),
    **dict.fromkeys(("VIEWER_FILE", "ViewerError", "write_viewer"), "_viewer"),
}

if not TYPE_CHECKING:  # mypy reads the imports above: no fallback types a misspelt name as Any
    __getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "EpisodeSessions",
    "REMOTE_PLAYER",
    "package_version",
    "EpisodeSession",
    "RecordWriter",
    "SessionStep",
    "JudgeTape",
    "LoggedDetail",
    "LoggedJudgeReply",
    "ReplayMismatch",
    "taped",
    "is_offline_judge",
    "STEP_LOG",
    "observation_text",
    "outcome_fields",
    "outcome_succeeded",
    "turn_from_call",
    "EXPORT_FORMATS",
    "ExportError",
    "ExportFormat",
    "ExportResult",
    "Rollout",
    "RolloutTurn",
    "export_run",
    "rollouts_from_log",
    "trl_row",
    "verifiers_record",
    "JUDGE_RAW_CHARS",
    "LOG_SCHEMA_VERSION",
    "Divergence",
    "DuplicateEpisodes",
    "EpisodeConfig",
    "EpisodeEnd",
    "EpisodeReplay",
    "EpisodeSpec",
    "MANIFEST_VERSION",
    "Manifest",
    "ResumeRequest",
    "RunDirError",
    "RunLockedError",
    "RunOptions",
    "RunRecord",
    "current_run_dir",
    "judge_note",
    "read_run",
    "render_item",
    "ModelCall",
    "Usage",
    "episode_seed",
    "read_manifest",
    "EpisodeStart",
    "LLMBlock",
    "LogError",
    "MetricsAccumulator",
    "MetricsError",
    "INVALID_WARNING_RATE",
    "Moves",
    "MovesTally",
    "Observation",
    "ReportError",
    "RunMetrics",
    "RunResult",
    "StepLine",
    "StepLogWriter",
    "compare_markdown",
    "compare_runs",
    "episode_rows",
    "episodes_csv",
    "Interval",
    "Leaderboard",
    "leaderboard",
    "PairedDifference",
    "paired_difference",
    "RunRow",
    "to_pandas",
    "DryRun",
    "RoleEstimate",
    "dry_run",
    "compute_metrics",
    "metrics_and_usage",
    "usage_from_log",
    "UsageTally",
    "metrics_from_log",
    "plan_episodes",
    "print_metrics",
    "cost_text",
    "local_roles",
    "read_log",
    "render_metrics",
    "replay",
    "run",
    "run_async",
    "transcript",
    "write_report",
    "VIEWER_FILE",
    "ViewerError",
    "write_viewer",
    "write_runs_index",
]
