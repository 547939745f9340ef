"""Read CreativityBench task files: packed entity descriptions, affordances, settings, golds.

The release packs each entity's parts into one description string and marks the gold part with
``[gold part]``; ``load_creativitybench`` unpacks the parts, removes the marker from every text
(checking it against ``golds[0].gold_part``) and maps ``setting.difficulty`` to distractor
similarity. Every failure is a ``DatasetError`` naming the file, the task and the field.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from lateralgym.envs._errors import DatasetError, validation_message
from lateralgym.envs._matching import snake
from lateralgym.envs._samples import brief, parse_json, plain, read_jsonl, sample_path, stream_lines
from lateralgym.envs.benchmarks.creativity._schema import (
    SCENES,
    Affordance,
    AffordanceKB,
    CreativityTask,
    DistractorSimilarity,
    Entity,
    Part,
    PhysicalAttributes,
    StateAttributes,
)
from lateralgym.envs.records import (
    as_list,
    as_mapping,
    build,
    existing_file,
    read_json,
    require,
    require_text,
    text,
    texts,
    unique_id,
    whole_number,
)

GOLD_MARKER = "[gold part]"
"""CreativityBench marks the gold part in entity descriptions with this; it must never reach a player."""

SIMILARITY_TIERS: dict[str, DistractorSimilarity] = {
    "difficult": "similar",
    "medium": "mixed",
    "low": "dissimilar",
    "similar": "similar",
    "mixed": "mixed",
    "dissimilar": "dissimilar",
}
"""CreativityBench ``setting.difficulty`` (or our own tier name) -> distractor similarity."""

_AFFORDANCE_LEVEL = re.compile(r"^\s*(normal|emergency)\b\s*(\d)?", re.IGNORECASE)
# A part header: start of text or after a sentence end, a name, the optional gold marker, "physical —".
_PART_HEAD = re.compile(
    r"(?:^|(?<=\.)\s+)(?P<name>[^\s:.;][^:.;\n]{0,80}?)(?P<gold>\s*\[gold part\])?"
    r"\s*:\s*physical\s*[—–-]+\s*",
    re.IGNORECASE,
)
_STATE_HEAD = re.compile(r";\s*state\s*[—–-]+\s*", re.IGNORECASE)


def parse_parts(description: str, path: Path, where: object, prefix: str = "") -> tuple[list[Part], list[str]]:
    """Split a packed entity description into parts; also return the names marked ``[gold part]``.

    The release packs every part as ``"<part>: physical — ...; state — ...."`` and joins parts with
    ``". "``, so each part's text ends in ``".."``: one period is the sentence's, one separates.
    The gold marker is removed from names and texts.
    """
    heads = list(_PART_HEAD.finditer(description))
    if not heads:
        raise DatasetError(
            path,
            "no '<part>: physical — ...' found in the entity description",
            record=where,
            field=f"{prefix}description",
        )
    parts: list[Part] = []
    gold: list[str] = []
    for head, following in zip(heads, [*heads[1:], None], strict=True):
        body = description[head.end() : following.start() if following else len(description)].strip()
        body = body[:-1] if body.endswith("..") else body
        pieces = _STATE_HEAD.split(body, maxsplit=1)
        physical, state = (pieces[0], pieces[1]) if len(pieces) == 2 else (body, "")
        name = snake(head.group("name"))
        if head.group("gold"):
            gold.append(name)
        parts.append(
            build(
                Part,
                path,
                where,
                {
                    "name": name,
                    "physical": PhysicalAttributes(description=_unmark(physical)),
                    "state": StateAttributes(description=_unmark(state)),
                },
                prefix=f"{prefix}description.{name}.",
            )
        )
    names = [p.name for p in parts]
    if len(set(names)) != len(names):
        raise DatasetError(
            path, f"the same part name appears twice: {names}", record=where, field=f"{prefix}description"
        )
    return parts, gold


def split_top_level(value: str, separator: str = ", ") -> tuple[str, ...]:
    """Split on ``separator`` outside parentheses and brackets (``"a (x, y), b"`` -> ``a (x, y)``, ``b``)."""
    pieces, depth, start, index = [], 0, 0, 0
    while index < len(value):
        char = value[index]
        depth += char in "([{"
        depth -= char in ")]}" and depth > 0
        if depth == 0 and value.startswith(separator, index):
            pieces.append(value[start:index])
            start = index = index + len(separator)
            continue
        index += 1
    pieces.append(value[start:])
    return tuple(p.strip() for p in pieces if p.strip())


def _unmark(value: str) -> str:
    return value.replace(f" {GOLD_MARKER}", "").replace(GOLD_MARKER, "").strip()


def _affordance_level(value: object, fallback: int | None, path: Path, where: object, field: str) -> int:
    """``"Emergency 1 (...)"`` -> 1, ``"Normal ..."`` -> 0, a number as is; missing -> ``setting.level``."""
    if isinstance(value, int) and not isinstance(value, bool):
        return whole_number(value, path, where, field)
    if value is not None and not isinstance(value, str):
        raise DatasetError(
            path, f"expected a level, got {type(value).__name__} {brief(value)}", record=where, field=field
        )
    level = (value or "").strip()
    if not level:
        if fallback is None:
            raise DatasetError(path, "no affordance level and no setting.level", record=where, field=field)
        return fallback
    if level.isdigit():
        return whole_number(level, path, where, field)
    match = _AFFORDANCE_LEVEL.match(level)
    if match is None or (match.group(1).lower() == "emergency" and not match.group(2) and not fallback):
        raise DatasetError(
            path,
            f"cannot parse level {brief(level)}; expected 'Normal' or 'Emergency <1-5>'",
            record=where,
            field=field,
        )
    if match.group(1).lower() == "normal":
        return 0
    return int(match.group(2)) if match.group(2) else int(fallback or 0)


def _interactable(value: object, path: Path, where: object, field: str) -> bool:
    """The release's ``"yes"`` / ``"no"`` (or a JSON flag); missing is no."""
    if isinstance(value, bool):
        return value
    return text(value, path, where, field).lower() in ("yes", "true", "1")


