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


def _balanced_end(text: str, start: int) -> int | None:
    """Index just past the ``}`` closing the ``{`` at ``start`` (quote-aware), or None."""
    depth = 0
    quote: str | None = None
    escaped = False
    for i in range(start, len(text)):
        c = text[i]
        if quote is not None:
            if escaped:
                escaped = False
            elif c == "\\":
                escaped = True
            elif c == quote:
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


_PY_LITERALS = {"true": "True", "false": "False", "null": "None"}


def _python_literal(candidate: str) -> Any:
    try:
        return ast.literal_eval(candidate)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


_CURLY_QUOTES = str.maketrans("\u201c\u201d\u2018\u2019", "\"\"''")


def _repair(candidate: str) -> dict[str, Any] | None:
    """Parse a not-quite-JSON object: curly quotes, trailing commas, Python-style quoting."""
    fixed = candidate.translate(_CURLY_QUOTES)
    fixed = re.sub(r",\s*([}\]])", r"\1", fixed)
    try:
        data = json.loads(fixed)
    except json.JSONDecodeError:
        data = _python_literal(fixed)
        if data is None:  # JSON's literals inside Python-style quoting
            data = _python_literal(re.sub(r"\b(true|false|null)\b", lambda m: _PY_LITERALS[m[1]], fixed))
    return data if isinstance(data, dict) else None


def json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text`` (in prose, code fences or alone), in order.

    An object that is not strict JSON is repaired when it only has curly quotes, trailing commas
    or single quotes; an unreadable one is skipped (objects nested in it may still be found).
    """
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    i = 0
    while (start := text.find("{", i)) >= 0:
        try:
            data, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            close = _balanced_end(text, start)
            repaired = _repair(text[start:close]) if close is not None else None
            if repaired is None or close is None:
                i = start + 1
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
