"""An AR-Bench ``data/sp/test.json`` written for the process-reward tests: three stories in the release's
layout (a story tree two levels deep, two children per node, six key questions, the ``key_question``
list in another order than the tree's), the third listing one key question twice, as ten of the
release's hundred test stories do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def _node(value: str, key: str, children: tuple[dict[str, Any], ...] = ()) -> dict[str, Any]:
    return {"value": value, "based_question": "Why?", "key_question": key, "children": list(children)}


def story(
    index: int,
    surface: str,
    bottom: str,
    facts: list[str],
    keys: list[str],
    *,
    supernatural: bool = False,
    someone_dies: bool = False,
) -> dict[str, Any]:
    """One release record: ``facts`` are the tree's seven nodes (root first), ``keys`` its six key questions."""
    tree = {
        "value": facts[0],
        "based_question": "",
        "key_question": "",
        "children": [
            _node(facts[1], keys[0], (_node(facts[2], keys[1]), _node(facts[3], keys[2]))),
            _node(facts[4], keys[3], (_node(facts[5], keys[4]), _node(facts[6], keys[5]))),
        ],
    }
    return {
        "supernatural": supernatural,
        "someone_dies": someone_dies,
        "core_sentence": facts[0],
        "story_tree": tree,
        "bottom": bottom,
        "surface": surface,
        "key_question": list(reversed(keys)),  # the release's list is in arbitrary order
        "index": index,
    }


LIGHTHOUSE = story(
    0,
    "A lighthouse keeper switches off the lamp one night and a ship sinks. He is never blamed. Why?",
    "The keeper was dreaming: the lamp, the ship and the wreck were a nightmare, and he woke in his bed ashore.",
    [
        "The sinking was only a nightmare.",
        "The keeper retired years ago.",
        "He still dreams about the lighthouse.",
        "He feels guilty about an old storm.",
        "No ship really sank.",
        "He woke up in his bed.",
        "His house stands far from the coast.",
    ],
    [
        "Was the keeper dreaming?",
        "Had the keeper retired from the lighthouse?",
        "Does he feel guilty about an old storm?",
        "Did a real ship actually sink?",
        "Did he wake up in his bed?",
        "Does his house stand far from the coast?",
    ],
)
VIOLIN = story(
    1,
    "A violinist stops playing halfway through a concert, and the audience cheers. Why?",
    "The concert was a charity auction: a donor had paid for silence then, to hear a recording of his late mother.",
    [
        "A donor bought a moment of silence.",
        "The concert raised money for charity.",
        "Guests bid on moments of the show.",
        "The donor's mother had died.",
        "A recording of her voice was played.",
        "The audience knew the plan.",
        "The violinist resumed afterwards.",
    ],
    [
        "Was the concert raising money for charity?",
        "Did guests bid on moments of the show?",
        "Had the donor's mother died?",
        "Was a recording of a voice played?",
        "Did the audience know the plan in advance?",
        "Did the violinist resume playing afterwards?",
    ],
)
GARDENER = story(
    2,
    "A gardener waters a dead plant every morning for a year. Why?",
    "The plant was his late father's, and watering it each morning kept his father's routine alive.",
    [
        "Watering keeps his father's routine alive.",
        "The plant belonged to his father.",
        "His father watered it every morning.",
        "His father died a year ago.",
        "The gardener knows the plant is dead.",
        "The routine comforts him.",
        "He will keep doing it.",
    ],
    [
        "Did the plant belong to his father?",
        "Did his father water the plant every morning?",
        "Did his father die a year ago?",
        "Does the gardener know the plant is dead?",
        "Does the morning routine comfort him?",
        "Did his father water the plant every morning?",  # listed twice, as in some release stories
    ],
)
STORIES = [LIGHTHOUSE, VIOLIN, GARDENER]


def write_release(folder: Path) -> Path:
    """Write ``folder/sp/test.json`` with the three stories; returns its path."""
    target = folder / "sp"
    target.mkdir(parents=True, exist_ok=True)
    path = target / "test.json"
    path.write_text(json.dumps(STORIES), encoding="utf-8")
    return path
