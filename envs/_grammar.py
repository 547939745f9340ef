"""``ActionGrammar``: the forms of a benchmark's moves, stated once, as a constraint on a model's reply.

A benchmark states the replies its parser reads (``Benchmark.prompts.action_grammar``) as a few *forms*: a line
(``Answer: B``, ``Question: ...?``) or a JSON object with fixed keys (``{"action": "inspect", "target":
"wooden spoon"}``), each value either one of listed strings (``OneOf``: the letters of the options, the
names in the scene) or bounded text (``FreeText``). From that one statement come

* ``gbnf()``: a llama.cpp GBNF grammar (the ``grammar`` field of llama.cpp's and llama-cpp-python's
  chat requests): the reply can only be one of the forms, written exactly as the prompt asks (after
  a line of prose when ``reasoning`` allows one);
* ``json_schema()``: the same moves as JSON objects (a line form ``Answer: B`` becomes ``{"answer":
  "B"}``), for OpenAI / vLLM structured output (``response_format: json_schema``);
* ``examples()``: one reply of each form in both shapes, which the tests feed to the benchmark's own
  parser: every reply the constraint admits is a move the parser reads.

FreeText values are one line, at most ``max_chars`` characters, starting with a letter or digit (small
models otherwise fill them with punctuation copied from the prompt), without quotes or backslashes
inside JSON. ``reasoning`` admits that many characters of prose before the move (a line of its own
in the grammar, a ``reasoning`` field first in the JSON schema's objects): the reasoning the prompt
asks for, bounded so a small model cannot spend its whole token budget on it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ActionGrammar", "FreeText", "JsonForm", "LineForm", "OneOf", "Value", "final_turn"]


@dataclass(frozen=True)
class OneOf:
    """One of the listed strings (a constant when there is one)."""

    options: tuple[str, ...]

    def __post_init__(self) -> None:
        if not self.options or any(not option for option in self.options):
            raise ValueError("a OneOf needs at least one non-empty option")


@dataclass(frozen=True)
class FreeText:
    """Free text on one line: 1 to ``max_chars`` characters, ending with ``end`` when given (``?``)."""

    max_chars: int = 200
    end: str = ""

    def __post_init__(self) -> None:
        if self.max_chars < 2:
            raise ValueError("FreeText needs max_chars of at least 2")


Value = OneOf | FreeText


@dataclass(frozen=True)
class LineForm:
    """A move written as one line: ``label`` then the value (``Answer: `` + a letter)."""

    kind: str
    """The move it makes (``commit``, ``ask``, ``inspect``)."""
    label: str
    """What the line starts with, as the prompt writes it (``Answer: ``)."""
    value: Value

    @property
    def key(self) -> str:
        """The JSON key of this move in ``json_schema`` (``answer`` for ``Answer: ``)."""
        return self.label.strip().rstrip(":").strip().lower().replace(" ", "_")


@dataclass(frozen=True)
class JsonForm:
    """A move written as one JSON object with these keys, in this order."""

    kind: str
    """The move it makes (``commit``, ``ask``, ``inspect``)."""
    fields: tuple[tuple[str, Value], ...]


Form = LineForm | JsonForm

REASONING_KEY = "reasoning"


@dataclass(frozen=True)
class ActionGrammar:
    """The replies a benchmark's parser reads in one situation (see the module docstring).

    Attributes:
        forms: The moves allowed now, one form each (or several: one per entity, say).
        reasoning: Characters of prose allowed before the move (0: the move alone).
    """

    forms: tuple[Form, ...]
    reasoning: int = 0

    def __post_init__(self) -> None:
        if not self.forms:
            raise ValueError("an ActionGrammar needs at least one form")

    @property
    def kinds(self) -> tuple[str, ...]:
        """The move kinds it admits, in order of first appearance."""
        return tuple(dict.fromkeys(form.kind for form in self.forms))

    # -- llama.cpp GBNF --------------------------------------------------------------------------

    def gbnf(self) -> str:
        """The grammar in llama.cpp's GBNF (``root`` is the whole reply)."""
        rules = _Rules()
        alternatives = [self._gbnf_form(form, rules) for form in self.forms]
        move = rules.add("move", " | ".join(alternatives))
        if self.reasoning:
            # A line of prose, as the prompt asks, then the move on a line of its own.
            prose = rules.add("prose", f'{_START} {_line_chars(self.reasoning - 1)} "\\n"')
            root = f"({prose})? {move}"
        else:
            root = move
        return "\n".join([f"root ::= {root}", *rules.lines])

    def _gbnf_form(self, form: Form, rules: _Rules) -> str:
        if isinstance(form, LineForm):
            return f"{_literal(form.label)} {_gbnf_value(form.value, rules, json_string=False)}"
        parts: list[str] = []
        for n, (key, value) in enumerate(form.fields):
            opener = "{" if n == 0 else ", "
            parts.append(_literal(f"{opener}{json.dumps(key)}: "))
            parts.append(_gbnf_value(value, rules, json_string=True))
        parts.append(_literal("}"))
        return "(" + " ".join(parts) + ")"

    # -- JSON schema ----------------------------------------------------------------------------

    def json_schema(self) -> dict[str, Any]:
        """The moves as JSON objects (line forms under their label's key), as one JSON schema."""
        objects = [self._schema_object(form) for form in self.forms]
        if len(objects) == 1:
            return objects[0]
        return {"type": "object", "anyOf": objects}

    def _schema_object(self, form: Form) -> dict[str, Any]:
        fields = [(form.key, form.value)] if isinstance(form, LineForm) else list(form.fields)
        if self.reasoning:
            fields.insert(0, (REASONING_KEY, FreeText(self.reasoning)))
        return {
            "type": "object",
            "properties": {key: _schema_value(value) for key, value in fields},
            "required": [key for key, _ in fields],
            "additionalProperties": False,
        }

    # -- what it admits -------------------------------------------------------------------------

    def examples(self) -> list[tuple[str, str]]:
        """``(kind, reply)`` pairs: each form written as the grammar admits it, then as the JSON schema
        does, with each choice's first and last option (and reasoning when allowed)."""
        found: list[tuple[str, str]] = []
        prose = "I think about it first." if self.reasoning else ""
        for form in self.forms:
            for pick in (0, -1):
                if isinstance(form, LineForm):
                    move = form.label + _example(form.value, pick)
                    fields = [(form.key, form.value)]
                else:
                    fields = list(form.fields)
                    move = self._example_object(fields, pick, "", spaced=True)
                found.append((form.kind, f"{prose}\n{move}" if prose else move))
                found.append((form.kind, self._example_object(fields, pick, prose, spaced=False)))
        return list(dict.fromkeys(found))

    @staticmethod
    def _example_object(fields: Sequence[tuple[str, Value]], pick: int, prose: str, *, spaced: bool) -> str:
        data = {REASONING_KEY: prose} if prose else {}
        data.update({key: _example(value, pick) for key, value in fields})
        return json.dumps(data, ensure_ascii=False) if spaced else json.dumps(data, separators=(",", ":"))

    def max_chars(self) -> int:
        """The longest reply the grammar admits, in characters (for time estimates)."""
        longest = 0
        for form in self.forms:
            if isinstance(form, LineForm):
                size = len(form.label) + _value_chars(form.value)
            else:
                size = len(json.dumps({key: "" for key, _ in form.fields})) + sum(
                    _value_chars(value) for _, value in form.fields
                )
            longest = max(longest, size)
        return longest + self.reasoning + (len(REASONING_KEY) + 6 if self.reasoning else 0)


