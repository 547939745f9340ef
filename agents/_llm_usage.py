"""Usage accounting: calls, cache hits, tokens and cost, and the lazy litellm import."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import threading
from types import ModuleType
from typing import Any

from pydantic import BaseModel, ConfigDict

from lateralgym.agents._llm_errors import LLMConfigError
from lateralgym.envs import ModelCall

LITELLM_INSTALL_HINT = "pip install 'lateralgym[litellm]'"

_litellm_lock = threading.Lock()


def litellm_available() -> bool:
    """Whether litellm is installed (without importing it, which takes seconds)."""
    return importlib.util.find_spec("litellm") is not None


def import_litellm() -> ModuleType:
    """Import litellm safely: local cost map, no ``.env`` reading, no debug banners.

    Raises:
        LLMConfigError: litellm is not installed; the message gives the pip command.
    """
    # Both must be set before the first import: otherwise litellm fetches a price
    # list from the internet and reads a .env file from the working directory.
    # litellm reads only "true" (any case) as on, so a user's "1" or "yes" becomes "True";
    # an explicit "false" is the user's choice to fetch and is kept.
    if os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "").strip().lower() != "false":
        os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    with _litellm_lock:
        try:
            import litellm
        except ImportError as exc:
            raise LLMConfigError(
                f"this model needs litellm, which is not installed: run {LITELLM_INSTALL_HINT}"
            ) from exc
        litellm.suppress_debug_info = True
    return litellm


_COST_MAP_FILE = "model_prices_and_context_window_backup.json"
"""The cost map litellm ships, which it reads when ``LITELLM_LOCAL_MODEL_COST_MAP`` is on (``import_litellm``)."""


@functools.cache
def _cost_map_keys() -> frozenset[str] | None:
    """The model names of litellm's shipped cost map, read without importing litellm (a plain JSON
    read, ~0.1 s, against seconds for the import); None when they cannot be known that way (litellm
    absent, its file moved, or the user asked litellm to fetch its map)."""
    if os.environ.get("LITELLM_LOCAL_MODEL_COST_MAP", "").strip().lower() == "false":
        return None
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    try:
        with open(os.path.join(list(spec.submodule_search_locations)[0], _COST_MAP_FILE), "rb") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return frozenset(str(key) for key in data) if isinstance(data, dict) else None


def litellm_may_price(model: str) -> bool:
    """Whether litellm's cost map might price ``model`` (``provider/model``), asked without importing it.

    False only when no name in litellm's shipped map contains the model's own name (``bench`` of
    ``openai/bench``): litellm prices a model from a map entry of that name, with or without a
    provider prefix, so it would find none. True when the map cannot be read, and for fine-tuned
    models (``ft:...``), which litellm prices as their base model.
    """
    own = model.split("?", 1)[0].split("/", 1)[-1]
    if not own or own.startswith("ft:"):
        return True
    keys = _cost_map_keys()
    return keys is None or any(own in key for key in keys)


def lookup_cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The price of one call from litellm's local cost map, or ``None`` when unknown.

    Unknown means litellm is not installed or its map has no such model (litellm
    raises for unmapped models; that is caught here, never passed on).

    Args:
        model: ``provider/model`` as in ``ModelSpec.name``.
        prompt_tokens: Prompt tokens of the call.
        completion_tokens: Completion tokens of the call.
    """
    if not litellm_available():
        return None
    try:
        litellm = import_litellm()
        prompt_cost, completion_cost = litellm.cost_per_token(
            model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
        )
        return float(prompt_cost) + float(completion_cost)
    except Exception:  # unmapped model, odd provider: the price is simply unknown
        return None


class UsageSummary(BaseModel):
    """A snapshot of a ``UsageMeter``."""

    model_config = ConfigDict(frozen=True)

    calls: int
    """Calls answered by the API (cache hits and failures excluded)."""
    cache_hits: int
    """Calls answered from the on-disk cache, at no cost."""
    failures: int
    """Calls that failed for good (raised as ``LLMCallError`` or returned with ``error``)."""
    attempts: int
    """HTTP requests sent, retries included."""
    prompt_tokens: int
    """Prompt tokens of the API calls."""
    completion_tokens: int
    """Completion tokens of the API calls."""
    cost_usd: float | None
    """Total cost; ``None`` when any call's price is unknown."""
    known_cost_usd: float
    """Sum over the calls whose price is known."""
    unpriced_calls: int
    """API calls whose price is unknown."""

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def cost_text(self) -> str:
        """The cost for a report: ``$0.0123`` or ``unknown``."""
        return "unknown" if self.cost_usd is None else f"${self.cost_usd:.4f}"


class UsageMeter:
    """Sums what a client (or several sharing one meter) spent; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, Any] = {}
        self.reset()

    def reset(self) -> None:
        """Start again from zero."""
        with self._lock:
            self._counts = dict.fromkeys(
                ("calls", "cache_hits", "failures", "attempts", "prompt_tokens", "completion_tokens"), 0
            )
            self._counts["known_cost_usd"] = 0.0
            self._counts["unpriced_calls"] = 0

    def record(self, call: ModelCall) -> None:
        """Add one call: answered by the API, from the cache, or failed (``error`` set)."""
        with self._lock:
            c = self._counts
            c["attempts"] += call.attempts
            if call.cache_hit:
                c["cache_hits"] += 1
                return
            if call.error is not None:
                c["failures"] += 1
                return
            c["calls"] += 1
            c["prompt_tokens"] += call.prompt_tokens
            c["completion_tokens"] += call.completion_tokens
            if call.cost_usd is None:
                c["unpriced_calls"] += 1
            else:
                c["known_cost_usd"] += call.cost_usd

    def summary(self) -> UsageSummary:
        """A consistent snapshot of every counter."""
        with self._lock:
            c = dict(self._counts)
        cost = None if c["unpriced_calls"] else c["known_cost_usd"]
        return UsageSummary(cost_usd=cost, **c)

    def __repr__(self) -> str:
        s = self.summary()
        return (
            f"UsageMeter(calls={s.calls}, cache_hits={s.cache_hits}, failures={s.failures}, "
            f"tokens={s.total_tokens}, cost={s.cost_text()})"
        )
