"""AR-Bench situation puzzles: SPLAT's game on AR-Bench's stories, scored with its key questions too.

## Description
Implements the situation puzzles (SP) of AR-Bench (Active Reasoning benchmark; public repository
tmlr-group/AR-Bench, ``data/sp/{train,test}.json``): the player sees a story's surface and asks yes/no
questions, a judge who knows the hidden story answers yes / no / irrelevant, and the player gives its
explanation, as in SPLAT (``lateralgym.envs.benchmarks.splat``: this benchmark's scene is SPLAT's, on
AR-Bench's items). Each puzzle carries a story tree: six facts of the hidden story, each with the key
question whose ``yes`` uncovers it. It feeds SPLAT's Acc, Rnd and O/A (pooled: no difficulty bands),
AR-Bench's process metric (the share of key questions the player asked, judged) and the word F1 of
the final explanation against the hidden story.

## Action Space
``UnicodeText``: ``ask: <question>`` or ``commit: <explanation>``, or an action's JSON.

## Observation Space
``Dict``: ``text``, ``turn`` and ``last_reply`` (as SPLAT's).

## Starting State
The surface story; the hidden story, its facts and key questions are known only to the judge.

## Rewards
``rewards.correct`` when the judge accepts an explanation, plus ``rewards.step`` per round and
``rewards.invalid`` per invalid action.

## Episode End
Terminated when solved; truncated after ``max_turns`` rounds (25 by default: AR-Bench's ``max_turn``;
its own protocol always plays every round and then asks for the answer, ``sp_evaluator.py`` 361-452,
where here a correct explanation ends the game early, as in SPLAT).

## Arguments
``config`` (run by name: ``lateralgym run arbench-sp --data test.json``), ``items``
(``ARBenchPuzzle`` list), ``judge`` (``reference``, or an LLM: ``LLMARBenchJudge``), ``render_mode``.
Options: SPLAT's (``protocol``). Each puzzle's ``split`` is its file's (``train`` / ``test``), so
``lateralgym.envs.split_items`` and RL training use the release's split.

## Version History
* v0: initial release.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from lateralgym.envs._actions import Action, Ask, Commit
from lateralgym.envs._benchmark import (
    Benchmark,
    DatasetFormat,
    PromptRequest,
    StatBlock,
    get_benchmark,
    register_benchmark,
)
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import LateralEnv
from lateralgym.envs.benchmarks.arbench._judges import ARBenchReferenceJudge, KeyQuestionHits, key_question_hits
from lateralgym.envs.benchmarks.arbench._loaders import is_arbench, load_arbench
from lateralgym.envs.benchmarks.arbench._metrics import ARBenchScorer
from lateralgym.envs.benchmarks.arbench._scene import ARBenchOutcome, ARBenchScene, word_f1
from lateralgym.envs.benchmarks.arbench._schema import ARBenchPuzzle
from lateralgym.envs.benchmarks.splat import Splat, SplatOptions
from lateralgym.envs.support import lazy_exports

__all__ = [
    "ARBenchEnv",
    "ARBenchOutcome",
    "ARBenchPuzzle",
    "ARBenchReferenceJudge",
    "ARBenchScene",
    "ARBenchScorer",
    "ARBenchSP",
    "KeyQuestionHits",
    "key_question_hits",
    "load_arbench",
    "word_f1",
]

_LAZY = {"LLMARBenchJudge": "_llm_judge"}


__getattr__ = lazy_exports(__name__, _LAZY)  # the LLM-facing names load on first use


def _splat() -> Splat:
    """SPLAT, whose game, players and LLM protocol AR-Bench's puzzles are played with."""
    found = get_benchmark("splat")
    assert isinstance(found, Splat)
    return found


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
    formats = (DatasetFormat("arbench-sp", "AR-Bench data/sp/train.json or test.json", is_arbench, load_arbench),)
    jsonl_keys = frozenset({"story", "key_questions"})
    options_type = SplatOptions
    offline_judges: ClassVar[dict[str, Any]] = {"reference": ARBenchReferenceJudge}
    default_judge = "reference"
    llm_judge = "lateralgym.envs.benchmarks.arbench._llm_judge:LLMARBenchJudge"
    headline = ("acc", "oa", "key_question_rate")
    default_max_turns = 25
    player_reasks = 1

    def item_meta(self, item: ARBenchPuzzle) -> dict[str, Any]:
        return {"split": item.split, "supernatural": item.supernatural, "someone_dies": item.someone_dies}

    def public_text(self, item: ARBenchPuzzle) -> str:
        return item.story

    def secret_texts(self, item: ARBenchPuzzle) -> list[str]:
        return [item.answer, *item.clues, *item.key_questions]

    def solution_text(self, item: ARBenchPuzzle) -> str:
        return f"What really happened: {item.answer}"

    def stat_axes(self, item: ARBenchPuzzle) -> dict[str, Any]:
        return {
            "split": item.split or "none",
            "supernatural": item.supernatural,
            "someone_dies": item.someone_dies,
            "key questions": len(item.key_questions),
        }

    def dataset_stats(self, records: Sequence[Any]) -> StatBlock:
        """Counts by split, flags and key questions; a repeated release ``index`` is a defect."""
        block = super().dataset_stats(records)
        counts = Counter((r.split, r.index) for r in records if isinstance(r, ARBenchPuzzle) and r.index is not None)
        defects = [f"index {index} is used by {n} puzzles ({split})" for (split, index), n in counts.items() if n > 1]
        return block.model_copy(update={"defects": defects})

    def default_config(self) -> dict[str, Any]:
        return {**super().default_config(), "reveal": "story"}

    def validate_config(self, config: EpisodeConfig) -> None:
        _splat().validate_config(config)

    def probe_actions(self, item: ARBenchPuzzle, config: EpisodeConfig) -> Iterable[Any]:
        return _splat().probe_actions(item, config)

    def scorer(self, *, mode: str | None, max_turns: int) -> ARBenchScorer:
        return ARBenchScorer(mode=mode, max_turns=max_turns)

    def oracle_action(self, item: ARBenchPuzzle, info: Mapping[str, Any]) -> Action:
        """Ask every key question in turn, then give the hidden story (it needs more rounds than key questions)."""
        asked = len(info.get("public", {}).get("history", []))
        if asked < len(item.key_questions):
            return Ask(question=item.key_questions[asked])
        return Commit(answer=item.answer)

    def random_action(self, info: Mapping[str, Any], rng: np.random.Generator) -> Action:
        return _splat().random_action(info, rng)

    def heuristic_action(self, info: Mapping[str, Any], rng: np.random.Generator, memory: dict[str, Any]) -> Action:
        return _splat().heuristic_action(info, rng, memory)

    def system_prompt(self, request: PromptRequest) -> str:
        return _splat().system_prompt(request)

    def parse_reply(self, text: str, info: Mapping[str, Any], reasoning: str | None) -> Action:
        return _splat().parse_reply(text, info, reasoning)

    def reask_text(self, reason: str, request: PromptRequest) -> str:
        return _splat().reask_text(reason, request)

    def fallback_action(self, text: str, info: Mapping[str, Any]) -> Action | None:
        return _splat().fallback_action(text, info)


class ARBenchEnv(LateralEnv):
    """The AR-Bench situation-puzzle env: ``LateralEnv`` fixed to AR-Bench configs."""

    benchmark_name = "arbench-sp"
