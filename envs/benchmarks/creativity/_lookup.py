"""A task's names and comparisons indexed once, for the grading every commit runs.

Every commit is graded under all three scoring rules (``CreativityOutcome.rules``), and each rule
looks names up in the task: the scene entity a name refers to, an entity's parts, the release's
comparison of a part with the gold. ``CreativityTask.entity`` and ``comparison`` scan the task for
each lookup; a grader asks ``task_lookup(task)`` instead, which answers the same questions from
dicts built once per task (tasks are frozen, so the index never goes stale).
"""

from __future__ import annotations

from lateralgym.envs._cache import IdentityCache
from lateralgym.envs._matching import NameMatcher, snake
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask, Entity, PartJudgement

__all__ = ["TaskLookup", "task_lookup"]


class TaskLookup:
    """One task's lookups; each answers as the ``CreativityTask`` method of the same name does.

    Attributes:
        entity_names: the scene entities' names, in the task's order.
        entities: ``match_name`` over those names.
        gold_entity: the gold entity's name, ``snake``-normalised.
        gold_part: the gold part's name, ``snake``-normalised.
    """

    __slots__ = ("_comparisons", "_entities", "_parts", "entities", "entity_names", "gold_entity", "gold_part")

    def __init__(self, task: CreativityTask) -> None:
        self.entity_names = tuple(e.name for e in task.entities)
        self.entities = NameMatcher(self.entity_names)
        self.gold_entity = snake(task.gold.entity)
        self.gold_part = snake(task.gold.part)
        self._entities: dict[str, Entity] = {}
        self._parts: dict[str, NameMatcher] = {}
        for entity in task.entities:  # the first of a name wins, as the task's scans find it
            if snake(entity.name) not in self._entities:
                self._entities[snake(entity.name)] = entity
                self._parts[entity.name] = NameMatcher([p.name for p in entity.parts])
        self._comparisons: dict[str, dict[str, PartJudgement]] = {}
        for judged in task.judge_output:  # only an entity's first judgement counts, as in ``comparison``
            if snake(judged.entity) not in self._comparisons:
                by_part = self._comparisons[snake(judged.entity)] = {}
                for comparison in judged.parts:
                    by_part.setdefault(comparison.part, comparison)

    def entity(self, name: str) -> Entity | None:
        """``CreativityTask.entity``: the entity ``name`` names (case, spacing and snake_case ignored)."""
        return self._entities.get(snake(name))

    def parts(self, entity_name: str) -> NameMatcher:
        """``match_name`` over the parts of the entity named exactly ``entity_name`` (one of ``entity_names``)."""
        return self._parts[entity_name]

    def compared_parts(self, entity: str) -> list[str]:
        """The parts the release compared with the gold for ``entity`` (its ``judge_output``), in file order
        (a part compared twice listed once: the grounding keeps the first of equal names anyway)."""
        return list(self._comparisons.get(snake(entity), ()))

    def comparison(self, entity: str, part: str) -> PartJudgement | None:
        """``CreativityTask.comparison``: the release's comparison of ``entity``'s ``part`` with the gold."""
        by_part = self._comparisons.get(snake(entity))
        return by_part.get(snake(part)) if by_part else None


_lookups: IdentityCache[CreativityTask, TaskLookup] = IdentityCache(4096)


def task_lookup(task: CreativityTask) -> TaskLookup:
    """``task``'s lookups, built on its first commit and kept for the next few thousand tasks."""
    return _lookups.get(task) or _lookups.put(task, TaskLookup(task))
