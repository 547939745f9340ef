"""A judge's replies kept in full while a person plays, and given back in order on a resume's replay:
the same reply (its typed detail too), never for a different question, never more than logged."""

from __future__ import annotations

import asyncio

import pytest

from lateralgym.envs import QA, Commit, get_benchmark
from lateralgym.envs.benchmarks.arbench import ARBenchPuzzle, ARBenchReferenceJudge, KeyQuestionHits
from lateralgym.envs.benchmarks.splat import ReferenceJudge
from lateralgym.episodes import LoggedJudgeReply, ReplayMismatch, is_offline_judge, taped

PUZZLE = ARBenchPuzzle(
    id="tape-1",
    story="A ferryman rowed across the lake twice each night with an empty boat.",
    answer="He was carrying sound: the bell in the boat warned the fishermen of the fog.",
    key_questions=("Was there fog on the lake?", "Did the boat carry a bell?"),
)


def test_the_taped_judge_has_the_methods_of_the_judge_it_wraps_and_no_others() -> None:
    judge = ReferenceJudge()
    tape = taped(judge)
    assert tape.name == judge.name
    assert all(hasattr(tape, m) == hasattr(judge, m) for m in ("answer", "grade", "respond", "grade_under"))
    assert tape.limits == judge.limits  # its other attributes are the judge's


def test_a_recorded_reply_is_given_back_as_it_was_detail_and_all() -> None:
    judge = ARBenchReferenceJudge()
    tape = taped(judge)
    history = (QA(question="Was it night?", label="yes"),)
    live = asyncio.run(tape.answer(PUZZLE, "Was there fog on the lake?", history))
    graded = asyncio.run(tape.grade(PUZZLE, Commit(answer="a bell in the fog"), history))
    logged = [LoggedJudgeReply.model_validate_json(r.model_dump_json()) for r in tape.take()]
    assert [r.call for r in logged] == ["answer", "grade"] and tape.take() == []
    assert isinstance(live.detail, KeyQuestionHits) and live.detail.hits == (0,)

    tape.replaying = True
    tape.load(logged)
    again = asyncio.run(tape.answer(PUZZLE, "Was there fog on the lake?", history))
    assert again == live and isinstance(again.detail, KeyQuestionHits)
    assert asyncio.run(tape.grade(PUZZLE, Commit(answer="a bell in the fog"), history)) == graded
    assert tape.unused() == 0


def test_a_replay_asking_something_else_or_more_than_logged_is_refused() -> None:
    tape = taped(ARBenchReferenceJudge())
    asyncio.run(tape.answer(PUZZLE, "Was there fog on the lake?", ()))
    logged = tape.take()
    tape.replaying = True
    tape.load(logged)
    with pytest.raises(ReplayMismatch, match="something other than the log recorded"):
        asyncio.run(tape.answer(PUZZLE, "Was there a bell?", ()))
    tape.load([])
    with pytest.raises(ReplayMismatch, match="holds no reply"):
        asyncio.run(tape.answer(PUZZLE, "Was there fog on the lake?", ()))


def test_a_logged_detail_of_a_type_not_loaded_is_refused_not_imported() -> None:
    tape = taped(ARBenchReferenceJudge())
    asyncio.run(tape.answer(PUZZLE, "Was there fog on the lake?", ()))
    (logged,) = tape.take()
    assert logged.detail is not None
    forged = logged.model_copy(update={"detail": logged.detail.model_copy(update={"type": "os:system"})})
    tape.replaying = True
    tape.load([forged])
    with pytest.raises(ReplayMismatch, match="is not a model this judge gives"):
        asyncio.run(tape.answer(PUZZLE, "Was there fog on the lake?", ()))


def test_only_judges_other_than_the_benchmarks_offline_ones_are_taped() -> None:
    splat = get_benchmark("splat")
    assert is_offline_judge(ReferenceJudge(), splat)  # deterministic and free: a replay asks it again

    class ModelJudge(ReferenceJudge):  # a judge the benchmark does not ship offline, named as one
        name = "openai/judge"

    assert not is_offline_judge(ModelJudge(), splat)
