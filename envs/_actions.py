"""The player's actions: a tagged union of ``Inspect``, ``Ask`` and ``Commit`` (plus ``Invalid``).

Environments take an ``Action``, a dict with a ``kind`` key, or text. Text is either the JSON of an
action or one of the command forms below; anything else becomes ``Invalid`` and the env answers it
with a message instead of raising::

    inspect: <entity name>
    ask: <yes/no question>
    commit: <entity> | <part> | <how to use it>      (an answer naming a part of an entity)
    commit: <choice number 0..3 or letter A..D>      (multiple choice)
    commit: <explanation>                            (a free-text answer)

A benchmark whose answers have other parts puts them in ``Commit.fields`` (the JSON form:
``{"kind": "commit", "fields": {"plan": "..."}}``); the benchmark's scene reads them.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    TypeAdapter,
    ValidationError,
    model_serializer,
)

from lateralgym.envs._errors import validation_message


class _ActionBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Inspect(_ActionBase):
    """Look closely at one entity: reveals its parts and their attributes."""

    kind: Literal["inspect"] = "inspect"
    entity: str
    """Entity name as shown in the scene (case and snake_case are tolerated)."""


class Ask(_ActionBase):
    """Ask the judge a yes/no question."""

    kind: Literal["ask"] = "ask"
    question: str


class Commit(_ActionBase):
    """Give the final answer. Which fields matter depends on the benchmark."""

    kind: Literal["commit"] = "commit"
    entity: str | None = None
    """The chosen entity (answers that name a part of an entity in the scene)."""
    part: str | None = None
    """The chosen part of that entity."""
    how_to_use: str | None = None
    """How the part would be used."""
    choice: int | None = None
    """Multiple choice: index of the chosen option."""
    answer: str | None = None
    """A free-text answer (an explanation, a name)."""
    fields: dict[str, str | int | float | bool] = Field(default_factory=dict)
    """Parts of an answer a benchmark defines itself, by name (its scene reads them)."""

    @model_serializer(mode="wrap")
    def _without_empty_fields(self, handler: SerializerFunctionWrapHandler) -> Any:
        """Leave ``fields`` out when empty, so commits log as they did before it existed."""
        data = handler(self)
        if isinstance(data, dict) and not data.get("fields"):
            data.pop("fields", None)
        return data


class Invalid(_ActionBase):
    """Something that is not an action (unparsable text, a malformed LLM reply)."""

    kind: Literal["invalid"] = "invalid"
    raw: str = ""
    """The text as received."""
    reason: str = ""
    """Why it could not be parsed."""


Action = Annotated[Inspect | Ask | Commit | Invalid, Field(discriminator="kind")]
"""Any action; ``kind`` tells which."""

ACTION_KINDS: tuple[str, ...] = ("inspect", "ask", "commit")

_ADAPTER: TypeAdapter[Inspect | Ask | Commit | Invalid] = TypeAdapter(Action)
_COMMAND = re.compile(r"^\s*(inspect|ask|commit)\s*[:\s]\s*(.*)$", re.IGNORECASE | re.DOTALL)
# Possessive spaces: with ``\s*\.?\s*$`` a letter followed by spaces and then anything else was
# tried at every split of the spaces (quadratic: "commit: A", 32,000 spaces and "x" took 4 s).
_CHOICE = re.compile(r"^\s*+\(?([0-9]|[A-Ha-h])\)?\s*+\.?\s*+$")


_ACTION_TYPES = (Inspect, Ask, Commit, Invalid)


def action_from_dict(data: dict[str, Any]) -> Inspect | Ask | Commit | Invalid:
    """Validate a dict with a ``kind`` key into an action; bad dicts become ``Invalid``."""
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        where, message = validation_message(exc, "action")
        return Invalid(raw=json.dumps(data, default=str)[:2000], reason=f"{where}: {message}")


def parse_choice(text: str) -> int | None:
    """``"2"``, ``"C"``, ``"(c)"`` -> 2 (letters A-H, digits 0-9); anything else -> None."""
    match = _CHOICE.match(text)
    if not match:
        return None
    token = match.group(1)
    return int(token) if token.isdigit() else ord(token.upper()) - ord("A")


def parse_action(value: object) -> Inspect | Ask | Commit | Invalid:
    """Turn an ``Action``, a dict or text into an action. Never raises."""
    if not isinstance(value, str):  # text first: it is what players send on every step
        if isinstance(value, _ACTION_TYPES):
            return value
        if isinstance(value, dict):
            return action_from_dict(value)
        return Invalid(raw=repr(value)[:2000], reason=f"expected text or an action, got {type(value).__name__}")
    text = value.strip()
    if text.startswith("{"):
        # The JSON form parsed and validated in one pass (what a program sends every step); text it refuses
        # takes the two steps below, which say what is wrong with it.
        try:
            return _ADAPTER.validate_json(text)
        except ValidationError:
            pass
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            return Invalid(raw=value[:2000], reason=f"invalid JSON: {exc.msg}")
        if isinstance(data, dict):
            return action_from_dict(data)
    match = _COMMAND.match(text)
    if not match:
        return Invalid(
            raw=value[:2000],
            reason="expected 'inspect: <entity>', 'ask: <question>' or 'commit: ...' (or an action as JSON)",
        )
    kind, rest = match.group(1).lower(), match.group(2).strip()
    if not rest:
        return Invalid(raw=value[:2000], reason=f"'{kind}' needs an argument")
    if kind == "inspect":
        return Inspect(entity=rest)
    if kind == "ask":
        return Ask(question=rest)
    fields = [f.strip() for f in rest.split("|")]
    if len(fields) >= 2:
        return Commit(entity=fields[0], part=fields[1], how_to_use=" | ".join(fields[2:]) or None)
    choice = parse_choice(rest)
    if choice is not None:
        return Commit(choice=choice)
    return Commit(answer=rest)


def explanation(commit: Commit) -> str:
    """The free-text answer a commit carries, however it was parsed: ``commit: a | b`` splits into
    entity/part fields, ``commit: 2`` into a choice, but for a situation puzzle all of it is the
    explanation."""
    if commit.answer:
        return commit.answer
    pieces = [p for p in (commit.entity, commit.part, commit.how_to_use) if p]
    if pieces:
        return " | ".join(pieces)
    return "" if commit.choice is None else str(commit.choice)


def action_to_text(action: Inspect | Ask | Commit | Invalid) -> str:
    """The action as JSON text, the exact form for a ``Text`` action space; ``parse_action`` reads it
    back to an equal action."""
    return json.dumps(action.model_dump(exclude_none=True), ensure_ascii=False, sort_keys=True)
