"""The engine: the benchmark registry, configs, the Gymnasium env, judges' protocol, datasets and scoring.

A benchmark is one registered unit (``Benchmark``, ``register_benchmark``); the built-in ones live
in ``lateralgym.envs.benchmarks``, each in its own folder with everything named after it, and
nothing here names one. ``LateralEnv`` runs any of them from an ``EpisodeConfig``. Helpers for
writing a benchmark's loaders are in ``lateralgym.envs.records``, the conformance checks in
``lateralgym.envs.testing``, and what the other layers use of the engine's plumbing in
``lateralgym.envs.support``. Each name loads its module on first use (``_LAZY``).
"""

from typing import TYPE_CHECKING

from lateralgym.envs.support import lazy_exports

if TYPE_CHECKING:
    from lateralgym.envs._actions import (
        ACTION_KINDS,
        Action,
        Ask,
        Commit,
        Inspect,
        Invalid,
        action_to_text,
        parse_action,
        parse_choice,
    )
    from lateralgym.envs._benchmark import (
        BENCHMARKS,
        REGISTRATION_HOOKS,
        Benchmark,
        DatasetFormat,
        JudgeCase,
        JudgementFormat,
        NoOptions,
        Outcome,
        PromptRequest,
        StatBlock,
        ViewSection,
        all_benchmarks,
        benchmark_of,
        get_benchmark,
        import_reference,
        load_benchmark,
        owner_of,
        register_benchmark,
        trust_recorded_imports,
    )
    from lateralgym.envs._calls import ModelCall
    from lateralgym.envs._config import SHIPPED_CONFIGS, EpisodeConfig, RewardConfig
    from lateralgym.envs._curriculum import (
        CURRICULA,
        Curriculum,
        CurriculumDraw,
        CurriculumEnv,
        CurriculumError,
        curriculum_for,
    )
    from lateralgym.envs._engine import (
        EpisodeOverError,
        Handled,
        LateralEnv,
        ProcessReward,
        Scene,
        StepRecord,
        item_key,
        usage_text,
    )
    from lateralgym.envs._errors import (
        ConfigError,
        DatasetError,
        DatasetTooLarge,
        LateralGymError,
        PlayerQuit,
        UnknownDatasetFormat,
        closest_name,
        did_you_mean,
    )
    from lateralgym.envs._figures import BarFigure, BarPanel, breakdown_value, repeats_note
    from lateralgym.envs._grammar import ActionGrammar, FreeText, JsonForm, LineForm, OneOf, final_turn
    from lateralgym.envs._items import Count, Flag, FrozenRecord, ItemTable, Text, item_table, load_config_items
    from lateralgym.envs._jsonl import SharedList, jsonl_lines, write_jsonl
    from lateralgym.envs._judging import (
        ADVERSARIAL_QUESTIONS,
        QA,
        AnswerLabel,
        Judge,
        JudgeLabelError,
        JudgeReply,
        UnclearLabel,
        judge_note,
    )
    from lateralgym.envs._loaders import detect_format, formats, iter_items, load_items, load_jsonl
    from lateralgym.envs._matching import match_name, snake, spaced
    from lateralgym.envs._parts import DataPart, JudgingPart, LeakPart, MetricsPart, PolicyPart, PromptPart
    from lateralgym.envs._pass_k import is_pass_key, pass_at_k, pass_hat_k, pass_k_rates, pass_k_terms, pass_key_order
    from lateralgym.envs._process import QuestionRewards, RewardMode
    from lateralgym.envs._samples import load_sample_items, read_jsonl, sample_path
    from lateralgym.envs._scoring import ExplorationOutcome, ItemTerms, Scored, ScoredEpisode, Scorer, SuccessScorer
    from lateralgym.envs._splits import Split, split_items
    from lateralgym.envs._stats import DatasetStats, dataset_stats
    from lateralgym.envs._text import MAX_TEXT, UnicodeText, sanitise, text_space

