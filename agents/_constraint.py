"""Constrained replies: an LLM player's ``constrain`` option and what it adds to each request.

The benchmark states the replies its parser reads (``Benchmark.prompts.action_grammar``: an
``ActionGrammar``); the player asks the server to decode under it, in one of two wire forms:

* ``grammar``: the GBNF grammar in the request's ``grammar`` field (llama.cpp's ``llama-server`` and
  llama-cpp-python's server). The reply is written exactly as the prompt asks (``Answer: B``).
* ``json_schema``: the moves as a JSON schema in ``response_format: {"type": "json_schema", ...}``
  (OpenAI's structured outputs, vLLM, ``llama-server``, LM Studio). The reply is a JSON object the
  parser reads (``{"answer": "B"}``).
* ``off``: free text, as the papers' protocols have it.

Default: ``grammar`` for ``local/`` models (the llama.cpp server LateralGym starts), ``off`` for every
other. A spec may name a fallback, ``constrain=json_schema,off``: when the server refuses or ignores the
first form (the check before the run sends one tiny constrained request whose reply the constraint
fixes; a refused request during the run counts too), the next is used for the rest of the run, said
once on stderr and recorded on every move (``ModelCall.constrained``). Without a fallback, a refusal
stops the run before it starts (``ConstraintRejectedError``, one line).
"""

from __future__ import annotations

import json
import sys
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from lateralgym.agents._llm_errors import LLMCallError, LLMConfigError, LLMError

if TYPE_CHECKING:
    from lateralgym.agents._llm_client import LLMClient
    from lateralgym.agents._llm_spec import ModelSpec
    from lateralgym.envs import ActionGrammar

__all__ = [
    "CONSTRAINT_MODES",
    "Constraint",
    "ConstraintMode",
    "ConstraintRejectedError",
    "check_constraint",
    "default_constraint",
    "parse_constrain",
]

ConstraintMode = Literal["grammar", "json_schema", "off"]
CONSTRAINT_MODES: tuple[ConstraintMode, ...] = ("grammar", "json_schema", "off")

_PROBE_GRAMMAR = 'root ::= "ok"'
_PROBE_SCHEMA = {
    "type": "object",
    "properties": {"ok": {"const": "yes"}},
    "required": ["ok"],
    "additionalProperties": False,
}
_PROBE_PROMPT = "Reply with the word ok."
_DETAIL_CHARS = 200


class ConstraintRejectedError(LLMError):
    """The server refused or ignored the constrained reply the player asked for (and the spec named no
    fallback): nothing was run."""


def parse_constrain(value: str) -> tuple[ConstraintMode, ...]:
    """``grammar``, ``json_schema`` or ``off``, or a list to fall back along (``json_schema,off``).

    Raises:
        ValueError: an unknown mode, a repeated one, or ``off`` before the end.
    """
    modes = [part.strip().lower() for part in value.split(",")]
    unknown = [m for m in modes if m not in CONSTRAINT_MODES]
    if unknown or not modes:
        raise ValueError(
            f"expected grammar, json_schema or off, or a fallback list such as json_schema,off; got {value!r}"
        )
    if len(set(modes)) < len(modes) or ("off" in modes and modes[-1] != "off"):
        raise ValueError(f"each mode once, and off only last (it is the final fallback); got {value!r}")
    return tuple(cast(ConstraintMode, m) for m in modes)


def default_constraint(spec: ModelSpec) -> tuple[ConstraintMode, ...]:
    """``grammar`` for a ``local/`` model (LateralGym's own llama.cpp server), ``off`` otherwise."""
    return ("grammar",) if spec.provider == "local" else ("off",)