def final_turn(info: Mapping[str, Any]) -> bool:
    """Whether the move asked for now is the episode's last (``info``'s ``turn`` and ``max_turns``).

    A benchmark's grammar then offers only its final-answer forms: a question or an inspection on the
    last turn can change nothing, and a small model that keeps inspecting would end every episode
    without an answer (a timeout, which the papers leave out of the scored episodes).
    """
    turns, used = info.get("max_turns"), info.get("turn")
    return isinstance(turns, int) and isinstance(used, int) and turns - used <= 1


# -- GBNF helpers ------------------------------------------------------------------------------------

# A text value starts with a letter or digit (any script): not a space, quote, bracket or punctuation.
_START = r'[^ \t\r\n"\\{}\[\](),.:;!?*#>`~|-]'


class _Rules:
    """Named rules shared by the alternatives (one per distinct value)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._names: dict[str, str] = {}

    def add(self, stem: str, body: str) -> str:
        name = self._names.get(body)
        if name is None:
            name = f"{stem}{len(self._names) + 1}"
            self._names[body] = name
            self.lines.append(f"{name} ::= {body}")
        return name


def _literal(text: str) -> str:
    """A GBNF string literal."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{escaped}"'


def _line_chars(count: int, *, json_string: bool = False, stop: str = "") -> str:
    """Up to ``count`` characters of one line (no quote or backslash inside a JSON string)."""
    excluded = "\\r\\n" + ('"\\\\' if json_string else "") + "".join(f"\\{c}" if c in "]\\^-" else c for c in stop)
    return f"[^{excluded}]{{0,{max(0, count)}}}"


def _gbnf_value(value: Value, rules: _Rules, *, json_string: bool) -> str:
    if isinstance(value, OneOf):
        options = [json.dumps(o, ensure_ascii=False) if json_string else o for o in value.options]
        return rules.add("choice", " | ".join(_literal(o) for o in options))
    rest = value.max_chars - 1 - len(value.end)
    body = f"{_START} {_line_chars(rest, json_string=json_string, stop=value.end)}"
    if value.end:
        body += f" {_literal(value.end)}"
    if json_string:
        body = f'"\\"" {body} "\\""'
    return rules.add("text", body)


def _schema_value(value: Value) -> dict[str, Any]:
    if isinstance(value, OneOf):
        return {"const": value.options[0]} if len(value.options) == 1 else {"enum": list(value.options)}
    schema: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": value.max_chars}
    if value.end:
        schema["pattern"] = re.escape(value.end) + "$"
    return schema


def _example(value: Value, pick: int) -> str:
    if isinstance(value, OneOf):
        return value.options[pick]
    text = "Was it something in the story" if pick == 0 else "It was a reflection in the window"
    return text[: value.max_chars - len(value.end)] + value.end


def _value_chars(value: Value) -> int:
    if isinstance(value, OneOf):
        return max(len(json.dumps(option)) for option in value.options)
    return value.max_chars + 2
