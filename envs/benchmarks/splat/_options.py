"""SPLAT's own config settings (the ``options:`` block of its configs)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Protocol = Literal["commit", "paper"]


class SplatOptions(BaseModel):
    """Which of SPLAT's protocols an episode follows."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    protocol: Protocol = "commit"
    """``commit`` (questions and explicit explanations, the judge sees earlier questions); ``paper``
    as in the official game: the judge remembers no earlier questions and every player message may
    solve the puzzle (the judge decides). The leak guard applies in both."""