_LAZY = {  # name -> the module that defines it, imported on first use
    **dict.fromkeys(
        (
            "ACTION_KINDS",
            "Action",
            "Ask",
            "Commit",
            "Inspect",
            "Invalid",
            "action_to_text",
            "parse_action",
            "parse_choice",
        ),
        "_actions",
    ),
    **dict.fromkeys(
        (
            "BENCHMARKS",
            "REGISTRATION_HOOKS",
            "Benchmark",
            "DatasetFormat",
            "JudgeCase",
            "JudgementFormat",
            "NoOptions",
            "Outcome",
            "PromptRequest",
            "StatBlock",
            "ViewSection",
            "all_benchmarks",
            "benchmark_of",
            "get_benchmark",
            "import_reference",
            "load_benchmark",
            "owner_of",
            "register_benchmark",
            "trust_recorded_imports",
        ),
        "_benchmark",
    ),
    "ModelCall": "_calls",
    **dict.fromkeys(("SHIPPED_CONFIGS", "EpisodeConfig", "RewardConfig"), "_config"),
    "load_config_items": "_items",
    **dict.fromkeys(
        ("EpisodeOverError", "Handled", "LateralEnv", "ProcessReward", "Scene", "StepRecord", "item_key", "usage_text"),
        "_engine",
    ),
    **dict.fromkeys(
        (
            "ConfigError",
            "DatasetError",
            "DatasetTooLarge",
            "LateralGymError",
            "PlayerQuit",
            "UnknownDatasetFormat",
            "closest_name",
            "did_you_mean",
        ),
        "_errors",
    ),
    **dict.fromkeys(("Count", "Flag", "FrozenRecord", "Text"), "_items"),
    **dict.fromkeys(("snake", "spaced"), "_matching"),
    **dict.fromkeys(("BarFigure", "BarPanel", "breakdown_value", "repeats_note"), "_figures"),
    **dict.fromkeys(("ActionGrammar", "FreeText", "JsonForm", "LineForm", "OneOf", "final_turn"), "_grammar"),
    **dict.fromkeys(("ItemTable", "item_table"), "_items"),
    **dict.fromkeys(("SharedList", "jsonl_lines", "write_jsonl"), "_jsonl"),
    **dict.fromkeys(
        (
            "ADVERSARIAL_QUESTIONS",
            "QA",
            "AnswerLabel",
            "Judge",
            "JudgeLabelError",
            "JudgeReply",
            "UnclearLabel",
            "judge_note",
        ),
        "_judging",
    ),
    **dict.fromkeys(("detect_format", "formats", "iter_items", "load_items", "load_jsonl"), "_loaders"),
    "match_name": "_matching",
    **dict.fromkeys(
        ("is_pass_key", "pass_at_k", "pass_hat_k", "pass_k_rates", "pass_k_terms", "pass_key_order"), "_pass_k"
    ),
    **dict.fromkeys(("QuestionRewards", "RewardMode"), "_process"),
    **dict.fromkeys(("DataPart", "JudgingPart", "LeakPart", "MetricsPart", "PolicyPart", "PromptPart"), "_parts"),
    **dict.fromkeys(("load_sample_items", "read_jsonl", "sample_path"), "_samples"),
    **dict.fromkeys(
        ("ExplorationOutcome", "ItemTerms", "Scored", "ScoredEpisode", "Scorer", "SuccessScorer"), "_scoring"
    ),
    **dict.fromkeys(("Split", "split_items"), "_splits"),
    **dict.fromkeys(
        ("CURRICULA", "Curriculum", "CurriculumDraw", "CurriculumEnv", "CurriculumError", "curriculum_for"),
        "_curriculum",
    ),
    **dict.fromkeys(("DatasetStats", "dataset_stats"), "_stats"),
    **dict.fromkeys(("MAX_TEXT", "UnicodeText", "sanitise", "text_space"), "_text"),
}

if not TYPE_CHECKING:  # mypy reads the imports above: no fallback types a misspelt name as Any
    __getattr__ = lazy_exports(__name__, _LAZY)

__all__ = [
    "ACTION_KINDS",
    "CURRICULA",
    "Curriculum",
    "CurriculumDraw",
    "CurriculumEnv",
    "CurriculumError",
    "curriculum_for",
    "ADVERSARIAL_QUESTIONS",
    "BENCHMARKS",
    "REGISTRATION_HOOKS",
    "MAX_TEXT",
    "SHIPPED_CONFIGS",
    "QA",
    "Action",
    "ActionGrammar",
    "AnswerLabel",
    "Ask",
    "BarFigure",
    "BarPanel",
    "Benchmark",
    "Commit",
    "ConfigError",
    "Count",
    "DatasetError",
    "DatasetTooLarge",
    "DataPart",
    "DatasetFormat",
    "DatasetStats",
    "EpisodeConfig",
    "EpisodeOverError",
    "ExplorationOutcome",
    "Flag",
    "FreeText",
    "FrozenRecord",
    "Handled",
    "Inspect",
    "Invalid",
    "JudgeCase",
    "JudgementFormat",
    "JudgingPart",
    "LeakPart",
    "MetricsPart",
    "PolicyPart",
    "PromptPart",
    "ItemTable",
    "Judge",
    "JudgeLabelError",
    "JudgeReply",
    "JsonForm",
    "LateralEnv",
    "LineForm",
    "LateralGymError",
    "ModelCall",
    "NoOptions",
    "OneOf",
    "Outcome",
    "PlayerQuit",
    "ProcessReward",
    "PromptRequest",
    "QuestionRewards",
    "RewardConfig",
    "RewardMode",
    "Scene",
    "Scored",
    "ItemTerms",
    "ScoredEpisode",
    "Scorer",
    "SharedList",
    "Split",
    "StatBlock",
    "StepRecord",
    "SuccessScorer",
    "Text",
    "UnclearLabel",
    "UnicodeText",
    "UnknownDatasetFormat",
    "ViewSection",
    "action_to_text",
    "all_benchmarks",
    "benchmark_of",
    "breakdown_value",
    "closest_name",
    "dataset_stats",
    "detect_format",
    "did_you_mean",
    "final_turn",
    "formats",
    "get_benchmark",
    "import_reference",
    "item_key",
    "item_table",
    "jsonl_lines",
    "load_benchmark",
    "load_config_items",
    "iter_items",
    "judge_note",
    "load_items",
    "load_jsonl",
    "load_sample_items",
    "match_name",
    "owner_of",
    "parse_action",
    "parse_choice",
    "pass_at_k",
    "pass_hat_k",
    "pass_k_rates",
    "pass_k_terms",
    "pass_key_order",
    "is_pass_key",
    "read_jsonl",
    "register_benchmark",
    "trust_recorded_imports",
    "repeats_note",
    "sample_path",
    "sanitise",
    "snake",
    "spaced",
    "split_items",
    "text_space",
    "usage_text",
    "write_jsonl",
]
