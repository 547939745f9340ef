"""CreativityBench's offline judges: exact match, and the KB judge for interactive questions.

Exact match is the paper's correctness (gold correct = entity and part; an entity not in the scene
is a hallucination), under each of the config's ``scoring`` rules: ``strict`` matches names
tolerantly (``grade_creativity``), ``paper`` resolves the entity by name or word overlap without the
official code's quirks (``grade_creativity_paper``), ``official`` is the official rule itself
(``grade_creativity_official``, ``_official.py``). The KB judge answers yes/no questions about entity
attributes in interactive CreativityBench.

It is a rule judge, documented as an approximation of an LLM judge: it finds the entity (and
optionally the part) a question names, then checks whether the question's attribute words occur
in that entity's physical and state attributes. Questions about the answer itself ("is the pan
the solution?") are ``irrelevant``: the judge never confirms the gold.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict

from lateralgym.envs._actions import Commit
from lateralgym.envs._cache import IdentityCache
from lateralgym.envs._judging import QA, JudgeReply
from lateralgym.envs._matching import content_stems, snake, words
from lateralgym.envs.benchmarks.creativity._lookup import TaskLookup, task_lookup
from lateralgym.envs.benchmarks.creativity._official import as_written, grade_official, named_in_scene
from lateralgym.envs.benchmarks.creativity._options import SCORINGS, CreativityOptions, Scoring
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask, Entity


class AnswerFacts(BaseModel):
    """What a CreativityBench grade found right in an answer (``JudgeReply.detail``): read by the
    scene, logged in the outcome, never shown to the player."""

    model_config = ConfigDict(frozen=True)

    entity_correct: bool = False
    """The chosen entity is the gold one."""
    part_correct: bool = False
    """The chosen part is the gold one (and the entity too)."""
    hallucinated: bool = False
    """The chosen entity is not in the scene."""
    grounded_entity: str | None = None
    """``official``: the scene entity the answer's entity was grounded to (word F1, first listed on no overlap)."""
    grounded_part: str | None = None
    """``official``: the part the answer's part was grounded to (among the grounded entity's compared parts)."""
    part_match: bool | None = None
    """``official``: the official judge's own part flag, which does not need the entity (Q8); None under the
    other rules, where ``part_correct`` is the part flag."""
    relation: str | None = None
    """``official``: the official ``prediction_relation`` (``gold``, ``similar-<d>``, ``similar``,
    ``not similar``, ``hallucination``)."""
    unjudged: bool = False
    """``official``: the official judge would store this answer without a judgement (an empty
    ``how_to_use``, Q9), so the official denominator leaves it out."""


def answer_facts(reply: JudgeReply) -> AnswerFacts:
    """The grade's ``AnswerFacts`` (all false when a judge gave none)."""
    return reply.detail if isinstance(reply.detail, AnswerFacts) else AnswerFacts()


def _graded(label: str, **facts: Any) -> JudgeReply:
    return JudgeReply(label=label, detail=AnswerFacts(**facts))


def shared_reply(reply: JudgeReply) -> JudgeReply | None:
    """``reply`` if it is one of the plain replies every grade with the same facts shares (frozen, built
    once), else None: what is made of it may be shared too."""
    facts = reply.detail
    return reply if facts is not None and _PLAIN_REPLIES.get(id(facts)) is reply else None


def _reply(facts: AnswerFacts) -> JudgeReply:
    shared = _PLAIN_REPLIES.get(id(facts))
    if shared is not None:  # the facts every plain grade shares, so their replies can be shared too (frozen)
        return shared
    return JudgeReply(label="correct" if facts.part_correct else "incorrect", detail=facts)


_PLAIN: dict[tuple[bool, bool, bool], AnswerFacts] = {
    (entity, part, hallucinated): AnswerFacts(entity_correct=entity, part_correct=part, hallucinated=hallucinated)
    for entity in (False, True)
    for part in (False, True)
    for hallucinated in (False, True)
}
"""The facts ``strict`` and ``paper`` can give, built once: the models are frozen, so one object serves every commit."""

