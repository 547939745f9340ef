"""CreativityBench's official correctness rule (``scoring: official``), quirks included.

Our own code for the rule of the official ``evaluation/judge.py`` (CreativityBench repository,
commit 4417331f: ``_name_core`` / ``_word_f1`` / ``_best_by_f1`` at lines 63-93, the grounding in
``_judge_one`` at 394-432, ``_prediction_relation`` at 181-197). What it does:

1. ``exact_entity`` / ``exact_part``: the prediction equals the gold's name as written (raw string
   equality: case, spaces and underscores count).
2. The predicted entity is grounded to the task's entity with the best word F1 (``word_f1`` over
   ``name_core`` tokens: lower case, ``(...)`` groups deleted, runs of other characters than
   ``a-z0-9`` made one space), searched in file order from a best score of -1 and replaced only on a
   strictly greater score; the entity is correct when its grounded name's core is the gold's.
3. The predicted part is grounded the same way among the *grounded entity's* ``judge_output`` parts
   (the gold part alone when it has none); the part is correct when its grounded name's core is the
   gold part's.
4. ``entity_correct = exact_entity or grounded``; ``part_correct = exact_part or grounded``; the
   answer is gold (``prediction_relation`` ``gold``) when both are.

The quirks that follow, each pinned by a test (``tests/judges/test_official_creativity.py``):

* **Q1 empty entity** is entity-correct: every F1 is 0, the first candidate wins, and the task
  generator lists the gold first (``task_creation/3_task_creation.py`` 266).
* **Q2 an unknown entity** sharing no word with any name is entity-correct for the same reason.
* **Q3 a scene item or an entity named only in the environment text** is grounded to the entity
  sharing a word with it (often just ``with``), else to the first listed.
* **Q4 shorter names win** at equal overlap (F1), and shared stop-words count.
* **Q5 ties go to the earlier-listed entity** (the gold when tied with a distractor after it).
* **Q6 part matching on the gold entity is exact**: the gold entity's ``judge_output`` compares its
  *other* parts with the gold part (``2_sample_compare.py`` 367, 402-405), so grounding never
  reaches the gold part; only ``pred_part == gold_part`` does. ``Rubber Feet``, ``rubber feet`` and
  ``rubber_foot`` are wrong for ``rubber_feet``.
* **Q7 a gold entity with no ``judge_output``** accepts any part string, an empty one too.
* **Q8 the part flag does not need the entity**: the exact gold part named on a wrong entity is
  ``part_correct`` (the answer is still not gold).
* **Q9 an empty ``how_to_use``** makes the official judge raise (``prediction_reasonability`` is
  read unassigned, line 476): the answer is stored without any judgement, so it is never scored;
  here it is ``unjudged`` and leaves the official denominator.
* **Q16 ``hallucination``** is a relation only when the grounded entity's ``judge_output`` lacks the
  grounded part: names are grounded first, so an invented entity is almost never one. The facts
  keep our own ``hallucinated`` flag beside it (no scene entity matches the name, ``match_name``),
  which the official code has no counterpart for.

The rule grades the entity and part **as the model wrote them** (``as_written``), as the official code
reads them from the model's reply: our reply parser resolves a near-miss name to the scene's spelling
(``LED bulbs``, ``the led_bulbs`` -> ``led_bulbs``) for ``paper`` and ``strict``, and keeps what was
written in ``Commit.fields`` (``entity_as_written``, ``part_as_written``) for this rule, so Q6's raw
comparison sees ``LED bulbs`` (wrong), and grounding starts from it too.

Our loaders write part names (and ``judge_output`` keys) snake_case, as the release does; a release
part name with parentheses or capitals would be compared in its snake_case form here.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Sequence

from lateralgym.envs._actions import Commit
from lateralgym.envs._cache import IdentityCache
from lateralgym.envs.benchmarks.creativity._lookup import task_lookup
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask

__all__ = [
    "WRITTEN_ENTITY",
    "WRITTEN_PART",
    "OfficialGrade",
    "as_written",
    "best_by_f1",
    "grade_official",
    "name_core",
    "named_in_scene",
    "prediction_relation",
    "word_f1",
]

_PARENTHESES = re.compile(r"\([^)]*\)")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")

WRITTEN_ENTITY = "entity_as_written"
"""``Commit.fields`` key of the entity as the model wrote it, when the reply parser resolved it to another spelling."""
WRITTEN_PART = "part_as_written"
"""``Commit.fields`` key of the part as the model wrote it, when the reply parser resolved it to another spelling."""

HALLUCINATION = "hallucination"
"""The official relation of an answer whose grounded part has no comparison in the release."""


def name_core(text: str | None) -> str:
    """A name as the official rule compares it: lower case, every ``(...)`` group deleted, each run of
    characters other than ``a-z0-9`` one space (so accented letters split a word), trimmed."""
    lowered = _PARENTHESES.sub(" ", str(text or "").lower())
    return " ".join(_NOT_ALNUM.sub(" ", lowered).split())


def word_f1(a: str | None, b: str | None) -> float:
    """Word F1 of two names' ``name_core`` tokens (multisets); 0.0 when either has none or none is shared."""
    return _f1(_words(a), _words(b))


def best_by_f1(prediction: str | None, candidates: Sequence[str]) -> str:
    """The candidate with the best ``word_f1``: the first one on a tie, and the first one when every score
    is 0 (the search starts below 0 and takes only a strictly greater score); ``""`` without candidates."""
    return _best(_words(prediction), candidates, [_words(candidate) for candidate in candidates])


