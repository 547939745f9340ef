"""The records of the KB pipeline's LLM stages (paper §4.1, App. C, stages A, B, C, E and G).

Each model is what a stage's reply must validate against before it is checkpointed; the field
docstrings are the instructions the prompts repeat. ``to_physical`` / ``to_state`` / ``to_affordance``
map them onto the package's KB schema (``lateralgym.envs.Entity`` and friends):

============================  ==========================================================
paper (App. C)                ``lateralgym.envs`` schema
============================  ==========================================================
part functional description   ``Part.function``
part connectivity             ``Part.connected_to``
physical: shape, size,        ``PhysicalAttributes`` fields of the same names
material, rigidity, surface,
weight, thickness, local
features, durability,
elasticity, others
physical / state summary      ``description``
state: visibility, moisture,  ``StateAttributes`` fields of the same names
temperature, internal, others
state: availability           ``StateAttributes.accessibility``
affordance description        ``Affordance.action``
affordance conditions,        ``use_condition``, ``environment_condition``,
evidence, recipients,         ``recipient_condition``, ``enabling_attributes``,
failures, level               ``example_recipients``, ``failure_cases``, ``level``
============================  ==========================================================
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    create_model,
    field_validator,
    model_validator,
)

from lateralgym.envs._matching import snake
from lateralgym.envs.benchmarks.creativity._schema import Affordance, PhysicalAttributes, StateAttributes

__all__ = [
    "AFFORDANCES_PER_VARIANT",
    "MAX_PARTS",
    "AffordanceDraft",
    "AffordanceSet",
    "EntityCandidate",
    "EntityCandidates",
    "PartSpec",
    "Partonomy",
    "PhysicalVariant",
    "PhysicalVariants",
    "StateVariant",
    "StateVariants",
    "TrialPhysicalVariants",
    "TrialStateVariants",
    "affordance_schema",
    "variant_schemas",
]

MAX_PARTS = 8
"""At most this many parts per entity (paper App. C, stage B)."""
AFFORDANCES_PER_VARIANT = 6
"""Affordances asked per part per variant (paper App. C, stage G)."""

MAX_LIST = 8
"""At most this many evidence attributes, example recipients or failure cases per affordance (a bound the
paper leaves implicit; it keeps a grammar-constrained small model from listing without end)."""


def _worded(value: str) -> str:
    # A copied format placeholder ("...", "* *") says nothing about the part: refused, so it is re-asked.
    if not any(ch.isalnum() for ch in value):
        raise ValueError(f"{value!r} is a placeholder, not an answer: write the value in words")
    return value


Phrase = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), AfterValidator(_worded)]
"""A non-empty attribute value in words, a phrase or one sentence; ``"NA"`` when it does not apply (punctuation
alone, such as a copied ``"..."``, is refused). The cap also bounds what a grammar-constrained small model can
ramble into one field (``--constrained-json``)."""
ShortName = Annotated[str, StringConstraints(strip_whitespace=True, min_length=2, max_length=80)]


class _Reply(BaseModel):
    # Unknown keys are ignored: a model adding a comment field is not an error worth a re-ask.
    model_config = ConfigDict(extra="ignore", str_strip_whitespace=True, frozen=True)


class EntityCandidate(_Reply):
    """One household entity proposed for a scene (stage A)."""

    name: ShortName
    """A specific, concrete name (``"cast-iron skillet with helper handle"``), not a category."""
    description: str = ""
    """One sentence on what it is."""


class EntityCandidates(_Reply):
    """Stage A's reply: entities typically found in one scene."""

    entities: list[EntityCandidate] = Field(min_length=1)
    """The proposed entities."""


class PartSpec(_Reply):
    """One part of an entity (stage B)."""

    name: ShortName
    """The part's name; normalised to snake_case (``"Handle grip"`` -> ``handle_grip``)."""
    function: Phrase
    """What the part does within the entity."""
    connected_to: list[str] = Field(default_factory=list, max_length=MAX_PARTS - 1)
    """Names of the other parts it is physically attached to."""

    @field_validator("name")
    @classmethod
    def _snake(cls, value: str) -> str:
        name = snake(value)
        if not name:
            raise ValueError("part name must contain letters or digits")
        return name

    @field_validator("connected_to")
    @classmethod
    def _snake_links(cls, value: list[str]) -> list[str]:
        return [snake(name) for name in value if snake(name)]


