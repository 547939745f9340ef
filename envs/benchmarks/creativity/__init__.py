"""CreativityBench: find an entity part that can be repurposed to solve a household problem.

## Description
Implements the static, CoT and interactive modes of CreativityBench (affordance-based tool
repurposing), plus LateralGym's own ``explore`` mode. Each episode is one ``CreativityTask``: a
first-person problem in one of eight household scenes, the gold entity among 3-12 distractors, and
a hidden gold (entity, part, affordance) with a four-step reference solution. It feeds the metrics
gold correct, entity correct, hallucinated entity, (interactive / explore) turns, inspections and
gold-inspection rate, broken down by cluster size band, gold level, distractor count and
distractor similarity; with an LLM judge also the paper's judged quality (Table 3), wrong-answer
scores (Tables 5-6) and failure attribution (Figure 11).

## Action Space
``UnicodeText``: ``inspect: <entity or item>`` (interactive, explore), ``ask: <yes/no question>``
(explore only, answered by the KB judge from the entities' attributes) and ``commit: <entity> |
<part> | <how to use>``; or an action's JSON / ``lateralgym.envs.Action``. Unknown names,
disallowed actions and garbage are answered with a message and count as a turn.

## Observation Space
``Dict``: ``text`` (what a person or LLM reads), ``turn``, ``entity_mask`` (1 for each entity
slot in use, in scene order) and ``inspected_mask`` (1 for inspected entities).

## Starting State
``static``/``cot``: the task, the environment, every entity with every part's physical and state
attributes, and the scene items. ``interactive`` (the paper's protocol, §5 and App. E-F): the
task, the first-person environment text and one shuffled list of the entities and interactable
scene items, any of which can be inspected; every reply ends with the turns remaining; no yes/no
questions. ``explore``: the task, the entity names and the scene items; entities can be
inspected and yes/no questions asked. Entities appear in an order drawn per episode from the
reset seed (``options.entity_order``: ``shuffled``; ``official`` lists the gold first as the
official static and CoT prompts show a release; ``file`` keeps the dataset's order).

## Rewards
``rewards.correct`` when entity and part are the gold ones, ``rewards.entity_only`` (its own) when only
the entity is; plus ``rewards.step`` per turn, ``rewards.invalid`` per invalid action and
``rewards.gold_inspection`` at the end of an episode in which the gold entity was inspected (paid
then, not on the inspecting step, which would mark the gold).

## Episode End
Terminated on a valid commit, or (static, one turn) when the turn is spent on an invalid action;
truncated after ``max_turns`` turns (interactive: 15, explore: 20).

## Arguments
``config`` (an ``EpisodeConfig``), ``items`` (tasks; default the sample data or
``config.dataset``: the release's task JSON, or our JSONL, whose compact form, written by
``lateralgym.envs.write_jsonl``, holds each entity once as an ``{"entity": {...}}`` line and tasks
listing entity ids; another env's ``items`` is shared without work per task), ``judge`` (default
from ``config.judge``), ``render_mode`` (``"ansi"``). Options (``CreativityOptions``, the config's
``options:`` block): ``scoring`` (``official``, ``paper`` or ``strict``; every answer is graded
under all three and the metrics report the others beside the run's own), ``entity_order``
(``shuffled``, ``official``, ``file``; ``shuffle_entities: false`` is ``file``), ``judging``
(``paper`` or ``lateralgym``: what an LLM judge measures) and ``attribution_fraction``,
``max_entities``, ``max_parts``; its own rewards ``entity_only`` and ``gold_inspection``.

## Also in this folder
The data model (knowledge base and task), the release reader (``creativitybench`` format), the
offline ``exact`` and ``kb`` judges, the LLM judge (``LLMCreativityJudge``, imported on first use),
the train / test split by gold entity, the RL wrappers and trainers (``rl``: ``DiscreteCreativity``,
REINFORCE, MaskablePPO), the data pipelines that build a KB and tasks with an LLM (``databuild``)
and their commands (``kb``, ``tasks``, ``train ppo``), the report's figures and ``data stats`` counts.

## Version History
* Additions within v1 / v2 (observations, rewards and the default ``paper`` correctness unchanged):
  ``scoring: official`` (the official rule, quirks
  included) beside ``paper`` and ``strict``, each answer graded under all three; ``entity_order``;
  ``judging: paper`` (the default) asks the gold comparison on the paper's 0/1/2 scale and
  categorises failures in a call of its own on a 10 % sample, ``judging: lateralgym`` keeps the
  earlier instruments. With ``scoring: official`` a commit naming only an entity or only a part is
  graded (the official judge grades it) instead of refused.
* Interactive v2: the paper's interactive protocol (15 turns, environment text, entities and
  interactable items inspectable, a countdown ending every reply, no ``ask``); v1's protocol
  lives on as ``lateralgym/Creativity-Explore-v1`` (config ``creativity-explore``, mode ``explore``).
* v1: the paper's scoring by default (``options.scoring: paper``, read from a top-level ``scoring:``
  in older configs: entity resolved by word overlap, exact
  part; unparsed, errored and timed-out episodes leave the denominator; ``strict`` keeps v0's
  rules); three cluster-size bands; a typed ``CreativityOutcome`` in ``info["outcome"]``; Unicode
  observation text (v0 replaced characters outside a fixed set by ``?``).
* v0: initial release.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from lateralgym.envs._actions import Ask, Commit, Inspect
from lateralgym.envs._benchmark import Benchmark, DatasetFormat, StatBlock, register_benchmark
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import LateralEnv
from lateralgym.envs._judging import ADVERSARIAL_QUESTIONS
from lateralgym.envs._parts import DataPart, JudgingPart, LeakPart, MetricsPart
from lateralgym.envs._splits import Split
from lateralgym.envs.benchmarks.creativity import _figures
from lateralgym.envs.benchmarks.creativity._judged import (
    CONDITION_CRITERIA,
    FAILURE_CATEGORIES,
    PAPER_FAILURES,
    RUBRIC_CRITERIA,
    WRONG_CRITERIA,
    CreativityJudgement,
    FailureCode,
    PaperFailure,
    judged_tables,
    rescale,
)
from lateralgym.envs.benchmarks.creativity._judges import (
    AnswerFacts,
    ExactMatchJudge,
    KBJudge,
    ScoringJudge,
    answer_facts,
    grade_creativity,
    grade_creativity_by,
    grade_creativity_official,
    grades_by_rule,
)
from lateralgym.envs.benchmarks.creativity._loaders import (
    GOLD_MARKER,
    RELEASE_KEYS,
    SIMILARITY_TIERS,
    is_seed_entity,
    load_creativitybench,
    load_sample_kb,
)
from lateralgym.envs.benchmarks.creativity._metrics import CreativityScorer
from lateralgym.envs.benchmarks.creativity._options import (
    REWARD_FIELDS,
    SCORINGS,
    CreativityOptions,
    EntityOrder,
    Judging,
    Scoring,
)
from lateralgym.envs.benchmarks.creativity._player import CreativityPolicies, CreativityPrompts
from lateralgym.envs.benchmarks.creativity._scene import CreativityOutcome, CreativityScene
from lateralgym.envs.benchmarks.creativity._schema import (
    SCENES,
    Affordance,
    AffordanceKB,
    CreativityTask,
    Entity,
    EntityJudgement,
    GoldAnswer,
    Part,
    PartJudgement,
    PhysicalAttributes,
    ReferenceSolution,
    SamplingFactors,
    SceneItem,
    StateAttributes,
)
from lateralgym.envs.benchmarks.creativity._splits import split_tasks, task_split
from lateralgym.envs.benchmarks.creativity._stats import creativity_stats
from lateralgym.envs.support import lazy_exports

if TYPE_CHECKING:
    from lateralgym.envs._figures import BarFigure, MetricsView

_LAZY = {"LLMCreativityJudge": "_llm_judge"}
"""Names loaded on first use (they need the LLM client); name -> the module of this folder."""

__all__ = [
    "CONDITION_CRITERIA",
    "FAILURE_CATEGORIES",
    "GOLD_MARKER",
    "PAPER_FAILURES",
    "RUBRIC_CRITERIA",
    "SCENES",
    "SCORINGS",
    "SIMILARITY_TIERS",
    "WRONG_CRITERIA",
    "Affordance",
    "AffordanceKB",
    "AnswerFacts",
    "Creativity",
    "CreativityEnv",
    "CreativityJudgement",
    "CreativityOptions",
    "CreativityOutcome",
    "CreativityScene",
    "CreativityScorer",
    "CreativityTask",
    "Entity",
    "EntityJudgement",
    "EntityOrder",
    "ExactMatchJudge",
    "FailureCode",
    "GoldAnswer",
    "Judging",
    "KBJudge",
    "Part",
    "PaperFailure",
    "PartJudgement",
    "PhysicalAttributes",
    "ReferenceSolution",
    "SamplingFactors",
    "SceneItem",
    "Scoring",
    "ScoringJudge",
    "StateAttributes",
    "answer_facts",
    "grade_creativity",
    "grade_creativity_by",
    "grade_creativity_official",
    "grades_by_rule",
    "judged_tables",
    "load_creativitybench",
    "load_sample_kb",
    "rescale",
    "split_tasks",
    "task_split",
    *_LAZY,
]


__getattr__ = lazy_exports(__name__, _LAZY)  # the LLM-facing names load on first use


def _is_release(path: Path, record: Any) -> bool:
    return isinstance(record, dict) and ("task_id" in record or "golds" in record or is_seed_entity(record))


class CreativityData(DataPart[CreativityTask]):
    """The sample tasks and knowledge base, the release's task JSON, splits by gold entity."""

    sample_file = "creativity_tasks.jsonl.gz"
    sample_data: ClassVar[dict[str, str]] = {
        "kb": "affordance_kb.jsonl.gz",
        # the first sample (137 entities, 439 tasks over 84 task texts): earlier figures were measured on it
        "creativity-v1": "creativity_tasks_v1.jsonl.gz",
    }
    formats = (
        DatasetFormat(
            "creativitybench",
            "CreativityBench task JSON (a list of tasks)",
            _is_release,
            load_creativitybench,
            keys=RELEASE_KEYS,
        ),
    )
    jsonl_keys = frozenset({"gold"})
    records = ((frozenset({"parts"}), Entity),)

    def stats(self, records: Sequence[Any]) -> StatBlock:
        return creativity_stats(records)

    def stream_stats(self, records: Iterator[Any]) -> StatBlock:
        return creativity_stats(records)  # one pass, keeping no task

    def split_of(self, item: CreativityTask) -> Split:
        """By gold entity (``task_split``), so a policy never trains on a test gold."""
        return task_split(item)

    def strata(self, item: CreativityTask) -> dict[str, Hashable]:
        """Scenes, then gold entities within a scene (a gold's tasks are variants of a few problems)."""
        return {"scene": item.scene, "gold entity": item.gold.entity}

    def level_of(self, item: CreativityTask) -> str:
        """The paper's difficulty tiers together: the gold's cluster band and the distractor count."""
        return f"{item.factors.cluster_band}/{item.factors.distractor_count} distractors"

    def problem_of(self, item: CreativityTask) -> str:
        """The task text: its distractor variants share it (and ``rl.evaluation.task_interval`` groups by it)."""
        return item.task


