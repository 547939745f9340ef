"""Scenes and datasets: schema, loaders, the engine, Gymnasium and PettingZoo environments."""

from lateralgym.envs._actions import (
    ACTION_KINDS,
    Action,
    Ask,
    Commit,
    Inspect,
    Invalid,
    action_to_text,
    parse_action,
    parse_choice,
)
from lateralgym.envs._schema import (
    SCENES,
    Affordance,
    AffordanceKB,
    CreativityTask,
    Entity,
    GoldAnswer,
    Item,
    MCQPuzzle,
    Part,
    PhysicalAttributes,
    ReferenceSolution,
    SamplingFactors,
    SceneItem,
    SituationPuzzle,
    StateAttributes,
    snake,
    spaced,
)

__all__ = [
    "ACTION_KINDS", "Action", "Affordance", "AffordanceKB", "Ask", "Commit", "CreativityTask", "Entity",
    "GoldAnswer", "Inspect", "Invalid", "Item", "MCQPuzzle", "Part", "PhysicalAttributes", "ReferenceSolution",
    "SCENES", "SamplingFactors", "SceneItem", "SituationPuzzle", "StateAttributes", "action_to_text",
    "parse_action", "parse_choice", "snake", "spaced",
]