class Constraint:
    """The constraint a run's players send, one object shared by them, so a fallback switches them all.

    Args:
        modes: The modes to use, in order of preference (the last one stays once reached).
    """

    def __init__(self, modes: Sequence[ConstraintMode]) -> None:
        if not modes:
            raise LLMConfigError("a constraint needs at least one mode")
        self._modes: list[ConstraintMode] = list(modes)
        self._lock = threading.Lock()
        self.fallbacks: list[tuple[str, str]] = []
        """``(mode given up, why)`` for each fallback taken, in order."""

    @property
    def mode(self) -> ConstraintMode:
        """The mode requests are sent under now."""
        return self._modes[0]

    @property
    def can_fall_back(self) -> bool:
        """Whether a refusal of the current mode moves on to another instead of failing."""
        return len(self._modes) > 1

    def request_params(self, grammar: ActionGrammar | None) -> dict[str, Any]:
        """The request fields that constrain a reply to ``grammar`` under the current mode (none when it
        is ``off`` or the benchmark states no grammar)."""
        return params_for(self.mode, grammar)

    def fall_back(self, mode: ConstraintMode, reason: str) -> bool:
        """Give up ``mode`` (refused: ``reason``) for the next one; False when there is none.

        Safe to call from many players at once: only the first refusal of a mode moves on.
        """
        with self._lock:
            if self._modes[0] != mode:
                return True  # another player already moved on
            if len(self._modes) == 1:
                return False
            self._modes.pop(0)
            self.fallbacks.append((mode, reason))
            print(
                f"lateralgym: the server refused constrain={mode} ({reason}); falling back to "
                f"constrain={self._modes[0]} for the rest of the run",
                file=sys.stderr,
            )
            return True


def params_for(mode: ConstraintMode, grammar: ActionGrammar | None) -> dict[str, Any]:
    """The request fields of ``mode`` for ``grammar`` (see the module docstring)."""
    if grammar is None or mode == "off":
        return {}
    if mode == "grammar":
        return {"extra_body": {"grammar": grammar.gbnf()}}
    return {
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "move", "schema": grammar.json_schema(), "strict": False},
        }
    }


def rejection(exc: LLMCallError) -> str | None:
    """Why a failed constrained request reads as the server refusing the constraint (an HTTP error
    answering the request, not a lost connection or a timeout), or None."""
    if exc.kind != "http":
        return None
    return f"HTTP {exc.status}: {' '.join(str(exc).split())[-_DETAIL_CHARS:]}"


async def check_constraint(client: LLMClient, constraint: Constraint, *, role: str = "player") -> None:
    """Before a run: send one tiny request under the constraint, whose reply it fixes (``ok``, or
    ``{"ok": "yes"}``); a server that refuses it (an HTTP error) or ignores it (another reply) makes
    the constraint fall back, or raises when no fallback is left.

    Raises:
        ConstraintRejectedError: the server refused or ignored every mode the spec allows.
    """
    while constraint.mode != "off":
        mode = constraint.mode
        reason = await _probe(client, mode)
        if reason is None:
            return
        if not constraint.fall_back(mode, reason):
            other = "json_schema" if mode == "grammar" else "grammar"
            raise ConstraintRejectedError(
                f"the {role} model {client.spec.name} refused constrain={mode} ({reason}); use constrain={other} "
                f"(grammar: llama.cpp servers; json_schema: OpenAI, vLLM), constrain=off for free text, or "
                f"constrain={mode},off to fall back by itself; nothing was run"
            )


async def _probe(client: LLMClient, mode: ConstraintMode) -> str | None:
    """Why the server fails ``mode``'s check, or None when its reply obeys the constraint."""
    if mode == "grammar":
        params: dict[str, Any] = {"extra_body": {"grammar": _PROBE_GRAMMAR}}
    else:
        params = {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "check", "schema": _PROBE_SCHEMA, "strict": False},
            }
        }
    try:
        call = await client.complete(
            _PROBE_PROMPT, role="check", use_cache=False, max_tokens=8, temperature=0, **params
        )
    except LLMCallError as exc:
        if exc.kind in ("connection", "tls", "timeout"):
            raise  # not about the constraint: the endpoint check's to report
        return f"{exc.kind} error: {' '.join(str(exc).split())[-_DETAIL_CHARS:]}"
    text = call.text.strip()
    if mode == "grammar":
        obeyed = text == "ok"
    else:
        try:
            obeyed = json.loads(text) == {"ok": "yes"}
        except ValueError:
            obeyed = False
    return None if obeyed else f"it ignored the constraint: the check's reply was {text[:60]!r}"
