"""Complete typed outcomes for hand-written log fixtures.

Metric fixtures state only the fields their arithmetic is about; ``outcome`` fills the rest of the
benchmark's outcome model with neutral values (nothing solved, no questions, no inspections) and
validates the result, so every fixture is a real ``Outcome`` and a renamed field still fails.
"""

from __future__ import annotations

import types
import typing
from typing import Any, Union

from pydantic import BaseModel

from lateralgym.envs import get_benchmark


def _neutral(annotation: Any) -> Any:
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType) and type(None) in typing.get_args(annotation):
        return None
    if annotation is bool:
        return False
    if annotation in (int, float):
        return 0
    if annotation is str:
        return ""
    if origin is list or annotation is list:
        return []
    if origin is dict or annotation is dict:
        return {}
    if origin is typing.Literal:
        return typing.get_args(annotation)[0]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return {name: _neutral(field.annotation) for name, field in annotation.model_fields.items()}
    raise TypeError(f"no neutral value for {annotation!r}")


def outcome(benchmark: str, fields: dict[str, Any], turns: int = 1, max_turns: int = 15) -> dict[str, Any]:
    """``fields`` completed to a valid outcome of ``benchmark`` (as the step log stores it)."""
    model = get_benchmark(benchmark).outcome_type
    data: dict[str, Any] = {"turns": turns, "max_turns": max_turns, "invalid_actions": 0, "committed": True}
    for name, field in model.model_fields.items():
        if name not in data:
            data[name] = _neutral(field.annotation)
    for name, value in fields.items():
        if isinstance(value, dict) and isinstance(data.get(name), dict) and data[name]:
            data[name] = {**data[name], **value}
        else:
            data[name] = value
    return model.model_validate(data).model_dump(mode="json")