class Partonomy(_Reply):
    """Stage B's reply: the entity's non-overlapping parts, their connectivity and functions."""

    parts: list[PartSpec] = Field(min_length=1, max_length=MAX_PARTS)
    """One to eight parts that together make up the whole entity without overlapping."""

    @model_validator(mode="after")
    def _consistent(self) -> Partonomy:
        names = [part.name for part in self.parts]
        dupes = sorted({name for name in names if names.count(name) > 1})
        if dupes:
            raise ValueError(f"part names must be distinct, repeated: {', '.join(dupes)}")
        known = set(names)
        for part in self.parts:
            unknown = [link for link in part.connected_to if link not in known or link == part.name]
            if unknown:
                raise ValueError(
                    f"part {part.name!r} is connected_to {', '.join(unknown)}, which must name other parts in the list"
                )
        return self


class PhysicalVariant(_Reply):
    """One plausible physical make of a part (stage C): every attribute, ``"NA"`` when it does not apply."""

    shape: Phrase
    """Overall form (``"shallow round bowl"``)."""
    size: Phrase
    """Size in everyday words or measures."""
    thickness: Phrase
    """Wall, sheet or rod thickness."""
    local_features: Phrase
    """Holes, hooks, ridges, teeth, lips: features a use can exploit."""
    material: Phrase
    """Main material."""
    rigidity: Phrase
    """Rigid, flexible, bendable..."""
    durability: Phrase
    """What force or wear it survives."""
    elasticity: Phrase
    """Whether it springs back after bending or squeezing."""
    surface: Phrase
    """Texture, finish, grip."""
    weight: Phrase
    """Light, moderate, heavy (or grams)."""
    others: Phrase
    """Any other physical attribute that matters for use."""
    summary: Phrase
    """One sentence describing this variant of the part."""

    def to_physical(self) -> PhysicalAttributes:
        """The package's ``PhysicalAttributes`` (``summary`` becomes ``description``; ``NA`` stays)."""
        fields = self.model_dump(exclude={"summary"})
        return PhysicalAttributes(**fields, description=self.summary)


class PhysicalVariants(_Reply):
    """Stage C's reply: two or three clearly different physical variants of one part."""

    variants: list[PhysicalVariant] = Field(min_length=2, max_length=3)
    """The variants, in the model's order (their index names them in checkpoint keys)."""

    @model_validator(mode="after")
    def _distinct(self) -> PhysicalVariants:
        summaries = [v.summary.lower() for v in self.variants]
        if len(set(summaries)) != len(summaries):
            raise ValueError("variants must differ: two have the same summary")
        return self


class StateVariant(_Reply):
    """One plausible current state of a part in the scene (stage E)."""

    visibility: Phrase
    """In view, partly hidden, out of sight..."""
    availability: Phrase
    """Whether it can be used right now (free, blocked, needs a tool to remove...)."""
    moisture: Phrase
    """Dry, damp, wet, oily..."""
    temperature: Phrase
    """Room temperature, hot, cold..."""
    internal: Phrase
    """Contents or inner state (empty, half full, battery charged, ...)."""
    others: Phrase
    """Any other state that matters for use."""
    summary: Phrase
    """One sentence describing this state of the part."""

    def to_state(self) -> StateAttributes:
        """The package's ``StateAttributes`` (availability -> ``accessibility``, summary -> ``description``)."""
        return StateAttributes(
            visibility=self.visibility,
            accessibility=self.availability,
            moisture=self.moisture,
            temperature=self.temperature,
            internal=self.internal,
            others=self.others,
            description=self.summary,
        )


class StateVariants(_Reply):
    """Stage E's reply: two or three clearly different states of one part."""

    variants: list[StateVariant] = Field(min_length=2, max_length=3)
    """The variants, in the model's order (their index names them in checkpoint keys)."""

    @model_validator(mode="after")
    def _distinct(self) -> StateVariants:
        summaries = [v.summary.lower() for v in self.variants]
        if len(set(summaries)) != len(summaries):
            raise ValueError("variants must differ: two have the same summary")
        return self


def _drop_repeats(data: Any) -> Any:
    """A reply's variants without the ones that repeat an earlier summary (the trial models' leniency)."""
    if not isinstance(data, dict) or not isinstance(data.get("variants"), list):
        return data
    seen: set[str] = set()
    kept = []
    for variant in data["variants"]:
        summary = variant.get("summary") if isinstance(variant, dict) else None
        if isinstance(summary, str):
            if summary.strip().lower() in seen:
                continue
            seen.add(summary.strip().lower())
        kept.append(variant)
    return {**data, "variants": kept}


class TrialPhysicalVariants(PhysicalVariants):
    """Stage C's reply in a trial build (``--min-variants 1``): one to three variants, repeats dropped.

    Not the paper's (it asks for 2-3 different variants): a tiny model that copies its first variant
    word for word still gives its part one variant instead of none.
    """

    variants: list[PhysicalVariant] = Field(min_length=1, max_length=3)
    """The variants, in the model's order, each summary once."""

    @model_validator(mode="before")
    @classmethod
    def _repeats(cls, data: Any) -> Any:
        return _drop_repeats(data)


