"""CreativityBench's own config settings (the ``options:`` block of its configs)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Scoring = Literal["paper", "strict"]


class CreativityOptions(BaseModel):
    """How CreativityBench episodes are shown and scored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_entities: int = Field(default=16, ge=2)
    """Size of the entity masks in observations, and entities in the discrete RL action space."""
    max_parts: int = Field(default=8, ge=1)
    """Parts per entity in the discrete RL action space."""
    shuffle_entities: bool = True
    """Present the entities in an order drawn from the reset seed (releases may list the gold first)."""
    scoring: Scoring = "paper"
    """Correctness rules: ``paper`` follows the official evaluation (entity resolved by word
    overlap, exact part; unparsable, errored and timed-out episodes leave the denominator);
    ``strict`` counts every episode and matches names tolerantly. See the README's metrics section."""


REWARD_FIELDS = {
    "entity_only": "reward when the entity is right but the part is wrong",
    "gold_inspection": "interactive: reward at the end of an episode in which the gold entity was inspected",
}
"""CreativityBench's own rewards (``rewards:`` keys besides correct, invalid and step)."""
