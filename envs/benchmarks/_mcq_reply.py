"""Read a BrainTeaser choice out of a model's reply.

Accepted forms, from the most to the least explicit: the option's own text, a bare ``A``, ``(B)``
or ``option 3`` (an ordinal: the third option), an option's text after an answer cue (``Answer:
The Letter N.``), a strongly cued letter (``Answer: C``, ``the answer is b)``, ``I pick D``), the
last line alone, a weakly cued one (``option B``), and finally an option whose text the reply
quotes. In JSON, an integer ``choice`` is an index (as in ``Commit``), and a string goes through
the text forms.

An option's text names that option exactly (``option_named``): as written first, so options that
differ only in case (``The letter N.`` / ``The Letter N.``, BrainTeaser WP-4_CR) stay apart, and a
text several different options share in looser forms names none of them. A reply that is nothing
but an option's text is that option even when the text is a letter or a digit (options ``3``,
``1``, ``2``: the reply ``1`` is the second option); after an answer cue a lone letter is a letter.
Letters and ordinals beyond the item's options (``E`` for four options) are never read as choices.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from lateralgym.envs import Commit, Invalid
from lateralgym.envs._matching import match_name, snake, words
from lateralgym.envs._reply_text import (
    clean_line,
    first_value,
    invalid,
    json_objects,
    normalised_keys,
    strip_markup,
)

LETTERS = "ABCDEFGH"
"""Option letters, ``A`` for the first option."""

__all__ = ["option_named", "parse_mcq_reply"]

_CHOICE_KEYS = ("answer", "choice", "option", "letter", "final_answer", "selected", "label")

_NONE_OF_ABOVE = re.compile(r"\bnone of (?:the )?above\b", re.IGNORECASE)
_BARE_LETTER = re.compile(
    r"^\W*+(?:(?:the\s++)?(?:final\s++|correct\s++)?(?:answer|option|choice|letter|commit)\s*+(?:is\s*+)?[:=\-]?\s*+)?"
    r"\(?\s*+([A-Ha-h])\s*+\)?\s*+[.):!]?\W*+$",
    re.IGNORECASE,
)
# A bare number is read as an ordinal ("3" = the third option) only alone or after option/choice:
# after "answer" it is as likely to be the option's text (puzzles with numeric answers).
_BARE_ORDINAL = re.compile(
    r"^\W*+(?:(?:option|choice|number)\s*+(?:no\.?\s*+)?[:=\-#]?\s*+)?\(?\s*+([1-9])\s*+\)?\s*+[.):!]?\W*+$",
    re.IGNORECASE,
)
# Every run of spaces is possessive (``\s*+``): each is followed by a token that cannot start with a
# space, so the match is the same, but a failing match no longer tries every split of a long run of
# spaces between adjacent ``\s*`` (cubic: 2,000 spaces after "the answer is" took 18 s).
# A strong cue says "this is my answer"; a weak one only names an option. Cues ignore case; the
# letter itself must be a capital, bracketed, or followed by punctuation, so the article in
# "the answer is a digital piano" is not read as option A.
_STRONG_CUE = (
    r"(?i:final\s++answer|correct\s++answer|right\s++answer|best\s++answer|answer|commit|correct\s++(?:option|choice)|"
    r"best\s++(?:option|choice)|i\s++(?:choose|pick|select|go\s++with)|i(?:'d|\s++would)\s++(?:choose|pick|go\s++with))"
    r"\s*+(?i:is|would\s++be|will\s++be|must\s++be|should\s++be)?\s*+[:=\-]?\s*+"
)
_LETTER = r"(?:\(\s*+([A-Ha-h])\s*+\)|\b([A-H])(?![\w'])|\b([a-h])(?=[).:,;]|\s*$))"
_ORDINAL = r"(?i:option|choice|number)\s*+(?:no\.?\s*+)?[:=\-#]?\s*+\(?([1-9])(?!\d)"
_STRONG = re.compile(
    r"\b" + _STRONG_CUE + r"(?:(?:(?i:option|choice|letter)\s++)?" + _LETTER + "|" + _ORDINAL + ")", re.MULTILINE
)
_WEAK = re.compile(r"\b(?:(?i:option|choice|letter)\s*+[:=\-]?\s*+" + _LETTER + "|" + _ORDINAL + ")", re.MULTILINE)


# The text after an answer cue on a line ("Answer: The Letter N.", "The final answer is: 2000"), its
# trailing space stripped by the reader. Possessive spaces and a greedy rest: a lazy ``(\S.*?)\s*$``
# retried ``\s*$`` at every character of the rest (quadratic in a long line of spaced words).
_CUED_TEXT = re.compile(
    r"(?i:\b(?:final\s++|correct\s++|best\s++)?answer\s*+(?:is|would\s++be|will\s++be)?\s*+[:=\-]?)\s*+(\S.*)$",
    re.MULTILINE,
)

_LONE_TOKEN = re.compile(r"^\(?\s*+[A-Ha-h1-9]\s*+\)?\s*+[.):!]?$")  # possessive: see _BARE_LETTER


def _token_index(token: str, n: int) -> int | None:
    """A letter (A = 0) or an ordinal digit (1 = 0) as an index below ``n``."""
    index = int(token) - 1 if token.isdigit() else ord(token.upper()) - ord("A")
    return index if 0 <= index < n else None


def _bare_choice(text: str, n: int) -> int | None:
    """The option when ``text`` is nothing but an option token (``B``, ``(c)``, ``Answer: D``, ``option 2``)."""
    cleaned = clean_line(text)
    match = _BARE_LETTER.match(cleaned) or _BARE_ORDINAL.match(cleaned)
    return _token_index(match[1], n) if match else None


def _cued_choice(pattern: re.Pattern[str], text: str, n: int) -> int | None:
    """The last in-range option named after a cue."""
    for match in reversed(list(pattern.finditer(text))):
        token = next(g for g in match.groups() if g)
        index = _token_index(token, n)
        if index is not None:
            return index
    return None


def _phrase(text: str) -> str:
    return " " + " ".join(words(_NONE_OF_ABOVE.sub("none of above", text))) + " "


def _spelled(text: str) -> str:
    """Text as written, runs of white space made one space and a closing full stop dropped."""
    return " ".join(text.split()).removesuffix(".").rstrip()


def _one_text(indices: Sequence[int], choices: Sequence[str]) -> int | None:
    """The first of ``indices`` when they all hold the same text (one answer), else None (ambiguous)."""
    if not indices or len({_spelled(choices[n]) for n in indices}) > 1:
        return None
    return indices[0]


def option_named(text: str, choices: Sequence[str]) -> int | None:
    """The option whose whole text ``text`` is, or None.

    Tried in order, each only when it names one text: the text as written (white space aside, a
    closing full stop optional), then ignoring case, then tolerantly (punctuation, a leading
    article, a near-miss spelling). Options with identical text are one answer: the first is
    returned (the judge grades an option by its text, so either is right when one is).

    Args:
        text: What the player said (a whole reply, or the part after an answer cue).
        choices: The options, in the order shown.
    """
    said = _spelled(text)
    if not said:
        return None
    spelled = [_spelled(choice) for choice in choices]
    exact = [n for n, choice in enumerate(spelled) if choice == said]
    if exact:
        return exact[0]
    folded = [n for n, choice in enumerate(spelled) if choice.casefold() == said.casefold()]
    if folded:
        return _one_text(folded, choices)
    matched = match_name(text, list(choices))
    if matched is None:
        return None
    # match_name takes the first of several options that normalise alike: only one text may.
    return _one_text([n for n, choice in enumerate(choices) if snake(choice) == snake(matched)], choices)


def _choice_after_cue(text: str, choices: Sequence[str]) -> int | None:
    """The option whose text follows the last answer cue (a lone letter there is left to the letter forms)."""
    for match in reversed(list(_CUED_TEXT.finditer(text))):
        rest = match[1].rstrip()
        if _LONE_TOKEN.match(rest):
            return None
        index = option_named(rest, choices)
        if index is not None:
            return index
    return None


def _choice_quoted(text: str, choices: Sequence[str]) -> int | None:
    """The one option whose text appears inside the reply (none, or several, give None)."""
    said = _phrase(text)
    contained = [n for n, choice in enumerate(choices) if _phrase(choice).strip() and _phrase(choice) in said]
    return contained[0] if len(contained) == 1 else None


def _choice_in_text(text: str, choices: Sequence[str]) -> int | None:
    """The option a piece of text picks, trying the forms from the most to the least explicit."""
    n = len(choices)
    plain = strip_markup(text)
    lines = [line for line in plain.splitlines() if line.strip()]
    finders: tuple[Callable[[], int | None], ...] = (
        lambda: option_named(plain, choices),
        lambda: _bare_choice(plain, n),
        lambda: _choice_after_cue(plain, choices),
        lambda: _cued_choice(_STRONG, plain, n),
        lambda: _bare_choice(lines[-1], n) if lines else None,
        lambda: _cued_choice(_WEAK, plain, n),
        lambda: _choice_quoted(plain, choices),
    )
    for finder in finders:
        index = finder()
        if index is not None:
            return index
    return None


def parse_mcq_reply(text: str, choices: Sequence[str]) -> Commit | Invalid:
    """A BrainTeaser choice from a reply (see the module docstring for the accepted forms).

    Args:
        text: The model's reply.
        choices: The options, in the order shown (``A`` is the first).
    """
    n = len(choices)
    for data in reversed(json_objects(text)):
        value = first_value(normalised_keys(data), _CHOICE_KEYS)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < n:
            return Commit(choice=value)
        if isinstance(value, str) and (index := _choice_in_text(value, choices)) is not None:
            return Commit(choice=index)
    index = _choice_in_text(text, choices)
    if index is not None:
        return Commit(choice=index)
    last = LETTERS[n - 1] if 0 < n <= len(LETTERS) else "?"
    return invalid(text, f"no option found: reply with the letter of one option, A-{last}, as 'Answer: X'")
