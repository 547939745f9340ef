"""AR-Bench situation puzzles: SPLAT's game on AR-Bench's stories, scored with its key questions too.

## Description
Implements the situation puzzles (SP) of AR-Bench (Active Reasoning benchmark; public repository
tmlr-group/AR-Bench, ``data/sp/{train,test}.json``): the player sees a story's surface and asks yes/no
questions, a judge who knows the hidden story answers yes / no / irrelevant, and the player gives its
explanation, as in SPLAT (``lateralgym.envs.benchmarks.splat``: this benchmark's scene is SPLAT's, on
AR-Bench's items). Each puzzle carries a story tree: six facts of the hidden story, each with the key
question whose ``yes`` uncovers it. It feeds SPLAT's Acc, Rnd and O/A (pooled: no difficulty bands),
AR-Bench's process metric (the share of key questions the player asked, judged), the word F1 of
the final explanation against the hidden story and, under ``reward: dense``, a per-question reward.

## Action Space
``UnicodeText``: ``ask: <question>`` or ``commit: <explanation>``, or an action's JSON.

## Observation Space
``Dict``: ``text``, ``turn`` and ``last_reply`` (as SPLAT's).

## Starting State
The surface story; the hidden story, its facts and key questions are known only to the judge.

## Rewards
``rewards.correct`` when the judge accepts an explanation, plus ``rewards.step`` per round and
``rewards.invalid`` per invalid action. With ``reward: dense`` (``--option reward=dense``) each valid
question also earns a process reward, added to its step's reward and logged as the step line's
``process``: **+1/6 for each key question it asks for the first time** (1/K for a puzzle with K key
questions: over an episode they add up to its key-question recall, at most 1, the default reward of a
correct explanation) and **-1/12 when it nearly repeats an earlier question** (-1/(2K): LatEval's
divergence applied to one pair, the two questions' content-word stems at least 80 % alike by Jaccard;
half a key question, because that test reads words, not meaning). Which key questions a question asks
is the run's judge's call where it says (an LLM judge's second call), else the offline word rule of the
key-question rate. The oracle asks the key questions in turn, so it earns 1 and a recall of 1 (a little
less reward where a story lists a key question twice: 10 of the 100 test stories, mean 0.99). Why these numbers:
``lateralgym.envs.QuestionRewards``.

## Episode End
Terminated when solved; truncated after ``max_turns`` rounds (25 by default: AR-Bench's ``max_turn``;
its own protocol always plays every round and then asks for the answer, ``sp_evaluator.py`` 361-452,
where here a correct explanation ends the game early, as in SPLAT).

## Arguments
``config`` (run by name: ``lateralgym run arbench-sp --data test.json``), ``items``
(``ARBenchPuzzle`` list), ``judge`` (``reference``, or an LLM: ``LLMARBenchJudge``), ``render_mode``.
Options (``ARBenchOptions``): SPLAT's ``protocol``, and ``reward`` (``sparse``, the default, or
``dense``: the process reward above; the run then reports each episode's key-question recall and
process reward, ``by_episode``, and their means). Each puzzle's ``split`` is its file's (``train`` /
``test``), so ``lateralgym.envs.split_items`` and RL training use the release's split.

## Version History
* v0: initial release; the ``reward: dense`` option (off by default, so v0's episodes are unchanged).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any, ClassVar

from lateralgym.envs._actions import Action, Ask, Commit
from lateralgym.envs._benchmark import (
    Benchmark,
    DatasetFormat,
    StatBlock,
    register_benchmark,
)
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import LateralEnv
from lateralgym.envs._parts import DataPart, JudgingPart, MetricsPart, PromptPart
from lateralgym.envs.benchmarks.arbench._judges import ARBenchReferenceJudge, KeyQuestionHits, key_question_hits
from lateralgym.envs.benchmarks.arbench._loaders import ARBENCH_KEYS, is_arbench, load_arbench
from lateralgym.envs.benchmarks.arbench._metrics import ARBenchScorer
from lateralgym.envs.benchmarks.arbench._options import ARBenchOptions
from lateralgym.envs.benchmarks.arbench._scene import ARBenchOutcome, ARBenchScene, ProcessTotals, word_f1
from lateralgym.envs.benchmarks.arbench._schema import ARBenchPuzzle
from lateralgym.envs.benchmarks.splat import SplatLeaks, SplatPolicies, SplatPrompts
from lateralgym.envs.support import lazy_exports

__all__ = [
    "ARBenchEnv",
    "ARBenchOptions",
    "ARBenchOutcome",
    "ARBenchPuzzle",
    "ARBenchReferenceJudge",
    "ARBenchScene",
    "ARBenchScorer",
    "ARBenchSP",
    "KeyQuestionHits",
    "ProcessTotals",
    "key_question_hits",
    "load_arbench",
    "word_f1",
]

_LAZY = {"LLMARBenchJudge": "_llm_judge"}


__getattr__ = lazy_exports(__name__, _LAZY)  # the LLM-facing names load on first use


class ARBenchData(DataPart[ARBenchPuzzle]):
    """AR-Bench's ``data/sp`` files; ``data stats`` counts by split, flags and key questions."""

    formats = (
        DatasetFormat(
            "arbench-sp", "AR-Bench data/sp/train.json or test.json", is_arbench, load_arbench, keys=ARBENCH_KEYS
        ),
    )
    jsonl_keys = frozenset({"story", "key_questions"})

    def strata(self, item: ARBenchPuzzle) -> dict[str, Hashable]:
        """The release's flags: stories with a supernatural element, then stories where someone dies."""
        return {"supernatural": item.supernatural, "someone dies": item.someone_dies}

    def stat_axes(self, item: ARBenchPuzzle) -> dict[str, Any]:
        return {
            "split": item.split or "none",
            "supernatural": item.supernatural,
            "someone_dies": item.someone_dies,
            "key questions": len(item.key_questions),
        }

    def stats(self, records: Sequence[Any]) -> StatBlock:
        """Counts by split, flags and key questions; a repeated release ``index`` is a defect."""
        block = super().stats(records)
        counts = Counter((r.split, r.index) for r in records if isinstance(r, ARBenchPuzzle) and r.index is not None)
        defects = [f"index {index} is used by {n} puzzles ({split})" for (split, index), n in counts.items() if n > 1]
        return block.model_copy(update={"defects": defects})


