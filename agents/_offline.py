"""Offline players: random, a lexical heuristic, and an oracle that reads the gold.

Together they bracket a benchmark: the oracle scores 100 %, random scores chance, and the
heuristic sits between. None of them needs a model or the network.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lateralgym.agents._base import Agent
from lateralgym.envs import Action, Ask, Commit, CreativityTask, Inspect, Item, MCQPuzzle, SituationPuzzle, item_key
from lateralgym.envs._matching import content_stems


class RandomAgent(Agent):
    """Uniformly random among the allowed actions' public options."""

    name = "random"

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        public = info.get("public", {})
        benchmark = info.get("benchmark")
        if benchmark == "brainteaser":
            return Commit(choice=int(self.rng.integers(len(public["choices"]))))
        if benchmark == "creativity":
            entities = public["entities"]
            revealed = public.get("revealed", {})
            unseen = [e for e in entities if e not in revealed]
            if unseen and info.get("mode") == "interactive" and self.rng.random() < 0.5:
                return Inspect(entity=str(self.rng.choice(unseen)))
            entity = str(self.rng.choice(entities))
            parts = list(revealed.get(entity, {})) or ["body"]
            return Commit(entity=entity, part=str(self.rng.choice(parts)), how_to_use="use it")
        story = content_stems(public.get("story", "")) or {"something"}
        word = str(self.rng.choice(sorted(story)))
        if self.rng.random() < 0.8:
            return Ask(question=f"Is the {word} important?")
        return Commit(answer=f"It has to do with the {word}.")


def overlap(a: Iterable[str], b: Iterable[str]) -> float:
    """Jaccard overlap of two word collections."""
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa | sb else 0.0


# Words that situation-puzzle answers often turn on; the heuristic probes them with questions.
PROBE_WORDS: tuple[str, ...] = (
    "dead",
    "death",
    "kill",
    "blind",
    "twin",
    "mirror",
    "ice",
    "water",
    "snow",
    "dream",
    "game",
    "photo",
    "doctor",
    "child",
    "baby",
    "animal",
    "dog",
    "ghost",
    "mistake",
    "joke",
    "pretend",
    "actor",
    "film",
    "stage",
    "statue",
    "painting",
    "toy",
    "sleep",
    "night",
    "dark",
    "light",
    "train",
    "car",
    "plane",
    "ship",
    "phone",
    "letter",
    "money",
    "gift",
    "birthday",
    "hospital",
    "prison",
    "police",
    "poison",
    "allergy",
    "deaf",
    "height",
    "short",
    "tall",
    "glass",
    "window",
    "clock",
    "time",
    "wrong",
    "reflection",
    "dive",
    "fish",
    "bird",
    "fire",
    "smoke",
    "tree",
    "rain",
    "shadow",
    "sound",
    "music",
)


class HeuristicAgent(Agent):
    """Ranks options by lexical overlap with the problem and explores before committing.

    * CreativityBench: inspects the entities whose names overlap the task most (interactive), then
      commits the (entity, part) whose attributes overlap the task most.
    * BrainTeaser: picks the longest choice (explaining a twist takes more words than a
      straight-thinking distractor; about 40 % on the sample data, against 25 % chance).
    * SPLAT: asks about common lateral-thinking words and story words, then explains with the
      words the judge said yes to (it rarely solves a puzzle: a floor, not a competitor).
    """

    name = "heuristic"

    def __init__(self, seed: int | None = None, inspections: int = 3, probes: int = 10) -> None:
        super().__init__(seed)
        self.inspections = inspections
        self.probes = probes
        self._asked: list[str] = []

    def reset(self, observation: dict[str, Any], info: dict[str, Any], seed: int | None = None) -> None:
        super().reset(observation, info, seed)
        self._asked = []

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        benchmark = info.get("benchmark")
        public = info.get("public", {})
        if benchmark == "brainteaser":
            return self._choose(public)
        if benchmark == "creativity":
            return self._creativity(info, public)
        return self._situation(public)

    def _choose(self, public: dict[str, Any]) -> Action:
        choices = public["choices"]
        return Commit(choice=max(range(len(choices)), key=lambda n: (len(choices[n]), -n)))

    def _creativity(self, info: dict[str, Any], public: dict[str, Any]) -> Action:
        need = content_stems(public["task"] + " " + " ".join(public.get("items", [])))
        revealed: dict[str, dict[str, str]] = public.get("revealed", {})
        if info.get("mode") == "interactive" and len(revealed) < min(self.inspections, len(public["entities"])):
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
        return Commit(
            entity=entity, part=part, how_to_use=f"Use the {part.replace('_', ' ')} of the {entity} for this."
        )

    def _situation(self, public: dict[str, Any]) -> Action:
        history = public.get("history", [])
        yes_words = [w for q, label in history if label == "yes" for w in content_stems(q)]
        if len(self._asked) < self.probes:
            story = sorted(content_stems(public.get("story", "")))
            candidates = [w for w in (*PROBE_WORDS, *story) if w not in self._asked]
            if candidates:
                word = candidates[int(self.rng.integers(len(candidates)))] if len(self._asked) % 2 else candidates[0]
                self._asked.append(word)
                return Ask(question=f"Does the answer involve {word}?")
        keep = [w for w in dict.fromkeys(yes_words) if w not in {"answer", "involve"}]
        return Commit(answer="The answer involves " + ", ".join(keep or ["a misunderstanding"]) + ".")


class OracleAgent(Agent):
    """Reads the gold from the items it is given: the upper bound, and a check that scoring works."""

    name = "oracle"

    def __init__(self, items: Iterable[Item], seed: int | None = None) -> None:
        super().__init__(seed)
        self.items = {item_key(str(item.id)): item for item in items}

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        item = self.items[str(info["item"])]
        if isinstance(item, MCQPuzzle):
            return Commit(choice=item.label)
        if isinstance(item, SituationPuzzle):
            return Commit(answer=item.answer)
        assert isinstance(item, CreativityTask)
        revealed = info.get("public", {}).get("revealed", {})
        if info.get("mode") == "interactive" and item.gold.entity not in revealed:
            return Inspect(entity=item.gold.entity)
        return Commit(entity=item.gold.entity, part=item.gold.part, how_to_use=item.solution.apply_affordance)
