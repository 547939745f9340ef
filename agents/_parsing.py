"""Read an action out of a model's free-form reply, tolerantly, per benchmark.

Models wrap answers in prose, code fences and markdown, rename keys and misspell names. The
parsers here accept all of that and return an ``Action``; whatever they cannot read becomes
``Invalid`` (with the raw text and a reason the env shows the player), never an exception.

* JSON anywhere in the text, fenced or not; the *last* object that means something wins, since
  a reasoning model states its answer at the end. Single quotes and trailing commas are repaired.
* CreativityBench: ``gold_entity``/``entity``, ``gold_part``/``part``, ``how_to_use``/``how``;
  an ``action`` of inspect / ask / commit; ``Entity: ...`` label lines; the env's command lines.
  Near-miss entity and part names are resolved with ``match_name``; a name matching nothing is
  kept as written, so the env can count it as a hallucination.
* BrainTeaser: ``A``, ``(B)``, ``option 3`` (an ordinal: the third option), ``Answer: C``,
  ``the answer is b)``, or the option's own text. In JSON, an integer ``choice`` is an index
  (as in ``Commit``), and a string goes through the text forms.
* SPLAT: ``Question: ...`` or ``Answer: ...`` lines (the first labelled line is the move), JSON,
  or a bare line ending in ``?`` (the last such line is the question).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lateralgym.envs import Action, Ask, Commit, Inspect, Invalid, parse_action
from lateralgym.envs._matching import match_name, words

__all__ = [
    "json_objects",
    "parse_creativity_reply",
    "parse_mcq_reply",
    "parse_reply",
    "parse_situation_reply",
]

RAW_LIMIT = 2000
"""Characters of the raw reply kept in an ``Invalid`` action (the full text is in the LLM log)."""

LETTERS = "ABCDEFGH"

_INSPECT_WORDS = frozenset({"inspect", "explore", "examine", "look", "look_at", "check", "view", "investigate"})
_ASK_WORDS = frozenset({"ask", "question", "query", "ask_question"})
_COMMIT_WORDS = frozenset({"commit", "answer", "submit", "final", "final_answer", "solve", "solution", "use"})

_ENTITY_KEYS = ("gold_entity", "entity", "entity_name", "tool", "object", "item", "target", "name")
_PART_KEYS = ("gold_part", "part", "part_name", "component")
_HOW_KEYS = ("how_to_use", "how", "how_to", "usage", "use", "method", "explanation", "plan")
_ACTION_KEYS = ("action", "kind", "type", "move")
_QUESTION_KEYS = ("question", "ask", "query")
_CHOICE_KEYS = ("answer", "choice", "option", "letter", "final_answer", "selected", "label")
_EXPLANATION_KEYS = ("answer", "explanation", "solution", "final_answer", "commit")


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


def _norm_keys(data: Mapping[str, Any]) -> dict[str, Any]:
    return {re.sub(r"[\s\-]+", "_", str(k).strip().lower()): v for k, v in data.items()}


def _first(data: Mapping[str, Any], keys: Sequence[str]) -> Any:
    for key in keys:
        value = data.get(key)
        if value is not None and value != "":
            return value
    return None


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, list | tuple):
        return " ".join(str(v) for v in value).strip() or None
    return str(value)


def _kind(data: Mapping[str, Any]) -> str | None:
    """``inspect``, ``ask`` or ``commit`` from an ``action``-like key, if it names one."""
    value = _first(data, _ACTION_KEYS)
    if not isinstance(value, str):
        return None
    word = re.sub(r"[\s\-]+", "_", value.strip().lower())
    if word in _INSPECT_WORDS:
        return "inspect"
    if word in _ASK_WORDS:
        return "ask"
    if word in _COMMIT_WORDS:
        return "commit"
    return None


def _invalid(text: str, reason: str) -> Invalid:
    return Invalid(raw=text[:RAW_LIMIT], reason=reason)


# -- text helpers --------------------------------------------------------------------------------

_EMPHASIS = re.compile(r"\*\*|__|[*`]")
_LEAD = re.compile(r"^[\s>#]+")
_LABEL_LINE = re.compile(r"^\s*(?:[-\u2022]\s+|\d{1,2}[.)]\s+)?([A-Za-z][A-Za-z_ ]{0,24}?)\s*[:=]\s*(.*)$")


def _strip_markup(text: str) -> str:
    """``text`` without markdown emphasis and code marks (underscores inside names are kept)."""
    return _EMPHASIS.sub("", text)


def _clean_line(line: str) -> str:
    """A line without markdown emphasis, heading or quote marks."""
    return _LEAD.sub("", _strip_markup(line)).strip()


def _labelled_lines(text: str) -> list[tuple[str, str, int]]:
    """``(label, value, line number)`` for each ``Label: value`` line, label normalised."""
    out = []
    for n, raw in enumerate(text.splitlines()):
        match = _LABEL_LINE.match(_clean_line(raw))
        if match:
            out.append((re.sub(r"\s+", "_", match[1].strip().lower()), match[2].strip(), n))
    return out


def _command(text: str) -> Inspect | Ask | Commit | None:
    """The last line written as an env command (``inspect: x``, ``ask: y``, ``commit: a | b | c``)."""
    for line in reversed(text.splitlines()):
        cleaned = _clean_line(line)
        if re.match(r"^(inspect|ask|commit)\s*:", cleaned, re.IGNORECASE):
            action = parse_action(cleaned)
            if not isinstance(action, Invalid):
                return action
    return None


# -- CreativityBench -----------------------------------------------------------------------------


def _resolve_names(action: Inspect | Ask | Commit, public: Mapping[str, Any]) -> Inspect | Ask | Commit:
    """Replace near-miss entity and part names by the scene's spelling; keep unknown names as written."""
    entities = [str(e) for e in public.get("entities", [])]
    revealed: Mapping[str, Mapping[str, Any]] = public.get("revealed", {}) or {}
    if isinstance(action, Inspect):
        return Inspect(entity=match_name(action.entity, entities) or action.entity)
    if isinstance(action, Commit) and action.entity:
        entity = match_name(action.entity, entities) or action.entity
        part = action.part
        if part and entity in revealed:
            part = match_name(part, [str(p) for p in revealed[entity]]) or part
        return action.model_copy(update={"entity": entity, "part": part})
    return action