class TrialStateVariants(StateVariants):
    """Stage E's reply in a trial build (``--min-variants 1``): one to three states, repeats dropped."""

    variants: list[StateVariant] = Field(min_length=1, max_length=3)
    """The variants, in the model's order, each summary once."""

    @model_validator(mode="before")
    @classmethod
    def _repeats(cls, data: Any) -> Any:
        return _drop_repeats(data)


def variant_schemas(min_variants: int) -> tuple[type[PhysicalVariants], type[StateVariants]]:
    """Stage C's and E's reply models: the paper's (``min_variants`` 2) or the trial ones (1).

    Example:
        >>> variant_schemas(1)[0].__name__, variant_schemas(2)[1].__name__
        ('TrialPhysicalVariants', 'StateVariants')
    """
    if min_variants == 1:
        return TrialPhysicalVariants, TrialStateVariants
    return PhysicalVariants, StateVariants


class AffordanceDraft(_Reply):
    """One use of a part in one variant (stage G)."""

    description: Phrase
    """The use, as a verb phrase (``"pry open a stuck paint-can lid"``)."""
    category: str = ""
    """A short functional class in snake_case (``pry``, ``scoop``, ``insulate_heat``)."""
    use_condition: Phrase
    """How the part must be held, prepared or positioned."""
    environment_condition: Phrase
    """What the surroundings must offer, or ``"NA"``."""
    recipient_condition: Phrase
    """What the thing acted on must be like."""
    enabling_attributes: list[Phrase] = Field(min_length=1, max_length=MAX_LIST)
    """The attributes of this variant (name and value) that make the use possible: the evidence."""
    level: int = Field(ge=0, le=5, strict=True, json_schema_extra={"enum": list(range(6))})
    """0 = the normal, designed use; 1..5 = an emergency use, 5 the most far-fetched (the JSON schema lists
    the six values: a grammar built from it cannot write another, which ``minimum``/``maximum`` alone
    do not ensure with llama.cpp's converter)."""
    example_recipients: list[Phrase] = Field(min_length=1, max_length=MAX_LIST)
    """Things this use could act on."""
    failure_cases: list[Phrase] = Field(min_length=1, max_length=MAX_LIST)
    """When the use goes wrong."""

    @field_validator("category")
    @classmethod
    def _snake_category(cls, value: str) -> str:
        return snake(value)

    def to_affordance(self) -> Affordance:
        """The package's ``Affordance`` (``description`` becomes ``action``)."""
        return Affordance(
            action=self.description,
            category=self.category,
            use_condition=self.use_condition,
            environment_condition=self.environment_condition,
            recipient_condition=self.recipient_condition,
            enabling_attributes=tuple(self.enabling_attributes),
            example_recipients=tuple(self.example_recipients),
            failure_cases=tuple(self.failure_cases),
            level=self.level,
        )


class AffordanceSet(_Reply):
    """Stage G's reply: six distinct uses of one part in one physical and state variant."""

    affordances: list[AffordanceDraft] = Field(min_length=AFFORDANCES_PER_VARIANT, max_length=AFFORDANCES_PER_VARIANT)
    """Exactly six uses."""

    @model_validator(mode="after")
    def _distinct(self) -> AffordanceSet:
        seen = [a.description.lower() for a in self.affordances]
        if len(set(seen)) != len(seen):
            raise ValueError("the affordances must be different uses: two have the same description")
        return self


@cache
def affordance_schema(count: int = AFFORDANCES_PER_VARIANT) -> type[AffordanceSet]:
    """Stage G's reply model asking ``count`` uses: the paper's six, or fewer for a trial build
    (``--affordances-per-variant``, for a small model whose six uses outrun its token budget).

    Example:
        >>> affordance_schema().__name__, affordance_schema(2).__name__
        ('AffordanceSet', 'AffordanceSet2')
        >>> affordance_schema(2).model_json_schema()["properties"]["affordances"]["maxItems"]
        2
    """
    if not 1 <= count <= AFFORDANCES_PER_VARIANT:
        raise ValueError(f"affordances per variant must be 1-{AFFORDANCES_PER_VARIANT}, got {count}")
    if count == AFFORDANCES_PER_VARIANT:
        return AffordanceSet
    return create_model(
        f"AffordanceSet{count}",
        __base__=AffordanceSet,
        __doc__=f"Stage G's reply in a trial build: {count} distinct uses of one part variant.",
        affordances=(list[AffordanceDraft], Field(min_length=count, max_length=count)),
    )