def _affordance(data: Mapping[str, Any], fallback: int | None, path: Path, where: object, prefix: str) -> Affordance:
    attributes = []
    raw_attributes = as_list(data.get("attribute", []), path, where, f"{prefix}attribute")
    for index, entry in enumerate(raw_attributes):
        # Entries are [text, kind, ...]; the text names the attribute that enables the use.
        value = text(
            entry[0] if isinstance(entry, list) and entry else entry, path, where, f"{prefix}attribute[{index}]"
        )
        if not value:
            raise DatasetError(path, f"bad attribute {brief(entry)}", record=where, field=f"{prefix}attribute[{index}]")
        attributes.append(value)
    recipients = data.get("example_recipient", "")
    failures = data.get("failure_case", [])
    return build(
        Affordance,
        path,
        where,
        {
            "action": require_text(data, "affordance", path, where, prefix),
            # Not in the release: LateralGym's writer keeps the functional category here.
            "category": text(data.get("category"), path, where, f"{prefix}category"),
            "use_condition": text(data.get("use_condition"), path, where, f"{prefix}use_condition") or "NA",
            "environment_condition": text(
                data.get("environment_condition"), path, where, f"{prefix}environment_condition"
            )
            or "NA",
            "recipient_condition": text(data.get("recipient_condition"), path, where, f"{prefix}recipient_condition")
            or "NA",
            "enabling_attributes": tuple(attributes),
            # The gold affordance packs recipients into one comma-separated string; judge outputs use lists.
            "example_recipients": split_top_level(recipients)
            if isinstance(recipients, str)
            else texts(recipients, path, where, f"{prefix}example_recipient"),
            "failure_cases": texts(
                [failures] if isinstance(failures, str) else failures, path, where, f"{prefix}failure_case"
            ),
            "level": _affordance_level(data.get("level"), fallback, path, where, f"{prefix}level"),
        },
        prefix=prefix,
    )


def _yes(value: object, path: Path, where: object, field: str) -> bool:
    """A judge's ``"Yes"`` / ``"No"`` (a leading word, as the release writes it) or a JSON flag."""
    if isinstance(value, bool):
        return value
    word = re.match(r"\s*(yes|no)\b", text(value, path, where, field), re.IGNORECASE)
    if word is None:
        raise DatasetError(path, f"expected Yes or No, got {brief(value)}", record=where, field=field)
    return word.group(1).lower() == "yes"


