"""Per-question process rewards: a dense reward for the questions that uncover an item's key facts.

A question-and-answer puzzle pays one bit at its end. A puzzle whose items name the key facts of
their hidden answer (key questions, key clues) can also pay each question on the way, which is what a
benchmark's ``reward: dense`` option turns on. ``QuestionRewards`` prices an episode's questions one at
a time, in the order they are asked (K is the item's number of key facts):

* **+1/K for each key fact a question covers for the first time.** Over an episode the gains add up to
  the share of the key facts covered (the episode's key-fact recall), so they are worth at most 1, the
  default reward of a correct answer (``rewards.correct``): uncovering the whole story is worth as much
  as solving it, and a player that does both earns 2. Which facts a question covers is the benchmark's
  call (its judge's, where the judge says; else an offline rule).
* **-1/(2K) for a question that nearly repeats an earlier one** (question divergence, as situation-puzzle
  evaluations measure it over all pairs of a player's questions, applied to one pair: the Jaccard
  similarity of the two questions' content-word stems is at least ``NEAR_REPEAT``, 0.8; two questions
  without content words repeat when their words are the same).
  Without it a repeat would cost nothing, and a policy could idle on a question it knows the answer to.
  It is half a key fact, not a whole one, because the test reads words, not meaning (``not`` is not a
  content word: "Did he die?" and "Did he not die?" are a repeat to it), so a repeat found by mistake
  costs less than a fact is worth; a rephrasing that the judge still credits with a new fact nets +1/(2K).

Explanations are not priced: the sparse reward (``rewards.correct``) is theirs. Scaling both terms by
1/K keeps an episode's process reward on the same scale whatever the item's number of key facts.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from lateralgym.envs._engine import ProcessReward
from lateralgym.envs._matching import content_stems, words

__all__ = ["NEAR_REPEAT", "REPEAT_PENALTY", "RewardMode", "QuestionRewards", "similarity"]

RewardMode = Literal["sparse", "dense"]
"""A benchmark's ``reward`` option: ``sparse`` (the default: only the configured ``rewards``) or
``dense`` (plus each question's process reward)."""

REPEAT_PENALTY = 0.5
"""A near repeat's penalty, in key facts: it costs ``REPEAT_PENALTY / K``."""

NEAR_REPEAT = 0.8
"""The Jaccard similarity of two questions' content-word stems from which the later one is a repeat."""


def similarity(first: str, second: str) -> float:
    """The Jaccard similarity of two questions' content-word stems (question divergence compares
    questions this way); two questions without content words compare their plain words instead."""
    a, b = content_stems(first), content_stems(second)
    if not a and not b:
        a, b = frozenset(words(first)), frozenset(words(second))
        if not a and not b:
            return 1.0
    return len(a & b) / len(a | b)


class QuestionRewards:
    """Prices one episode's questions (see the module docstring) and keeps what they covered.

    Args:
        key_facts: K, the item's number of key facts (0: questions earn nothing and cost only repeats,
            priced as if K were 1).
    """

    def __init__(self, key_facts: int) -> None:
        self.key_facts = key_facts
        self.covered: set[int] = set()
        """The key facts covered so far."""
        self.repeats = 0
        """Questions priced as near repeats so far."""
        self._asked: list[tuple[int, str]] = []

    def price(self, turn: int, question: str, covers: Iterable[int]) -> ProcessReward:
        """The process reward of ``question``, asked at ``turn``, which covers the key facts ``covers``
        (indices; those out of range are ignored)."""
        share = 1.0 / max(self.key_facts, 1)
        new = tuple(sorted({i for i in covers if 0 <= i < self.key_facts} - self.covered))
        repeat_of = next((step for step, earlier in self._asked if similarity(question, earlier) >= NEAR_REPEAT), None)
        reward = share * len(new) - (REPEAT_PENALTY * share if repeat_of is not None else 0.0)
        self.covered.update(new)
        self._asked.append((turn, question))
        self.repeats += repeat_of is not None
        return ProcessReward(reward=reward, covered=new, repeat_of=repeat_of)

    @property
    def total(self) -> float:
        """The process reward so far: the sum of every question's, counted whole (6/6 is 1.0, where
        adding 1/6 six times in floating point is not)."""
        return (len(self.covered) - REPEAT_PENALTY * self.repeats) / max(self.key_facts, 1)
