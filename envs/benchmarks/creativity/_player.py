"""The CreativityBench player side: the LLM protocol (our own wording of the paper's static, CoT and
interactive prompts, §5 and App. E), the reply parser, and the offline policies."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from lateralgym.envs._actions import Action, Ask, Commit, Inspect, Invalid, parse_action
from lateralgym.envs._benchmark import PromptRequest
from lateralgym.envs._grammar import ActionGrammar, FreeText, JsonForm, OneOf, Value, final_turn
from lateralgym.envs._matching import content_stems, match_name
from lateralgym.envs._parts import PolicyPart, PromptPart
from lateralgym.envs._reply_text import (
    QUESTION_KEYS,
    as_text,
    clean_line,
    first_value,
    invalid,
    json_objects,
    labelled_lines,
    move_kind,
    normalised_keys,
)
from lateralgym.envs.benchmarks.creativity._official import WRITTEN_ENTITY, WRITTEN_PART
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask

# Our own wording of the paper's prompts (CreativityBench §5, App. E; the official
# evaluation/utils.py): the same instructions, information and answer format.

MODE_ACTIONS: dict[str, tuple[str, ...]] = {
    "static": ("commit",),
    "cot": ("commit",),
    "interactive": ("inspect", "commit"),
    "explore": ("inspect", "ask", "commit"),
}
"""The moves the reply parser accepts in each mode (the paper's interactive mode has no ``ask``)."""

ANSWER_JSON = (
    '{"gold_entity": "<entity name, exactly as listed>", "gold_part": "<part name, exactly as listed>", '
    '"how_to_use": "<step-by-step instructions for using that part>"}'
)

STATIC = """\
You are a creative problem-solver. Someone describes an everyday problem in the first person; \
you also get a description of their surroundings, every entity nearby with each of its parts \
and each part's physical attributes (material, shape, size, weight, rigidity, ...) and current \
state (visibility, accessibility, moisture, temperature, ...), and the other items in the scene.

Find the one entity, and the one part of it, that would solve the problem best, even when that \
is not what the object was made for: judge from what the part's attributes and state let it do, \
and how practical it is to use here.
"""

DIRECT_FORMAT = (
    """\
First write your reasoning. Then end your reply with one JSON object holding your answer:
"""
    + ANSWER_JSON
    + "\n"
)

# §5's CoT: a fixed procedure (task analysis, attribute grounding, affordance reasoning), then the
# answer, all in one JSON object as the official prompt asks.
COT_FORMAT = """\
Reason through this procedure before you answer:
1. Task analysis: what is the goal, what counts as success, and what constraints does the scene \
set (what is out of reach, fragile, wet, unsafe)? Consider only what is in the scene.
2. Attribute grounding: for the candidate parts, which physical and state attributes matter for \
this goal?
3. Affordance reasoning: what can each candidate part therefore do here, which one works best \
within the constraints, and in which steps would you use it?
4. Answer from that reasoning.
Reply with one JSON object: the procedure under "reasoning", then the answer fields:
{"reasoning": {"task_analysis": "...", "attribute_grounding": "...", "affordance_reasoning": "..."}, \
"gold_entity": "<entity name, exactly as listed>", "gold_part": "<part name, exactly as listed>", \
"how_to_use": "<step-by-step instructions for using that part>"}
"""

INTERACTIVE = """\
You are a creative problem-solver exploring a scene step by step. Someone describes an everyday \
problem in the first person and their surroundings; you see the names of the things in the \
scene: entities and other items. Inspect ONE thing per turn to read its description (for an \
entity: its parts with their physical and state attributes), and give your final answer once you \
are confident: the entity, and the part of it, that solves the problem best, even when that is not \
what the object was made for. You have a limited number of turns (the first message says how \
many, and every reply says how many are left); exploring before you answer is encouraged.

Every turn, first write your reasoning as plain text, then end with one JSON object, either
- to inspect a thing: {"action": "inspect", "target": "<name exactly as listed>"}
- to answer: {"action": "answer", "gold_entity": "<entity name, exactly as listed>", "gold_part": \
"<part name, exactly as listed>", "how_to_use": "<step-by-step instructions for using that part>"}
"""

EXPLORE = """\
You help someone solve an everyday problem by putting an object that happens to be nearby to an \
unusual use. At the start you only see the problem, the surroundings and the names of the \
entities around you; what their parts are made of and what state they are in stays hidden until \
you inspect them.

You play in turns. Every turn, reply with exactly one JSON object, one of:
- {"action": "inspect", "entity": "<entity name>"}: look closely at one entity; you will be shown \
its parts with their physical and state attributes.
- {"action": "ask", "question": "<a yes/no question>"}: ask about an entity or a part; the reply \
is yes, no or irrelevant.
- {"action": "commit", "gold_entity": "<entity name>", "gold_part": "<part name>", "how_to_use": \
"<how you would use it>"}: give your final answer; this ends the episode.
The next message after each of your moves says what happened. Every move uses up one turn of a \
limited budget, so inspect the entities that look promising rather than all of them, and commit \
before the turns run out. Write entity and part names exactly as shown.
"""

EXPLORE_COT = """\
Before each move, think briefly about what the problem needs and what you have learnt so far; \
then end your reply with the JSON object of your move (only the last JSON object counts).
"""


def system_prompt(mode: str | None, reasoning: str) -> str:
    """The CreativityBench system prompt for a mode (``cot`` asks for the structured reasoning).

    The paper's interactive prompt already asks for reasoning before every move.
    """
    cot = reasoning == "cot"
    if mode == "interactive":
        return INTERACTIVE
    if mode == "explore":
        return EXPLORE + (EXPLORE_COT if cot else "")
    return STATIC + (COT_FORMAT if cot else DIRECT_FORMAT)


# -- the reply parser -----------------------------------------------------------------------------

_ENTITY_KEYS = ("gold_entity", "entity", "entity_name", "tool", "object", "item", "target", "name")
_PART_KEYS = ("gold_part", "part", "part_name", "component")
_HOW_KEYS = ("how_to_use", "how", "how_to", "usage", "use", "method", "explanation", "plan")


def _command(text: str) -> Inspect | Ask | Commit | None:
    """The last line written as an env command (``inspect: x``, ``ask: y``, ``commit: a | b | c``)."""
    for line in reversed(text.splitlines()):
        cleaned = clean_line(line)
        if re.match(r"^(inspect|ask|commit)\s*:", cleaned, re.IGNORECASE):
            action = parse_action(cleaned)
            if not isinstance(action, Invalid):
                return action
    return None


# -- CreativityBench -----------------------------------------------------------------------------


def _resolve_names(action: Inspect | Ask | Commit, public: Mapping[str, Any]) -> Inspect | Ask | Commit:
    """Replace near-miss entity and part names by the scene's spelling; keep unknown names as written.

    A commit keeps each name it had as written in ``fields`` (``entity_as_written``, ``part_as_written``)
    when resolving changed it: the ``official`` rule grades what the model wrote (``_official.py``)."""
    entities = [str(e) for e in public.get("entities", [])]
    revealed: Mapping[str, Mapping[str, Any]] = public.get("revealed", {}) or {}
    if isinstance(action, Inspect):
        return Inspect(entity=match_name(action.entity, entities) or action.entity)
    if isinstance(action, Commit) and action.entity:
        entity = match_name(action.entity, entities) or action.entity
        part = action.part
        if part and entity in revealed:
            part = match_name(part, [str(p) for p in revealed[entity]]) or part
        written = dict(action.fields)
        if entity != action.entity:
            written[WRITTEN_ENTITY] = action.entity
        if part != action.part and action.part is not None:
            written[WRITTEN_PART] = action.part
        return action.model_copy(update={"entity": entity, "part": part, "fields": written})
    return action


def _creativity_from_json(data: Mapping[str, Any], allowed: frozenset[str]) -> Inspect | Ask | Commit | None:
    data = normalised_keys(data)
    entity = as_text(first_value(data, _ENTITY_KEYS))
    part = as_text(first_value(data, _PART_KEYS))
    how = as_text(first_value(data, _HOW_KEYS))
    question = as_text(first_value(data, QUESTION_KEYS))
    kind = move_kind(data)
    if kind is None:  # infer the move from the fields present
        if part or how or "gold_entity" in data:
            kind = "commit"
        elif question:
            kind = "ask"
        elif entity:
            kind = "inspect" if "inspect" in allowed else "commit"
    if kind == "inspect" and entity:
        return Inspect(entity=entity)
    if kind == "ask" and question:
        return Ask(question=question)
    if kind == "commit" and (entity or part):
        return Commit(entity=entity, part=part, how_to_use=how)
    return None


def _creativity_from_labels(text: str) -> Commit | None:
    fields: dict[str, str] = {}
    for label, value, _ in labelled_lines(text):
        if not value:
            continue
        if label in _ENTITY_KEYS[:4]:
            fields["entity"] = value
        elif label in _PART_KEYS:
            fields["part"] = value
        elif label in ("how_to_use", "how", "how_to", "usage", "use", "method"):
            fields["how_to_use"] = value
    if "entity" in fields and "part" in fields:
        return Commit(**fields)
    return None


def _bare_entity(text: str, public: Mapping[str, Any], allowed: frozenset[str]) -> Inspect | Invalid | None:
    """A reply that is just one of the scene's entity names (what a person types): an inspection where
    the mode has one, else the commit's missing pieces named; None when the reply names no entity."""
    line = text.strip().rstrip(".!")
    if "\n" in line or len(line) > 80:
        return None
    entity = match_name(line, [str(e) for e in public.get("entities", [])])
    if entity is None:
        return None
    if "inspect" in allowed:
        return Inspect(entity=entity)
    return invalid(
        text, f"{entity!r} is the entity; say which part and how you would use it: commit: {entity} | <part> | <how>"
    )


def parse_creativity_reply(
    text: str, public: Mapping[str, Any], allowed: Sequence[str] = ("inspect", "ask", "commit")
) -> Action:
    """A CreativityBench move from a reply: JSON, ``Entity:``/``Part:`` lines or an env command.

    Args:
        text: The model's reply.
        public: ``info["public"]``: entity names and revealed parts, for resolving near-misses.
        allowed: The actions the mode allows; an entity-only JSON object is an inspection when
            ``inspect`` is allowed, else an (incomplete) commit.
    """
    allowed_set = frozenset(allowed)
    action: Inspect | Ask | Commit | None = None
    for data in reversed(json_objects(text)):
        action = _creativity_from_json(data, allowed_set)
        if action is not None:
            break
    if action is None:
        action = _command(text) or _creativity_from_labels(text)
    if action is None:
        bare = _bare_entity(text, public, allowed_set)
        if bare is not None:
            return bare
    if action is None:
        return invalid(
            text,
            'no answer found: reply with a JSON object such as {"gold_entity": "<entity>", "gold_part": "<part>", '
            '"how_to_use": "<how>"}'
            + (' or {"action": "inspect", "entity": "<entity>"}' if "inspect" in allowed_set else ""),
        )
    return _resolve_names(action, public)


# -- the constrained reply: the JSON moves the prompts ask for and the parser reads -------------------

REASONING_CHARS = {"static": 240, "cot": 480, "interactive": 240, "explore": 0}
"""Characters of reasoning a constrained reply may write before its JSON move, by mode: what each prompt
asks for (static and interactive: reasoning first; CoT: the procedure; explore: the JSON object alone)."""
EXPLORE_COT_CHARS = 240
PART_CHARS = 60
HOW_CHARS = 300
QUESTION_CHARS = 200


def _answer_forms(public: Mapping[str, Any], lead: tuple[tuple[str, Value], ...]) -> list[JsonForm]:
    """One answer form per entity: its name, then one of its parts when they are revealed (any part
    name otherwise), then how to use it."""
    revealed: Mapping[str, Mapping[str, Any]] = public.get("revealed", {}) or {}
    forms = []
    for entity in public.get("entities", []):
        parts = tuple(str(p) for p in revealed.get(entity, {}))
        part: Value = OneOf(parts) if parts else FreeText(PART_CHARS)
        how = FreeText(HOW_CHARS)
        fields = (*lead, ("gold_entity", OneOf((str(entity),))), ("gold_part", part), ("how_to_use", how))
        forms.append(JsonForm("commit", fields))
    return forms


# -- offline policies ----------------------------------------------------------------------------


def overlap(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard overlap of two word collections."""
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


EXPLORING = frozenset({"interactive", "explore"})
"""The modes in which entities are revealed by inspection."""


def heuristic_action(info: Mapping[str, Any], inspections: int = 3) -> Action:
    """Inspect the entities whose names overlap the task most (interactive), then commit the
    (entity, part) whose attributes overlap the task most."""
    public = info["public"]
    need = content_stems(public["task"] + " " + " ".join(public.get("items", [])))
    revealed: Mapping[str, Mapping[str, str]] = public.get("revealed", {})
    if info.get("mode") in EXPLORING and len(revealed) < min(inspections, len(public["entities"])):
        ranked = sorted(public["entities"], key=lambda e: (-overlap(need, content_stems(e)), e))
        target = next(e for e in ranked if e not in revealed)
        return Inspect(entity=target)
    best = max(
        (
            (overlap(need, content_stems(f"{part.replace('_', ' ')} {attrs} {entity}")), entity, part)
            for entity, parts in revealed.items()
            for part, attrs in parts.items()
        ),
        default=None,
    )
    if best is None:
        entity = public["entities"][0]
        return Commit(entity=entity, part="body", how_to_use="use it for the task")
    _, entity, part = best
    return Commit(entity=entity, part=part, how_to_use=f"Use the {part.replace('_', ' ')} of the {entity} for this.")


class CreativityPolicies(PolicyPart[CreativityTask]):
    """The offline players: random, the lexical-overlap heuristic (``heuristic_action``), the oracle."""

    def random_action(self, info: Mapping[str, Any], rng: np.random.Generator) -> Action:
        """Inspect a random unseen entity half the time (interactive), else commit a random part."""
        public = info["public"]
        entities = public["entities"]
        revealed = public.get("revealed", {})
        unseen = [e for e in entities if e not in revealed]
        if unseen and info.get("mode") in EXPLORING and rng.random() < 0.5:
            return Inspect(entity=str(rng.choice(unseen)))
        entity = str(rng.choice(entities))
        parts = list(revealed.get(entity, {})) or ["body"]
        return Commit(entity=entity, part=str(rng.choice(parts)), how_to_use="use it")

    def heuristic_action(self, info: Mapping[str, Any], rng: np.random.Generator, memory: dict[str, Any]) -> Action:
        return heuristic_action(info, inspections=int(memory.get("inspections", 3)))

    def oracle_action(self, item: CreativityTask, info: Mapping[str, Any]) -> Action:
        """Inspect the gold entity (interactive), then commit the gold part with the reference use."""
        revealed = info.get("public", {}).get("revealed", {})
        if info.get("mode") in EXPLORING and item.gold.entity not in revealed:
            return Inspect(entity=item.gold.entity)
        return Commit(entity=item.gold.entity, part=item.gold.part, how_to_use=item.solution.apply_affordance)


class CreativityPrompts(PromptPart):
    """CreativityBench's prompts per mode (our own wording, paper §5 and App. E), its tolerant JSON reply
    parser and the moves' grammar."""

    # An unreadable reply is re-asked once with the format (counted); the paper's configs keep its
    # protocol with ``reasks: 0`` (static and CoT: one shot; interactive: an unreadable reply costs a turn).
    player_reasks = 1

    def system_prompt(self, request: PromptRequest) -> str:
        return system_prompt(request.mode, request.reasoning)

    def parse_reply(self, text: str, info: Mapping[str, Any], reasoning: str | None) -> Action:
        allowed = MODE_ACTIONS.get(str(info.get("mode")), ("commit",))
        return parse_creativity_reply(text, info.get("public") or {}, allowed)

    def reply_for(self, action: Action, info: Mapping[str, Any], reasoning: str | None) -> str:
        """The move as the mode's prompt asks for it, the JSON object alone (no reasoning before it):
        static and CoT ``{"gold_entity", "gold_part", "how_to_use"}``; interactive ``{"action": "inspect",
        "target"}`` or ``{"action": "answer", ...}``; explore ``inspect`` / ``ask`` / ``commit`` objects."""
        mode = str(info.get("mode"))
        data: dict[str, Any]
        if isinstance(action, Commit) and mode in MODE_ACTIONS:
            lead = {"interactive": {"action": "answer"}, "explore": {"action": "commit"}}.get(mode, {})
            data = {**lead, "gold_entity": action.entity, "gold_part": action.part, "how_to_use": action.how_to_use}
        elif isinstance(action, Inspect) and mode in EXPLORING:
            data = {"action": "inspect", ("target" if mode == "interactive" else "entity"): action.entity}
        elif isinstance(action, Ask) and mode == "explore":
            data = {"action": "ask", "question": action.question}
        else:
            return super().reply_for(action, info, reasoning)
        return json.dumps({k: v for k, v in data.items() if v is not None}, ensure_ascii=False)

    def action_grammar(self, info: Mapping[str, Any], reasoning: str | None) -> ActionGrammar | None:
        """The moves of ``info``'s mode as the prompts write them: static and CoT one answer object;
        interactive ``{"action": "inspect", "target": ...}`` or ``{"action": "answer", ...}``; explore
        ``inspect`` / ``ask`` / ``commit`` objects. Names are the scene's; on the last turn only the answer."""
        public: Mapping[str, Any] = info.get("public") or {}
        mode = str(info.get("mode"))
        if not public.get("entities") or mode not in MODE_ACTIONS:
            return None
        chars = REASONING_CHARS[mode] or (EXPLORE_COT_CHARS if reasoning == "cot" else 0)
        last = final_turn(info)
        forms: list[JsonForm] = []
        if mode in ("static", "cot"):
            forms = _answer_forms(public, ())
        elif mode == "interactive":
            if not last:
                names = (*public["entities"], *public.get("inspectable_items", []))
                forms.append(JsonForm("inspect", (("action", OneOf(("inspect",))), ("target", OneOf(tuple(names))))))
            forms += _answer_forms(public, (("action", OneOf(("answer",))),))
        else:
            if not last:
                entities = tuple(str(e) for e in public["entities"])
                forms.append(JsonForm("inspect", (("action", OneOf(("inspect",))), ("entity", OneOf(entities)))))
                question = FreeText(QUESTION_CHARS, end="?")
                forms.append(JsonForm("ask", (("action", OneOf(("ask",))), ("question", question))))
            forms += _answer_forms(public, (("action", OneOf(("commit",))),))
        return ActionGrammar(tuple(forms), reasoning=chars)
