"""Text in observations and actions: Unicode end to end, within a Gymnasium ``Text`` space.

Gymnasium's ``Text`` space checks membership against a character set it stores as a list and an
index, which cannot hold all of Unicode. ``UnicodeText`` keeps the ``Text`` interface (so
``check_env`` and wrappers treat it as one) but admits any string of Unicode scalar values up to
``max_length``: Chinese, π, emoji and accents reach the player intact. Samples are drawn from a
small mixed-script alphabet, so random actions still exercise non-ASCII text.
"""

from __future__ import annotations

import re
import string
from typing import Any

from gymnasium import spaces

MAX_TEXT = 32_768
"""Longest observation text, in characters; longer text is cut with a marker."""

SAMPLE_CHARSET: str = "".join(
    dict.fromkeys(
        "\t\n"
        + string.printable[:95]
        + "àéîõüçñßøæ"
        + "αβγδπΩλμ"
        + "абвгдж"
        + "的一是不了人我在有他这中大来上国"
        + "→←°±×÷€™…—"
        + "😀🎉🧩🔑"
    )
)
"""Characters random samples are drawn from (membership admits every Unicode scalar value)."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f]")
"""C0 control characters other than tab and newline (a bell, an escape sequence): dropped."""
_ODD = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
"""Anything ``sanitise`` would change (carriage returns are in the control range)."""


class UnicodeText(spaces.Text):
    """A ``Text`` space of any Unicode string from ``min_length`` to ``max_length`` characters.

    Lone UTF-16 surrogates are not Unicode scalar values (they cannot be written as UTF-8), so a
    string holding one is not a member; ``sanitise`` replaces them.
    """

    def __init__(self, max_length: int, *, min_length: int = 0, seed: Any = None) -> None:
        super().__init__(max_length=max_length, min_length=min_length, charset=SAMPLE_CHARSET, seed=seed)

    def contains(self, x: Any) -> bool:
        return isinstance(x, str) and self.min_length <= len(x) <= self.max_length and _SURROGATE.search(x) is None

    def __repr__(self) -> str:
        return f"UnicodeText({self.min_length}, {self.max_length})"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, UnicodeText)
            and self.min_length == other.min_length
            and self.max_length == other.max_length
        )

    def __hash__(self) -> int:
        return hash((UnicodeText, self.min_length, self.max_length))


def text_space(max_length: int = MAX_TEXT) -> UnicodeText:
    """A text space that admits the empty string and every Unicode character."""
    return UnicodeText(max_length=max_length, min_length=0)


def sanitise(text: str, max_length: int = MAX_TEXT) -> str:
    """Make ``text`` a member of ``text_space``: newlines normalised, control characters other than
    tab and newline dropped, lone surrogates replaced by U+FFFD, too long cut with a marker. Every
    other character (Chinese, π, emoji, accents) is kept as it is."""
    if len(text) <= max_length and _ODD.search(text) is None:
        return text  # the common case, in one scan (``is_clean``)
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if _CONTROL.search(text):
        text = _CONTROL.sub("", text)
    if _SURROGATE.search(text):
        text = _SURROGATE.sub("\ufffd", text)
    if len(text) > max_length:
        marker = "\n[... cut ...]"
        text = text[: max_length - len(marker)] + marker
    return text


def is_clean(text: str) -> bool:
    """``sanitise`` would return ``text`` as it is. Two clean texts join clean while the whole fits
    ``MAX_TEXT``: a clean text holds no carriage return, the one character that pairs across the join."""
    return len(text) <= MAX_TEXT and _ODD.search(text) is None


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""What a spreadsheet reads as the start of a formula when a CSV cell begins with it (OWASP's list)."""


def csv_cell(value: object) -> object:
    """A value fit for a CSV cell a spreadsheet may open: text starting like a formula (``=``, ``+``,
    ``-``, ``@``, tab, carriage return) gets a leading ``'`` (OWASP's advice against CSV injection),
    so ``=HYPERLINK(...)`` in a dataset's title shows as text instead of running. Numbers (``-3``)
    and other values are kept as they are; ``csv_text`` reads an escaped cell back.
    """
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


def csv_text(cell: str) -> str:
    """A CSV cell's text with ``csv_cell``'s escape removed (a spreadsheet that saved the file may
    have removed it already)."""
    return cell[1:] if cell.startswith("'") and cell[1:2] and cell[1:].startswith(FORMULA_STARTS) else cell
