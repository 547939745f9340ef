"""LatEval's own metrics on LatEval puzzles (``lateval`` format: puzzles with key clues).

LatEval (THUKElab/LatEval; LREC-COLING 2024) releases data only, no code, and its paper's method
section could not be read here; its metrics are implemented from the descriptions of them that could
be read (the paper's abstract and public summaries: "AC measures how many key clues are included in
the final deduction; QR assesses the relevance of questions to key clues; QD quantifies the diversity
of questions using Jaccard similarity; AT is the number of interaction rounds before deduction"). The
exact formulas and scales are undetermined; ours, per episode, then averaged over episodes:

* **AC** (answer consistency): the share of the puzzle's key clues the final explanation includes, a
  clue counting as included when the explanation names at least half of its hidden words (content
  stems not in the story: the reference judge's rule); LatEval has GPT-4 judge it, so this is an
  approximation, as all offline judging here is;
* **QR** (question relevance): the share of the player's questions relevant to some key clue, a
  question counting as relevant when it names at least one of a clue's hidden words;
* **QD** (question divergence): one minus the mean Jaccard similarity of the content words of every
  pair of the player's questions (1: no two questions share a word); None with fewer than two;
* **AT** (average turns): the rounds before the first explanation (all the rounds when none was given).

All four are percentages except AT (rounds). They are reported as ``lateval_ac``, ``lateval_qr``,
``lateval_qd`` and ``lateval_at`` for puzzles with key clues and no SPLAT difficulty level (LatEval's;
SPLAT's sample puzzles carry clues for the reference judge, and keep SPLAT's metrics alone).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from lateralgym.envs._matching import content_stems
from lateralgym.envs.benchmarks.splat._scene import SituationPuzzle

__all__ = ["clue_words", "clues_covered", "question_divergence", "relevant_questions"]


def clue_words(puzzle: SituationPuzzle) -> list[frozenset[str]]:
    """Each key clue's hidden words: its content stems that the title and story do not contain."""
    public = content_stems(f"{puzzle.title} {puzzle.story}")
    return [content_stems(clue) - public for clue in puzzle.clues]


def clues_covered(puzzle: SituationPuzzle, explanation: str) -> int:
    """How many key clues an explanation includes (at least half of a clue's hidden words named)."""
    said = content_stems(explanation)
    return sum(1 for words in clue_words(puzzle) if words and len(words & said) * 2 >= len(words))


def relevant_questions(puzzle: SituationPuzzle, questions: Sequence[str]) -> int:
    """How many questions name a hidden word of some key clue."""
    hidden = set().union(*clue_words(puzzle)) if puzzle.clues else set()
    return sum(1 for question in questions if content_stems(question) & hidden)


def question_divergence(questions: Sequence[str]) -> float | None:
    """One minus the mean pairwise Jaccard similarity of the questions' content words; None for fewer than two."""
    sets = [content_stems(q) for q in questions]
    pairs = list(combinations(sets, 2))
    if not pairs:
        return None
    similarity = sum(len(a & b) / len(a | b) if a | b else 1.0 for a, b in pairs) / len(pairs)
    return 1.0 - similarity
