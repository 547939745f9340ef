"""Errors of the LLM client layer, and the one helper that keeps secrets out of text."""

from __future__ import annotations

import re
from collections.abc import Iterable

from lateralgym.envs._calls import ModelCall
from lateralgym.envs._errors import LateralGymError

REDACTED = "[REDACTED]"

# Secrets shorter than this are not redacted: they would blank out ordinary words.
_MIN_SECRET_LEN = 6
# Token-like runs only, so prose such as "the bearer of bad news" is left alone.
_BEARER = re.compile(r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{16,}")


def redact(text: str, secrets: Iterable[str | None] = ()) -> str:
    """Replace every occurrence of each secret, and any bearer token, with ``[REDACTED]``.

    Args:
        text: Any text that might carry a secret (an error message, a log line).
        secrets: The secret values to remove; ``None``, empty and very short values
            are skipped.

    Returns:
        The text with the secrets replaced.
    """
    for secret in sorted({s for s in secrets if s and len(s) >= _MIN_SECRET_LEN}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return _BEARER.sub(lambda m: m.group(1) + REDACTED, text)


class LLMError(LateralGymError):
    """Base class of the LLM client layer's errors."""


class LLMConfigError(LLMError, ValueError):
    """The model is misconfigured: a bad model name, a missing API key or a missing extra.

    The message says what to set or install.
    """


class LLMCallError(LLMError):
    """A request failed for good: not retryable, or still failing after every attempt.

    Attributes:
        model: The model name, ``provider/model``.
        status: The last HTTP status, or ``None`` for timeouts, connection errors
            and malformed responses.
        attempts: How many requests were sent.
        retryable: Whether the last failure was of a retryable kind (so the
            attempts ran out rather than the request being refused).
        kind: The last failure's kind, e.g. ``http``, ``timeout``, ``connection``,
            ``malformed``.
        calls: The model calls made for the failed operation, in order, the failed one last
            (``error`` set): one for a single ``complete``; a judge prepends the calls it made
            before (earlier samples, re-asks), so the caller can log and count them all.
    """

    def __init__(
        self,
        message: str,
        *,
        model: str,
        status: int | None,
        attempts: int,
        retryable: bool,
        kind: str,
        calls: tuple[ModelCall, ...] = (),
    ) -> None:
        super().__init__(message)
        self.model = model
        self.status = status
        self.attempts = attempts
        self.retryable = retryable
        self.kind = kind
        self.calls = calls
