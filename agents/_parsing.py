"""Read an action out of a model's free-form reply: each benchmark parses its own protocol.

Models wrap answers in prose, code fences and markdown, rename keys and misspell names. The
benchmark's ``parse_reply`` accepts all of that and returns an ``Action``; whatever it cannot read
becomes ``Invalid`` (with the raw text and a reason the env shows the player), never an exception.
The shared helpers (JSON anywhere in a reply, markdown-free lines) are in ``lateralgym.envs._reply_text``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from lateralgym.envs import Action, ConfigError, Invalid, get_benchmark, parse_action
from lateralgym.envs.support import cap_text, invalid_reply, json_objects, reply_cap

__all__ = [
    "json_objects",
    "parse_reply",
    "read_model_reply",
]


def parse_reply(
    text: str,
    benchmark: str | None,
    public: Mapping[str, Any],
    mode: str | None = None,
    reasoning: str | None = None,
) -> Action:
    """The action a reply makes in the given benchmark; ``Invalid`` when there is none.

    Args:
        text: The model's reply.
        benchmark: ``info["benchmark"]``; an unknown one reads the env's own command forms only.
        public: ``info["public"]``.
        mode: ``info["mode"]``.
        reasoning: The prompt's reasoning (``PromptPlan.reasoning``); after ``cot`` the move ends
            the reply.

    A reply past the player's cap (``REPLY_CHAR_CAPS``) is read cut to it, as the LLM client cuts it:
    a trainer's text reaches the parser the way a run's does.
    """
    text = cap_text(text, reply_cap("player"))[0]
    if not text.strip():
        return invalid_reply(text, "the reply was empty")
    try:
        unit = get_benchmark(str(benchmark))
    except ConfigError:
        return parse_action(text)
    return unit.prompts.parse_reply(text, {"public": public, "mode": mode, "benchmark": benchmark}, reasoning)


def read_model_reply(
    text: str, info: Mapping[str, Any], reasoning: str | None = None, finish_reason: str | None = None
) -> tuple[Action, str | None]:
    """The action a model's reply makes in the episode ``info`` describes, and the error to record
    when it makes none (the LLM player and the trainer adapters read replies this one way).

    Args:
        text: The model's reply.
        info: The env's ``info`` (``benchmark``, ``mode``, ``public``).
        reasoning: The prompt's reasoning (``PromptPlan.reasoning``).
        finish_reason: The server's ``finish_reason``: ``length`` adds "cut off at the token limit" to
            the reason an unreadable reply gives the player.

    Returns:
        The action (``Invalid`` when unreadable) and ``None``, or ``"unparsable reply: <reason>"``.
    """
    action = parse_reply(text, info.get("benchmark"), info.get("public") or {}, info.get("mode"), reasoning)
    if not isinstance(action, Invalid):
        return action, None
    if finish_reason == "length":
        action = action.model_copy(update={"reason": f"{action.reason} (the reply was cut off at the token limit)"})
    return action, f"unparsable reply: {action.reason}"
