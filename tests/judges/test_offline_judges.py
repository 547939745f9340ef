"""Exact-match, KB and reference judges."""

from __future__ import annotations

import pytest
from _items import PAINT_TASK, PUZZLES, SPOON, STORY

from lateralgym.envs import Commit, ConfigError
from lateralgym.envs._engine import drive as run
from lateralgym.envs._judging import clean_hint, leak_free, normalise_answer
from lateralgym.envs.benchmarks import ExactChoiceJudge
from lateralgym.envs.benchmarks.creativity import ExactMatchJudge, KBJudge, answer_facts
from lateralgym.envs.benchmarks.creativity._judges import grade_creativity, grade_creativity_paper
from lateralgym.envs.benchmarks.splat import ReferenceJudge
from lateralgym.judges import make_judge


@pytest.mark.parametrize(
    ("entity", "part", "label", "entity_ok", "hallucinated"),
    [
        ("steel soup spoon", "handle", "correct", True, False),
        ("Steel_Soup_Spoon", "HANDLE", "correct", True, False),
        ("steel soup spoon", "bowl", "incorrect", True, False),
        ("cotton tea towel", "handle", "incorrect", False, False),
        ("crowbar", "claw", "incorrect", False, True),
    ],
)
def test_exact_match_creativity(entity: str, part: str, label: str, entity_ok: bool, hallucinated: bool) -> None:
    reply = run(ExactMatchJudge().grade(PAINT_TASK, Commit(entity=entity, part=part), ()))
    assert (reply.label, answer_facts(reply).entity_correct, answer_facts(reply).hallucinated) == (
        label,
        entity_ok,
        hallucinated,
    )
    assert answer_facts(reply).part_correct is (label == "correct")


# PAINT_TASK's entities: cotton tea towel, steel soup spoon (gold, part handle), bamboo cutting board.
@pytest.mark.parametrize(
    ("entity", "part", "paper", "strict"),
    [
        # (label, entity correct, hallucinated) under paper, then strict
        ("Steel_Soup_Spoon", "HANDLE", ("correct", True, False), ("correct", True, False)),
        ("steel soup spoon", "Handle", ("correct", True, False), ("correct", True, False)),
        # Paper resolves by word overlap (3 of the spoon's words); strict drops the article.
        ("the steel soup spoon", "handle", ("correct", True, False), ("correct", True, False)),
        # Overlap resolves a partial name paper's way; strict finds no close name: hallucinated.
        ("soup spoon", "handle", ("correct", True, False), ("incorrect", False, True)),
        ("metal spoon", "handle", ("correct", True, False), ("incorrect", False, True)),
        # The part must match exactly under paper; strict tolerates the near miss.
        ("steel soup spoon", "handles", ("incorrect", True, False), ("correct", True, False)),
        ("steel soup spoon", "bowl", ("incorrect", True, False), ("incorrect", True, False)),
        ("cutting board", "handle", ("incorrect", False, False), ("incorrect", False, True)),
        # A tie for the best overlap (tea: towel, spoon: spoon) resolves to no entity under paper.
        ("tea spoon", "handle", ("incorrect", False, False), ("incorrect", False, True)),
        # No word in common with any entity: a hallucination under both.
        ("crowbar", "claw", ("incorrect", False, True), ("incorrect", False, True)),
    ],
)
def test_paper_and_strict_exact_match(
    entity: str, part: str, paper: tuple[str, bool, bool], strict: tuple[str, bool, bool]
) -> None:
    commit = Commit(entity=entity, part=part)
    for grade, expected in ((grade_creativity_paper, paper), (grade_creativity, strict)):
        reply = grade(PAINT_TASK, commit)
        assert (reply.label, answer_facts(reply).entity_correct, answer_facts(reply).hallucinated) == expected, (
            grade.__name__
        )
        assert answer_facts(reply).part_correct is (expected[0] == "correct")


