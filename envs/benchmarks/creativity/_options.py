"""CreativityBench's own config settings (the ``options:`` block of its configs)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Scoring = Literal["official", "paper", "strict"]
"""CreativityBench's correctness rules (``options.scoring``)."""

SCORINGS: tuple[Scoring, ...] = ("official", "paper", "strict")
"""Every rule, in the order reports show them; an answer is graded under each (``CreativityOutcome.rules``)."""

EntityOrder = Literal["shuffled", "official", "file"]
"""How a static or CoT scene lists its entities (``options.entity_order``)."""

Judging = Literal["paper", "lateralgym"]
"""Which judged instruments an LLM judge applies (``options.judging``)."""


class CreativityOptions(BaseModel):
    """How CreativityBench episodes are shown and scored."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_entities: int = Field(default=16, ge=2)
    """Size of the entity masks in observations, and entities in the discrete RL action space."""
    max_parts: int = Field(default=8, ge=1)
    """Parts per entity in the discrete RL action space."""
    shuffle_entities: bool = True
    """Present the entities in an order drawn from the reset seed (releases may list the gold first);
    ``False`` keeps the dataset's order. ``entity_order``, when set, decides instead."""
    entity_order: EntityOrder | None = None
    """How the entities are listed: ``shuffled`` (an order drawn from the reset seed, LateralGym's
    default: no position cue), ``official`` (the gold first, then the others in the dataset's order:
    what the official static and CoT prompts show, since the release lists the gold first;
    ``task_creation/3_task_creation.py`` 266, ``evaluation/utils.py`` 144-165) or ``file`` (the
    dataset's order). None: ``shuffled``, or ``file`` when ``shuffle_entities`` is false. The
    interactive mode always mixes entities and items in one shuffled list, as the official harness does."""
    scoring: Scoring = "paper"
    """The correctness rule the headline rates use; every answer is graded under all three and the
    metrics report the other two beside it (``official_*`` / ``paper_*`` / ``strict_*``):
    ``official`` is the official ``evaluation/judge.py`` rule, quirks included (word-F1 grounding,
    the first-listed entity on no overlap, exact gold part; ``_official.py`` lists them);
    ``paper`` is LateralGym's reading of it without the quirks (entity by name or word overlap, no
    overlap a hallucination, gold part with case and spaces ignored); both drop unparsable, errored
    and timed-out episodes (``official`` also answers with an empty ``how_to_use``, which the official
    judge never scores) from the denominator. ``strict`` counts every episode and matches names
    tolerantly. See docs/benchmarks.md (Metrics)."""
    judging: Judging = "paper"
    """What an LLM judge measures on a graded answer: ``paper`` as the paper's judge does (Tables 5-6's
    comparison with the gold asked 0 / 1 / 2 in a call of its own and rescaled to 1 / 3 / 5, a judge's
    NA kept as NA, Figure 11's four failure categories from a separate call on the comparison's reason
    for a sampled ``attribution_fraction`` of the wrong answers); ``lateralgym``, our finer instruments
    (a 1-5 comparison and nine failure codes in one call on every wrong answer, an NA the gold does not
    allow scored 0)."""
    attribution_fraction: float = Field(default=0.1, ge=0.0, le=1.0)
    """``judging: paper``: the share of wrong answers whose failure is categorised (the paper samples 10 %
    of each model's failure cases; project page, Figure 8 there). The sample is drawn by a hash of the
    task and the answer, so a rerun picks the same answers."""

    def order(self) -> EntityOrder:
        """The entity order in effect (``entity_order``, else what ``shuffle_entities`` says)."""
        if self.entity_order is not None:
            return self.entity_order
        return "shuffled" if self.shuffle_entities else "file"


REWARD_FIELDS = {
    "entity_only": "reward when the entity is right but the part is wrong",
    "gold_inspection": "interactive: reward at the end of an episode in which the gold entity was inspected",
}
"""CreativityBench's own rewards (``rewards:`` keys besides correct, invalid and step)."""
