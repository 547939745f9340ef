"""Every metric against small hand-computed fixtures; the arithmetic is in the comments."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import pytest
from _items import PAINT_TASK
from _outcomes import outcome as full_outcome

from lateralgym.envs import Commit, ConfigError
from lateralgym.envs.benchmarks.creativity import answer_facts
from lateralgym.envs.benchmarks.creativity._judges import grade_creativity_by
from lateralgym.episodes._log import EpisodeEnd, EpisodeStart, observation
from lateralgym.episodes._metrics import (
    MetricsAccumulator,
    MetricsError,
    RunMetrics,
    compute_metrics,
    metrics_from_log,
)

approx = pytest.approx


def end(
    benchmark: str,
    item: str,
    outcome: dict[str, Any],
    *,
    repeat: int = 0,
    turns: int = 1,
    error: str | None = None,
    truncated: bool = False,
    meta: dict[str, Any] | None = None,
) -> EpisodeEnd:
    return EpisodeEnd(
        run_id="run",
        episode_id=f"{item}#{repeat}",
        item_id=item,
        repeat=repeat,
        benchmark=benchmark,
        outcome=None if error else full_outcome(benchmark, outcome, turns=turns),
        meta=meta or {},
        terminated=not truncated and error is None,
        truncated=truncated,
        error=error,
    )


def start(benchmark: str, item: str, mode: str, repeat: int = 0) -> EpisodeStart:
    return EpisodeStart(
        run_id="run",
        episode_id=f"{item}#{repeat}",
        item_id=item,
        repeat=repeat,
        seed=0,
        config=benchmark,
        benchmark=benchmark,
        mode=mode,
        player="heuristic",
        judge="exact",
        observation=observation("hello"),
    )


def row(metrics: RunMetrics, table: str, key: str, value: Any) -> dict[str, Any]:
    matches = [r for r in metrics.breakdowns[table] if r[key] == value]
    assert len(matches) == 1, (table, value, metrics.breakdowns[table])
    return matches[0]


# -- CreativityBench ---------------------------------------------------------------------------


def creative(
    item: str,
    gold: bool,
    entity: bool,
    *,
    band: str,
    level: int,
    count: int,
    similarity: str,
    scene: str,
    turns: int,
    inspections: int,
    entities: int,
    gold_inspected: bool,
    hallucinated: bool = False,
    committed: bool = True,
    asks: int = 0,
    invalid: int = 0,
    truncated: bool = False,
    scoring: str = "strict",
    unparsed: bool = False,
) -> EpisodeEnd:
    # ``strict`` by default: the fixtures below predate the ``paper`` scoring and pin strict's
    # arithmetic (every episode in the denominator); the paper fixtures pass ``scoring="paper"``.
    outcome = {
        "scoring": scoring,
        "unparsed": unparsed,
        "committed": committed,
        "gold_correct": gold,
        "entity_correct": entity,
        "hallucinated": hallucinated,
        "inspections": inspections,
        "gold_inspected": gold_inspected,
        "entity_count": entities,
        "asks": asks,
        "questions": asks,
        "irrelevant": asks,  # the KB judge's label for every question here
        "first_commit_turn": turns if committed else None,
        "invalid_actions": invalid,
        "factors": {
            "cluster_band": band,
            "gold_level": level,
            "level_kind": "normal" if level == 0 else "emergency",
            "distractor_count": count,
            "distractor_similarity": similarity,
        },
        "scene": scene,
    }
    return end("creativity", item, outcome, turns=turns, truncated=truncated)


def creativity_episodes() -> list[EpisodeEnd]:
    """Six interactive episodes; t6 errored and reports its factors through ``meta`` only."""
    small0 = {"band": "small", "level": 0, "count": 3}
    return [
        creative("t1", True, True, **small0, similarity="similar", scene="kitchen",
                 turns=4, inspections=3, entities=4, gold_inspected=True),
        creative("t2", False, True, band="small", level=2, count=6, similarity="mixed", scene="kitchen",
                 turns=6, inspections=5, entities=7, gold_inspected=True, asks=1, invalid=1),
        creative("t3", False, False, band="large", level=0, count=3, similarity="dissimilar", scene="garage",
                 turns=3, inspections=2, entities=4, gold_inspected=False, hallucinated=True),
        creative("t4", False, False, band="large", level=3, count=6, similarity="similar", scene="garage",
                 turns=20, inspections=4, entities=7, gold_inspected=True, asks=2, committed=False, truncated=True),
        creative("t5", True, True, **small0, similarity="similar", scene="bedroom",
                 turns=2, inspections=1, entities=4, gold_inspected=False),
        end("creativity", "t6", {}, turns=2, error="APIError: boom", meta={  # the runner's item_meta
            "scene": "garage", "cluster_band": "large", "gold_level": 5, "distractor_count": 12,
            "distractor_similarity": "mixed",
        }),
    ]  # fmt: skip


def test_creativity_headline_and_gold_inspection_split() -> None:
    metrics = compute_metrics(creativity_episodes())
    assert (metrics.benchmark, metrics.episodes, metrics.errored, metrics.items, metrics.repeats) == (
        "creativity", 6, 1, 6, 1,
    )  # fmt: skip
    h = metrics.headline
    assert h["gold_correct_rate"] == approx(33.333333)  # t1, t5: 2/6
    assert h["entity_correct_rate"] == approx(50.0)  # t1, t2, t5: 3/6
    assert h["hallucinated_rate"] == approx(16.666667)  # t3: 1/6 (the errored t6 is in the denominator)
    # Behaviour means over the 5 finished episodes (t6 errored and has no outcome).
    assert h["mean_turns"] == approx(7.0)  # (4 + 6 + 3 + 20 + 2) / 5 = 35 / 5
    assert h["mean_inspections"] == approx(3.0)  # (3 + 5 + 2 + 4 + 1) / 5 = 15 / 5
    assert h["gold_inspection_rate"] == approx(60.0)  # t1, t2, t4 inspected gold: 3/5
    assert h["gold_inspection_rate_gold_correct"] == approx(50.0)  # {t1 yes, t5 no}: 1/2
    assert h["gold_inspection_rate_entity_only"] == approx(100.0)  # {t2 yes}: 1/1
    assert h["gold_inspection_rate_both_wrong"] == approx(50.0)  # {t3 no, t4 yes}: 1/2
    by_outcome = {r["outcome"]: r for r in metrics.breakdowns["by_outcome"]}
    assert by_outcome["gold_correct"] == {
        "outcome": "gold_correct", "episodes": 2, "share": approx(40.0),  # 2/5
        "mean_turns": approx(3.0), "mean_inspections": approx(2.0),  # (4+2)/2, (3+1)/2
        "gold_inspection_rate": approx(50.0),
    }  # fmt: skip
    assert by_outcome["entity_correct_only"]["share"] == approx(20.0)  # 1/5
    assert by_outcome["entity_correct_only"]["mean_turns"] == approx(6.0)
    assert by_outcome["both_wrong"]["mean_turns"] == approx(11.5)  # (3 + 20) / 2
    assert by_outcome["both_wrong"]["mean_inspections"] == approx(3.0)  # (2 + 4) / 2


def test_creativity_exploration() -> None:
    x = compute_metrics(creativity_episodes()).exploration
    assert x["mean_questions"] == approx(0.6)  # asks (0 + 1 + 0 + 2 + 0) / 5
    # Coverage: mean(3/4, 5/7, 2/4, 4/7, 1/4) = (1.5 + 9/7) / 5 = 19.5 / 35 -> 55.714%
    assert x["entity_coverage"] == approx(100 * 19.5 / 35)
    assert x["mean_inspections"] == approx(3.0)
    assert x["mean_invalid_actions"] == approx(0.2)  # 1 / 5
    assert x["mean_turns_before_commit"] == approx(2.75)  # committed t1, t2, t3, t5: (3 + 5 + 2 + 1) / 4
    assert x["irrelevant_ratio"] == 100.0  # every question of the fixture was answered irrelevant


def test_creativity_factor_breakdowns() -> None:
    m = compute_metrics(creativity_episodes())

    def rates(table: str, key: str, value: Any) -> tuple[float, float]:
        r = row(m, table, key, value)
        return r["gold_correct_rate"], r["entity_correct_rate"]

    # cluster band: small {t1 G, t2 E, t5 G}; large {t3, t4, t6 errored}
    assert rates("by_cluster_band", "cluster_band", "small") == (approx(66.666667), approx(100.0))  # 2/3, 3/3
    assert rates("by_cluster_band", "cluster_band", "large") == (0.0, 0.0)
    assert [r["cluster_band"] for r in m.breakdowns["by_cluster_band"]] == ["small", "large"]
    # gold level: 0 {t1 G, t3, t5 G}; 2 {t2 E}; 3 {t4}; 5 {t6, from meta}
    assert [r["gold_level"] for r in m.breakdowns["by_gold_level"]] == [0, 2, 3, 5]
    assert rates("by_gold_level", "gold_level", 0) == (approx(66.666667), approx(66.666667))  # 2/3, 2/3
    assert rates("by_gold_level", "gold_level", 2) == (0.0, 100.0)
    assert row(m, "by_gold_level", "gold_level", 5)["episodes"] == 1
    # level kind: normal = level 0; emergency {t2 E, t4, t6 (kind derived from level 5)}
    assert rates("by_level_kind", "level_kind", "emergency") == (0.0, approx(33.333333))  # 0/3, 1/3
    # distractor count: 3 {t1 G, t3, t5 G}; 6 {t2 E, t4}; 12 {t6}
    assert rates("by_distractor_count", "distractor_count", 6) == (0.0, 50.0)  # 0/2, 1/2
    assert rates("by_distractor_count", "distractor_count", 12) == (0.0, 0.0)
    # similarity in the paper's order: similar {t1 G, t4, t5 G}; mixed {t2 E, t6}; dissimilar {t3}
    assert [r["distractor_similarity"] for r in m.breakdowns["by_distractor_similarity"]] == [
        "similar", "mixed", "dissimilar",
    ]  # fmt: skip
    assert rates("by_distractor_similarity", "distractor_similarity", "similar") == (
        approx(66.666667), approx(66.666667),
    )  # fmt: skip
    assert rates("by_distractor_similarity", "distractor_similarity", "mixed") == (0.0, 50.0)
    # scene: bedroom {t5 G}; garage {t3, t4, t6}; kitchen {t1 G, t2 E}
    assert rates("by_scene", "scene", "kitchen") == (50.0, 100.0)
    # Every row carries its denominator and dropped-episode counts (strict: all 3 count; t4 timed
    # out, t6 errored).
    assert row(m, "by_scene", "scene", "garage") == {
        "scene": "garage", "items": 3, "episodes": 3, "gold_correct_rate": 0.0, "entity_correct_rate": 0.0,
        "scored_episodes": 3, "unparsed": 0, "errored": 1, "timed_out": 1,
    }  # fmt: skip


def test_creativity_static_mode_has_no_interactive_metrics() -> None:
    accumulator = MetricsAccumulator("creativity", mode="static")
    for record in creativity_episodes():
        accumulator.add(record)
    metrics = accumulator.result()
    assert "mean_turns" not in metrics.headline and "by_outcome" not in metrics.breakdowns
    assert metrics.exploration == {}
    assert metrics.headline["gold_correct_rate"] == approx(33.333333)


# Twelve replies to PAINT_TASK (gold: steel soup spoon / handle), one item each, graded by the
# exact-match judge under each scoring. Paper / strict verdicts:
#   r1  small   steel soup spoon | handle        G / G
#   r2  small   Steel_Soup_Spoon | HANDLE        G / G
#   r3  medium  the steel soup spoon | handle    G / G
#   r4  small   steel soup spoon | handles       E / G   (the part must match exactly under paper)
#   r5  medium  Steel Soup Spoon | handles       E / G
#   r6  large   steel_soup_spoon | Handles       E / G
#   r7  large   crowbar | claw                   H / H   (hallucinated under both)
#   r8  medium  cotton tea towel | cloth_body    W / W
#   r9  large   tea spoon | handle               W / H   (paper: tied overlap, no entity)
#   r10 small   unparsable reply                 dropped / wrong
#   r11 medium  API error                        dropped / wrong
#   r12 large   timed out (truncated, no commit) dropped / wrong
REPLIES: tuple[tuple[str, str, tuple[str, str] | str], ...] = (
    ("r1", "small", ("steel soup spoon", "handle")),
    ("r2", "small", ("Steel_Soup_Spoon", "HANDLE")),
    ("r3", "medium", ("the steel soup spoon", "handle")),
    ("r4", "small", ("steel soup spoon", "handles")),
    ("r5", "medium", ("Steel Soup Spoon", "handles")),
    ("r6", "large", ("steel_soup_spoon", "Handles")),
    ("r7", "large", ("crowbar", "claw")),
    ("r8", "medium", ("cotton tea towel", "cloth_body")),
    ("r9", "large", ("tea spoon", "handle")),
    ("r10", "small", "unparsed"),
    ("r11", "medium", "errored"),
    ("r12", "large", "timed_out"),
)


def graded_replies(scoring: Literal["paper", "strict"]) -> list[EpisodeEnd]:
    kw: dict[str, Any] = dict(level=0, count=2, similarity="mixed", scene="kitchen", inspections=0,
                              entities=3, gold_inspected=False, scoring=scoring)  # fmt: skip
    records = []
    for item, band, reply in REPLIES:
        if reply == "errored":
            meta = {"scene": "kitchen", "cluster_band": band, "gold_level": 0, "distractor_count": 2,
                    "distractor_similarity": "mixed"}  # fmt: skip
            records.append(end("creativity", item, {}, error="APIError: 500", meta=meta))
        elif reply == "unparsed":
            records.append(creative(item, False, False, band=band, turns=1, committed=False, unparsed=True, **kw))
        elif reply == "timed_out":
            records.append(creative(item, False, False, band=band, turns=20, committed=False, truncated=True, **kw))
        else:
            assert isinstance(reply, tuple)
            verdict = grade_creativity_by(PAINT_TASK, Commit(entity=reply[0], part=reply[1]), scoring)
            gold, entity = bool(answer_facts(verdict).part_correct), bool(answer_facts(verdict).entity_correct)
            records.append(
                creative(item, gold, entity, band=band, turns=1, hallucinated=answer_facts(verdict).hallucinated, **kw)
            )
    return records


def test_creativity_paper_scoring_drops_unparsed_errored_and_timed_out() -> None:
    h = compute_metrics(graded_replies("paper")).headline
    # Denominator: 12 - r10 (unparsed) - r11 (errored) - r12 (timed out) = 9.
    assert (h["scored_episodes"], h["unparsed"], h["errored"], h["timed_out"]) == (9, 1, 1, 1)
    assert h["gold_correct_rate"] == approx(33.333333)  # r1, r2, r3: 3/9
    assert h["entity_correct_rate"] == approx(66.666667)  # r1-r6: 6/9
    assert h["hallucinated_rate"] == approx(11.111111)  # r7: 1/9


def test_creativity_strict_scoring_counts_every_episode() -> None:
    h = compute_metrics(graded_replies("strict")).headline
    # Every episode counts; r10-r12 count as wrong.
    assert (h["scored_episodes"], h["unparsed"], h["errored"], h["timed_out"]) == (12, 1, 1, 1)
    assert h["gold_correct_rate"] == approx(50.0)  # r1-r6: 6/12
    assert h["entity_correct_rate"] == approx(50.0)  # r1-r6: 6/12
    assert h["hallucinated_rate"] == approx(16.666667)  # r7, r9: 2/12


def test_creativity_breakdown_rows_carry_their_own_denominators() -> None:
    paper = compute_metrics(graded_replies("paper"))
    strict = compute_metrics(graded_replies("strict"))
    assert [r["cluster_band"] for r in paper.breakdowns["by_cluster_band"]] == ["small", "medium", "large"]

    def band(metrics: RunMetrics, value: str) -> tuple[Any, ...]:
        r = row(metrics, "by_cluster_band", "cluster_band", value)
        counts = (r["episodes"], r["scored_episodes"], r["unparsed"], r["errored"], r["timed_out"])
        return (*counts, r["gold_correct_rate"], r["entity_correct_rate"])

    # small {r1 G, r2 G, r4 E/G, r10 unparsed}: paper 2/3, 3/3; strict 3/4, 3/4
    assert band(paper, "small") == (4, 3, 1, 0, 0, approx(66.666667), 100.0)
    assert band(strict, "small") == (4, 4, 1, 0, 0, 75.0, 75.0)
    # medium {r3 G, r5 E/G, r8 W, r11 errored}: paper 1/3, 2/3; strict 2/4, 2/4
    assert band(paper, "medium") == (4, 3, 0, 1, 0, approx(33.333333), approx(66.666667))
    assert band(strict, "medium") == (4, 4, 0, 1, 0, 50.0, 50.0)
    # large {r6 E/G, r7 H, r9 W/H, r12 timed out}: paper 0/3, 1/3; strict 1/4, 1/4
    assert band(paper, "large") == (4, 3, 0, 0, 1, 0.0, approx(33.333333))
    assert band(strict, "large") == (4, 4, 0, 0, 1, 25.0, 25.0)


def test_creativity_paper_scoring_with_nothing_scored_has_no_rates() -> None:
    records = [r for r in graded_replies("paper") if r.item_id in ("r10", "r11", "r12")]
    h = compute_metrics(records).headline
    assert (h["scored_episodes"], h["unparsed"], h["errored"], h["timed_out"]) == (0, 1, 1, 1)
    assert "gold_correct_rate" not in h and "hallucinated_rate" not in h  # 0/0 is left blank


def test_creativity_errored_episodes_alone_follow_the_default_paper_scoring() -> None:
    # No outcome says which scoring ran: the config default (paper) drops the errored episode.
    records = [r for r in graded_replies("strict") if r.item_id == "r11"]
    assert compute_metrics(records).headline["scored_episodes"] == 0


def test_creativity_mixed_scorings_are_refused() -> None:
    records = graded_replies("paper")[:2] + graded_replies("strict")[2:4]
    with pytest.raises(ConfigError, match="both 'paper' and 'strict'"):
        compute_metrics(records)


def test_repeats_best_of_and_mean_of() -> None:
    kw: dict[str, Any] = dict(band="small", level=0, count=3, similarity="similar", scene="kitchen",
                              turns=1, inspections=0, entities=4, gold_inspected=False)  # fmt: skip
    records = []
    for item, golds in (("a", (False, True)), ("b", (False, False)), ("c", (True, True))):
        for repeat, gold in enumerate(golds):
            record = creative(item, gold, gold, **kw)
            records.append(record.model_copy(update={"repeat": repeat, "episode_id": f"{item}#{repeat}"}))
    metrics = compute_metrics(records)
    assert metrics.repeats == 2
    h = metrics.headline
    assert h["gold_correct_rate_best_of_2"] == approx(66.666667)  # a (any), c: 2 of 3 items
    assert h["gold_correct_rate_mean_of_2"] == approx(50.0)  # 3 of 6 episodes
    assert "gold_correct_rate" not in h
    assert h["hallucinated_rate"] == 0.0  # not repeat-sensitive: a plain mean
    small = row(metrics, "by_cluster_band", "cluster_band", "small")
    assert small["gold_correct_rate_best_of_2"] == approx(66.666667)
    assert small["gold_correct_rate_mean_of_2"] == approx(50.0)


def test_a_rerun_episode_replaces_the_earlier_record() -> None:
    kw: dict[str, Any] = dict(band="small", level=0, count=3, similarity="similar", scene="kitchen",
                              turns=1, inspections=0, entities=4, gold_inspected=False)  # fmt: skip
    failed = end("creativity", "a", {}, error="timeout")
    retried = creative("a", True, True, **kw)
    metrics = compute_metrics([failed, creative("b", False, False, **kw), retried])
    assert (metrics.episodes, metrics.errored) == (2, 0)
    assert metrics.headline["gold_correct_rate"] == 50.0  # a (retried, correct), b: 1/2


# -- BrainTeaser -------------------------------------------------------------------------------


def puzzle(item: str, correct: bool, *, repeat: int = 0, error: str | None = None) -> EpisodeEnd:
    group, _, suffix = item.partition("_")
    outcome = {
        "committed": True,
        "choice": 0,
        "correct": correct,
        "group_id": group,
        "kind": "sentence" if group.startswith("SP") else "word",
        "variant": {"": "original", "SR": "semantic", "CR": "context"}[suffix],
        "invalid_actions": 0,
    }
    record = end("brainteaser", item, outcome, error=error)
    return record.model_copy(update={"repeat": repeat, "episode_id": f"{item}#{repeat}"})


def brainteaser_episodes() -> list[EpisodeEnd]:
    return [
        puzzle("SP-1", True), puzzle("SP-1_SR", True), puzzle("SP-1_CR", True),
        puzzle("SP-2", True), puzzle("SP-2_SR", False), puzzle("SP-2_CR", True),
        puzzle("SP-3", True), puzzle("SP-3_SR", True),  # no context variant: incomplete group
        puzzle("WP-1", False), puzzle("WP-1_SR", True), puzzle("WP-1_CR", True),
        puzzle("WP-2", True), puzzle("WP-2_SR", True),
        puzzle("WP-2_CR", True, error="crash"),  # errored: wrong; info parsed from the id
        puzzle("WP-3_CR", False),  # a group with only its context variant
    ]  # fmt: skip


def test_brainteaser_instance_and_group_accuracy() -> None:
    m = compute_metrics(brainteaser_episodes())
    assert (m.episodes, m.errored, m.items) == (15, 1, 15)
    sentence = row(m, "by_kind", "kind", "sentence")
    assert sentence["original_acc"] == 100.0  # SP-1, SP-2, SP-3: 3/3
    assert sentence["semantic_acc"] == approx(66.666667)  # SP-2_SR wrong: 2/3
    assert sentence["context_acc"] == 100.0  # SP-1_CR, SP-2_CR: 2/2
    assert sentence["overall_acc"] == approx(88.888889)  # (100 + 66.667 + 100) / 3
    assert sentence["group_ori_sem_acc"] == approx(66.666667)  # SP-1 yes, SP-2 no, SP-3 yes: 2/3
    assert sentence["group_ori_sem_con_acc"] == 50.0  # SP-1 yes, SP-2 no (SP-3 incomplete): 1/2
    assert (sentence["ori_sem_groups"], sentence["ori_sem_con_groups"]) == (3, 2)
    word = row(m, "by_kind", "kind", "word")
    assert word["original_acc"] == 50.0  # WP-1 no, WP-2 yes
    assert word["semantic_acc"] == 100.0  # WP-1_SR, WP-2_SR
    assert word["context_acc"] == approx(33.333333)  # WP-1_CR yes, WP-2_CR errored, WP-3_CR no: 1/3
    assert word["overall_acc"] == approx(61.111111)  # (50 + 100 + 33.333) / 3
    assert word["group_ori_sem_acc"] == 50.0  # WP-1 no, WP-2 yes (WP-3 has no original): 1/2
    assert word["group_ori_sem_con_acc"] == 0.0  # WP-1 no, WP-2 no (errored context): 0/2
    h = m.headline  # both kinds together
    assert h["original_acc"] == 80.0  # 4/5
    assert h["semantic_acc"] == 80.0  # 4/5
    assert h["context_acc"] == 60.0  # SP-1, SP-2, WP-1 of 5: 3/5
    assert h["overall_acc"] == approx(73.333333)  # (80 + 80 + 60) / 3
    assert h["group_ori_sem_acc"] == 60.0  # SP-1, SP-3, WP-2 of 5 groups: 3/5
    assert h["group_ori_sem_con_acc"] == 25.0  # SP-1 of SP-1, SP-2, WP-1, WP-2: 1/4
    assert [r["kind"] for r in m.breakdowns["by_kind"]] == ["sentence", "word", "all"]


def test_brainteaser_group_accuracy_uses_best_of_r() -> None:
    records = [
        puzzle("SP-9", False, repeat=0), puzzle("SP-9", True, repeat=1),
        puzzle("SP-9_SR", True, repeat=0), puzzle("SP-9_SR", False, repeat=1),
    ]  # fmt: skip
    h = compute_metrics(records).headline
    # No single repeat solved both, but each puzzle was solved by some repeat.
    assert h["group_ori_sem_acc_best_of_2"] == 100.0
    assert h["original_acc_best_of_2"] == 100.0
    assert h["original_acc_mean_of_2"] == 50.0  # 1 of 2 episodes
    assert h["overall_acc_mean_of_2"] == 50.0  # (50 + 50) / 2
    assert "group_ori_sem_acc" not in h and "group_ori_sem_con_acc_best_of_2" not in h  # no context puzzle


# -- SPLAT -------------------------------------------------------------------------------------


def situation(
    item: str,
    band: str | None,
    solved: bool,
    turns: int,
    questions: tuple[int, int, int] = (0, 0, 0),
    *,
    repeated: int = 0,
    attempts: int = 1,
    repeat: int = 0,
    error: str | None = None,
) -> EpisodeEnd:
    yes, no, irrelevant = questions
    outcome = {
        "solved": solved,
        "questions": yes + no + irrelevant,
        "yes": yes,
        "no": no,
        "irrelevant": irrelevant,
        "repeated_questions": repeated,
        "attempts": attempts,
        "first_commit_turn": turns if solved else None,
        "invalid_actions": 0,
        "difficulty": None,
        "band": band,
    }
    meta = {"band": band}  # what the runner copies from the item, so errored episodes keep their band
    record = end("splat", item, outcome, turns=turns, truncated=not solved and error is None, error=error, meta=meta)
    return record.model_copy(update={"repeat": repeat, "episode_id": f"{item}#{repeat}"})


def splat_episodes() -> list[EpisodeEnd]:
    return [
        situation("e1", "easy", True, 3, (1, 1, 0)),  # Rnd 3, 1/3
        situation("e2", "easy", True, 5, (2, 1, 1), repeated=1),  # Rnd 5, 1/5
        situation("m1", "medium", False, 15, (3, 6, 3), repeated=2, attempts=3),  # unsolved: Rnd 15, 0
        situation("m2", "medium", True, 4, error="RateLimitError"),  # errored: unsolved, Rnd 15, 0
        situation("m3", "medium", True, 10, (4, 2, 2), attempts=2),  # Rnd 10, 1/10
        situation("h1", "hard", True, 15, (5, 5, 3), repeated=1, attempts=2),  # solved in the last round: 1/15
        situation("n1", None, True, 2, (1, 0, 0)),  # no band: Rnd 2, 1/2
    ]


def test_splat_acc_rnd_oa_per_band_and_band_average() -> None:
    m = compute_metrics(splat_episodes())
    assert (m.episodes, m.errored) == (7, 1)
    h = m.headline
    assert h["acc_all_puzzles"] == approx(71.428571)  # e1 e2 m3 h1 n1: 5/7
    assert h["rnd_all_puzzles"] == approx(65 / 7)  # (3 + 5 + 15 + 15 + 10 + 15 + 2) / 7
    assert h["oa_all_puzzles"] == approx(120 / 7)  # 100 * (1/3 + 1/5 + 1/10 + 1/15 + 1/2 = 1.2) / 7
    easy = row(m, "by_band", "band", "easy")
    assert (easy["acc"], easy["rnd"], easy["oa"]) == (100.0, 4.0, approx(26.666667))  # 100 * (1/3 + 1/5) / 2
    medium = row(m, "by_band", "band", "medium")
    assert (medium["acc"], medium["rnd"], medium["oa"]) == (
        approx(33.333333), approx(40 / 3), approx(3.333333),  # 1/3; (15 + 15 + 10) / 3; 100 * (1/10) / 3
    )  # fmt: skip
    hard = row(m, "by_band", "band", "hard")
    assert (hard["acc"], hard["rnd"], hard["oa"]) == (100.0, 15.0, approx(6.666667))  # 100 / 15
    none = row(m, "by_band", "band", "none")
    assert (none["acc"], none["rnd"], none["oa"]) == (100.0, 2.0, 50.0)
    assert [r["band"] for r in m.breakdowns["by_band"]] == ["easy", "medium", "hard", "none", "average"]
    # Band average over easy, medium, hard (not "none").
    # The headline is the paper's: the mean of the three bands (n1, without a level, is left out).
    assert h["acc"] == approx(77.777778)  # (100 + 33.333 + 100) / 3
    assert h["rnd"] == approx(97 / 9)  # (4 + 40/3 + 15) / 3
    assert h["oa"] == approx(1100 / 90)  # (26.667 + 3.333 + 6.667) / 3 = 100 * (11/30) / 3


def test_splat_exploration() -> None:
    x = compute_metrics(splat_episodes()).exploration
    # Six finished episodes; 40 questions: 16 yes, 15 no, 9 irrelevant; 4 repeated.
    assert x["mean_questions"] == approx(40 / 6)
    assert (x["yes_ratio"], x["no_ratio"], x["irrelevant_ratio"]) == (40.0, 37.5, 22.5)
    assert x["mean_repeated_questions"] == approx(4 / 6)
    assert x["repeated_question_rate"] == 10.0  # 4 / 40
    assert x["mean_commit_attempts"] == approx(10 / 6)  # (1 + 1 + 3 + 2 + 2 + 1) / 6
    assert x["mean_turns_before_commit"] == 6.0  # solved e1 e2 m3 h1 n1: (2 + 4 + 9 + 14 + 1) / 5


def test_splat_errored_episode_counts_the_given_max_rounds() -> None:
    m = compute_metrics([situation("m2", "medium", True, 4, error="boom")], max_turns=20)
    assert m.headline["rnd"] == 20.0
    assert m.headline["acc"] == 0.0


def test_splat_best_of_r() -> None:
    records = [
        situation("p1", "easy", True, 5, repeat=0),
        situation("p1", "easy", True, 3, repeat=1),
        situation("p2", "hard", False, 15, repeat=0),
        situation("p2", "hard", False, 2, repeat=1, error="boom"),  # errored: 15 rounds
    ]
    h = compute_metrics(records).headline
    # Best repeat per puzzle: p1 solved in 3 (1/3), p2 unsolved (15 rounds).
    assert h["acc_best_of_2"] == 50.0  # 1 of 2 puzzles
    assert h["rnd_best_of_2"] == 9.0  # (3 + 15) / 2
    assert h["oa_best_of_2"] == approx(16.666667)  # 100 * (1/3 + 0) / 2
    assert h["acc_mean_of_2"] == 50.0  # 2 of 4 episodes
    assert h["rnd_mean_of_2"] == 9.5  # (5 + 3 + 15 + 15) / 4
    assert h["oa_mean_of_2"] == approx(13.333333)  # 100 * (1/5 + 1/3) / 4
    assert h["acc_best_of_2"] == 50.0  # (100 + 0) / 2
    assert h["oa_best_of_2"] == approx(16.666667)  # (33.333 + 0) / 2
    assert "acc" not in h


# -- logs and errors ---------------------------------------------------------------------------


def test_metrics_from_a_log_with_a_torn_last_line(tmp_path: Path) -> None:
    records = creativity_episodes()[:3]
    lines = []
    for record in records:
        lines.append(start("creativity", record.item_id, "interactive").model_dump_json(exclude_none=True))
        lines.append(record.model_dump_json(exclude_none=True))
    torn = creativity_episodes()[3].model_dump_json(exclude_none=True)[:57]
    (tmp_path / "steps.jsonl").write_text("\n".join(lines) + "\n" + torn, encoding="utf-8")
    for path in (tmp_path / "steps.jsonl", tmp_path):  # the file or its run directory
        metrics = metrics_from_log(path)
        assert (metrics.episodes, metrics.mode) == (3, "interactive")
        assert metrics.headline["gold_correct_rate"] == approx(33.333333)  # t1 of t1, t2, t3: 1/3
        assert metrics.headline["mean_turns"] == approx(13 / 3)  # (4 + 6 + 3) / 3


def test_only_started_episodes_give_empty_metrics() -> None:
    metrics = compute_metrics([start("splat", "e1", "multiturn")])
    assert (metrics.benchmark, metrics.episodes, metrics.headline) == ("splat", 0, {})


def test_errors(tmp_path: Path) -> None:
    with pytest.raises(MetricsError, match="no such step log"):
        metrics_from_log(tmp_path)
    with pytest.raises(MetricsError, match="no episodes"):
        compute_metrics([])
    with pytest.raises(MetricsError, match="unknown benchmark 'chess'"):
        MetricsAccumulator("chess")
    with pytest.raises(MetricsError, match="splat episode"):
        compute_metrics([*brainteaser_episodes()[:1], *splat_episodes()[:1]])


def test_splat_unclear_rate_per_band_and_overall() -> None:
    def unclear_episode(item: str, band: str | None, judged: int, unclear: int, error: str | None = None) -> Any:
        fields = {"band": band, "questions": judged, "judged_moves": judged, "unclear": unclear}
        return end("splat", item, fields, turns=judged or 1, truncated=True, error=error, meta={"band": band})

    m = compute_metrics(
        [
            unclear_episode("e1", "easy", 4, 1),
            unclear_episode("e2", "easy", 6, 0),
            unclear_episode("m1", "medium", 5, 3),
            unclear_episode("m2", "medium", 0, 0, error="boom"),  # errored: nothing judged, nothing counted
            unclear_episode("n1", None, 0, 0),  # nothing judged: no rate for its band
        ]
    )
    assert row(m, "by_band", "band", "easy")["unclear_rate"] == 10.0  # 1 / (4 + 6)
    assert row(m, "by_band", "band", "medium")["unclear_rate"] == 60.0  # 3 / 5
    assert "unclear_rate" not in row(m, "by_band", "band", "none")  # 0 / 0 is left blank
    assert m.headline["unclear_rate"] == approx(80 / 3)  # (1 + 0 + 3) / (4 + 6 + 5) = 4 / 15
    assert m.exploration["unclear_ratio"] == approx(80 / 3)  # the finished episodes: the same 4 / 15