def _judge_output(raw: object, name: str, path: Path, where: object, prefix: str) -> dict[str, Any]:
    """An entity's ``judge_output`` (part -> comparison with the gold) as an ``EntityJudgement``'s fields."""
    parts = []
    for part, entry in as_mapping(raw, path, where, f"{prefix}judge_output").items():
        field = f"{prefix}judge_output.{part}."
        entry = as_mapping(entry, path, where, field.rstrip("."))
        use = entry.get("affordance", "NA")
        use = use.get("affordance", "") if isinstance(use, Mapping) else text(use, path, where, f"{field}affordance")
        hardness = f"{field}decision_making_difficulty"
        difficulty = text(entry.get("decision_making_difficulty", "NA"), path, where, hardness)
        parts.append(
            {
                "part": snake(part),
                "similar_affordance": _yes(entry.get("similar_affordance"), path, where, f"{field}similar_affordance"),
                "similar_affordance_reason": text(
                    entry.get("similar_affordance_reason"), path, where, f"{field}similar_affordance_reason"
                ),
                "affordance": "" if use == "NA" else use,
                "gold_change": _yes(entry.get("gold_change"), path, where, f"{field}gold_change"),
                "gold_change_reason": text(entry.get("gold_change_reason"), path, where, f"{field}gold_change_reason"),
                "decision_difficulty": None
                if difficulty.upper() in ("", "NA")
                else whole_number(difficulty, path, where, hardness),
            }
        )
    return {"entity": name, "parts": parts}


def _creativity_task(record: Mapping[str, Any], index: int, path: Path) -> CreativityTask:
    where: object = f"index {index}"
    task_id = require_text(record, "task_id", path, where)
    where = f"index {index} ({plain(task_id)})"
    scene = require_text(record, "scenario", path, where)
    if scene not in SCENES:
        raise DatasetError(
            path, f"unknown scene {brief(scene)}; expected one of {list(SCENES)}", record=where, field="scenario"
        )
    setting = as_mapping(require(record, "setting", path, where), path, where, "setting")
    tier = require_text(setting, "difficulty", path, where, "setting.").lower()
    if tier not in SIMILARITY_TIERS:
        raise DatasetError(
            path,
            f"unknown difficulty {brief(tier)}; expected difficult, medium or low",
            record=where,
            field="setting.difficulty",
        )
    bounds = as_list(
        require(setting, "cluster_size_range", path, where, "setting."), path, where, "setting.cluster_size_range"
    )
    if len(bounds) != 2:
        raise DatasetError(
            path, f"expected [low, high], got {brief(bounds)}", record=where, field="setting.cluster_size_range"
        )
    cluster = tuple(whole_number(b, path, where, "setting.cluster_size_range") for b in bounds)
    setting_level = None
    if "level" in setting:
        setting_level = whole_number(setting["level"], path, where, "setting.level")

    golds = as_list(require(record, "golds", path, where), path, where, "golds")
    if not golds:
        raise DatasetError(path, "is empty; a task needs its gold answer", record=where, field="golds")
    gold = as_mapping(golds[0], path, where, "golds[0]")
    gold_entity = require_text(gold, "gold_entity", path, where, "golds[0].")
    gold_part = snake(require_text(gold, "gold_part", path, where, "golds[0]."))
    gold_data = as_mapping(
        require(gold, "gold_affordance", path, where, "golds[0]."), path, where, "golds[0].gold_affordance"
    )
    affordance = _affordance(gold_data, setting_level, path, where, "golds[0].gold_affordance.")

    entities = []
    judged = []
    raw_entities = as_list(require(record, "entities", path, where), path, where, "entities")
    for number, raw in enumerate(raw_entities):
        prefix = f"entities[{number}]."
        raw = as_mapping(raw, path, where, f"entities[{number}]")
        name = require_text(raw, "name", path, where, prefix)
        description = require_text(raw, "description", path, where, prefix)
        parts, marked = parse_parts(description, path, where, prefix)
        if snake(name) == snake(gold_entity) and marked and marked != [gold_part]:
            raise DatasetError(
                path,
                f"marks {marked} as gold part but golds[0].gold_part is {gold_part!r}",
                record=where,
                field=f"{prefix}description",
            )
        entities.append(
            build(
                Entity,
                path,
                where,
                {
                    "id": f"{scene}/{snake(name)}",
                    "name": name,
                    "scene": scene,
                    "parts": parts,
                },
                prefix=prefix,
            )
        )
        if "judge_output" in raw:
            judged.append(_judge_output(raw["judge_output"], name, path, where, prefix))
    items = []
    for number, raw in enumerate(as_list(record.get("items", []), path, where, "items")):
        raw = as_mapping(raw, path, where, f"items[{number}]")
        items.append(
            {
                "name": require_text(raw, "name", path, where, f"items[{number}]."),
                "description": text(raw.get("description"), path, where, f"items[{number}].description"),
                "interactable": _interactable(raw.get("interactable"), path, where, f"items[{number}].interactable"),
            }
        )
    solution = as_mapping(require(record, "solution", path, where), path, where, "solution")
    steps = ("prepare_recipient", "prepare_use_condition", "prepare_environment_condition", "apply_affordance")
    return build(
        CreativityTask,
        path,
        where,
        {
            "id": task_id,
            "scene": scene,
            "task": _unmark(require_text(record, "task", path, where)),
            "environment": _unmark(require_text(record, "environment", path, where)),
            "entities": entities,
            "items": items,
            "gold": {"entity": gold_entity, "part": gold_part, "affordance": affordance},
            "solution": {step: require_text(solution, step, path, where, "solution.") for step in steps},
            "factors": {
                "cluster_size_range": cluster,
                "gold_level": affordance.level if setting_level is None else setting_level,
                "distractor_count": len(entities) - 1,
                "distractor_similarity": SIMILARITY_TIERS[tier],
            },
            "judge_output": judged,
            **({"split": record["split"]} if "split" in record else {}),
        },
    )


