"""Scripted answers to every stage of the KB pipeline, for the loopback server's ``responder``.

``KBResponder`` reads the ``TASK:`` line of the last user message and answers as a careful model
would: distinct entity names per scene (one a near-duplicate, for stage A's de-duplication), three
connected parts per entity, two physical and two state variants per part, and six affordances with
levels 0-5. Its answers depend only on the prompt, so two builds get the same answers. ``sabotage``
makes chosen questions answer badly (``"garbage"``: no JSON; ``"schema"``: JSON that breaks the
stage's schema; ``"repeat"``: stage C / E variants that copy the first one word for word, as SmolLM2
does), ``times`` times or forever.
"""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from typing import Any

MATERIALS = ("oak", "steel", "glass", "wool", "clay", "brass", "rubber", "bamboo", "copper", "linen", "cork", "slate")
OBJECTS = ("ladle", "stool", "jar", "blanket", "kettle", "hook", "doormat", "crate", "tray", "bucket", "lamp", "broom")
PARTS = ("grip", "body", "base")
PHYSICAL_KEYS = (
    "shape",
    "size",
    "thickness",
    "local_features",
    "material",
    "rigidity",
    "durability",
    "elasticity",
    "surface",
    "weight",
    "others",
    "summary",
)
STATE_KEYS = ("visibility", "availability", "moisture", "temperature", "internal", "others", "summary")


def entity_names(scene: str) -> list[str]:
    """The names the responder proposes for a scene, in order (distinct words: lexically far apart)."""
    offset = sum(map(ord, scene)) % len(MATERIALS)
    return [f"{MATERIALS[(offset + i) % len(MATERIALS)]} {OBJECTS[i % len(OBJECTS)]}" for i in range(len(OBJECTS))]


class KBResponder:
    """A deterministic annotator; thread-safe (the server answers from many threads)."""

    def __init__(self) -> None:
        self.sabotage: dict[str, tuple[str, int | None]] = {}
        self.asked: Counter[str] = Counter()
        self._lock = threading.Lock()

    def spoil(self, needle: str, kind: str, times: int | None = None) -> None:
        """Answer prompts holding ``needle`` badly (``garbage``, ``schema``, ``repeat``, ``placeholder``: the
        format's placeholders copied), ``times`` times or always."""
        self.sabotage[needle] = (kind, times)

    def __call__(self, body: dict[str, Any]) -> str:
        prompt = str(body["messages"][-1]["content"])
        first = str(body["messages"][1]["content"]) if len(body["messages"]) > 1 else prompt
        task = first.splitlines()[0].removeprefix("TASK: ").strip()
        with self._lock:
            self.asked[task] += 1
            for needle, (kind, times) in list(self.sabotage.items()):
                if kind == "repeat" and "variants of a part" not in task:
                    continue
                if needle in first and (times is None or times > 0):
                    if times is not None:
                        self.sabotage[needle] = (kind, times - 1)
                    if kind == "repeat":
                        answer = self._answer(task, first)
                        return json.dumps({"variants": [answer["variants"][0]] * 2})
                    if kind == "placeholder":
                        return json.dumps(self._placeholders(self._answer(task, first)))
                    return "Sorry, I cannot help with that." if kind == "garbage" else self._broken(task)
        return "Here you go:\n```json\n" + json.dumps(self._answer(task, first)) + "\n```"

    def _broken(self, task: str) -> str:
        broken: dict[str, Any] = {
            "list household entities": {"entities": []},
            "decompose an entity into parts": {"parts": [{"name": "a", "function": "x", "connected_to": ["zz"]}]},
            "physical attribute variants of a part": {"variants": [{"shape": "round"}]},
            "state variants of a part": {"variants": []},
            "affordances of a part variant": {"affordances": [{"description": "only one"}]},
        }
        return json.dumps(broken[task])

    @staticmethod
    def _placeholders(answer: dict[str, Any]) -> dict[str, Any]:
        """``answer`` as a small model writing punctuation for a value writes it: its last item's first field
        (a part's name, a variant's shape, a use's description) is ``"..."``."""
        for key in ("parts", "variants", "affordances"):
            if key in answer:
                answer[key][-1][next(iter(answer[key][-1]))] = "..."
        return answer

    def _answer(self, task: str, prompt: str) -> dict[str, Any]:
        if task == "list household entities":
            scene = re.search(r"commonly found in a (.+?)\. ", prompt)
            count = int(re.search(r"List (\d+) different", prompt).group(1))  # type: ignore[union-attr]
            listed = set(re.findall(r"^- (.+)$", prompt, flags=re.MULTILINE))
            names = [n for n in entity_names(scene.group(1) if scene else "x") if n not in listed]
            chosen = names[:count]
            if chosen and not listed:
                chosen.insert(1, f"the {chosen[0]}")  # a near-duplicate (cosine 1.0 once stop words go)
            return {"entities": [{"name": n, "description": f"a {n} for the house"} for n in chosen]}
        entity = re.search(r"^Entity: (.+?)(?: \(found in|$)", prompt, flags=re.MULTILINE)
        name = entity.group(1) if entity else "thing"
        if task == "decompose an entity into parts":
            return {
                "parts": [
                    {"name": part.title(), "function": f"the {part} of the {name}", "connected_to": links}
                    for part, links in (("grip", ["body"]), ("body", ["grip", "base"]), ("base", ["body"]))
                ]
            }
        part = re.search(r"^Part: (\w+)", prompt, flags=re.MULTILINE)
        part_name = part.group(1) if part else "part"
        if task == "physical attribute variants of a part":
            return {
                "variants": [
                    {key: f"{material} {key} of the {part_name}" for key in PHYSICAL_KEYS}
                    for material in ("light", "heavy")
                ]
            }
        if task == "state variants of a part":
            return {
                "variants": [
                    {key: f"{state} {key} of the {part_name}" for key in STATE_KEYS} for state in ("dry", "wet")
                ]
            }
        material = "heavy" if "heavy summary" in prompt else "light"
        state = "wet" if "wet summary" in prompt else "dry"
        count = int(re.search(r"List exactly (\d+) different", prompt).group(1))  # type: ignore[union-attr]
        return {
            "affordances": [
                {
                    "description": f"use the {material} {state} {part_name} of the {name} for job {level}",
                    "category": f"job {level}",
                    "use_condition": "hold it firmly",
                    "environment_condition": "NA",
                    "recipient_condition": "something that needs the job",
                    "enabling_attributes": [f"{material} material"],
                    "level": level,
                    "example_recipients": ["a thing"],
                    "failure_cases": ["it slips"],
                }
                for level in range(count)
            ]
        }
