"""Twenty Questions, a benchmark in one file.

Run it with ``lateralgym run --import twenty_questions.py twenty-questions --data zoo.animals.json``.

## Description
The player asks yes/no questions about a hidden animal, then names it. The judge answers a question
``yes`` when it names one of the animal's facts, and grades a guess ``correct`` (the animal),
``close`` (another animal of the same family: a verdict of this benchmark's own) or ``incorrect``.
It feeds the success rate, the share of close guesses and the mean number of questions.

## Action Space
``ask: <yes/no question>`` or ``commit: <the animal>``.

## Observation Space
The engine's ``Dict``: ``text`` and ``turn``.

## Starting State
"I am thinking of an animal", and, with ``options: {say_family: true}``, its family.

## Rewards
``rewards.correct`` for the animal, ``rewards.close`` (its own reward) for a close guess.

## Episode End
Terminated on a guess; truncated after ``max_turns`` turns (8 by default).

## Arguments
Items come from ``--data`` in our JSONL (``{"id", "animal", "family", "facts"}`` a line) or in the
game's own ``.animals.json`` format (``{"animals": [{"name", "family", "facts"}]}``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from pydantic import BaseModel, ConfigDict

from lateralgym.envs import (
    Action,
    Ask,
    Benchmark,
    Commit,
    DataPart,
    DatasetFormat,
    EpisodeConfig,
    FrozenRecord,
    Handled,
    Inspect,
    JudgeReply,
    JudgingPart,
    LeakPart,
    MetricsPart,
    Outcome,
    PolicyPart,
    Scene,
    Text,
    register_benchmark,
)
from lateralgym.envs.records import as_list, as_mapping, build, existing_file, read_json, require_text, texts


class Animal(FrozenRecord):
    """One hidden animal."""

    id: Text
    animal: Text
    """The answer."""
    family: Text
    """A guess of another animal of this family is ``close``."""
    facts: tuple[Text, ...]
    """Words a question may contain to be answered yes."""


class TwentyQuestionsOptions(BaseModel):
    """The game's own settings (a config's ``options:`` block)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    say_family: bool = False
    """Tell the player the animal's family up front."""


class GuessOutcome(Outcome):
    """How one game ended."""

    guessed: bool
    close: bool
    questions: int

    def succeeded(self) -> bool:
        return self.guessed

    def badge(self) -> str:
        return "correct" if self.guessed else "close" if self.close else "wrong"


FAMILIES = {"owl": "bird", "robin": "bird", "trout": "fish", "carp": "fish", "cat": "mammal", "fox": "mammal"}


class FactsJudge:
    """Answers a question by the animal's facts (a shared word: yes); grades a guess by name and family."""

    name = "facts"
    synchronous = True

    async def answer(self, item: Any, question: str, history: tuple[Any, ...]) -> JudgeReply:
        asked = set(re.findall(r"[a-z]+", question.lower()))
        return JudgeReply(label="yes" if asked & set(item.facts) else "no")

    async def grade(self, item: Any, commit: Commit, history: tuple[Any, ...]) -> JudgeReply:
        guess = " ".join(re.findall(r"[a-z]+", (commit.answer or "").lower()))
        verdicts = {**{a: "close" for a, f in FAMILIES.items() if f == item.family}, item.animal: "correct"}
        return JudgeReply(label=verdicts.get(guess, "incorrect"))


class GuessScene(Scene[Animal, GuessOutcome]):
    """The rules of one game."""

    def __init__(self, item: Animal, config: EpisodeConfig, judge: Any, rng: np.random.Generator) -> None:
        super().__init__(item, config, judge, rng)
        self.verdict = ""

    def brief(self) -> str:
        family = f" It is a {self.item.family}." if self.config.options_as(TwentyQuestionsOptions).say_family else ""
        return f"I am thinking of an animal.{family} Ask yes/no questions (ask: ...), then name it (commit: ...)."

    async def handle(self, action: Inspect | Ask | Commit) -> Handled:
        if isinstance(action, Ask):
            reply = await self.ask_judge(action.question)
            return Handled(message=reply.label.capitalize() + ".", judge=reply)
        assert isinstance(action, Commit)
        reply = await self.grade(action)
        self.verdict = reply.label
        rewards = self.config.rewards
        reward = {"correct": rewards.correct, "close": rewards.extra("close")}.get(reply.label, 0.0)
        return Handled(message=f"{reply.label.capitalize()}.", reward=reward, terminated=True, judge=reply)

    def outcome(self, turns: int, invalid_actions: int) -> GuessOutcome:
        return GuessOutcome(
            **self.common(turns, invalid_actions, committed=bool(self.verdict)),
            guessed=self.verdict == "correct",
            close=self.verdict == "close",
            questions=len(self.history),
        )

    def public(self) -> dict[str, Any]:
        return {"history": [[qa.question, qa.label] for qa in self.history]}