class CreativityJudging(JudgingPart):
    """The exact-match and knowledge-base judges, and its LLM judge."""

    offline_judges: ClassVar[Mapping[str, Any]] = {"exact": ExactMatchJudge, "kb": KBJudge}
    default_judge = "exact"
    llm_judge = "lateralgym.envs.benchmarks.creativity._llm_judge:LLMCreativityJudge"


class CreativityMetrics(MetricsPart[CreativityOutcome]):
    """Gold and entity rates under each scoring rule, exploration, and the rewards of its own."""

    reward_fields = REWARD_FIELDS
    headline = (
        "gold_correct_rate",
        "entity_correct_rate",
        "official_gold_correct_rate",
        "official_entity_correct_rate",
        "paper_gold_correct_rate",
        "strict_gold_correct_rate",
    )
    """The run's own rates first, then the other rules' (a run reports whichever are not its own)."""

    def scorer(self, *, mode: str | None, max_turns: int) -> CreativityScorer:
        return CreativityScorer(mode=mode, max_turns=max_turns)

    def figures(self, metrics: MetricsView) -> list[BarFigure]:
        return _figures.figures(metrics)


class CreativityLeaks(LeakPart[CreativityTask]):
    """The release's gold marker, and inspections and questions aimed at the gold."""

    leak_markers = (GOLD_MARKER,)
    phrase_leak_check = False  # entity and item descriptions share words with the reference steps

    def probe_actions(self, item: CreativityTask, config: EpisodeConfig) -> Iterable[Any]:
        if "inspect" in config.allowed_actions:
            yield from (Inspect(entity=e.name) for e in item.entities)
            yield from (Inspect(entity=i.name) for i in item.items)
            yield Inspect(entity="the gold entity")
        if "ask" in config.allowed_actions:
            yield from (Ask(question=q) for q in ADVERSARIAL_QUESTIONS)
            yield Ask(question=f"Is the {item.gold.entity} the answer?")
        yield Commit(entity="nothing here", part="none", how_to_use="guess")


