"""Read a BrainTeaser choice out of a model's reply.

Accepted forms, from the most to the least explicit: the option's own text, a bare ``A``, ``(B)``
or ``option 3`` (an ordinal: the third option), a strongly cued letter (``Answer: C``, ``the
answer is b)``, ``I pick D``), the last line alone, a weakly cued one (``option B``), and finally
an option whose text the reply quotes. In JSON, an integer ``choice`` is an index (as in
``Commit``), and a string goes through the text forms.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from lateralgym.envs import Commit, Invalid
from lateralgym.envs._matching import match_name, words
from lateralgym.envs._reply_text import (
    clean_line,
    first_value,
    invalid,
    json_objects,
    normalised_keys,
    strip_markup,
)

LETTERS = "ABCDEFGH"

__all__ = ["parse_mcq_reply"]

_CHOICE_KEYS = ("answer", "choice", "option", "letter", "final_answer", "selected", "label")

_NONE_OF_ABOVE = re.compile(r"\bnone of (?:the )?above\b", re.IGNORECASE)
_BARE_LETTER = re.compile(
    r"^\W*(?:(?:the\s+)?(?:final\s+|correct\s+)?(?:answer|option|choice|letter|commit)\s*(?:is\s*)?[:=\-]?\s*)?"
    r"\(?\s*([A-Ha-h])\s*\)?\s*[.):!]?\W*$",
    re.IGNORECASE,
)
# A bare number is read as an ordinal ("3" = the third option) only alone or after option/choice:
# after "answer" it is as likely to be the option's text (puzzles with numeric answers).
_BARE_ORDINAL = re.compile(
    r"^\W*(?:(?:option|choice|number)\s*(?:no\.?\s*)?[:=\-#]?\s*)?\(?\s*([1-9])\s*\)?\s*[.):!]?\W*$",
    re.IGNORECASE,
)
# A strong cue says "this is my answer"; a weak one only names an option. Cues ignore case; the
# letter itself must be a capital, bracketed, or followed by punctuation, so the article in
# "the answer is a digital piano" is not read as option A.
_STRONG_CUE = (
    r"(?i:final\s+answer|correct\s+answer|right\s+answer|best\s+answer|answer|commit|correct\s+(?:option|choice)|"
    r"best\s+(?:option|choice)|i\s+(?:choose|pick|select|go\s+with)|i(?:'d|\s+would)\s+(?:choose|pick|go\s+with))"
    r"\s*(?i:is|would\s+be|will\s+be|must\s+be|should\s+be)?\s*[:=\-]?\s*"
)
_LETTER = r"(?:\(\s*([A-Ha-h])\s*\)|\b([A-H])(?![\w'])|\b([a-h])(?=[).:,;]|\s*$))"
_ORDINAL = r"(?i:option|choice|number)\s*(?:no\.?\s*)?[:=\-#]?\s*\(?([1-9])(?!\d)"
_STRONG = re.compile(
    r"\b" + _STRONG_CUE + r"(?:(?:(?i:option|choice|letter)\s+)?" + _LETTER + "|" + _ORDINAL + ")", re.MULTILINE
)
_WEAK = re.compile(r"\b(?:(?i:option|choice|letter)\s*[:=\-]?\s*" + _LETTER + "|" + _ORDINAL + ")", re.MULTILINE)


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


def _choice_named(text: str, choices: Sequence[str]) -> int | None:
    """The option whose whole text the reply is (tolerantly: case, punctuation, near-misses)."""
    matched = match_name(text, list(choices))
    return list(choices).index(matched) if matched is not None else None


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
        lambda: _choice_named(plain, choices),
        lambda: _bare_choice(plain, n),
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
