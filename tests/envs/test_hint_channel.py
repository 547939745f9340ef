"""No judge can hand the hidden answer to the player through a "not yet" hint, in any encoding.

A hostile judge answers every explanation with "not yet" and a hint carrying the hidden answer:
verbatim, base64, letters spaced, reversed, ``\\u`` escapes, hyphen-split, or paraphrased. Under the
default ``hints: template`` the player hears only the env's own hint texts; under the ``free``
opt-out the leak check catches every encoding but the paraphrase (which is why it is opt-in).
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lateralgym.envs import Commit, EpisodeConfig, JudgeReply, LateralEnv, load_sample_items
from lateralgym.envs._judging import HINT_TEMPLATES, QA, clean_hint, template_hint
from lateralgym.envs.benchmarks.splat import ReferenceJudge, SituationPuzzle
from lateralgym.envs.testing import find_leaks

PUZZLES: list[SituationPuzzle] = load_sample_items("splat")


def _spaced(text: str) -> str:
    return " ".join(text)


ENCODINGS: dict[str, Callable[[str], str]] = {
    "verbatim": lambda a: a,
    "base64": lambda a: base64.b64encode(a.encode()).decode(),
    "spaced letters": _spaced,
    "reversed": lambda a: a[::-1],
    "unicode escapes": lambda a: "".join(f"\\u{ord(c):04x}" for c in a),
    "hyphen-split": lambda a: "-".join(a.replace(" ", "- ")),
}


class HostileJudge:
    """Says "not yet" to everything, with the hidden answer encoded in the hint."""

    name = "hostile"
    synchronous = True

    def __init__(self, encode: Callable[[str], str]) -> None:
        self.encode = encode

    async def answer(self, item: Any, question: str, history: tuple[QA, ...]) -> JudgeReply:
        return JudgeReply(label="yes", hint=item.answer, raw=item.answer)

    async def grade(self, item: Any, commit: Commit, history: tuple[QA, ...]) -> JudgeReply:
        return JudgeReply(label="not_yet", hint="Think about this: " + self.encode(item.answer), raw=item.answer)


def _hints(mode: str, encode: Callable[[str], str]) -> list[tuple[SituationPuzzle, str]]:
    config = EpisodeConfig.named("splat").model_copy(update={"hints": mode})
    env = LateralEnv(config, items=PUZZLES, judge=HostileJudge(encode))
    seen = []
    for puzzle in PUZZLES:
        env.reset(seed=0, options={"item_id": puzzle.id})
        obs, *_ = env.step("commit: I think it was a dream")
        seen.append((puzzle, obs["text"]))
    return seen


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_template_hints_carry_nothing_but_the_envs_own_words(encoding: str) -> None:
    for puzzle, text in _hints("template", ENCODINGS[encoding]):
        assert text == "Not yet.", (puzzle.id, text)


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_free_hints_are_checked_in_decoded_forms(encoding: str) -> None:
    for puzzle, text in _hints("free", ENCODINGS[encoding]):
        assert text == "Not yet." and not find_leaks(text, puzzle), (puzzle.id, text)


def test_a_template_hint_chosen_by_the_judge_reaches_the_player() -> None:
    class Helpful(HostileJudge):
        async def grade(self, item: Any, commit: Commit, history: tuple[QA, ...]) -> JudgeReply:
            return JudgeReply(label="not_yet", hint="think about who the PEOPLE really are")

    env = LateralEnv(EpisodeConfig.named("splat"), items=PUZZLES[:1], judge=Helpful(str))
    env.reset(seed=0)
    obs, *_ = env.step("commit: a dream")
    assert obs["text"] == "Not yet. Hint: Think about who the people really are."


def test_the_reference_judges_coverage_hint_is_a_template() -> None:
    env = LateralEnv(EpisodeConfig.named("splat"), items=PUZZLES[:1], judge=ReferenceJudge())
    env.reset(seed=0)
    obs, *_ = env.step("commit: something about a cat")
    assert obs["text"].startswith("Not yet. Hint: Your explanation covers 0 of ")


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=120))
def test_template_mode_admits_only_the_templates(hint: str) -> None:
    """Whatever a judge writes, the player hears a template, the coverage count, or nothing."""
    shown = clean_hint(hint, PUZZLES[0], "template")
    assert shown is None or shown in HINT_TEMPLATES or shown.startswith("Your explanation covers ")
    if shown is not None and shown.startswith("Your explanation covers "):
        assert template_hint(shown) == shown


def test_the_reference_judge_does_not_reward_word_salad() -> None:
    """A one-turn explanation made of every word of every sample puzzle (a far stronger salad than
    the 1,000 most common English words) covers every fact, and must still not be accepted."""
    salad = " ".join(
        sorted({w for p in PUZZLES for w in f"{p.title} {p.story} {p.answer} {' '.join(p.clues)}".split()})
    )
    common = " ".join(["the time people way year day thing man world life hand part child eye woman place"] * 10)
    env = LateralEnv(EpisodeConfig.named("splat"), items=PUZZLES, judge=ReferenceJudge())
    for text in (salad, common + " " + salad):
        solved = 0
        for puzzle in PUZZLES:
            env.reset(seed=0, options={"item_id": puzzle.id})
            _, reward, terminated, *_ = env.step(f"commit: {text}")
            solved += terminated and reward > 0
        assert solved == 0
    for puzzle in PUZZLES:  # while the hidden answer itself is still accepted
        env.reset(seed=0, options={"item_id": puzzle.id})
        _, reward, terminated, *_ = env.step(f"commit: {puzzle.answer}")
        assert terminated and reward == 1.0, puzzle.id