def _best(predicted: _Words, candidates: Sequence[str], tokenised: Sequence[_Words]) -> str:
    """``best_by_f1`` over candidates already tokenised (``tokenised[i]`` is ``candidates[i]``'s words)."""
    best, best_score = "", -1.0
    for candidate, words in zip(candidates, tokenised, strict=True):
        score = _f1(predicted, words)
        if score > best_score:
            best, best_score = candidate, score
            if score == 1.0:  # the same words: no later candidate can score higher
                break
    return best


class _Words:
    """A name's ``name_core`` and its tokens as a multiset: what ``word_f1`` compares."""

    __slots__ = ("core", "counts", "total", "words")

    def __init__(self, text: str) -> None:
        self.core = name_core(text)
        tokens = self.core.split()
        self.counts = Counter(tokens)
        self.words = frozenset(tokens)
        self.total = len(tokens)


_CACHED_NAME = 120
"""Names up to this long keep their ``_Words`` (the same entity and part names are graded on every commit)."""


@functools.lru_cache(maxsize=1 << 14)
def _cached_words(text: str) -> _Words:
    return _Words(text)


def _words(text: str | None) -> _Words:
    text = str(text or "")
    return _cached_words(text) if len(text) <= _CACHED_NAME else _Words(text)


def _f1(a: _Words, b: _Words) -> float:
    """``word_f1`` of two tokenised names (``a`` the prediction: precision is over its tokens)."""
    common = a.words & b.words  # most names share no word: no counting then
    if not common:
        return 0.0
    shared = sum(min(a.counts[word], b.counts[word]) for word in common)
    precision, recall = shared / a.total, shared / b.total
    return 2 * precision * recall / (precision + recall)


class OfficialGrade:
    """What the official rule finds in one answer (see the module docstring)."""

    __slots__ = ("entity_correct", "grounded_entity", "grounded_part", "part_correct", "relation")

    def __init__(
        self, entity_correct: bool, part_correct: bool, grounded_entity: str, grounded_part: str, relation: str
    ) -> None:
        self.entity_correct = entity_correct
        """``exact_entity or`` the grounded entity is the gold one."""
        self.part_correct = part_correct
        """The official part flag: ``exact_part or`` the grounded part is the gold one (Q8: whatever the entity)."""
        self.grounded_entity = grounded_entity
        self.grounded_part = grounded_part
        self.relation = relation
        """``gold``, ``similar-<d>``, ``similar``, ``not similar`` or ``hallucination``."""

    @property
    def gold(self) -> bool:
        """Entity and part both correct: the official ``prediction_relation == "gold"``."""
        return self.entity_correct and self.part_correct


def prediction_relation(task: CreativityTask, entity: str, part: str, gold: bool) -> str:
    """The official ``prediction_relation`` of a grounded answer (``judge.py`` 181-197, 429-432):
    ``gold``; ``similar-<d>`` when the release's comparison says similar, not a better choice, and its
    decision difficulty ``d`` is at most 5 (``similar`` above 5 or without one); else ``not similar``;
    ``hallucination`` when the grounded part has no comparison."""
    if gold:
        return "gold"
    lookup = task_lookup(task)
    comparison = lookup.comparison(entity, part) if lookup.entity(entity) is not None else None
    if comparison is None:
        return HALLUCINATION
    if comparison.similar_affordance and not comparison.gold_change:
        difficulty = comparison.decision_difficulty if comparison.decision_difficulty is not None else 10
        return f"similar-{difficulty}" if difficulty <= 5 else "similar"
    return "not similar"


class _Names:
    """A task's entity candidates as the official grounding compares them, tokenised once per task."""

    __slots__ = ("entities", "entity_words")

    def __init__(self, task: CreativityTask) -> None:
        entities = list(task_lookup(task).entity_names)
        if task.gold.entity not in entities:  # never in a release; the official code appends it
            entities.append(task.gold.entity)
        self.entities = tuple(entities)
        self.entity_words = tuple(_words(name) for name in entities)


_names_cache: IdentityCache[CreativityTask, _Names] = IdentityCache(4096)


def _names(task: CreativityTask) -> _Names:
    return _names_cache.get(task) or _names_cache.put(task, _Names(task))


def as_written(commit: Commit) -> tuple[str, str]:
    """The answer's entity and part as the model wrote them: what the reply parser kept in ``Commit.fields``
    when it resolved a name to the scene's spelling, else the commit's own names (``""`` for none)."""
    entity = commit.fields.get(WRITTEN_ENTITY, commit.entity)
    part = commit.fields.get(WRITTEN_PART, commit.part)
    return str(entity or ""), str(part or "")


def grade_official(task: CreativityTask, commit: Commit) -> OfficialGrade:
    """The official rule's verdict on ``commit``, its names as written (see the module docstring; quirks
    Q1-Q8 included)."""
    predicted_entity, predicted_part = as_written(commit)
    gold_entity, gold_part = task.gold.entity, task.gold.part
    lookup = task_lookup(task)
    names = _names(task)
    entity = _best(_words(predicted_entity), names.entities, names.entity_words)
    entity_correct = predicted_entity == gold_entity or _words(entity).core == _words(gold_entity).core
    parts = lookup.compared_parts(entity) or [gold_part]  # the grounded entity's comparisons with the gold
    part = best_by_f1(predicted_part, parts)
    part_correct = predicted_part == gold_part or _words(part).core == _words(gold_part).core
    relation = prediction_relation(task, entity, part, entity_correct and part_correct)
    return OfficialGrade(entity_correct, part_correct, entity, part, relation)


def named_in_scene(task: CreativityTask, entity: str | None) -> bool:
    """Our own hallucination test beside the official rule: the name matches a scene entity (``match_name``)."""
    return task_lookup(task).entities.match(entity or "") is not None
