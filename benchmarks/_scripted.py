"""The scripted model the benchmarks serve from the tests' loopback server (``tests/llm_server.py``).

It plays every role as a cooperative model would, so a run measures LateralGym, not a model: as a
SPLAT player it asks three questions, then gives the hidden answer; as the SPLAT judge it says yes
to questions and accepts an explanation that is the hidden answer; anything else (a BrainTeaser
question, a bare-SDK floor call) gets ``Answer: A``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

_SECRET = re.compile(r"FULL EXPLANATION \(secret, for you only\): (.*)")


def cooperative_model(puzzles: Iterable[Any]) -> Callable[[dict[str, Any]], str]:
    """A ``responder`` for ``ScriptedLLMServer`` over these SPLAT puzzles (``.story``, ``.answer``)."""
    by_story = {p.story: p for p in puzzles}

    def reply(body: dict[str, Any]) -> str:
        text = "\n".join(str(m.get("content", "")) for m in body["messages"])
        if "FULL EXPLANATION (secret" in text:
            found = _SECRET.search(text)
            secret = found.group(1).strip() if found else ""
            if "proposes an explanation" in text:
                return "correct" if secret[:40] in text.split("secret, for you only")[-1] else "not yet"
            return "yes"
        puzzle = next((p for story, p in by_story.items() if story in text), None)
        if puzzle is None:
            return "Answer: A"
        asked = sum(1 for m in body["messages"] if m["role"] == "assistant")
        return f"Question: Is round {asked + 1} about it?" if asked < 3 else f"Answer: {puzzle.answer}"

    return reply
