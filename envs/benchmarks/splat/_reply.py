"""How a SPLAT player's reply is read: a yes/no question (``Ask``) or an explanation (``Commit``), from JSON,
``Question:`` / ``Answer:`` lines or a question sentence; and the fallback after the re-asks. Only a model's
replies come here (``SplatPrompts``), so an offline run never loads it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from lateralgym.envs._actions import Action, Ask, Commit
from lateralgym.envs._reply_text import (
    QUESTION_KEYS,
    as_text,
    clean_line,
    first_value,
    invalid,
    json_objects,
    labelled_lines,
    move_kind,
    normalised_keys,
)

__all__ = ["fallback_move", "parse_situation_reply"]

_EXPLANATION_KEYS = ("answer", "explanation", "solution", "final_answer", "commit")


_QUESTION_LABELS = frozenset({"question", "q", "ask", "my_question", "next_question"})
_ANSWER_LABELS = frozenset(
    {"answer", "a", "explanation", "final_answer", "solution", "commit", "my_answer", "full_explanation"}
)


def _situation_from_json(data: Mapping[str, Any]) -> Ask | Commit | None:
    data = normalised_keys(data)
    kind = move_kind(data)
    kind = None if kind == "inspect" else kind  # nothing to inspect here: read the fields
    question = as_text(first_value(data, QUESTION_KEYS))
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


_FALLBACK_CHARS = 600
_SENTENCE_END = re.compile(r"([.!?])")


def _last_question(body: str) -> str | None:
    """The last sentence of ``body`` that ends in ``?`` (more than the mark alone), in one pass: the
    text is split at sentence ends once (matching ``[^.!?]*\\?`` at every start rescans a long
    sentence from each of its characters: quadratic in a reply without a ``?``)."""
    parts = _SENTENCE_END.split(body)  # sentence, mark, sentence, mark, ..., the tail
    for mark in range(len(parts) - 2, 0, -2):
        if parts[mark] == "?":
            question = (parts[mark - 1] + "?").strip()
            if len(question) > 1:
                return question
    return None


def fallback_move(text: str) -> Ask | Commit | None:
    """How a reply still without a move after the re-asks is read: its last question sentence (one
    ending in ``?`` inside a line) as a question, else the whole reply as an explanation attempt.

    Why an explanation: in SPLAT's own game (§4, the official arena; our ``paper`` protocol) every
    player message goes to the judge as it is, and the judge decides whether it solves the puzzle; a
    statement is the player's claim about what happened, so it is graded as one (under ``commit`` it
    counts as an attempt). The reply is cut to its first 600 characters; an empty one stays invalid.
    Linear in the reply's length.
    """
    body = re.sub(r"\s+", " ", " ".join(clean_line(line) for line in text.splitlines())).strip()
    if not body:
        return None
    question = _last_question(body)
    if question is not None:
        return Ask(question=question[:_FALLBACK_CHARS])
    return Commit(answer=body[:_FALLBACK_CHARS])