RELEASE_KEYS = frozenset({"task_id", "scenario", "setting", "golds", "entities", "task", "environment", "solution"})
"""The keys a task of the release's JSON holds (``load_creativitybench`` requires each)."""


def is_seed_entity(record: object) -> bool:
    """Whether a JSON record is a seed entity of the annotation pipeline (not a task)."""
    return isinstance(record, dict) and {"name", "scenario"} <= record.keys() and "task_id" not in record


def load_creativitybench(path: str | Path) -> list[CreativityTask]:
    """Read CreativityBench tasks: a JSON list of task objects (or one task object).

    The gold part's ``" [gold part]"`` marker is removed from every text (and checked against
    ``golds[0].gold_part``); ``setting.difficulty`` difficult / medium / low becomes distractor
    similarity similar / mixed / dissimilar.
    """
    path = existing_file(path)
    first_line = next((line for line in stream_lines(path) if line.strip()), "")
    try:
        first = parse_json(first_line, path, record="line 1")
    except (json.JSONDecodeError, DatasetError):
        first = None  # not one JSON value a line: the whole-file parse below says what is wrong
    if is_seed_entity(first):
        raise DatasetError(
            path,
            "is a list of seed entities ({name, scenario} per line) for the "
            "annotation pipeline, not tasks; give the task file (sample_tasks.json)",
            record="line 1",
        )
    data = read_json(path)
    data = [data] if isinstance(data, dict) else data
    if not isinstance(data, list):
        raise DatasetError(path, f"expected a JSON list of tasks, got {type(data).__name__}")
    tasks: list[CreativityTask] = []
    seen: dict[str, str] = {}
    for index, record in enumerate(data):
        task = _creativity_task(as_mapping(record, path, f"index {index}", "task"), index, path)
        unique_id(seen, task.id, path, f"index {index} ({plain(task.id)})", at=f"index {index}", field="task_id")
        tasks.append(task)
    return tasks


def load_sample_kb() -> AffordanceKB:
    """The shipped affordance knowledge base."""
    path = sample_path("kb")
    entities = read_jsonl(path, Entity)
    try:
        return AffordanceKB(entities=tuple(entities))
    except ValidationError as exc:
        raise DatasetError(path, validation_message(exc)[1]) from exc
