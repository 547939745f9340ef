"""Which dataset format a record comes closest to, for the error when no format claims a file.

A format's sniff says yes or no; when every one says no, the user needs the nearest miss: "closest:
jsonl (Animal), missing 'facts'", not "cannot tell the format". Each candidate is a ``Shape``: the
keys a record of it must have, and (for our JSONL, whose models refuse unknown keys) the keys it may
have. The closest shape shares the most keys with the record, less what it lacks and what it has
too many.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from pydantic import BaseModel

__all__ = ["Shape", "closest_shape", "model_shape", "no_match_message"]


@dataclass(frozen=True)
class Shape:
    """The keys of one kind of record.

    Attributes:
        name: How the error names it (``jsonl (Animal)``, or an official format's name).
        required: Keys a record of this kind must have.
        allowed: Every key it may have; ``None``: any others too (an official release's records).
    """

    name: str
    required: frozenset[str]
    allowed: frozenset[str] | None = None

    def missing(self, keys: Iterable[str]) -> list[str]:
        """The required keys ``keys`` lacks, sorted."""
        return sorted(self.required - set(keys))

    def unexpected(self, keys: Iterable[str]) -> list[str]:
        """The keys of ``keys`` this kind never has, sorted (none when it allows any)."""
        return [] if self.allowed is None else sorted(set(keys) - self.allowed)

    def score(self, keys: Iterable[str]) -> tuple[int, int]:
        """How close a record with ``keys`` comes (higher is closer): shared keys less the missing and
        unexpected ones, then fewer missing."""
        have = set(keys)
        shared = len(have & (self.allowed if self.allowed is not None else self.required))
        missing, unexpected = len(self.missing(have)), len(self.unexpected(have))
        return shared - missing - unexpected, -missing


def model_shape(name: str, model: type[BaseModel]) -> Shape:
    """The shape of a pydantic model's records: its required fields, and all its fields when it
    refuses unknown keys."""
    required = frozenset(n for n, field in model.model_fields.items() if field.is_required())
    forbids = model.model_config.get("extra") == "forbid"
    return Shape(name, required, frozenset(model.model_fields) if forbids else None)


def closest_shape(keys: Iterable[str], shapes: Iterable[Shape]) -> Shape | None:
    """The shape a record with ``keys`` comes closest to (the first listed on a tie), or None when it
    shares no key with any."""
    have = set(keys)
    best: Shape | None = None
    for shape in shapes:
        if not have & (shape.allowed if shape.allowed is not None else shape.required):
            continue
        if best is None or shape.score(have) > best.score(have):
            best = shape
    return best


_SPELLED_OUT = 3
"""Up to this many candidate kinds, an error lists each one's keys; past it, their names."""


def _quoted(keys: Iterable[str], limit: int = 6) -> str:
    keys = list(keys)
    shown = ", ".join(repr(k) for k in keys[:limit])
    return shown + (f" and {len(keys) - limit} more" if len(keys) > limit else "")


def no_match_message(record: object, shapes: Iterable[Shape], what: str) -> str:
    """Why ``record`` is none of ``what`` (``"twenty-questions's formats"``): the closest shape and the keys it
    lacks or has too many, or what the record is when it is no object or shares no key with any."""
    shapes = list(shapes)
    if not isinstance(record, Mapping):
        kind = "a list" if isinstance(record, list) else type(record).__name__
        return f"is {kind}, not an object with the keys of one of {what}"
    keys = [str(k) for k in record]
    best = closest_shape(keys, shapes)
    if best is None:
        listed = [s for s in shapes if s.required]
        if len(listed) <= _SPELLED_OUT:
            needs = "; ".join(f"{s.name} needs {_quoted(sorted(s.required))}" for s in listed)
        else:
            needs = "they are " + ", ".join(s.name for s in listed)
        return f"has none of the keys of {what} (its keys: {_quoted(keys) or 'none'}); {needs}"
    problems = []
    if best.missing(keys):
        problems.append(f"missing {_quoted(best.missing(keys))}")
    if best.unexpected(keys):
        problems.append(f"unexpected {_quoted(best.unexpected(keys))}")
    return f"matches none of {what}; closest: {best.name}, " + (
        " and ".join(problems) or "whose keys it has, but a value of another kind"
    )
