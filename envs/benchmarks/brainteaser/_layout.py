"""BrainTeaser's prompt layouts: the paper's (the official ChatGPT notebook's) and LateralGym's own.

``layout: paper`` (the ``brainteaser`` config's default; ``Prompting/Prompting_chatgpt_emnlp.ipynb``
in the BrainTeaser repository, commit 4d164df, zero-shot cells at raw lines 64-75 and 113-125,
few-shot at 220-250 and 285-297) puts everything in one user message: an instruction line (in our
own words: pick the best option, there is exactly one, possibly "None of above", answer with the
option only), a separator line, then ``Question: ...``, ``Choice:``, one ``(A) <text>`` line per
option, a blank line and ``Answer:``. Few-shot demonstrations sit in that same message between the
instruction and the question, each laid out the same way and answered ``Answer:(B) <option
text>`` (no space after the colon, the option's text after the letter); the selection is the
notebook's: the first n/2 sentence and the first n/2 word demonstrations. The system message is a
generic assistant line. A reply is read as the notebook reads it, the letter between the first
``(`` and the next ``)`` (line 164), and, where that finds no option letter, by LateralGym's
tolerant parser (the notebook leaves such replies to be cleaned by hand).

``layout: lateralgym``: ``QUESTION:`` / ``CHOICES:`` with ``A. <text>`` lines and the env's action
forms, the task described in the system prompt, worked examples as separate chat turns answered
``Answer: <letter>``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict

from lateralgym.envs.benchmarks._mcq_reply import LETTERS

__all__ = ["BrainTeaserOptions", "Layout", "first_bracketed_letter", "paper_block", "paper_message"]

Layout = Literal["paper", "lateralgym"]


class BrainTeaserOptions(BaseModel):
    """BrainTeaser's own config settings (the ``options:`` block)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    layout: Layout = "paper"
    """How a puzzle is laid out for the player and an LLM player's prompt is built: ``paper`` (the official
    notebook's ``(A) ...`` layout in one user message) or ``lateralgym`` (ours); see ``_layout.py``."""


PAPER_SYSTEM = "You are a helpful assistant.\n"
"""The generic system line of the paper's layout (the notebook sends a generic assistant line)."""

PAPER_INSTRUCTION = (
    "Choose the best option for the brain teaser below. It has exactly one solution, which may be the "
    "option None of above. Answer with the option only."
)
"""Our wording of the notebook's instruction line (pick the best choice; one solution, possibly
"none of above"; answer with the choice only)."""

_SEPARATOR = "\n \n"
"""The notebook's separator after the instruction: a newline, a space, a newline."""


def paper_block(question: str, choices: Sequence[str], answer: int | None = None) -> str:
    """One puzzle in the paper's layout; with ``answer``, a demonstration answered ``Answer:(B) text``."""
    options = "\n".join(f"({LETTERS[n]}) {text}" for n, text in enumerate(choices))
    tail = "Answer:" if answer is None else f"Answer:({LETTERS[answer]}) {choices[answer]}"
    return f"Question: {question}\nChoice:\n{options}\n\n{tail}"


def paper_message(question: str, choices: Sequence[str], demonstrations: Sequence[str] = ()) -> str:
    """The paper's one user message: instruction, separator, demonstrations (blank lines between), the puzzle."""
    shown = [*demonstrations, paper_block(question, choices)]
    return PAPER_INSTRUCTION + _SEPARATOR + "\n\n".join(shown)


_FIRST_BRACKETED = re.compile(r"\(([^)]*)\)")


def first_bracketed_letter(text: str, options: int) -> int | None:
    """The notebook's reading of a reply: the text between the first ``(`` and the next ``)``, as an
    option letter (``(B)`` -> 1); None when there is none or it is not one of the options' letters."""
    match = _FIRST_BRACKETED.search(text)
    if match is None:
        return None
    inside = match.group(1).strip().upper()
    return LETTERS.index(inside) if len(inside) == 1 and inside in LETTERS[:options] else None