@register_benchmark
class Creativity(Benchmark[CreativityTask, CreativityOutcome]):
    """CreativityBench (see the module docstring, the env card)."""

    name = "creativity"
    title = "CreativityBench (affordance-based tool repurposing)"
    item_type = CreativityTask
    outcome_type = CreativityOutcome
    scene_type = CreativityScene
    modes = ("static", "cot", "interactive", "explore")
    reveals = ("full", "names")
    action_forms: ClassVar[dict[str, str]] = {
        "inspect": "inspect: <a name from the list>",
        "ask": "ask: <a yes/no question about an entity>",
        "commit": "commit: <entity> | <part> | <how you would use it>",
    }
    env_ids: ClassVar[dict[str, str]] = {
        "lateralgym/Creativity-Static-v1": "creativity-static",
        "lateralgym/Creativity-CoT-v1": "creativity-cot",
        "lateralgym/Creativity-Interactive-v2": "creativity-interactive",
        "lateralgym/Creativity-Explore-v1": "creativity-explore",
    }
    options_type = CreativityOptions
    commands = "lateralgym.envs.benchmarks.creativity.commands"
    data = CreativityData()
    judging = CreativityJudging()
    policies = CreativityPolicies()
    prompts = CreativityPrompts()
    metrics = CreativityMetrics()
    leaks = CreativityLeaks()

    def item_meta(self, item: CreativityTask) -> dict[str, Any]:
        f = item.factors
        return {
            "scene": item.scene,
            "cluster_band": f.cluster_band,
            "gold_level": f.gold_level,
            "distractor_count": f.distractor_count,
            "distractor_similarity": f.distractor_similarity,
        }

    def public_text(self, item: CreativityTask) -> str:
        return f"{item.task} {item.environment}"

    def secret_texts(self, item: CreativityTask) -> list[str]:
        s = item.solution
        return [s.prepare_recipient, s.prepare_use_condition, s.apply_affordance, item.gold.affordance.action]

    def solution_text(self, item: CreativityTask) -> str:
        s = item.solution
        return (
            f"The intended answer: the {item.gold.part.replace('_', ' ')} of the {item.gold.entity} "
            f"({item.gold.affordance.action}).\n1. {s.prepare_recipient}\n2. {s.prepare_use_condition}\n"
            f"3. {s.prepare_environment_condition}\n4. {s.apply_affordance}"
        )


class CreativityEnv(LateralEnv):
    """CreativityBench static / CoT / interactive env: ``LateralEnv`` fixed to CreativityBench configs."""

    benchmark_name = "creativity"
