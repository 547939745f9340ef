"""CreativityBench's paper protocol in the env: the scoring rule each outcome records, what makes an
episode unparsed or timed out, and the paper's three cluster-size bands."""

from __future__ import annotations

from typing import Any

import pytest
from _items import PAINT_TASK

from lateralgym.envs import EpisodeConfig
from lateralgym.envs.benchmarks.creativity import CreativityEnv
from lateralgym.envs.benchmarks.creativity._schema import SamplingFactors


def play(config: str, actions: list[str], **update: Any) -> tuple[dict[str, Any], bool]:
    """The outcome of an episode of ``actions`` on PAINT_TASK, and whether it was truncated."""
    env = CreativityEnv(EpisodeConfig.named(config).with_options(**update), items=[PAINT_TASK])
    env.reset(seed=0)
    for action in actions:
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return info["outcome"], truncated
    raise AssertionError("the episode did not end")


def test_shipped_configs_score_as_the_paper() -> None:
    for name in ("creativity-static", "creativity-cot", "creativity-interactive"):
        assert EpisodeConfig.named(name).options.scoring == "paper", name


@pytest.mark.parametrize(
    ("scoring", "expected"),
    [
        # "soup spoon" shares two words with the steel soup spoon only: resolved by overlap.
        ("paper", {"gold_correct": True, "entity_correct": True, "hallucinated": False}),
        # Strict finds no close name: a hallucination.
        ("strict", {"gold_correct": False, "entity_correct": False, "hallucinated": True}),
    ],
)
def test_the_config_scoring_grades_the_commit(scoring: str, expected: dict[str, bool]) -> None:
    outcome, _ = play("creativity-static", ["commit: soup spoon | handle | lever the lid"], scoring=scoring)
    assert {key: outcome[key] for key in expected} == expected
    assert (outcome["scoring"], outcome["committed"], outcome["unparsed"]) == (scoring, True, False)


def test_paper_part_must_match_exactly() -> None:
    paper, _ = play("creativity-static", ["commit: steel soup spoon | handles | lever"])
    strict, _ = play("creativity-static", ["commit: steel soup spoon | handles | lever"], scoring="strict")
    assert (paper["gold_correct"], paper["entity_correct"]) == (False, True)
    assert (strict["gold_correct"], strict["entity_correct"]) == (True, True)


@pytest.mark.parametrize(
    "reply",
    [
        "I would use something flat.",  # Invalid: no action in it
        "{not json",  # Invalid JSON
        "commit: steel soup spoon",  # a commit without a part
        "inspect: steel soup spoon",  # not an action of the static mode
    ],
)
def test_a_static_reply_without_a_usable_answer_is_unparsed(reply: str) -> None:
    outcome, truncated = play("creativity-static", [reply])
    assert (outcome["committed"], outcome["unparsed"], truncated) == (False, True, False)


def test_an_interactive_episode_out_of_turns_is_timed_out_unless_its_last_action_was_unusable() -> None:
    turns = EpisodeConfig.named("creativity-interactive").max_turns
    inspecting, truncated = play("creativity-interactive", ["inspect: steel soup spoon"] * turns)
    assert (inspecting["committed"], inspecting["unparsed"], truncated) == (False, False, True)
    garbled, truncated = play("creativity-interactive", ["inspect: steel soup spoon"] * (turns - 1) + ["hmm"])
    assert (garbled["committed"], garbled["unparsed"], truncated) == (False, True, True)
    # An unusable action before the final, valid one does not make the episode unparsed.
    recovered, _ = play("creativity-interactive", ["hmm", "commit: steel soup spoon | handle | lever"])
    assert (recovered["committed"], recovered["unparsed"], recovered["gold_correct"]) == (True, False, True)


@pytest.mark.parametrize(
    ("bounds", "band"),
    [
        ((2, 4), "small"),  # the paper's three ranges
        ((5, 10), "medium"),
        ((10, 50), "large"),
        ((1, 9), "small"),  # the sample data's two ranges: decided by the lower bound
        ((3, 8), "small"),
        ((5, 9), "medium"),
        ((9, 12), "medium"),
        ((12, 40), "large"),
    ],
)
def test_cluster_band_by_the_size_range_lower_bound(bounds: tuple[int, int], band: str) -> None:
    factors = SamplingFactors(
        cluster_size_range=bounds, gold_level=0, distractor_count=3, distractor_similarity="mixed"
    )
    assert factors.cluster_band == band