def _creativity_from_json(data: Mapping[str, Any], allowed: frozenset[str]) -> Inspect | Ask | Commit | None:
    data = _norm_keys(data)
    entity = _text(_first(data, _ENTITY_KEYS))
    part = _text(_first(data, _PART_KEYS))
    how = _text(_first(data, _HOW_KEYS))
    question = _text(_first(data, _QUESTION_KEYS))
    kind = _kind(data)
    if kind is None:  # infer the move from the fields present
        if part or how or "gold_entity" in data:
            kind = "commit"
        elif question:
            kind = "ask"
        elif entity:
            kind = "inspect" if "inspect" in allowed else "commit"
    if kind == "inspect" and entity:
        return Inspect(entity=entity)
    if kind == "ask" and question:
        return Ask(question=question)
    if kind == "commit" and (entity or part):
        return Commit(entity=entity, part=part, how_to_use=how)
    return None


def _creativity_from_labels(text: str) -> Commit | None:
    fields: dict[str, str] = {}
    for label, value, _ in _labelled_lines(text):
        if not value:
            continue
        if label in _ENTITY_KEYS[:4]:
            fields["entity"] = value
        elif label in _PART_KEYS:
            fields["part"] = value
        elif label in ("how_to_use", "how", "how_to", "usage", "use", "method"):
            fields["how_to_use"] = value
    if "entity" in fields and "part" in fields:
        return Commit(**fields)
    return None


def parse_creativity_reply(
    text: str, public: Mapping[str, Any], allowed: Sequence[str] = ("inspect", "ask", "commit")
) -> Action:
    """A CreativityBench move from a reply: JSON, ``Entity:``/``Part:`` lines or an env command.

    Args:
        text: The model's reply.
        public: ``info["public"]``: entity names and revealed parts, for resolving near-misses.
        allowed: The actions the mode allows; an entity-only JSON object is an inspection when
            ``inspect`` is allowed, else an (incomplete) commit.
    """
    allowed_set = frozenset(allowed)
    action: Inspect | Ask | Commit | None = None
    for data in reversed(json_objects(text)):
        action = _creativity_from_json(data, allowed_set)
        if action is not None:
            break
    if action is None:
        action = _command(text) or _creativity_from_labels(text)
    if action is None:
        return _invalid(
            text,
            'no answer found: reply with a JSON object such as {"gold_entity": "<entity>", "gold_part": "<part>", '
            '"how_to_use": "<how>"}'
            + (' or {"action": "inspect", "entity": "<entity>"}' if "inspect" in allowed_set else ""),
        )
    return _resolve_names(action, public)


