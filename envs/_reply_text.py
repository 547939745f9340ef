"""What every reply parser needs: JSON objects found anywhere in a reply, and markdown-free lines.

Models wrap answers in prose, code fences and markdown. ``json_objects`` finds every JSON object
in a text, repairing the near misses models write (curly quotes, trailing commas, Python-style
quoting); the line helpers strip emphasis, headings and quote marks and read ``Label: value``
lines. Also used by the LLM judges to read their models' JSON verdicts.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from lateralgym.envs import Invalid

__all__ = [
    "MOVE_KEYS",
    "QUESTION_KEYS",
    "move_kind",
    "JSON_SCAN_LIMIT",
    "RAW_LIMIT",
    "as_text",
    "clean_line",
    "first_value",
    "invalid",
    "json_objects",
    "labelled_lines",
    "normalised_keys",
    "strip_markup",
]

RAW_LIMIT = 2000
"""Characters of the raw reply kept in an ``Invalid`` action (the full text is in the LLM log)."""


# -- JSON ----------------------------------------------------------------------------------------

JSON_SCAN_LIMIT = 20_000
"""Characters at the end of a reply that ``json_objects`` reads: answers come last, and the scan
stays cheap however long (or hostile) the reply."""

_REPAIR_BUDGET = 4
"""Repairs may read at most this many times the scanned text in all, so nested unreadable
objects cannot make the scan quadratic."""

_QUOTES = "\"'"
_STRING_OPENERS = frozenset("{[,:")


def _brace_pairs(text: str) -> dict[int, int]:
    """For each ``{`` that opens an object, the index just past its closing ``}``; one pass.

    Quotes open a string only inside braces and only where a JSON or Python string may start
    (after ``{``, ``[``, ``,`` or ``:``), so an apostrophe in prose ("it's") is not one; a string
    ends at its quote or at the end of the line. Braces inside strings do not count.
    """
    pairs: dict[int, int] = {}
    stack: list[int] = []
    quote: str | None = None
    escaped = False
    previous = ""  # the last non-space character outside strings
    for i, c in enumerate(text):
        if quote is not None:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote or c == "\n":
                quote = None
                previous = c
            continue
        if c == "{":
            stack.append(i)
        elif c == "}":
            if stack:
                pairs[stack.pop()] = i + 1
        elif c in _QUOTES and stack and previous in _STRING_OPENERS:
            quote = c
        if not c.isspace():
            previous = c
    return pairs


_PY_LITERALS = {"true": "True", "false": "False", "null": "None"}


def _python_literal(candidate: str) -> Any:
    try:
        return ast.literal_eval(candidate)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None  # TypeError: an unhashable key or set member, as in "{{}}"


_CURLY_QUOTES = str.maketrans("\u201c\u201d\u2018\u2019", "\"\"''")


def _repair(candidate: str) -> dict[str, Any] | None:
    """Parse a not-quite-JSON object: curly quotes, trailing commas, Python-style quoting."""
    fixed = candidate.translate(_CURLY_QUOTES)
    fixed = re.sub(r",\s*([}\]])", r"\1", fixed)
    try:
        data = json.loads(fixed)
    except (json.JSONDecodeError, RecursionError):
        data = _python_literal(fixed)
        if data is None:  # JSON's literals inside Python-style quoting
            data = _python_literal(re.sub(r"\b(true|false|null)\b", lambda m: _PY_LITERALS[m[1]], fixed))
    return data if isinstance(data, dict) else None


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text`` (in prose, code fences or alone), in order.

    An object that is not strict JSON is repaired when it only has curly quotes, trailing commas
    or single quotes; an unreadable one is skipped (objects nested in it may still be found).
    Only the last ``JSON_SCAN_LIMIT`` characters are read, in time linear in their length.
    """
    text = text[-JSON_SCAN_LIMIT:]
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    repair_budget = _REPAIR_BUDGET * len(text)
    i = 0
    for start, close in sorted(_brace_pairs(text).items()):
        if start < i:  # inside an object already found
            continue
        try:
            data, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, RecursionError):
            repaired = None
            if close - start <= repair_budget:
                repair_budget -= close - start
                repaired = _repair(text[start:close])
            if repaired is None:
                continue
            data, end = repaired, close
        if isinstance(data, dict):
            found.append(data)
            i = end
    return found


# -- values --------------------------------------------------------------------------------------


def normalised_keys(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with keys lower-cased and spaces or dashes turned into ``_`` (``"Gold Part"`` -> ``gold_part``)."""
    return {re.sub(r"[\s\-]+", "_", str(k).strip().lower()): v for k, v in data.items()}


def first_value(data: Mapping[str, Any], keys: Sequence[str]) -> Any:
    """The value of the first of ``keys`` that is present and not empty, or None."""
    for key in keys:
        value = data.get(key)
        if value is not None and value != "":
            return value
    return None


def as_text(value: Any) -> str | None:
    """A JSON value as stripped text (a list joined with spaces); None when empty."""
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value).strip() or None
    return str(value)


_MOVE_WORDS: dict[str, frozenset[str]] = {
    "inspect": frozenset({"inspect", "explore", "examine", "look", "look_at", "check", "view", "investigate"}),
    "ask": frozenset({"ask", "question", "query", "ask_question"}),
    "commit": frozenset({"commit", "answer", "submit", "final", "final_answer", "solve", "solution", "use"}),
}
MOVE_KEYS = ("action", "kind", "type", "move")
"""Keys under which a model names its move in JSON."""
QUESTION_KEYS = ("question", "ask", "query")
"""Keys under which a model writes its yes/no question in JSON."""


def move_kind(data: Mapping[str, Any]) -> str | None:
    """``inspect``, ``ask`` or ``commit`` from an ``action``-like key of a reply's JSON, if it names one."""
    value = first_value(data, MOVE_KEYS)
    if not isinstance(value, str):
        return None
    word = re.sub(r"[\s\-]+", "_", value.strip().lower())
    return next((kind for kind, names in _MOVE_WORDS.items() if word in names), None)


def invalid(text: str, reason: str) -> Invalid:
    """The ``Invalid`` action of an unreadable reply: its first ``RAW_LIMIT`` characters and why."""
    return Invalid(raw=text[:RAW_LIMIT], reason=reason)


# -- text helpers --------------------------------------------------------------------------------

_EMPHASIS = re.compile(r"\*\*|__|[*`]")
_LEAD = re.compile(r"^[\s>#]+")
_LABEL_LINE = re.compile(r"^\s*(?:[-\u2022]\s+|\d{1,2}[.)]\s+)?([A-Za-z][A-Za-z_ ]{0,24}?)\s*[:=]\s*(.*)$")


def strip_markup(text: str) -> str:
    """``text`` without markdown emphasis and code marks (underscores inside names are kept)."""
    return _EMPHASIS.sub("", text)


def clean_line(line: str) -> str:
    """A line without markdown emphasis, heading or quote marks."""
    return _LEAD.sub("", strip_markup(line)).strip()


def labelled_lines(text: str) -> list[tuple[str, str, int]]:
    """``(label, value, line number)`` for each ``Label: value`` line, label normalised."""
    out = []
    for n, raw in enumerate(text.splitlines()):
        match = _LABEL_LINE.match(clean_line(raw))
        if match:
            out.append((re.sub(r"\s+", "_", match[1].strip().lower()), match[2].strip(), n))
    return out
