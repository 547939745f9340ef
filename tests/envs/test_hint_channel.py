"""No judge can hand the hidden answer to the player through a "not yet" hint, in any encoding.

A hostile judge answers every explanation with "not yet" and a hint carrying the hidden answer in
one of 18 encodings: verbatim, base64, letters spaced, reversed, ``\\u`` escapes, hyphen-split, hex,
``%XX``, Morse, an acrostic, Cyrillic homoglyphs, fullwidth letters, a Caesar shift, ROT13, NATO
spelling, letter numbers, HTML entities, binary. Under the default ``hints: template`` the player
hears only the env's own hint texts; ``hints: free`` is refused unless the config accepts the risk
(``unsafe_free_hints``), and then the filter (plain words only, the answer looked for in decoded
forms, acrostics and shifts) stops every one of them, while a plain hint in words still passes.
A paraphrase can pass it, which is why free hints need the unsafe flag.
"""

from __future__ import annotations

import base64
import codecs
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from lateralgym.cli import EXIT_USAGE, main
from lateralgym.envs import Commit, ConfigError, EpisodeConfig, JudgeReply, LateralEnv, load_sample_items
from lateralgym.envs._judging import HINT_TEMPLATES, QA, clean_hint, leak_free, template_hint
from lateralgym.envs.benchmarks.splat import ReferenceJudge, SituationPuzzle
from lateralgym.envs.testing import find_leaks
from lateralgym.episodes import dry_run, run

PUZZLES: list[SituationPuzzle] = load_sample_items("splat")


def _spaced(text: str) -> str:
    return " ".join(text)


_ALPHABET = "abcdefghijklmnopqrstuvwxyz"
_MORSE = dict(
    zip(_ALPHABET, ".- -... -.-. -.. . ..-. --. .... .. .--- -.- .-.. -- -. --- .--. --.- .-. ... - ..- ...- .-- "
        "-..- -.-- --..".split(), strict=True)
)  # fmt: skip
_NATO = dict(
    zip(_ALPHABET, "alfa bravo charlie delta echo foxtrot golf hotel india juliett kilo lima mike november oscar "
        "papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu".split(), strict=True)
)  # fmt: skip
_HOMOGLYPHS = str.maketrans("aeopcyxiABEKMHOPCTX", "аеорсухіАВЕКМНОРСТХ")
_ACROSTIC_WORDS = dict(
    zip(_ALPHABET, "apple bread cloud drum egg fern gate hill ink jam kite lamp moon nest owl pen quilt rope sun "
        "tree urn vase wind xenon yak zoo".split(), strict=True)
)  # fmt: skip


def _letters(text: str) -> str:
    return "".join(c for c in text.lower() if c.isalpha() and c.isascii())


def _caesar(text: str, shift: int) -> str:
    return "".join(
        chr((ord(c) - base + shift) % 26 + base) if c.isascii() and c.isalpha() else c
        for c in text
        for base in [ord("a") if c.islower() else ord("A")]
    )


ENCODINGS: dict[str, Callable[[str], str]] = {
    "verbatim": lambda a: a,
    "base64": lambda a: base64.b64encode(a.encode()).decode(),
    "spaced letters": _spaced,
    "reversed": lambda a: a[::-1],
    "unicode escapes": lambda a: "".join(f"\\u{ord(c):04x}" for c in a),
    "hyphen-split": lambda a: "-".join(a.replace(" ", "- ")),
    "hex": lambda a: a.encode().hex(),
    "percent escapes": lambda a: "".join(f"%{b:02X}" for b in a.encode()),
    "Morse": lambda a: " / ".join(" ".join(_MORSE[c] for c in _letters(w)) for w in a.split()),
    "acrostic": lambda a: " ".join(_ACROSTIC_WORDS[c] for c in _letters(a)),
    "Cyrillic homoglyphs": lambda a: a.translate(_HOMOGLYPHS),
    "fullwidth": lambda a: "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in a),
    "Caesar shift": lambda a: _caesar(a, 3),
    "ROT13": lambda a: codecs.encode(a, "rot13"),
    "NATO spelling": lambda a: " ".join(_NATO[c] for c in _letters(a)),
    "letter numbers": lambda a: " ".join("-".join(str(ord(c) - 96) for c in _letters(w)) for w in a.split()),
    "HTML entities": lambda a: "".join(f"&#{ord(c)};" for c in a),
    "binary": lambda a: " ".join(f"{b:08b}" for b in a.encode()),
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
    config = EpisodeConfig.named("splat").model_copy(update={"hints": mode, "unsafe_free_hints": mode == "free"})
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


def test_every_encoding_is_built_from_the_answer() -> None:
    """The encodings are real ones: each changes the answer and keeps its letters' information."""
    answer = PUZZLES[0].answer
    assert len({encode(answer) for encode in ENCODINGS.values()}) == len(ENCODINGS)
    assert codecs.encode(ENCODINGS["ROT13"](answer), "rot13") == answer


PLAIN_HINTS = (
    "Think about why nobody in the story asked for help.",
    "Consider what the weather was like that evening.",
    "Who else was in the house? Think about them.",
    "The year matters: think about 1969.",
)


@pytest.mark.parametrize("hint", PLAIN_HINTS)
def test_a_plain_free_hint_still_reaches_the_player(hint: str) -> None:
    for puzzle in PUZZLES:
        if leak_free(hint, puzzle):
            assert clean_hint(hint, puzzle, "free") == hint, puzzle.id


def test_free_hints_are_refused_without_the_unsafe_flag(tmp_path: Path) -> None:
    data = EpisodeConfig.named("splat").model_dump(mode="json")
    config = EpisodeConfig.from_dict({**data, "hints": "free"}, source="test")  # a config may say it
    with pytest.raises(ConfigError, match="hints: free forwards the judge's own words") as caught:
        LateralEnv(config, items=PUZZLES)
    assert "unsafe_free_hints: true" in str(caught.value) and "--unsafe-free-hints" in str(caught.value)
    with pytest.raises(ConfigError, match="hints: free"):
        run(config, player="oracle", out=tmp_path, progress=False)
    with pytest.raises(ConfigError, match="hints: free"):
        dry_run(config)
    allowed = EpisodeConfig.from_dict({**data, "hints": "free", "unsafe_free_hints": True}, source="test")
    LateralEnv(allowed, items=PUZZLES)
    path = tmp_path / "free.yaml"
    path.write_text(yaml.safe_dump({**data, "name": "free", "hints": "free"}), encoding="utf-8")
    assert main(["run", str(path), "--dry-run"]) == EXIT_USAGE
    assert main(["run", str(path), "--dry-run", "--unsafe-free-hints"]) == 0


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