# -- BrainTeaser ---------------------------------------------------------------------------------

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
    cleaned = _clean_line(text)
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
    plain = _strip_markup(text)
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
        value = _first(_norm_keys(data), _CHOICE_KEYS)
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < n:
            return Commit(choice=value)
        if isinstance(value, str) and (index := _choice_in_text(value, choices)) is not None:
            return Commit(choice=index)
    index = _choice_in_text(text, choices)
    if index is not None:
        return Commit(choice=index)
    last = LETTERS[n - 1] if 0 < n <= len(LETTERS) else "?"
    return _invalid(text, f"no option found: reply with the letter of one option, A-{last}, as 'Answer: X'")


# -- SPLAT ---------------------------------------------------------------------------------------

_QUESTION_LABELS = frozenset({"question", "q", "ask", "my_question", "next_question"})
_ANSWER_LABELS = frozenset(
    {"answer", "a", "explanation", "final_answer", "solution", "commit", "my_answer", "full_explanation"}
)


def _situation_from_json(data: Mapping[str, Any]) -> Ask | Commit | None:
    data = _norm_keys(data)
    kind = _kind(data)
    question = _text(_first(data, _QUESTION_KEYS))
    explanation = _text(_first(data, _EXPLANATION_KEYS))
    if kind == "ask" or (kind is None and question and not explanation):
        text = question or explanation
        return Ask(question=text) if text else None
    if kind == "commit" or (kind is None and explanation):
        text = explanation or question
        return Commit(answer=text) if text else None
    return None


def _situation_from_labels(text: str) -> Ask | Commit | None:
    lines = text.splitlines()
    labelled = [
        (label, value, n) for label, value, n in _labelled_lines(text) if label in _QUESTION_LABELS | _ANSWER_LABELS
    ]
    if not labelled:
        return None
    label, value, n = labelled[0]
    if label in _QUESTION_LABELS:
        return Ask(question=value) if value else None
    # An explanation may run over several lines: up to the next labelled line.
    stop = next((m for _, _, m in labelled[1:]), len(lines))
    body = " ".join([value, *(_clean_line(line) for line in lines[n + 1 : stop])]).strip()
    body = re.sub(r"\s+", " ", body)
    return Commit(answer=body) if body else None


def parse_situation_reply(text: str) -> Action:
    """A SPLAT move: a yes/no question (``Ask``) or an explanation (``Commit(answer=...)``)."""
    action: Ask | Commit | None = None
    for data in reversed(json_objects(text)):
        action = _situation_from_json(data)
        if action is not None:
            return action
    action = _situation_from_labels(text)
    if action is not None:
        return action
    questions = [_clean_line(line) for line in text.splitlines() if _clean_line(line).endswith("?")]
    if questions:
        return Ask(question=questions[-1])
    return _invalid(
        text, "no move found: reply with one line, 'Question: <a yes/no question>' or 'Answer: <explanation>'"
    )


# -- dispatch ------------------------------------------------------------------------------------


def parse_reply(text: str, benchmark: str | None, public: Mapping[str, Any], mode: str | None = None) -> Action:
    """The action a reply makes in the given benchmark; ``Invalid`` when there is none.

    Args:
        text: The model's reply.
        benchmark: ``info["benchmark"]``: ``creativity``, ``brainteaser`` or ``splat``; anything
            else reads the env's own command forms only.
        public: ``info["public"]``.
        mode: ``info["mode"]``; in the static modes an entity-only answer is a commit.
    """
    if not text.strip():
        return _invalid(text, "the reply was empty")
    if benchmark == "creativity":
        allowed = ("inspect", "ask", "commit") if mode == "interactive" else ("commit",)
        return parse_creativity_reply(text, public, allowed)
    if benchmark == "brainteaser":
        return parse_mcq_reply(text, [str(c) for c in public.get("choices", [])])
    if benchmark == "splat":
        return parse_situation_reply(text)
    return parse_action(text)
