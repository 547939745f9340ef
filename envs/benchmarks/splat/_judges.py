"""The offline reference judge for situation puzzles.

An approximation of SPLAT's LLM judge by word overlap, so the SPLAT mode runs with no model:

* a question is ``yes`` when it names a key word found only in the hidden answer (or its clues),
  ``no`` when it is about the story but names no hidden key word, and ``irrelevant`` otherwise;
* an explanation is ``correct`` when it covers at least ``threshold`` of the key facts (the
  puzzle's clues, else the answer's sentences), a fact counting as covered when half of its hidden
  key words appear in the explanation, or when it contains at least ``threshold`` of the hidden
  answer's key words (clues may be worded differently from the answer), and when at least half of
  its own words are the puzzle's (story, answer, clues): word salad that says everything covers
  every fact but is mostly off topic; otherwise ``not_yet`` with a hint that says only how many
  facts are covered;
* a message under the ``paper`` protocol (``respond``) is ``correct`` when it would be graded
  correct, else answered as a question; it sees no history either way.

It understands no negation or paraphrase beyond crude stemming: use an LLM judge for real
evaluations and this one for offline runs, tests and RL warm-up.
"""

from __future__ import annotations

import re
from typing import Any

from lateralgym.envs._actions import Commit
from lateralgym.envs._judging import QA, JudgeReply
from lateralgym.envs._matching import content_stems
from lateralgym.envs.benchmarks.splat._scene import SituationPuzzle


def key_facts(puzzle: SituationPuzzle) -> list[frozenset[str]]:
    """Hidden key words of each fact: clue (or answer sentence) stems not in the story or title."""
    public = content_stems(f"{puzzle.title} {puzzle.story}")
    facts = list(puzzle.clues) or [s for s in re.split(r"(?<=[.!?])\s+", puzzle.answer) if s.strip()]
    keyed = [content_stems(fact) - public for fact in facts]
    return [k for k in keyed if k]


class ReferenceJudge:
    """Word-overlap judge for situation puzzles (see the module docstring)."""

    name = "reference"
    limits = (
        "this run measures nothing: an offline stand-in for SPLAT's LLM judge by word overlap with the hidden "
        "answer, it understands no negation or paraphrase ('Was the audience not deaf?' gets yes; a correct "
        "explanation in other words can cover 0 key points), so its numbers are for offline runs, tests and RL "
        "warm-up, not measurement. To play SPLAT for real, judge with a model (--judge local/smollm2, served "
        "for the run; or --judge openai/NAME --base-url URL) or yourself (--judge human), and play with a "
        "model (--player local/smollm2, --player openai/NAME) or yourself (--player human)"
    )
    """What this judge can and cannot do, said wherever it is chosen (CLI help, the run's first line, reports)."""
    synchronous = True
    """Its coroutines never suspend: ``LateralEnv.step`` drives them without an event loop."""

    def __init__(self, threshold: float = 0.6, min_precision: float = 0.5) -> None:
        self.threshold = threshold
        self.min_precision = min_precision

    async def answer(self, item: Any, question: str, history: tuple[QA, ...]) -> JudgeReply:
        """yes / no / irrelevant by overlap with the hidden answer and the story."""
        if not isinstance(item, SituationPuzzle):
            return JudgeReply(label="irrelevant")
        asked = content_stems(question)
        hidden: set[str] = set().union(*key_facts(item))
        hidden |= content_stems(item.answer) - content_stems(f"{item.title} {item.story}")
        if asked & hidden:
            return JudgeReply(label="yes")
        if asked & content_stems(f"{item.title} {item.story}"):
            return JudgeReply(label="no")
        return JudgeReply(label="irrelevant")

    async def grade(self, item: Any, commit: Commit, history: tuple[QA, ...]) -> JudgeReply:
        """correct when enough key facts are covered, else not_yet with a count-only hint."""
        if not isinstance(item, SituationPuzzle):
            raise TypeError("the reference judge grades situation puzzles only")
        facts = key_facts(item)
        said = content_stems(commit.answer or "")
        covered = sum(1 for fact in facts if len(fact & said) * 2 >= len(fact))
        hidden = content_stems(item.answer) - content_stems(f"{item.title} {item.story}")
        # Word salad covers every fact by saying everything: an explanation must also be about this
        # puzzle, most of its words drawn from the story, the answer and the clues.
        vocabulary = content_stems(f"{item.title} {item.story} {item.answer} {' '.join(item.clues)}")
        on_topic = len(said & vocabulary) / len(said) if said else 0.0
        if on_topic >= self.min_precision and (
            (facts and covered / len(facts) >= self.threshold)
            or (hidden and len(hidden & said) / len(hidden) >= self.threshold)
        ):
            return JudgeReply(label="correct")
        return JudgeReply(label="not_yet", hint=f"Your explanation covers {covered} of {len(facts)} key points.")

    async def respond(self, item: Any, message: str) -> JudgeReply:
        """``paper`` protocol: correct when ``message`` would be graded correct, else its answer."""
        graded = await self.grade(item, Commit(answer=message), ())
        if graded.label == "correct":
            return graded
        return await self.answer(item, message, ())
