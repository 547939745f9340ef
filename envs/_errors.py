"""Exception types of the envs package: one per failure family, each message says what to do."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from pydantic import ValidationError


class LateralGymError(Exception):
    """Base class of every error LateralGym raises on purpose."""


class DatasetError(LateralGymError, ValueError):
    """A dataset file is missing, unreadable or has a bad record.

    The message names the file, the record (line, row or index) and the field.
    """

    def __init__(self, path: object, message: str, *, record: object = None, field: str | None = None) -> None:
        self.path = str(path)
        self.record = record
        self.field = field
        where = self.path
        if record is not None:
            where += f", record {record}"
        if field:
            where += f", field {field!r}"
        super().__init__(f"{where}: {message}")


class DatasetTooLarge(DatasetError):  # noqa: N818 - a DatasetError of one kind, named for it
    """A dataset file is larger than any dataset (expanded, whole or one line): refused while it is
    read, before it fills memory. Format detection passes it on as it is, never as "unknown format"."""


class UnknownDatasetFormat(DatasetError):
    """No format of the benchmark claims a dataset file: its first record is none of theirs. The
    message names the closest format and the keys the record lacks or has too many."""


class ConfigError(LateralGymError, ValueError):
    """An episode configuration is invalid or names something unknown."""


class PlayerQuit(Exception):  # noqa: N818 - a request, not a failure: no "Error" suffix
    """The person playing asked to stop (``quit`` or Ctrl-D): the run stops cleanly, resumable.

    Not a ``LateralGymError``: nothing went wrong. The command line says the run is unfinished and how
    to resume it, and exits 130, as after Ctrl-C.
    """


def validation_problems(exc: ValidationError, default: str = "record", known: Iterable[str] = ()) -> list[str]:
    """Every problem of a pydantic error, each as ``field 'name': message``, so one message lists them
    all; a key the model does not have says so, with the ``known`` key it most likely misspells."""
    problems = []
    known = list(known)
    for error in exc.errors():
        field = ".".join(str(p) for p in error["loc"]) or default
        message = " ".join(error["msg"].removeprefix("Value error, ").split())
        if error["type"] == "extra_forbidden":
            message = "no such field" + (did_you_mean(str(error["loc"][-1]), known) if len(error["loc"]) == 1 else "")
        problems.append(f"field {field!r}: {message}")
    return list(dict.fromkeys(problems))


def validation_message(exc: ValidationError, default: str = "record") -> tuple[str, str]:
    """(field path, message) of a pydantic error's first problem, for one-line errors."""
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or default
    return field, " ".join(first["msg"].removeprefix("Value error, ").split())


def closest_name(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str | None:
    """The choice ``word`` most likely misspells (difflib's ratio at least ``cutoff``), or None."""
    close = difflib.get_close_matches(word, list(dict.fromkeys(choices)), n=1, cutoff=cutoff)
    return close[0] if close else None


def did_you_mean(word: str, choices: Iterable[str], cutoff: float = 0.6) -> str:
    """`` (did you mean 'x'?)`` for a misspelt name, to append to an error; empty when nothing is close.

    The one "did you mean" of every error that names something unknown: configs, flags, players, options.
    """
    close = closest_name(word, choices, cutoff)
    return f" (did you mean {close!r}?)" if close is not None else ""
