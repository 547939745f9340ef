"""Usage accounting: calls, cache hits, tokens and cost, and the lazy litellm import."""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import sys
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
"""The cost map litellm ships (the one it reads itself with ``LITELLM_LOCAL_MODEL_COST_MAP`` on)."""


@functools.cache
def _shipped_cost_map() -> dict[str, tuple[float, float, str]]:
    """litellm's shipped cost map as data: model key -> (input, output USD per token, provider).

    Read as a plain JSON file found through the package's import spec, which does not import
    litellm (its import takes seconds; this read ~0.1 s, once per process). Entries without both
    per-token prices are left out; empty when litellm is not installed or its file moved.
    """
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return {}
    if spec is None or not spec.submodule_search_locations:
        return {}
    try:
        with open(os.path.join(list(spec.submodule_search_locations)[0], _COST_MAP_FILE), "rb") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    prices: dict[str, tuple[float, float, str]] = {}
    for key, entry in data.items() if isinstance(data, dict) else ():
        if not isinstance(entry, dict):
            continue
        per_input, per_output = entry.get("input_cost_per_token"), entry.get("output_cost_per_token")
        if isinstance(per_input, int | float) and isinstance(per_output, int | float):
            prices[str(key)] = (float(per_input), float(per_output), str(entry.get("litellm_provider", "")))
    return prices


def shipped_prices_loaded() -> bool:
    """Whether ``shipped_price`` has read litellm's map yet (after that a lookup is a dict lookup)."""
    return _shipped_cost_map.cache_info().currsize > 0


def shipped_price(model: str) -> tuple[float, float] | None:
    """(input, output) USD per token of ``provider/model`` by litellm's shipped cost map, never importing litellm.

    The map's entry named exactly as the model (``openai/gpt-4o-mini-2024-07-18``,
    ``gemini/gemini-2.5-flash``), else the entry of its own name when the map files it under the
    same provider (``gpt-4o-mini``, an ``openai`` model); a fine-tuned model (``ft:BASE:org::id``)
    is priced as the map's ``ft:BASE``. None when the map has no such model: a name another
    provider serves (``qwen2.5-7b-instruct`` under ``novita/qwen/``) is not taken for it.
    """
    name = model.split("?", 1)[0].strip()
    prices = _shipped_cost_map()
    provider, _, own = name.rpartition("/") if name.count("/") == 1 else ("", "", name)
    if name.startswith(("openai/ft:", "ft:")):
        provider, own = "openai", name.split("/", 1)[-1]
        name = ":".join(own.split(":", 2)[:2])
    for key in (name, own):
        entry = prices.get(key)
        if entry is not None and (key == name or entry[2] == provider):
            return entry[0], entry[1]
    return None


def lookup_cost_usd(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The price of one call by litellm's cost map, or ``None`` when unknown.

    litellm is never imported for a price: its shipped map is read as data (``shipped_price``).
    When litellm is already imported (a model sent through it), litellm itself is asked, so the
    models a user registered with it are priced too. Unknown means litellm is not installed or its
    map has no such model.

    Args:
        model: ``provider/model`` as in ``ModelSpec.name``.
        prompt_tokens: Prompt tokens of the call.
        completion_tokens: Completion tokens of the call.
    """
    litellm = sys.modules.get("litellm")
    if litellm is not None:
        try:
            prompt_cost, completion_cost = litellm.cost_per_token(
                model=model, prompt_tokens=prompt_tokens, completion_tokens=completion_tokens
            )
            return float(prompt_cost) + float(completion_cost)
        except Exception:  # unmapped model, odd provider: the shipped map may still know it
            pass
    price = shipped_price(model)
    if price is None:
        return None
    return prompt_tokens * price[0] + completion_tokens * price[1]


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
