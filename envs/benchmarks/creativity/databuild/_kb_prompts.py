"""Prompts of the KB pipeline's LLM stages, in our own wording.

They ask for the same information in the same answer format as CreativityBench's annotation
prompts (paper §4.1 and App. C, stages A, B, C, E and G); the official repository carries no licence,
so no text is copied. Every prompt asks for one JSON object, whose keys are the fields of the stage's
model in ``_kb_schema``. Each user prompt opens with a ``TASK:`` line naming its stage.
"""

from __future__ import annotations

from collections.abc import Sequence

from lateralgym.envs._matching import spaced
from lateralgym.envs.benchmarks.creativity.databuild._kb_schema import (
    AFFORDANCES_PER_VARIANT,
    MAX_PARTS,
    AffordanceDraft,
    PartSpec,
    PhysicalVariant,
    StateVariant,
)

__all__ = [
    "SYSTEM",
    "affordance_messages",
    "entity_messages",
    "partonomy_messages",
    "physical_messages",
    "state_messages",
]

SYSTEM = (
    "You are annotating everyday household objects for a knowledge base of physical affordances: what "
    "each part of an object is like and what it can be used for, in normal use and in emergencies. Be "
    "concrete and physically accurate. Reply with exactly one JSON object and nothing else."
)

_SCENE_WORDS = {"living_room": "living room", "home_office": "home office", "dining_room": "dining room"}


def scene_words(scene: str) -> str:
    """A scene id as people say it (``living_room`` -> ``living room``)."""
    return _SCENE_WORDS.get(scene, spaced(scene))


def _chat(user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def entity_messages(scene: str, count: int, exclude: Sequence[str]) -> list[dict[str, str]]:
    """Stage A (App. C): household entities found in a scene, avoiding those already listed."""
    avoid = ""
    if exclude:
        avoid = "\nDo not repeat or rephrase any of these, which are already listed:\n" + "\n".join(
            f"- {name}" for name in exclude
        )
    # Paper §4.1 A: specific, physically distinct entities per scene; de-duplicated afterwards.
    return _chat(
        f"TASK: list household entities\n"
        f"List {count} different physical objects that are commonly found in a {scene_words(scene)}. "
        "Name each one specifically (material, type or distinctive feature, e.g. 'enamelled cast-iron "
        "casserole with lid'), not as a category. Cover furniture, tools, containers, textiles, appliances "
        f"and small items; no people, animals, food or liquids.{avoid}\n\n"
        'Answer as {"entities": [{"name", "description"}, ...]} with the description one sentence on what it is.'
    )


def partonomy_messages(scene: str, entity: str) -> list[dict[str, str]]:
    """Stage B (App. C): at most eight non-overlapping parts, their connectivity and functions."""
    return _chat(
        f"TASK: decompose an entity into parts\n"
        f"Entity: {entity} (found in a {scene_words(scene)}).\n"
        f"Split it into at most {MAX_PARTS} physical parts that together make up the whole object and do not "
        "overlap (no part contains another). Use the granularity a person would use to pick up or use a piece "
        "(blade, handle, rivets; not atoms, not the whole object). For each part give its function within the "
        "object and the other parts it is physically attached to.\n\n"
        'Answer as {"parts": [{"name", "function", "connected_to"}, ...]} with the part\'s name in snake_case, '
        "its function as a phrase, and connected_to as the list of the names of the other parts it is attached to."
    )


def _part_line(entity: str, part: PartSpec) -> str:
    return f"Entity: {entity}\nPart: {part.name} (function: {part.function})"


def physical_messages(entity: str, part: PartSpec) -> list[dict[str, str]]:
    """Stage C (App. C): two or three physical attribute variants of one part."""
    keys = ", ".join(f'"{name}"' for name in PhysicalVariant.model_fields)
    return _chat(
        f"TASK: physical attribute variants of a part\n{_part_line(entity, part)}\n"
        "Describe 2 or 3 clearly different but realistic physical variants of this part, as different "
        "products of the same kind would make it (another material, size, thickness or finish). For each "
        "variant give every attribute: shape, size, thickness, local_features (holes, hooks, ridges, "
        "teeth...), material, rigidity, durability, elasticity, surface, weight, others (anything else that "
        'matters for use), and a one-sentence summary. Write "NA" for an attribute that does not apply.\n\n'
        f'Answer as {{"variants": [{{{keys}}}, ...]}} with a string value for every key.'
    )


def state_messages(entity: str, part: PartSpec, scene: str) -> list[dict[str, str]]:
    """Stage E (App. C): two or three state variants of one part, as it may be found in the scene."""
    keys = ", ".join(f'"{name}"' for name in StateVariant.model_fields)
    return _chat(
        f"TASK: state variants of a part\n{_part_line(entity, part)}\nScene: {scene_words(scene)}\n"
        "Describe 2 or 3 clearly different states this part could realistically be found in right now in "
        "this scene. For each give: visibility (in view, partly hidden...), availability (free to use, "
        "blocked, needs a tool...), moisture, temperature, internal (contents or inner state: empty, full, "
        'charged...), others, and a one-sentence summary. Write "NA" for an attribute that does not apply.\n\n'
        f'Answer as {{"variants": [{{{keys}}}, ...]}} with a string value for every key.'
    )


def affordance_messages(
    entity: str,
    part: PartSpec,
    physical: PhysicalVariant,
    state: StateVariant,
    count: int = AFFORDANCES_PER_VARIANT,
) -> list[dict[str, str]]:
    """Stage G (App. C): six affordances (``count`` in a trial build) of one part in one physical and state
    variant."""
    physical_lines = "\n".join(f"  {name}: {value}" for name, value in physical.model_dump().items())
    state_lines = "\n".join(f"  {name}: {value}" for name, value in state.model_dump().items())
    keys = ", ".join(f'"{name}"' for name in AffordanceDraft.model_fields)
    # Paper §4.1 G: level 0 is the designed use, 1-5 emergency uses of rising creativity; every use is
    # grounded in attributes of this very variant (the enabling evidence) and names its failure cases.
    return _chat(
        f"TASK: affordances of a part variant\n{_part_line(entity, part)}\n"
        f"Physical attributes:\n{physical_lines}\nCurrent state:\n{state_lines}\n\n"
        f"List exactly {count} different things this part, exactly as described, can be used "
        "for. Include its normal designed use(s) at level 0 and creative uses in an emergency, when the usual "
        "tool is missing, at levels 1 (an obvious substitute) to 5 (far-fetched but physically possible). For "
        "each give: description (a verb phrase), category (a short snake_case class such as pry, scoop, "
        "insulate_heat), use_condition (how the part must be held, prepared or positioned), "
        'environment_condition (what the surroundings must offer, or "NA"), recipient_condition (what the '
        "thing acted on must be like), enabling_attributes (the attributes above, name and value, that make "
        "the use possible), level (an integer 0-5), example_recipients, and failure_cases (when the use goes "
        "wrong).\n\n"
        f'Answer as {{"affordances": [{{{keys}}}, ...]}} with a string for each text field, a list of strings for '
        "enabling_attributes, example_recipients and failure_cases, and an integer for level."
    )
