"""Read an action out of a model's free-form reply, tolerantly, per benchmark.

Models wrap answers in prose, code fences and markdown, rename keys and misspell names. The
parsers here accept all of that and return an ``Action``; whatever they cannot read becomes
``Invalid`` (with the raw text and a reason the env shows the player), never an exception.

* JSON anywhere in the text, fenced or not (``_parsing_text.json_objects``); the *last* object
  that means something wins, since a reasoning model states its answer at the end. Single quotes
  and trailing commas are repaired.
* CreativityBench: ``gold_entity``/``entity``, ``gold_part``/``part``, ``how_to_use``/``how``;
  an ``action`` of inspect / ask / commit; ``Entity: ...`` label lines; the env's command lines.
  Near-miss entity and part names are resolved with ``match_name``; a name matching nothing is
  kept as written, so the env can count it as a hallucination.
* BrainTeaser (``_parsing_choices``): ``A``, ``(B)``, ``option 3`` (an ordinal: the third option),
  ``Answer: C``, ``the answer is b)``, or the option's own text. In JSON, an integer ``choice``
  is an index (as in ``Commit``), and a string goes through the text forms.
* SPLAT: ``Question: ...`` or ``Answer: ...`` lines, JSON, or a bare line ending in ``?`` (the
  last such line is the question). Of several labelled lines the first is the move, or the last
  when the player was asked to reason first (``reasoning="cot"``: its move ends the reply, and
  its reasoning may quote "Q: ... A: ..." on the way).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from lateralgym.agents._parsing_choices import parse_mcq_reply
from lateralgym.agents._parsing_text import (
    as_text,
    clean_line,
    first_value,
    invalid,
    json_objects,
    labelled_lines,
    normalised_keys,
)
from lateralgym.envs import Action, Ask, Commit, Inspect, Invalid, parse_action
from lateralgym.envs._matching import match_name

__all__ = [
    "json_objects",
    "parse_creativity_reply",
    "parse_mcq_reply",
    "parse_reply",
    "parse_situation_reply",
]

_INSPECT_WORDS = frozenset({"inspect", "explore", "examine", "look", "look_at", "check", "view", "investigate"})
_ASK_WORDS = frozenset({"ask", "question", "query", "ask_question"})
_COMMIT_WORDS = frozenset({"commit", "answer", "submit", "final", "final_answer", "solve", "solution", "use"})

_ENTITY_KEYS = ("gold_entity", "entity", "entity_name", "tool", "object", "item", "target", "name")
_PART_KEYS = ("gold_part", "part", "part_name", "component")
_HOW_KEYS = ("how_to_use", "how", "how_to", "usage", "use", "method", "explanation", "plan")
_ACTION_KEYS = ("action", "kind", "type", "move")
_QUESTION_KEYS = ("question", "ask", "query")
_EXPLANATION_KEYS = ("answer", "explanation", "solution", "final_answer", "commit")


# -- action words and env commands --------------------------------------------------------------


def _kind(data: Mapping[str, Any]) -> str | None:
    """``inspect``, ``ask`` or ``commit`` from an ``action``-like key, if it names one."""
    value = first_value(data, _ACTION_KEYS)
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


def _command(text: str) -> Inspect | Ask | Commit | None:
    """The last line written as an env command (``inspect: x``, ``ask: y``, ``commit: a | b | c``)."""
    for line in reversed(text.splitlines()):
        cleaned = clean_line(line)
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
    data = normalised_keys(data)
    entity = as_text(first_value(data, _ENTITY_KEYS))
    part = as_text(first_value(data, _PART_KEYS))
    how = as_text(first_value(data, _HOW_KEYS))
    question = as_text(first_value(data, _QUESTION_KEYS))
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
    for label, value, _ in labelled_lines(text):
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
        return invalid(
            text,
            'no answer found: reply with a JSON object such as {"gold_entity": "<entity>", "gold_part": "<part>", '
            '"how_to_use": "<how>"}'
            + (' or {"action": "inspect", "entity": "<entity>"}' if "inspect" in allowed_set else ""),
        )
    return _resolve_names(action, public)


# -- SPLAT ---------------------------------------------------------------------------------------

_QUESTION_LABELS = frozenset({"question", "q", "ask", "my_question", "next_question"})
_ANSWER_LABELS = frozenset(
    {"answer", "a", "explanation", "final_answer", "solution", "commit", "my_answer", "full_explanation"}
)


def _situation_from_json(data: Mapping[str, Any]) -> Ask | Commit | None:
    data = normalised_keys(data)
    kind = _kind(data)
    question = as_text(first_value(data, _QUESTION_KEYS))
    explanation = as_text(first_value(data, _EXPLANATION_KEYS))
    if kind == "ask" or (kind is None and question and not explanation):
        text = question or explanation
        return Ask(question=text) if text else None
    if kind == "commit" or (kind is None and explanation):
        text = explanation or question
        return Commit(answer=text) if text else None
    return None


def _situation_from_labels(text: str, *, last: bool = False) -> Ask | Commit | None:
    lines = text.splitlines()
    labelled = [
        (label, value, n) for label, value, n in labelled_lines(text) if label in _QUESTION_LABELS | _ANSWER_LABELS
    ]
    if not labelled:
        return None
    chosen = len(labelled) - 1 if last else 0
    label, value, n = labelled[chosen]
    if label in _QUESTION_LABELS:
        return Ask(question=value) if value else None
    # An explanation may run over several lines: up to the next labelled line.
    stop = next((m for _, _, m in labelled[chosen + 1 :]), len(lines))
    body = " ".join([value, *(clean_line(line) for line in lines[n + 1 : stop])]).strip()
    body = re.sub(r"\s+", " ", body)
    return Commit(answer=body) if body else None


def parse_situation_reply(text: str, *, last_label: bool = False) -> Action:
    """A SPLAT move: a yes/no question (``Ask``) or an explanation (``Commit(answer=...)``).

    Args:
        text: The model's reply.
        last_label: Read the last ``Question:`` / ``Answer:`` line rather than the first (for
            replies that reason before they move).
    """
    action: Ask | Commit | None = None
    for data in reversed(json_objects(text)):
        action = _situation_from_json(data)
        if action is not None:
            return action
    action = _situation_from_labels(text, last=last_label)
    if action is not None:
        return action
    questions = [clean_line(line) for line in text.splitlines() if clean_line(line).endswith("?")]
    if questions:
        return Ask(question=questions[-1])
    return invalid(
        text, "no move found: reply with one line, 'Question: <a yes/no question>' or 'Answer: <explanation>'"
    )


# -- dispatch ------------------------------------------------------------------------------------


def parse_reply(
    text: str,
    benchmark: str | None,
    public: Mapping[str, Any],
    mode: str | None = None,
    reasoning: str | None = None,
) -> Action:
    """The action a reply makes in the given benchmark; ``Invalid`` when there is none.

    Args:
        text: The model's reply.
        benchmark: ``info["benchmark"]``: ``creativity``, ``brainteaser`` or ``splat``; anything
            else reads the env's own command forms only.
        public: ``info["public"]``.
        mode: ``info["mode"]``; in the static modes an entity-only answer is a commit.
        reasoning: The prompt's reasoning (``PromptPlan.reasoning``); after ``cot`` the move is on
            the reply's last labelled line (SPLAT), not its first.
    """
    if not text.strip():
        return invalid(text, "the reply was empty")
    if benchmark == "creativity":
        allowed = ("inspect", "ask", "commit") if mode == "interactive" else ("commit",)
        return parse_creativity_reply(text, public, allowed)
    if benchmark == "brainteaser":
        return parse_mcq_reply(text, [str(c) for c in public.get("choices", [])])
    if benchmark == "splat":
        return parse_situation_reply(text, last_label=reasoning == "cot")
    return parse_action(text)
