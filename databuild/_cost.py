"""An offline price table for ``--dry-run`` cost estimates (USD per million tokens).

Prices are list prices as published by the providers in 2025; they change, so an estimate is a
guide, not a bill. A model not in the table is priced from litellm's bundled cost map when litellm
is installed, and is otherwise ``unknown`` (a local server has no price at all).
"""

from __future__ import annotations

__all__ = ["PRICES_PER_MILLION", "estimate_cost_usd", "format_cost", "price_per_million"]

PRICES_PER_MILLION: dict[str, tuple[float, float]] = {
    # model (without provider prefix): (input, output) USD per 1M tokens
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "o4-mini": (1.10, 4.40),
    "claude-3-5-haiku-latest": (0.80, 4.00),
    "claude-sonnet-4-0": (3.00, 15.00),
    "gemini-2.0-flash": (0.10, 0.40),
    "gemini-2.5-flash": (0.30, 2.50),
    "text-embedding-3-small": (0.02, 0.0),
    "text-embedding-3-large": (0.13, 0.0),
}
"""Input and output prices per million tokens, by model name (the part after ``provider/``)."""


def price_per_million(model: str, *, use_litellm: bool = True) -> tuple[float, float] | None:
    """(input, output) USD per million tokens of ``provider/model`` (options after ``?`` ignored), or None.

    Args:
        model: The model spec.
        use_litellm: Fall back on litellm's cost map (its first import takes seconds; off for a model
            on a ``--base-url`` server, whose price no table knows).
    """
    name = model.partition("?")[0].strip()
    short = name.partition("/")[2] or name
    if short in PRICES_PER_MILLION:
        return PRICES_PER_MILLION[short]
    from lateralgym.agents import litellm_available, lookup_cost_usd

    if not use_litellm or not litellm_available():
        return None
    per_input = lookup_cost_usd(name, 1_000_000, 0)
    per_output = lookup_cost_usd(name, 0, 1_000_000)
    if per_input is None or per_output is None:
        return None
    return per_input, per_output


def estimate_cost_usd(
    model: str, prompt_tokens: int, completion_tokens: int, *, use_litellm: bool = True
) -> float | None:
    """Estimated USD for the tokens, or None when the model's price is unknown (see ``price_per_million``)."""
    price = price_per_million(model, use_litellm=use_litellm)
    if price is None:
        return None
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000


def format_cost(cost: float | None) -> str:
    """``$1.23`` or ``unknown``."""
    return "unknown" if cost is None else f"${cost:,.2f}"