def test_paper_scoring_does_not_copy_the_official_first_entity_bug() -> None:
    """The official code resolves a prediction sharing no word with any entity to the first listed
    one, and the generator lists the gold first: here that would score ``crowbar`` entity correct."""
    gold_first = PAINT_TASK.model_copy(update={"entities": (SPOON, *[e for e in PAINT_TASK.entities if e != SPOON])})
    assert gold_first.entities[0].name == gold_first.gold.entity
    for entity in ("crowbar", "hammer", ""):
        reply = grade_creativity_paper(gold_first, Commit(entity=entity, part="handle"))
        assert (
            answer_facts(reply).entity_correct,
            answer_facts(reply).part_correct,
            answer_facts(reply).hallucinated,
        ) == (False, False, True), entity


def test_exact_match_mcq_and_judges_belong_to_their_benchmarks() -> None:
    judge = ExactChoiceJudge()
    assert run(judge.grade(PUZZLES[2], Commit(choice=3), ())).label == "correct"
    assert run(judge.grade(PUZZLES[2], Commit(choice=0), ())).label == "incorrect"
    assert isinstance(make_judge("exact", benchmark="brainteaser"), ExactChoiceJudge)
    assert isinstance(make_judge("exact", benchmark="creativity"), ExactMatchJudge)
    with pytest.raises(ConfigError, match="cannot judge splat"):
        make_judge("exact", benchmark="splat")


@pytest.mark.parametrize(
    ("question", "label"),
    [
        ("Is the cutting board heavy?", "yes"),
        ("Is the bamboo cutting board light?", "no"),
        ("Is the tea towel damp?", "yes"),
        ("Is the spoon's handle made of stainless steel?", "yes"),
        ("Is the spoon wooden?", "no"),
        ("Is the spoon the answer?", "irrelevant"),
        ("What is the gold solution?", "irrelevant"),
        ("Is it raining outside?", "irrelevant"),
    ],
)
def test_kb_judge_answers_from_attributes(question: str, label: str) -> None:
    assert run(KBJudge().answer(PAINT_TASK, question, ())).label == label


@pytest.mark.parametrize(
    ("question", "label"),
    [
        ("Was it a film?", "yes"),
        ("Were they in a cinema?", "yes"),
        ("Was the violinist famous?", "no"),
        ("Did it rain?", "irrelevant"),
    ],
)
def test_reference_judge_questions(question: str, label: str) -> None:
    assert run(ReferenceJudge().answer(STORY, question, ())).label == label


def test_reference_judge_grades_by_key_facts() -> None:
    judge = ReferenceJudge()
    good = run(
        judge.grade(STORY, Commit(answer="A silent film in a cinema; the violinist was an actor on screen."), ())
    )
    assert good.label == "correct"
    partial = run(judge.grade(STORY, Commit(answer="It was a silent film."), ()))
    assert partial.label == "not_yet" and partial.hint == "Your explanation covers 1 of 3 key points."
    assert clean_hint(partial.hint, STORY) == partial.hint


def test_vocabulary_normalisation() -> None:
    assert normalise_answer("Yes.") == "yes"
    assert normalise_answer("NO, not at all") == "no"
    assert normalise_answer("Irrelevant") == "irrelevant"
    assert normalise_answer("Not relevant to the story") == "irrelevant"
    assert normalise_answer("Well, the man was a diver") is None
    assert normalise_answer("") is None


def test_leak_guard() -> None:
    assert not leak_free("It was a silent film screening.", STORY)
    assert not leak_free("cinema", STORY)
    assert leak_free("Think about where the people were sitting.", STORY)
    assert not leak_free("Think about the audience.", STORY)  # a word only the hidden answer has
    assert clean_hint("the violinist was an actor on the cinema screen", STORY) is None


def test_make_judge() -> None:
    assert isinstance(make_judge("kb", benchmark="creativity"), KBJudge)
    with pytest.raises(
        ConfigError, match="offline judges are: exact, kb, learned, reference, reference-embed; or name a model"
    ):
        make_judge("oracle", benchmark="creativity")
