"""Loud failures during a run: the first error of each kind printed as it happens, and a stop after
too many errored episodes in a row.

An API outage, a wrong key or a setting the server refuses makes every episode end in an error. The
log keeps each error, but a person watching the progress bar should not have to open it: the
first episode to fail in a new way (``HTTP 401``, ``connection``, ``timeout``, a crash of a given
type) is printed on stderr at once, later ones of the same kind are only counted. After
``stop_after`` episodes in a row end in an error (none in between finished cleanly), the run stops:
the unfinished episodes stay for ``lateralgym run --resume``.
"""

from __future__ import annotations

import re
import sys
from typing import TextIO

from lateralgym.episodes._log import EpisodeEnd

__all__ = ["STOP_AFTER_ERRORS", "FailureWatch", "error_kind"]

STOP_AFTER_ERRORS = 10
"""The default number of errored episodes in a row that stops a run."""

_SHOWN_CHARS = 300
_HTTP = re.compile(r"\bHTTP (\d{3})\b")
_CLIENT_KIND = re.compile(r"(?:retries exhausted|not retried): (timeout|connection|tls|malformed|config|error)\b")
_EXCEPTION = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*)(?::|$)")


def error_kind(message: str) -> str:
    """The kind of an episode's error, from its logged message: ``HTTP 401``, ``connection``, ``tls``,
    ``timeout``, ``malformed`` (the LLM client's words), else the exception's type name."""
    http = _HTTP.search(message)
    if http is not None:
        return f"HTTP {http.group(1)}"
    client = _CLIENT_KIND.search(message)
    if client is not None:
        return client.group(1)
    exception = _EXCEPTION.match(message.strip())
    return exception.group(1) if exception is not None else "error"


class FailureWatch:
    """Watches episode ends: prints each new kind of error, and says when the run should stop.

    Args:
        stop_after: Stop after this many errored episodes in a row (None or 0: never).
        stream: Where the lines go (default: stderr at the time of writing, so a live progress
            bar can redirect it).
    """

    def __init__(self, stop_after: int | None = STOP_AFTER_ERRORS, stream: TextIO | None = None) -> None:
        self.stop_after = stop_after or None
        self.stream = stream
        self.kinds: dict[str, int] = {}
        """Each kind of error seen, with its count."""
        self.in_a_row = 0
        self.finished = 0
        """Episodes that ended (an end record written) in this call."""
        self.errored = 0
        self.stopped: str | None = None
        """Why the run stopped early (None: it did not)."""

    def _say(self, line: str) -> None:
        print(line, file=self.stream if self.stream is not None else sys.stderr, flush=True)

    def episode_ended(self, end: EpisodeEnd) -> bool:
        """Count an ended episode; True when the run should stop now."""
        self.finished += 1
        if end.error is None:
            self.in_a_row = 0
            return False
        self.errored += 1
        self.in_a_row += 1
        kind = error_kind(end.error)
        self.kinds[kind] = self.kinds.get(kind, 0) + 1
        if self.kinds[kind] == 1:
            shown = " ".join(end.error.split())[:_SHOWN_CHARS]
            self._say(
                f"lateralgym: episode {end.episode_id} ended in an error ({kind}; later errors of this kind are "
                f"counted, not shown): {shown}"
            )
        if self.stop_after is not None and self.in_a_row >= self.stop_after and self.stopped is None:
            self.stopped = (
                f"{self.in_a_row} episodes in a row ended in an error, so the run stopped early; the unfinished "
                "episodes are kept for --resume"
            )
            self._say(f"lateralgym: {self.stopped}")
            return True
        return False

    def summary(self) -> str:
        """The errors seen by kind, e.g. ``HTTP 401 x 12, timeout x 1`` (empty when none)."""
        return ", ".join(f"{kind} x {count}" for kind, count in self.kinds.items())