def _is_animals_file(path: Path, record: Any) -> bool:
    return path.name.endswith(".animals.json")


def load_animals(path: str | Path) -> list[Animal]:
    """Read the game's own format; every failure names the file, record and field."""
    path = existing_file(path)
    animals = as_list(as_mapping(read_json(path), path, "top", "file").get("animals"), path, "top", "animals")
    loaded = []
    for index, raw in enumerate(animals):
        record = as_mapping(raw, path, f"animals[{index}]", "animal")
        name = require_text(record, "name", path, f"animals[{index}]")
        data = {
            "id": f"tq-{index}",
            "animal": name,
            "family": require_text(record, "family", path, f"animals[{index}]"),
            "facts": texts(record.get("facts"), path, f"animals[{index}]", "facts"),
        }
        loaded.append(build(Animal, path, f"animals[{index}]", data))
    return loaded


class TwentyQuestionsData(DataPart[Animal]):
    """Our JSONL and the game's own ``.animals.json``; ``data stats`` counts animals by family."""

    formats = (DatasetFormat("json", "Twenty Questions .animals.json", _is_animals_file, load_animals),)
    jsonl_keys = frozenset({"animal", "facts"})

    def stat_axes(self, item: Animal) -> dict[str, Any]:
        return {"family": item.family}


class TwentyQuestionsPolicies(PolicyPart[Animal]):
    """The offline players: a random animal, one question per family, the oracle."""

    def random_action(self, info: Mapping[str, Any], rng: np.random.Generator) -> Action:
        return Commit(answer=str(rng.choice(sorted(FAMILIES))))

    def heuristic_action(self, info: Mapping[str, Any], rng: np.random.Generator, memory: dict[str, Any]) -> Action:
        """Ask about each family once, then guess an animal of the first family answered yes."""
        history = info["public"]["history"]
        families = sorted(set(FAMILIES.values()))
        if len(history) < len(families):
            return Ask(question=f"Is it a {families[len(history)]}?")
        yes = [q for q, label in history if label == "yes"]
        family = next((f for f in families for q in yes if f in q), families[0])
        return Commit(answer=next(a for a, f in sorted(FAMILIES.items()) if f == family))

    def oracle_action(self, item: Animal, info: Mapping[str, Any]) -> Action:
        if not info["public"]["history"]:
            return Ask(question=f"Does it have {item.facts[0]}?")
        return Commit(answer=item.animal)


class TwentyQuestionsLeaks(LeakPart[Animal]):
    """Moves the no-leak walk tries: asking for the animal outright, a wrong guess."""

    def probe_actions(self, item: Animal, config: EpisodeConfig) -> Iterable[Any]:
        yield Ask(question="What is the animal?")
        yield Commit(answer="unicorn")


@register_benchmark
class TwentyQuestions(Benchmark[Animal, GuessOutcome]):
    """Twenty Questions (see the module docstring, the env card)."""

    name = "twenty-questions"
    title = "Twenty Questions (a one-file example)"
    item_type = Animal
    outcome_type = GuessOutcome
    scene_type = GuessScene
    modes = ("multiturn",)
    action_forms: ClassVar[dict[str, str]] = {"ask": "ask: <yes/no question>", "commit": "commit: <the animal>"}
    options_type = TwentyQuestionsOptions
    default_max_turns = 8
    data = TwentyQuestionsData()
    judging = JudgingPart.having(
        offline_judges={"facts": FactsJudge}, default_judge="facts", verdict_labels=("correct", "close", "incorrect")
    )
    metrics = MetricsPart.having(
        headline=("success_rate",), reward_fields={"close": "a guess of another animal of the same family"}
    )
    policies = TwentyQuestionsPolicies()
    leaks = TwentyQuestionsLeaks()

    def item_meta(self, item: Animal) -> dict[str, Any]:
        return {"family": item.family}

    def secret_texts(self, item: Animal) -> list[str]:
        return [f"the hidden animal is the {item.animal}"]


def write_animals(path: str | Path, animals: Iterable[tuple[str, str, tuple[str, ...]]]) -> Path:
    """Write an ``.animals.json`` file of ``(name, family, facts)`` (for trying the game)."""
    rows = [{"name": n, "family": f, "facts": list(facts)} for n, f, facts in animals]
    Path(path).write_text(json.dumps({"animals": rows}, indent=1), encoding="utf-8")
    return Path(path)
