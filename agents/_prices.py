"""An offline price table for the models people run most, so cost is known without litellm.

Prices are the providers' published list prices in US dollars per million tokens (input, output)
as of ``PRICES_AS_OF``, for standard (not batch, not cached-input) requests. They change: the
``--dry-run`` estimate and the recorded cost say which table they used, and litellm's price list
(``pip install 'lateralgym[litellm]'``), when installed, is asked first for recorded calls. A model
served by your own ``base_url`` server is priced as the model it names, if it names one we know.
"""

from __future__ import annotations

import re

__all__ = ["PRICES", "PRICES_AS_OF", "offline_price", "price_per_million"]

PRICES_AS_OF = "2025-06"

PRICES: dict[str, tuple[float, float]] = {
    # OpenAI
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4-turbo": (10.00, 30.00),
    "gpt-3.5-turbo": (0.50, 1.50),
    "o1-mini": (1.10, 4.40),
    "o3-mini": (1.10, 4.40),
    "o4-mini": (1.10, 4.40),
    "o3": (2.00, 8.00),
    "o1": (15.00, 60.00),
    # Anthropic
    "claude-3-haiku": (0.25, 1.25),
    "claude-3-5-haiku": (0.80, 4.00),
    "claude-3-5-sonnet": (3.00, 15.00),
    "claude-3-7-sonnet": (3.00, 15.00),
    "claude-sonnet-4": (3.00, 15.00),
    "claude-3-opus": (15.00, 75.00),
    "claude-opus-4": (15.00, 75.00),
    # Google
    "gemini-1.5-flash": (0.075, 0.30),
    "gemini-1.5-pro": (1.25, 5.00),
    "gemini-2.0-flash-lite": (0.075, 0.30),
    "gemini-2.0-flash": (0.10, 0.40),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-pro": (1.25, 10.00),
}
"""Model family -> (input, output) USD per million tokens."""

_DATED = re.compile(r"(-latest|-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{4}|-preview.*|-exp.*)$")


def price_per_million(model: str) -> tuple[str, float, float] | None:
    """The table's entry for ``model`` (``openai/gpt-4o-mini-2024-07-18``, ``anthropic/claude-3-5-haiku-latest``,
    a spec with options): (family, input, output), or None when the table has no such model.

    The provider and options are dropped, then a date, ``-latest`` or ``-preview...`` suffix; what is
    left must be a family of the table exactly (a variant it lacks, ``gpt-4o-audio``, is unknown
    rather than priced as another model).
    """
    name = _DATED.sub("", model.split("?", 1)[0].rsplit("/", 1)[-1].lower())
    if name not in PRICES:
        return None
    return name, *PRICES[name]


def offline_price(model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
    """The cost of one call by the table, or None when the model is not in it."""
    entry = price_per_million(model)
    if entry is None:
        return None
    _, per_in, per_out = entry
    return (prompt_tokens * per_in + completion_tokens * per_out) / 1_000_000
