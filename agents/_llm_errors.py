"""Errors of the LLM client layer (``redact``, which keeps secrets out of their text, lives in
``_llm_secrets``)."""

from __future__ import annotations

from lateralgym.envs import LateralGymError, ModelCall


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
