"""``scoring: official``: CreativityBench's official ``evaluation/judge.py`` correctness, each quirk pinned.

The task below is written for this test and laid out as the release lays a task out (the gold entity
listed first, its ``judge_output`` comparing its other parts only, scene items, an environment text
naming an entity that is not in ``entities``). Each expectation was worked out by hand from the
official rule (``_official.py`` cites its lines); the comments give the word F1 that decides it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lateralgym.envs import Commit
from lateralgym.envs.benchmarks.creativity import CreativityTask, answer_facts, load_creativitybench
from lateralgym.envs.benchmarks.creativity._judges import (
    grade_creativity_by,
    grade_creativity_official,
    grades_by_rule,
)
from lateralgym.envs.benchmarks.creativity._official import best_by_f1, grade_official, name_core, word_f1
from lateralgym.envs.benchmarks.creativity._options import SCORINGS

GOLD = "aluminium folding ladder 3"
DRILL = "electric screwdriver with charging dock 5"
APRON = "denim apron with front pocket 2"


def _comparison(similar: str, change: str, difficulty: str) -> dict[str, str]:
    return {
        "similar_affordance_reason": "written for the test",
        "similar_affordance": similar,
        "affordance": "NA",
        "gold_change_reason": "written for the test",
        "gold_change": change,
        "decision_making_difficulty": difficulty,
    }


def _packed(*parts: str) -> str:
    return " ".join(f"{p}: physical — a part made up for the test; state — in place.." for p in parts)


RELEASE_TASK = {
    "task_id": "aluminium_folding_ladder_3-rubber_feet-iter1-medium-2entity-sample1",
    "scenario": "garage",
    "setting": {"difficulty": "medium", "entity_count": 2, "cluster_size_range": [2, 4], "level": 1},
    "golds": [
        {
            "gold_entity": GOLD,
            "gold_part": "rubber_feet",
            "gold_affordance": {
                "use_condition": "press the foot flat",
                "environment_condition": "NA",
                "recipient_condition": "a smooth surface",
                "attribute": [["grippy rubber", "physical"]],
                "affordance": "grip a slippery surface",
                "level": "Emergency 1 (made up)",
                "example_recipient": "a glass jar",
            },
        }
    ],
    "entities": [
        {
            "name": GOLD,
            "description": _packed("top_cap", "rubber_feet [gold part]", "side_rails"),
            "judge_output": {"top_cap": _comparison("No", "No", "NA"), "side_rails": _comparison("No", "No", "NA")},
        },
        {
            "name": DRILL,
            "description": _packed("chuck", "trigger_handle", "charging_dock"),
            "judge_output": {
                "chuck": _comparison("No", "No", "NA"),
                "trigger_handle": _comparison("Yes", "No", "2"),
                "charging_dock": _comparison("Yes", "Yes", "3"),
            },
        },
        {
            "name": APRON,
            "description": _packed("front_pocket", "neck_strap", "waist_ties"),
            "judge_output": {
                "front_pocket": _comparison("Yes", "No", "NA"),
                "neck_strap": _comparison("Yes", "No", "4"),
                "waist_ties": _comparison("No", "No", "NA"),
            },
        },
    ],
    "items": [
        {"name": "jar of honey with a cork lid", "description": "sticky and shut", "interactable": "Yes"},
        {"name": "old radio", "description": "silent", "interactable": "No"},
    ],
    "environment": "I am in the garage beside a bench grinder 7, a jar of honey and the ladder.",
    "task": "The honey jar's lid will not turn in my wet hands. What can give me grip?",
    "solution": {
        "prepare_recipient": "Dry the jar.",
        "prepare_use_condition": "Lay the ladder down.",
        "prepare_environment_condition": "Clear the bench.",
        "apply_affordance": "Press the lid against a rubber foot and twist.",
    },
}


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> CreativityTask:
    path = tmp_path_factory.mktemp("official") / "sample_tasks.json"
    path.write_text(json.dumps([RELEASE_TASK]), encoding="utf-8")
    return load_creativitybench(path)[0]


def official(task: CreativityTask, entity: str, part: str) -> tuple[str, str, bool, bool, str]:
    grade = grade_official(task, Commit(entity=entity, part=part, how_to_use="twist it"))
    return grade.grounded_entity, grade.grounded_part, grade.entity_correct, grade.part_correct, grade.relation


def test_the_name_core_and_word_f1() -> None:
    assert name_core("Ladder (folded)_Top-CAP  ") == "ladder top cap"
    assert name_core("café") == "caf"  # an accented letter splits a word
    assert word_f1("ladder", GOLD) == pytest.approx(2 * 1 * 0.25 / 1.25)
    assert word_f1("", GOLD) == 0.0 and word_f1("paper towel", GOLD) == 0.0
    assert word_f1("the the", "the") == pytest.approx(2 * 0.5 * 1 / 1.5)  # multisets, stop-words count
    assert best_by_f1("nothing shared", ["b", "a"]) == "b"  # every F1 0: the first candidate
    assert best_by_f1("x", []) == ""


_NAME = st.text(alphabet="ab (c)_-É ", max_size=12)


@settings(max_examples=300, deadline=None)
@given(_NAME, st.lists(_NAME, max_size=5))
def test_word_f1_and_best_by_f1_are_the_official_arithmetic(prediction: str, candidates: list[str]) -> None:
    """The cached tokenisation scores exactly as the official ``_word_f1`` / ``_best_by_f1`` do (floats
    equal, not close: the grounding takes only a strictly greater score)."""

    def official_f1(a: str, b: str) -> float:  # judge.py 63-81, written out
        ta, tb = name_core(a).split(), name_core(b).split()
        shared = sum((Counter(ta) & Counter(tb)).values()) if ta and tb else 0
        if shared == 0:
            return 0.0
        precision, recall = shared / len(ta), shared / len(tb)
        return 2 * precision * recall / (precision + recall)

    best, best_score = "", -1.0
    for candidate in candidates:
        assert word_f1(prediction, candidate) == official_f1(prediction, candidate)
        if official_f1(prediction, candidate) > best_score:
            best, best_score = candidate, official_f1(prediction, candidate)
    assert best_by_f1(prediction, candidates) == best


def test_exact_names_are_gold(task: CreativityTask) -> None:
    assert official(task, GOLD, "rubber_feet") == (GOLD, "top_cap", True, True, "gold")
    # entity grounding ignores case: F1 1.0 with the gold
    assert official(task, "Aluminium Folding Ladder 3", "rubber_feet")[2:] == (True, True, "gold")


def test_q6_the_gold_part_must_be_written_exactly(task: CreativityTask) -> None:
    # The gold entity's compared parts are top_cap and side_rails: grounding never reaches rubber_feet.
    for spelling in ("Rubber Feet", "rubber feet", "rubber_foot", "RUBBER_FEET"):
        entity, part, entity_ok, part_ok, relation = official(task, GOLD, spelling)
        assert (entity_ok, part_ok, relation) == (True, False, "not similar"), spelling
        assert part in ("top_cap", "side_rails")


def test_q1_q2_an_empty_or_unknown_entity_is_the_first_listed_the_gold(task: CreativityTask) -> None:
    assert official(task, "", "rubber_feet") == (GOLD, "top_cap", True, True, "gold")
    assert official(task, "paper towel", "rubber_feet") == (GOLD, "top_cap", True, True, "gold")


def test_q3_scene_items_and_environment_names_are_grounded(task: CreativityTask) -> None:
    # The jar (7 words) shares only "with" with the screwdriver and with the apron (6 words each): F1 2/13
    # for both; the screwdriver is listed first, so it wins the tie.
    assert official(task, "jar of honey with a cork lid", "lid")[:3] == (DRILL, "chuck", False)
    # Named only in the environment text, sharing no word: the first listed, the gold.
    assert official(task, "bench grinder 7", "jaws")[:3] == (GOLD, "top_cap", True)


def test_q4_shorter_names_win_and_q5_ties_go_to_the_earlier(task: CreativityTask) -> None:
    # "ladder" F1 with the gold 0.4; a partial name is entity-correct.
    assert official(task, "ladder", "rubber_feet")[2:] == (True, True, "gold")
    # "with pocket": drill 1 shared of 6 vs apron 2 shared of 6 -> the apron.
    assert official(task, "with pocket", "front_pocket") == (APRON, "front_pocket", False, False, "similar")
    # "with": one shared word with both distractors (equal lengths 6): the earlier, the screwdriver.
    assert official(task, "with", "x")[0] == DRILL


def test_q7_a_gold_entity_without_comparisons_accepts_any_part(task: CreativityTask) -> None:
    bare = task.model_copy(update={"judge_output": tuple(j for j in task.judge_output if j.entity != GOLD)})
    for part in ("anything", "", "Rubber Feet"):
        assert official(bare, GOLD, part) == (GOLD, "rubber_feet", True, True, "gold")


def test_q8_the_part_flag_does_not_need_the_entity(task: CreativityTask) -> None:
    assert official(task, "screwdriver", "rubber_feet") == (DRILL, "chuck", False, True, "not similar")
    facts = answer_facts(
        grade_creativity_official(task, Commit(entity="screwdriver", part="rubber_feet", how_to_use="x"))
    )
    assert (facts.entity_correct, facts.part_correct, facts.part_match) == (False, False, True)


def test_relations_follow_the_release_comparisons(task: CreativityTask) -> None:
    assert official(task, DRILL, "trigger handle")[4] == "similar-2"
    assert official(task, DRILL, "charging_dock")[4] == "not similar"  # the release says it should replace the gold
    assert official(task, APRON, "neck_strap")[4] == "similar-4"
    assert official(task, APRON, "front_pocket")[4] == "similar"  # no difficulty counts as 10


def test_q16_hallucination_only_without_a_comparison(task: CreativityTask) -> None:
    stripped = task.model_copy(update={"judge_output": tuple(j for j in task.judge_output if j.entity != DRILL)})
    # The screwdriver's only candidate is then the gold part's name, which its comparisons never held.
    assert official(stripped, DRILL, "chuck") == (DRILL, "rubber_feet", False, True, "hallucination")


def test_q9_an_empty_how_to_use_is_left_unjudged(task: CreativityTask) -> None:
    facts = answer_facts(grade_creativity_official(task, Commit(entity=GOLD, part="rubber_feet", how_to_use="")))
    assert facts.part_correct and facts.unjudged
    assert not answer_facts(
        grade_creativity_official(task, Commit(entity=GOLD, part="rubber_feet", how_to_use="x"))
    ).unjudged


def test_official_paper_and_strict_differ_where_the_issue_says(task: CreativityTask) -> None:
    def rules(entity: str, part: str) -> tuple[tuple[bool, bool, bool], ...]:
        commit = Commit(entity=entity, part=part, how_to_use="x")
        grades = [answer_facts(grade_creativity_by(task, commit, r)) for r in ("official", "paper", "strict")]
        return tuple((f.entity_correct, f.part_correct, f.hallucinated) for f in grades)

    # ours lenient on parts, the official rule exact
    assert rules(GOLD, "Rubber Feet") == ((True, False, False), (True, True, False), (True, True, False))
    # ours strict on entities: an invented name is a hallucination, officially the gold
    assert rules("paper towel", "rubber_feet") == ((True, True, True), (False, False, True), (False, False, True))


def test_every_rules_facts_come_from_one_grading_that_never_goes_stale(task: CreativityTask) -> None:
    """``grades_by_rule`` grades once and keeps the last answer's facts: asked again for another answer, the
    same answer with another ``how_to_use``, or the same answer on another (equal) task, it grades afresh."""
    answers = [
        Commit(entity=GOLD, part="rubber_feet", how_to_use="x"),
        Commit(entity=GOLD, part="rubber_feet", how_to_use=""),
        Commit(entity="paper towel", part="rubber_feet", how_to_use="x"),
        Commit(entity=DRILL, part="Rubber Feet", how_to_use="x"),
        Commit(entity=GOLD, part="rubber_feet", how_to_use="x"),
    ]
    twin = task.model_copy(update={"gold": task.gold.model_copy(update={"part": "hinge"})})
    for commit in answers:
        for graded in (task, twin, task):
            grades = grades_by_rule(graded, commit)
            assert list(grades) == list(SCORINGS)
            for rule in SCORINGS:
                assert grades[rule] == answer_facts(grade_creativity_by(graded, commit, rule)), (commit, rule)
            grades.clear()  # the caller's copy: clearing it leaves the kept facts whole
            assert list(grades_by_rule(graded, commit)) == list(SCORINGS)
    assert answer_facts(grade_creativity_official(task, answers[1])).unjudged
    assert not grades_by_rule(task, answers[0])["official"].unjudged
    assert grades_by_rule(task, answers[0])["paper"].part_correct
    assert not grades_by_rule(twin, answers[0])["paper"].part_correct


def test_the_official_sample_task_when_present(shared_data: Path) -> None:
    task = load_creativitybench(shared_data / "creativitybench" / "sample_tasks.json")[0]
    gold, part = task.gold.entity, task.gold.part
    assert official(task, gold, part)[4] == "gold"
    for spelling in ("LED bulbs", "led bulbs", "Led_Bulbs", "led_bulb"):
        assert official(task, gold, spelling)[3] is False, spelling
    # empty, unknown, a scene item, a name only the environment mentions, a tie on a word: all gold
    named = ("", "paper towel", "glass serving bowl with condensation", "lazy Susan turntable with non-slip base 4")
    for entity in (*named, "candle chandelier"):
        assert official(task, entity, part)[2:] == (True, True, "gold"), entity
