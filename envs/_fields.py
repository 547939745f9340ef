"""Field types and helpers every benchmark's item models share.

Records are pydantic v2 and frozen (``FrozenRecord``); text a scene needs is ``Text`` (stripped,
never empty), numbers and flags are strict (``Count``, ``Flag``: ``true`` is no count, ``"3"`` no
label). ``snake`` / ``spaced`` normalise names for matching and for display.
"""

from __future__ import annotations

import functools
import re
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Strict, StringConstraints

__all__ = ["Count", "Flag", "FrozenRecord", "Text", "snake", "spaced"]

_NOT_ALNUM = re.compile(r"[^0-9a-z]+")

Text = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)]
"""Text that must say something: stripped, then at least one character."""

Count = Annotated[int, Strict()]
"""A whole number given as one: no ``true``, ``1.0`` or ``"1"``."""

Flag = Annotated[bool, Strict()]
"""A JSON ``true`` / ``false``, nothing else."""


def snake(name: str) -> str:
    """Normalise a name for matching: lower case, runs of non-alphanumerics become one underscore."""
    # Every task of a file checks its entities' names, and they repeat: short names are remembered.
    return _snake_short(name) if len(name) <= _SNAKE_CACHED else _snake(name)


_SNAKE_CACHED = 120


def _snake(name: str) -> str:
    return _NOT_ALNUM.sub("_", name.strip().lower()).strip("_")


_snake_short = functools.lru_cache(maxsize=1 << 14)(_snake)


def spaced(name: str) -> str:
    """A snake_case name as people write it (``led_bulbs`` -> ``led bulbs``)."""
    return name.replace("_", " ").strip()


class FrozenRecord(BaseModel):
    """Base of dataset records: frozen, unknown keys refused, text stripped."""

    model_config = ConfigDict(frozen=True, extra="forbid", str_strip_whitespace=True)
