"""The text of a CreativityBench task, rendered once and reused by every episode of the task.

A static (or CoT) episode is one reset and one commit, so rendering the scene (every entity with
every part's attributes) and checking it for characters an observation may not carry would be
most of its cost. Tasks and entities are frozen, so what an episode shows is rendered once per
entity and once per task and remembered for a few thousand of each; an episode only joins
the pieces in its own entity order.

Both caches are keyed by the object's identity (items live as long as their env), with the object
kept beside its text, so a key cannot be reused by another object while cached and a changed task
under the same id renders afresh.
"""

from __future__ import annotations

from lateralgym.envs._cache import IdentityCache
from lateralgym.envs._matching import snake
from lateralgym.envs._text import sanitise
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask, Entity, SceneItem


class EntityText:
    """An entity as the player reads it: its description and each part's attributes."""

    __slots__ = ("description", "parts")

    def __init__(self, entity: Entity) -> None:
        self.parts: dict[str, str] = {part.name: part.render() for part in entity.parts}
        """``{part name: rendered attributes}``: shared, copy before handing it out."""
        self.description = entity.describe()
        """``entity.describe()``: what inspecting it shows."""


class TaskText:
    """Everything about a task that every episode renders the same way.

    Attributes:
        entities: each entity's text, in the task's order.
        names: their names, in the same order.
        descriptions: their descriptions (what inspecting shows), in the same order.
        by_name: the entities by name (a later entity of the same name wins, as in the scene).
        text_by_name: their texts by name, the same way.
        head: the static opening's first lines (task, environment, the entities' heading).
        items_line: ``OTHER ITEMS: ...``, or "" when the scene has none.
        item_names: the scene items' names.
        interactable: the interactable scene items by name (the interactive mode's inspectable items).
        gold_entity: the gold entity's name, normalised for matching.
        clean: every piece is already what ``sanitise`` makes of it, so a brief joined from them with
            newlines (and short enough) needs no scan.
    """

    __slots__ = (
        "by_name",
        "clean",
        "descriptions",
        "entities",
        "gold_entity",
        "head",
        "interactable",
        "item_names",
        "items_line",
        "names",
        "text_by_name",
    )

    def __init__(self, task: CreativityTask) -> None:
        self.entities = tuple(entity_text(e) for e in task.entities)
        self.names = tuple(e.name for e in task.entities)
        self.descriptions = tuple(e.description for e in self.entities)
        self.by_name: dict[str, Entity] = {e.name: e for e in task.entities}
        self.text_by_name = {e.name: text for e, text in zip(task.entities, self.entities, strict=True)}
        self.head = "\n".join(
            [
                f"TASK: {task.task}",
                f"ENVIRONMENT: {task.environment}",
                "ENTITIES (parts with physical and state attributes):",
            ]
        )
        self.items_line = "OTHER ITEMS: " + "; ".join(_item_line(i) for i in task.items) if task.items else ""
        self.item_names = tuple(i.name for i in task.items)
        self.interactable: dict[str, SceneItem] = {i.name: i for i in task.items if i.interactable}
        self.gold_entity = snake(task.gold.entity)
        pieces = [self.head, self.items_line, *self.descriptions]
        self.clean = all(sanitise(piece) == piece for piece in pieces)


_entities: IdentityCache[Entity, EntityText] = IdentityCache(8192)
_tasks: IdentityCache[CreativityTask, TaskText] = IdentityCache(4096)


def entity_text(entity: Entity) -> EntityText:
    """The entity's rendered text, remembered across episodes and tasks (tasks share entities)."""
    return _entities.get(entity) or _entities.put(entity, EntityText(entity))


def task_text(task: CreativityTask) -> TaskText:
    """The task's rendered pieces, remembered across episodes."""
    return _tasks.get(task) or _tasks.put(task, TaskText(task))


def described(entity: Entity) -> str:
    """``entity.describe()`` (what inspecting it shows), remembered with its rendered parts."""
    return entity_text(entity).description


def _item_line(item: SceneItem) -> str:
    return f"{item.name} ({item.description})" if item.description else item.name
