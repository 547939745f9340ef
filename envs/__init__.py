"""Scenes and datasets: schema, loaders, the engine, the benchmark registry, Gymnasium and PettingZoo envs.

A benchmark is one registered unit (``Benchmark``, ``register_benchmark``); the built-in ones live
in ``lateralgym.envs.benchmarks``. ``LateralEnv`` runs any of them from an ``EpisodeConfig``.
"""

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
    Benchmark,
    DatasetFormat,
    Outcome,
    PromptRequest,
    all_benchmarks,
    benchmark_of,
    get_benchmark,
    load_plugins,
    register_benchmark,
)
from lateralgym.envs._calls import ModelCall
from lateralgym.envs._config import SHIPPED_CONFIGS, EpisodeConfig, RewardConfig
from lateralgym.envs._engine import (
    EpisodeOverError,
    Handled,
    LateralEnv,
    Scene,
    StepRecord,
    item_key,
    usage_text,
)
from lateralgym.envs._errors import ConfigError, DatasetError, LateralGymError
from lateralgym.envs._items import ItemTable, item_table
from lateralgym.envs._jsonl import jsonl_lines, write_jsonl
from lateralgym.envs._judging import QA, Judge, JudgeReply
from lateralgym.envs._loaders import detect_format, formats, load_creativitybench, load_items, load_jsonl
from lateralgym.envs._loaders_official import load_brainteaser, load_lateval, load_splat
from lateralgym.envs._matching import match_name
from lateralgym.envs._samples import SAMPLE_FILES, load_sample_items, load_sample_kb, read_jsonl, sample_path
from lateralgym.envs._schema import (
    SCENES,
    Affordance,
    AffordanceKB,
    CreativityTask,
    Entity,
    EntityJudgement,
    GoldAnswer,
    Item,
    MCQPuzzle,
    MultipleChoiceItem,
    Part,
    PartJudgement,
    PhysicalAttributes,
    ReferenceSolution,
    SamplingFactors,
    SceneItem,
    SituationPuzzle,
    StateAttributes,
    snake,
    spaced,
)
from lateralgym.envs._scoring import ExplorationOutcome, Scored, ScoredEpisode, Scorer, SuccessScorer
from lateralgym.envs._splits import split_tasks
from lateralgym.envs._stats import DatasetStats, dataset_stats
from lateralgym.envs._text import MAX_TEXT, UnicodeText, sanitise, text_space
from lateralgym.envs.benchmarks._mcq import ChoiceOutcome, ChoiceScene, MultipleChoiceBenchmark
from lateralgym.envs.benchmarks.brainteaser import BrainTeaserEnv, BrainTeaserOutcome, BrainTeaserScene
from lateralgym.envs.benchmarks.creativity import CreativityEnv, CreativityOutcome, CreativityScene
from lateralgym.envs.benchmarks.riddlesense import Riddle, load_riddlesense
from lateralgym.envs.benchmarks.splat import SituationScene, SplatEnv, SplatOutcome

__all__ = [
    "ACTION_KINDS",
    "BENCHMARKS",
    "MAX_TEXT",
    "SAMPLE_FILES",
    "SCENES",
    "SHIPPED_CONFIGS",
    "QA",
    "Action",
    "Affordance",
    "AffordanceKB",
    "Ask",
    "Benchmark",
    "BrainTeaserEnv",
    "BrainTeaserOutcome",
    "BrainTeaserScene",
    "ChoiceOutcome",
    "ChoiceScene",
    "Commit",
    "ConfigError",
    "CreativityEnv",
    "CreativityOutcome",
    "CreativityScene",
    "CreativityTask",
    "DatasetError",
    "DatasetFormat",
    "DatasetStats",
    "Entity",
    "EntityJudgement",
    "EpisodeConfig",
    "EpisodeOverError",
    "ExplorationOutcome",
    "GoldAnswer",
    "Handled",
    "Inspect",
    "Invalid",
    "ItemTable",
    "Item",
    "Judge",
    "JudgeReply",
    "LateralEnv",
    "LateralGymError",
    "MCQPuzzle",
    "ModelCall",
    "MultipleChoiceBenchmark",
    "MultipleChoiceItem",
    "Outcome",
    "Part",
    "PartJudgement",
    "PhysicalAttributes",
    "PromptRequest",
    "ReferenceSolution",
    "RewardConfig",
    "Riddle",
    "SamplingFactors",
    "Scene",
    "SceneItem",
    "Scored",
    "ScoredEpisode",
    "Scorer",
    "SituationPuzzle",
    "SituationScene",
    "SplatEnv",
    "SplatOutcome",
    "StateAttributes",
    "StepRecord",
    "SuccessScorer",
    "UnicodeText",
    "action_to_text",
    "all_benchmarks",
    "benchmark_of",
    "dataset_stats",
    "detect_format",
    "formats",
    "get_benchmark",
    "item_key",
    "item_table",
    "jsonl_lines",
    "load_brainteaser",
    "load_creativitybench",
    "load_items",
    "load_jsonl",
    "load_lateval",
    "load_riddlesense",
    "load_sample_items",
    "load_sample_kb",
    "load_splat",
    "match_name",
    "parse_action",
    "parse_choice",
    "read_jsonl",
    "register_benchmark",
    "sample_path",
    "sanitise",
    "snake",
    "spaced",
    "split_tasks",
    "text_space",
    "usage_text",
    "write_jsonl",
]

# Installed packages' benchmarks register last, once every built-in one is in place.
load_plugins()