_PLAIN_REPLIES: dict[int, JudgeReply] = {
    id(facts): JudgeReply(label="correct" if facts.part_correct else "incorrect", detail=facts)
    for facts in _PLAIN.values()
}
"""Each of ``_PLAIN``'s replies, by the facts' identity (``_PLAIN`` keeps them alive, so the ids stay theirs)."""


def grade_creativity(task: CreativityTask, commit: Commit) -> JudgeReply:
    """CreativityBench's exact match: gold correct = entity and part; names match tolerantly.

    An entity that is not in the scene is a hallucination (counted separately by the metrics).
    """
    lookup = task_lookup(task)
    return _reply(_strict_facts(lookup, lookup.entities.match(commit.entity or ""), commit))


def _strict_facts(lookup: TaskLookup, chosen: str | None, commit: Commit) -> AnswerFacts:
    """``grade_creativity``'s facts, given the scene entity the answer's entity matched (``chosen``)."""
    if chosen is None:
        return _PLAIN[False, False, True]
    entity_correct = snake(chosen) == lookup.gold_entity
    entity = lookup.entity(chosen)
    assert entity is not None
    part = lookup.parts(entity.name).match(commit.part or "") if entity_correct else None
    return _PLAIN[entity_correct, part is not None and snake(part) == lookup.gold_part, False]


def grade_creativity_paper(task: CreativityTask, commit: Commit) -> JudgeReply:
    """CreativityBench's official exact match (``scoring: paper``).

    The predicted entity resolves to the scene entity with the same name (case, spaces and
    underscores ignored), else to the one entity whose name shares the most words with the
    prediction; the part must then be the gold part exactly (case, spaces and underscores ignored).

    The official code starts its best-overlap search from the first listed entity, so a prediction
    sharing no word with any name resolves to that entity, and the task generator lists the gold
    first: a made-up entity scores entity correct. We do not copy that bug: with no overlap the
    prediction resolves to no entity (a hallucination). A tie for the best overlap resolves to no
    entity either (the official code would again pick the earlier-listed one, the gold when tied):
    wrong, but not a hallucination, since the prediction does name words of scene entities.
    """
    return _reply(_paper_facts(task, commit))


def _paper_facts(task: CreativityTask, commit: Commit) -> AnswerFacts:
    keys = _scene_keys(task)
    chosen = _resolve_entity(commit.entity or "", keys)
    if chosen is None or chosen == "":
        return _PLAIN[False, False, chosen is None]
    entity_correct = snake(chosen) == keys.gold_entity
    return _PLAIN[entity_correct, entity_correct and snake(commit.part or "") == keys.gold_part, False]


class _SceneKeys:
    """A task's entity names as the official resolution compares them, normalised once per task."""

    __slots__ = ("gold_entity", "gold_part", "keys", "names", "words")

    def __init__(self, task: CreativityTask) -> None:
        self.names = tuple(e.name for e in task.entities)
        self.keys = tuple(snake(name) for name in self.names)
        self.words = tuple(frozenset(words(name)) for name in self.names)
        self.gold_entity = snake(task.gold.entity)
        self.gold_part = snake(task.gold.part)


_scene_keys_cache: IdentityCache[CreativityTask, _SceneKeys] = IdentityCache(4096)


def _scene_keys(task: CreativityTask) -> _SceneKeys:
    return _scene_keys_cache.get(task) or _scene_keys_cache.put(task, _SceneKeys(task))


def _resolve_entity(prediction: str, scene: _SceneKeys) -> str | None:
    """The official resolution: the exactly named entity, else the best word overlap.

    Returns the entity's name, ``""`` for a tie at the best overlap, or None when no name shares
    a word with the prediction.
    """
    key = snake(prediction)
    if key and key in scene.keys:
        return scene.names[scene.keys.index(key)]
    predicted = set(words(prediction))
    overlaps = [(len(predicted & name_words), name) for name_words, name in zip(scene.words, scene.names, strict=True)]
    best = max((overlap for overlap, _ in overlaps), default=0)
    if best == 0:
        return None
    leaders = [name for overlap, name in overlaps if overlap == best]
    return leaders[0] if len(leaders) == 1 else ""


