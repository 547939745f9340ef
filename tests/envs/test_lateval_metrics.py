"""LatEval's own metrics (AC, QR, QD, AT) on a LatEval-format file written for this test; every number by hand."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lateralgym.envs import EpisodeConfig, LateralEnv, ScoredEpisode
from lateralgym.envs.benchmarks.splat import SplatOutcome, SplatScorer, load_lateval
from lateralgym.envs.benchmarks.splat._lateval import clue_words, question_divergence

RECORD = {
    "id": 7,
    "question": "A gardener waters a plastic plant every morning. Why?",
    "answer": "The gardener is blind and was never told the plant is fake; his late wife bought it.",
    "clue": "```\n1.The gardener is blind.\n2.The plant was a gift from his late wife.\n"
    "3.Nobody told him it is fake.\n```",
}


@pytest.fixture
def puzzle(tmp_path: Path):  # type: ignore[no-untyped-def]
    path = tmp_path / "english.json"
    path.write_text(json.dumps([RECORD]), encoding="utf-8")
    return load_lateval(path)[0]


def test_the_four_metrics_by_hand(puzzle) -> None:  # type: ignore[no-untyped-def]
    # hidden words (clue stems not in the story): {blind}, {gift, late, wife}, {nobody, told, him?, fake}
    hidden = clue_words(puzzle)
    assert hidden[0] == frozenset({"blind"}) and frozenset({"gift", "late", "wife"}) == hidden[1]
    env = LateralEnv(EpisodeConfig.named("splat"), items=[puzzle])
    env.reset()
    env.step("ask: Is the gardener blind?")  # relevant (blind)
    env.step("ask: Is it raining today?")  # not relevant
    env.step("commit: He is blind, and the plant was a gift from his wife.")  # includes clues 1 and 2 of 3
    outcome = env.outcome()
    assert isinstance(outcome, SplatOutcome)
    assert (outcome.clue_count, outcome.clues_covered, outcome.relevant_questions) == (3, 2, 1)
    # the two questions' content words: {gardener, blind} and {raining, today}: Jaccard 0, divergence 1
    assert outcome.question_divergence == 1.0
    scorer = SplatScorer(mode="multiturn", max_turns=15)
    scorer.add(ScoredEpisode(puzzle.id, 0, outcome, {}))
    headline = scorer.score().headline
    assert headline["lateval_ac"] == pytest.approx(200 / 3)
    assert headline["lateval_qr"] == 50.0 and headline["lateval_qd"] == 100.0
    assert headline["lateval_at"] == 2.0  # two rounds before the deduction


def test_question_divergence_is_one_minus_the_mean_pairwise_jaccard() -> None:
    # {blue, car} vs {blue, truck}: 1/3; {blue, car} vs {red, car}: 1/3; {blue, truck} vs {red, car}: 0
    value = question_divergence(["Was the car blue?", "Was the truck blue?", "Was the car red?"])
    assert value == pytest.approx(1 - (1 / 3 + 1 / 3 + 0) / 3)
    assert question_divergence(["Only one?"]) is None


def test_splat_puzzles_with_a_level_keep_splats_metrics_alone() -> None:
    env = LateralEnv(EpisodeConfig.named("splat"))
    env.reset(options={"index": 0})
    env.step("commit: I do not know.")
    outcome = env.outcome()
    assert isinstance(outcome, SplatOutcome) and outcome.clue_count == 0
