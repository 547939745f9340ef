"""Exception types of the envs package: one per failure family, each message says what to do."""

from __future__ import annotations

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

    Not a ``LateralGymError``: nothing went wrong, so the command line exits 0.
    """


def validation_message(exc: ValidationError, default: str = "record") -> tuple[str, str]:
    """(field path, message) of a pydantic error's first problem, for one-line errors."""
    first = exc.errors()[0]
    field = ".".join(str(p) for p in first["loc"]) or default
    return field, " ".join(first["msg"].removeprefix("Value error, ").split())