def grade_creativity_official(task: CreativityTask, commit: Commit) -> JudgeReply:
    """The official ``evaluation/judge.py`` correctness (``scoring: official``; ``_official.py``).

    ``part_correct`` here is gold correctness (entity and part, as under the other rules); the official
    part flag, which does not need the entity, is ``part_match``. ``hallucinated`` is our own count
    (no scene entity has the name), which the official rule lacks.
    """
    return _reply(_official_facts(task, commit, hallucinated=not named_in_scene(task, commit.entity)))


def _official_facts(task: CreativityTask, commit: Commit, hallucinated: bool) -> AnswerFacts:
    grade = grade_official(task, commit)
    return AnswerFacts(
        entity_correct=grade.entity_correct,
        part_correct=grade.gold,
        hallucinated=hallucinated,
        grounded_entity=grade.grounded_entity,
        grounded_part=grade.grounded_part,
        part_match=grade.part_correct,
        relation=grade.relation,
        unjudged=not commit.how_to_use,
    )


def grade_creativity_by(task: CreativityTask, commit: Commit, scoring: Scoring) -> JudgeReply:
    """The exact-match grade under a ``scoring`` rule (that rule alone is graded: ``rule_facts``)."""
    return _reply(rule_facts(task, commit, scoring))


def rule_facts(task: CreativityTask, commit: Commit, scoring: Scoring) -> AnswerFacts:
    """The answer's facts under one rule, graded only if this answer was not graded under it already.

    What a lean env (an RL trainer's) asks: its reward reads the config's rule alone, so the other
    rules are never graded. ``grades_by_rule`` fills in the rest from the same memo.
    """
    graded = _answer_memo(task, commit)
    facts = graded.facts.get(scoring)
    if facts is None:
        facts = graded.facts[scoring] = graded.grade(scoring)
    return facts


def grades_by_rule(task: CreativityTask, commit: Commit) -> dict[str, AnswerFacts]:
    """The answer's facts under every rule (``SCORINGS``), for the metrics that report each beside the run's own.

    The rules share the task's lookups and the scene entity the answer names (``strict``'s match is
    ``official``'s hallucination test). A judge grades a commit under the run's rule and the scene
    then asks for every rule's facts: the last answer's facts are kept, so a rule already graded is
    not graded again.
    """
    graded = _answer_memo(task, commit)
    facts = graded.facts
    for rule in SCORINGS:
        if rule not in facts:
            facts[rule] = graded.grade(rule)
    return {rule: facts[rule] for rule in SCORINGS}


_GradedAnswer = tuple[str | None, str | None, str | None, tuple[str, str]]
"""An answer as ``grades_by_rule`` recognises it: entity, part, how to use, and the names as written."""


class _Graded:
    """One answer to one task, with its facts under each rule graded so far."""

    __slots__ = ("_chosen", "commit", "facts", "key", "task")

    def __init__(self, task: CreativityTask, commit: Commit, key: _GradedAnswer) -> None:
        self.task, self.commit, self.key = task, commit, key
        self.facts: dict[str, AnswerFacts] = {}
        self._chosen: tuple[str | None] | None = None

    def chosen(self) -> str | None:
        """The scene entity the answer's entity matches (``strict``'s match, ``official``'s hallucination test)."""
        if self._chosen is None:
            self._chosen = (task_lookup(self.task).entities.match(self.commit.entity or ""),)
        return self._chosen[0]

    def grade(self, rule: str) -> AnswerFacts:
        task, commit = self.task, self.commit
        if rule == "official":
            return _official_facts(task, commit, hallucinated=self.chosen() is None)
        if rule == "paper":
            return _paper_facts(task, commit)
        return _strict_facts(task_lookup(task), self.chosen(), commit)


def _answer_memo(task: CreativityTask, commit: Commit) -> _Graded:
    """The last answer graded, if ``commit`` is it (task by identity, the answer's fields), else a new memo."""
    key = (commit.entity, commit.part, commit.how_to_use, as_written(commit))
    last = _last_graded[0]
    if last is not None and last.task is task and last.key == key:
        return last
    graded = _last_graded[0] = _Graded(task, commit, key)
    return graded