class ARBenchJudging(JudgingPart):
    """The offline reference judge with key-question hits, and its LLM judge."""

    offline_judges: ClassVar[Mapping[str, Any]] = {"reference": ARBenchReferenceJudge}
    default_judge = "reference"
    llm_judge = "lateralgym.envs.benchmarks.arbench._llm_judge:LLMARBenchJudge"


class ARBenchPolicies(SplatPolicies):
    """SPLAT's random and heuristic players; an oracle that asks the key questions first."""

    def oracle_action(self, item: ARBenchPuzzle, info: Mapping[str, Any]) -> Action:  # type: ignore[override]
        """Ask every key question in turn, then give the hidden story (it needs more rounds than key questions)."""
        asked = len(info.get("public", {}).get("history", []))
        if asked < len(item.key_questions):
            return Ask(question=item.key_questions[asked])
        return Commit(answer=item.answer)


class ARBenchPrompts(SplatPrompts):
    """SPLAT's player protocol, with free-text replies (no action grammar)."""

    action_grammar = PromptPart.action_grammar


class ARBenchMetrics(MetricsPart[ARBenchOutcome]):
    """SPLAT's Acc and O/A, and the key-question rate."""

    headline = ("acc", "oa", "key_question_rate")

    def scorer(self, *, mode: str | None, max_turns: int) -> ARBenchScorer:
        return ARBenchScorer(mode=mode, max_turns=max_turns)


@register_benchmark
class ARBenchSP(Benchmark[ARBenchPuzzle, ARBenchOutcome]):
    """AR-Bench situation puzzles (see the module docstring, the env card)."""

    name = "arbench-sp"
    title = "AR-Bench situation puzzles (active reasoning)"
    item_type = ARBenchPuzzle
    outcome_type = ARBenchOutcome
    scene_type = ARBenchScene
    modes = ("multiturn",)
    reveals = ("story",)
    action_forms: ClassVar[dict[str, str]] = {
        "ask": "ask: <a yes/no question>",
        "commit": "commit: <your full explanation>",
    }
    options_type = ARBenchOptions
    default_max_turns = 25
    data = ARBenchData()
    judging = ARBenchJudging()
    policies = ARBenchPolicies()
    prompts = ARBenchPrompts()
    metrics = ARBenchMetrics()
    leaks = SplatLeaks()

    def item_meta(self, item: ARBenchPuzzle) -> dict[str, Any]:
        return {"split": item.split, "supernatural": item.supernatural, "someone_dies": item.someone_dies}

    def public_text(self, item: ARBenchPuzzle) -> str:
        return item.story

    def secret_texts(self, item: ARBenchPuzzle) -> list[str]:
        return [item.answer, *item.clues, *item.key_questions]

    def solution_text(self, item: ARBenchPuzzle) -> str:
        return f"What really happened: {item.answer}"

    def default_config(self) -> dict[str, Any]:
        return {**super().default_config(), "reveal": "story"}

    def validate_config(self, config: EpisodeConfig) -> None:
        if "inspect" in config.allowed_actions:  # SPLAT's game: nothing to inspect
            raise ValueError("situation puzzles have no entities to inspect")


class ARBenchEnv(LateralEnv):
    """The AR-Bench situation-puzzle env: ``LateralEnv`` fixed to AR-Bench configs."""

    benchmark_name = "arbench-sp"
