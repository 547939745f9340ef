"""``QuestionRewards``: the per-question process reward any benchmark with key facts can price questions with."""

from __future__ import annotations

import pytest

from lateralgym.envs import QuestionRewards
from lateralgym.envs._process import NEAR_REPEAT, REPEAT_PENALTY, similarity


def test_first_coverage_pays_one_kth_and_a_near_repeat_costs_half_that() -> None:
    rewards = QuestionRewards(4)
    first = rewards.price(1, "Was the lamp switched off on purpose?", [0, 2])
    assert first.reward == pytest.approx(0.5) and first.covered == (0, 2) and first.repeat_of is None
    again = rewards.price(2, "Was the lamp switched off, on purpose?", [0, 1, 9])  # 9 is no key fact
    assert again.covered == (1,) and again.repeat_of == 1
    assert again.reward == pytest.approx(1 / 4 - REPEAT_PENALTY / 4)
    nothing = rewards.price(3, "Is it winter?", [])
    assert (nothing.reward, nothing.covered, nothing.repeat_of) == (0.0, (), None)
    assert rewards.covered == {0, 1, 2} and rewards.repeats == 1
    assert rewards.total == pytest.approx(first.reward + again.reward + nothing.reward)


def test_covering_every_key_fact_adds_up_to_exactly_one() -> None:
    rewards = QuestionRewards(6)
    for n in range(6):
        rewards.price(n + 1, f"Question number {n} about topic{n}?", [n])
    assert rewards.total == 1.0


def test_similarity_is_jaccard_over_content_stems_and_plain_words_without_them() -> None:
    assert similarity("Did the man drown?", "did THE man drowning") == 1.0  # stems: man, drown
    assert similarity("Did the man drown?", "Did the woman drown?") == pytest.approx(1 / 3)
    assert similarity("Did the man drown?", "Did the woman drown?") < NEAR_REPEAT
    assert similarity("Is it?", "is it") == 1.0 and similarity("Is it?", "Was it?") == pytest.approx(1 / 3)
    assert similarity("?", "!") == 1.0


def test_an_item_without_key_facts_prices_only_repeats() -> None:
    rewards = QuestionRewards(0)
    assert rewards.price(1, "Is the lamp on?", [0]).reward == 0.0
    assert rewards.price(2, "Is the lamp on?", []).reward == -REPEAT_PENALTY
    assert rewards.total == -REPEAT_PENALTY