_last_graded: list[_Graded | None] = [None]
"""The last answer graded (task by identity, the answer's fields, its facts so far: all frozen)."""


@runtime_checkable
class ScoringJudge(Protocol):
    """A CreativityBench judge that grades under the config's ``scoring`` rule (the scene uses
    ``grade_under`` when a judge has it, so what the judge adds follows the same correctness)."""

    async def grade_under(
        self,
        item: Any,
        commit: Commit,
        history: tuple[QA, ...],
        scoring: Scoring,
        options: CreativityOptions | None = None,
    ) -> JudgeReply:
        """Grade a final answer under ``scoring`` (``options``: the config's, for what a judge adds)."""
        ...


class ExactMatchJudge:
    """Grades by exact match; answers every question with ``irrelevant`` (it knows no facts)."""

    name = "exact"
    synchronous = True
    """Its coroutines never suspend: ``LateralEnv.step`` drives them without an event loop."""

    async def answer(self, item: Any, question: str, history: tuple[QA, ...]) -> JudgeReply:
        """No knowledge to answer from: always ``irrelevant``."""
        return JudgeReply(label="irrelevant")

    async def grade(self, item: Any, commit: Commit, history: tuple[QA, ...]) -> JudgeReply:
        """Exact match of the committed entity and part."""
        return grade_creativity(item, commit)

    async def grade_under(
        self,
        item: Any,
        commit: Commit,
        history: tuple[QA, ...],
        scoring: Scoring,
        options: CreativityOptions | None = None,
    ) -> JudgeReply:
        """Exact match under the config's ``scoring`` rule."""
        return grade_creativity_by(item, commit, scoring)


_ABOUT_ANSWER = frozenset({"answer", "gold", "solution", "correct", "right", "intended", "best", "use", "us"})


def _attribute_text(entity: Entity, part_name: str | None) -> str:
    parts = [p for p in entity.parts if part_name is None or p.name == part_name]
    return " ".join(f"{p.physical.render()} {p.state.render()}" for p in parts)


class KBJudge(ExactMatchJudge):
    """Answers attribute questions from the task's entities; grades commits by exact match."""

    name = "kb"

    async def answer(self, item: Any, question: str, history: tuple[QA, ...]) -> JudgeReply:
        """``yes`` when the named entity has the asked attribute, ``no`` when it lacks it, else ``irrelevant``."""
        if not isinstance(item, CreativityTask):
            return JudgeReply(label="irrelevant")
        asked = content_stems(question)
        if asked & {"answer", "gold", "solution", "correct", "intend"}:
            return JudgeReply(label="irrelevant")
        entity = _named_entity(item, asked)
        if entity is None:
            return JudgeReply(label="irrelevant")
        part = next((p.name for p in entity.parts if set(content_stems(p.name.replace("_", " "))) <= asked), None)
        name_words = content_stems(entity.name) | (content_stems(part.replace("_", " ")) if part else set())
        attribute_words = asked - name_words - _ABOUT_ANSWER
        if not attribute_words:
            return JudgeReply(label="irrelevant")
        known = content_stems(_attribute_text(entity, part))
        return JudgeReply(label="yes" if attribute_words & known else "no")


def _named_entity(task: CreativityTask, asked: frozenset[str]) -> Entity | None:
    """The entity whose name shares the most words with the question (ties: none)."""
    scores = []
    for entity in task.entities:
        name_words = content_stems(entity.name) - {w for w in content_stems(entity.name) if w.isdigit()}
        overlap = len(name_words & asked)
        scores.append((overlap / max(len(name_words), 1), overlap, snake(entity.name), entity))
    scores.sort(key=lambda s: (s[0], s[1]), reverse=True)
    if not scores or scores[0][1] == 0:
        return None
    if len(scores) > 1 and scores[1][:2] == scores[0][:2]:
        return None
    return scores[0][3]
