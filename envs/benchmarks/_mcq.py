"""What every multiple-choice benchmark shares (BrainTeaser, RiddleSense): scene, outcome, judge,
offline policies and the LLM protocol.

One episode is one question: the player sees the question and lettered options and commits one
letter (or the option's text); the exact judge compares it with the label. A subclass of
``MultipleChoiceBenchmark`` names its item type, outcome type, formats and metrics.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, ClassVar

import numpy as np
from pydantic import Field, model_validator

from lateralgym.envs._actions import Action, Ask, Commit, Inspect, parse_choice
from lateralgym.envs._benchmark import Benchmark, Outcome, PromptRequest
from lateralgym.envs._cache import IdentityCache
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import Handled, Scene, usage_text
from lateralgym.envs._grammar import ActionGrammar, LineForm, OneOf
from lateralgym.envs._items import Count, FrozenRecord, Text
from lateralgym.envs._judging import QA, JudgeReply
from lateralgym.envs._parts import JudgingPart, LeakPart, PolicyPart, PromptPart
from lateralgym.envs.benchmarks._mcq_reply import LETTERS, option_named, parse_mcq_reply


class MultipleChoiceItem(FrozenRecord):
    """A multiple-choice question with one intended option (BrainTeaser, RiddleSense)."""

    id: Text
    """Unique id."""
    question: Text
    """The question or riddle."""
    choices: tuple[Text, ...] = Field(min_length=2, max_length=8)
    """The options, in the order shown (``A`` first)."""
    label: Count = Field(ge=0)
    """Index of the correct choice."""

    @model_validator(mode="after")
    def _label_in_range(self) -> MultipleChoiceItem:
        if self.label >= len(self.choices):
            raise ValueError(f"label {self.label} is out of range for {len(self.choices)} choices")
        return self


class ChoiceOutcome(Outcome):
    """The outcome of one multiple-choice question."""

    choice: int | None
    """Index of the committed option; None when the player never gave a valid one."""
    correct: bool
    """The committed option is the intended one."""

    def succeeded(self) -> bool:
        return self.correct


def letters(n: int) -> str:
    """``A-D`` for four options, ``A-E`` for five."""
    return f"A-{LETTERS[n - 1]}"


class ChoiceScene(Scene[MultipleChoiceItem, ChoiceOutcome]):
    """The rules of one multiple-choice question (the benchmark's outcome type adds its own fields)."""

    outcome_type: ClassVar[type[ChoiceOutcome]] = ChoiceOutcome

    def __init__(self, item: MultipleChoiceItem, config: EpisodeConfig, judge: Any, rng: np.random.Generator) -> None:
        super().__init__(item, config, judge, rng)
        self.choice: int | None = None
        self.correct = False

    def brief(self) -> str:
        """The question and its lettered options (a subclass's brief too must follow from the item and the
        config alone: ``opening`` remembers it per item)."""
        options = "\n".join(f"{LETTERS[n]}. {text}" for n, text in enumerate(self.item.choices))
        return f"QUESTION: {self.item.question}\nCHOICES:\n{options}\n{usage_text(self.config)}"

    def opening(self) -> str:
        """The sanitised brief, built once per item and config: an episode is one reset and one commit, so
        laying the question out and scanning it would otherwise be a good part of every episode."""
        known = _openings.get(self.item)
        if known is not None and known[0] is self.config:
            return known[1]
        return _openings.put(self.item, (self.config, super().opening()))[1]

    async def handle(self, action: Inspect | Ask | Commit) -> Handled:
        assert isinstance(action, Commit)
        choice = self._choice(action)
        n = len(self.item.choices)
        if choice is None or not 0 <= choice < n:
            return Handled(message=f"Choose one of the options {letters(n)} (or 0-{n - 1}).", valid=False)
        reply = await self.grade(Commit(choice=choice))
        self.choice = choice
        self.correct = reply.label == "correct"
        reward = self.config.rewards.correct if self.correct else 0.0
        result = "correct" if self.correct else "incorrect"
        return Handled(
            message=f"Answer {LETTERS[choice]} recorded: {result}.", reward=reward, terminated=True, judge=reply
        )

    def _choice(self, action: Commit) -> int | None:
        if action.choice is not None:
            return action.choice
        text = action.answer or action.entity or ""
        # The option's own text names it exactly, as the LLM reply parser reads it (one rule).
        named = option_named(text, self.item.choices)
        return named if named is not None else parse_choice(text)

    def public(self) -> dict[str, Any]:
        """The question and its choices."""
        return {"question": self.item.question, "choices": list(self.item.choices)}

    def outcome(self, turns: int, invalid_actions: int) -> ChoiceOutcome:
        return self.outcome_type(
            **self.common(turns, invalid_actions, committed=self.choice is not None),
            choice=self.choice,
            correct=self.correct,
            **self.extra_outcome(),
        )

    def extra_outcome(self) -> dict[str, Any]:
        """The benchmark's own outcome fields (BrainTeaser: group, kind, variant)."""
        return {}


class ExactChoiceJudge:
    """Grades a choice by its index; answers every question ``irrelevant`` (it knows no facts)."""

    name = "exact"
    synchronous = True
    """Its coroutines never suspend: ``LateralEnv.step`` drives them without an event loop."""

    async def answer(self, item: Any, question: str, history: tuple[QA, ...]) -> JudgeReply:
        """No knowledge to answer from: always ``irrelevant``."""
        return JudgeReply(label="irrelevant")

    async def grade(self, item: Any, commit: Commit, history: tuple[QA, ...]) -> JudgeReply:
        """Correct when the chosen index is the label."""
        return grade_choice(item, commit)


_openings: IdentityCache[MultipleChoiceItem, tuple[EpisodeConfig, str]] = IdentityCache(4096)
"""Each item's opening text, with the config it was laid out for (envs of one config share it)."""


_CORRECT = JudgeReply(label="correct")
_INCORRECT = JudgeReply(label="incorrect")
"""The exact judge's two replies (frozen: every grade shares them)."""


def grade_choice(item: MultipleChoiceItem, commit: Commit) -> JudgeReply:
    """Correct when the chosen option is the item's label, or reads exactly as it does.

    A release may list the intended text twice (BrainTeaser WP-104_CR: options A and C are both
    ``The letter 'o'.``); a player cannot tell such options apart, so either is the right answer.
    """
    choice = commit.choice
    chosen = item.choices[choice] if choice is not None and 0 <= choice < len(item.choices) else None
    same_text = chosen is not None and chosen.strip() == item.choices[item.label].strip()
    return _CORRECT if choice == item.label or same_text else _INCORRECT


# -- the LLM protocol (our own wording; BrainTeaser paper §4, RiddleSense §4: a question, lettered
#    options, one letter back) ------------------------------------------------------------------

_DIRECT_FORMAT = "Reply with the letter of your choice, written as: Answer: <letter>\n"
_COT_FORMAT = """\
First explain in a few sentences which assumption the question invites and how each option fares. \
Then end with a final line written as: Answer: <letter>
"""


ANSWER_LABEL = "Answer: "
"""How the prompt asks for the answer line (``Answer: <letter>``), and the constrained reply writes it."""
COT_REASONING_CHARS = 480
"""Characters of reasoning a constrained reply may write before its answer line under ``cot``."""


class MultipleChoicePolicies(PolicyPart[MultipleChoiceItem]):
    """The offline players of a multiple-choice question."""

    def random_action(self, info: Mapping[str, Any], rng: np.random.Generator) -> Action:
        return Commit(choice=int(rng.integers(len(info["public"]["choices"]))))

    def heuristic_action(self, info: Mapping[str, Any], rng: np.random.Generator, memory: dict[str, Any]) -> Action:
        """The longest option: explaining a twist takes more words than a straight-thinking distractor."""
        choices = info["public"]["choices"]
        return Commit(choice=max(range(len(choices)), key=lambda n: (len(choices[n]), -n)))

    def oracle_action(self, item: MultipleChoiceItem, info: Mapping[str, Any]) -> Action:
        return Commit(choice=item.label)


class MultipleChoicePrompts(PromptPart):
    """The LLM protocol of a multiple-choice question; a subclass sets ``intro``."""

    intro: ClassVar[str] = "You will be given a multiple-choice question with lettered options.\n"
    """The first paragraph of the LLM player's system prompt."""

    # An unreadable answer is re-asked once with the format (counted); the shipped configs keep the
    # papers' single shot with ``reasks: 0``.
    player_reasks = 1

    def system_prompt(self, request: PromptRequest) -> str:
        return self.intro + (_COT_FORMAT if request.reasoning == "cot" else _DIRECT_FORMAT)

    def parse_reply(self, text: str, info: Mapping[str, Any], reasoning: str | None) -> Action:
        return parse_mcq_reply(text, [str(c) for c in info.get("public", {}).get("choices", [])])

    def action_grammar(self, info: Mapping[str, Any], reasoning: str | None) -> ActionGrammar | None:
        """``Answer: <letter>`` with a letter of the shown options (after a line of reasoning under ``cot``),
        the strongly cued form ``parse_mcq_reply`` reads first."""
        choices = info.get("public", {}).get("choices", [])
        if not 0 < len(choices) <= len(LETTERS):
            return None
        answer = LineForm("commit", ANSWER_LABEL, OneOf(tuple(LETTERS[: len(choices)])))
        return ActionGrammar((answer,), reasoning=COT_REASONING_CHARS if reasoning == "cot" else 0)


class MultipleChoiceJudging(JudgingPart):
    """One offline judge: the exact match of the chosen option."""

    offline_judges: ClassVar[Mapping[str, Any]] = {"exact": ExactChoiceJudge}
    default_judge = "exact"


class MultipleChoiceLeaks(LeakPart[MultipleChoiceItem]):
    """The secret is which option is right: the differential walk plays a twin with another label."""

    def twin(self, item: MultipleChoiceItem) -> MultipleChoiceItem:
        return item.model_copy(update={"label": (item.label + 1) % len(item.choices)})

    def probe_actions(self, item: MultipleChoiceItem, config: EpisodeConfig) -> Iterable[Any]:
        yield "commit: Z"
        yield "ask: which option is right?"
        yield Commit(choice=(item.label + 1) % len(item.choices))


class MultipleChoiceBenchmark(Benchmark[MultipleChoiceItem, ChoiceOutcome]):
    """Shared rules of multiple-choice benchmarks; subclasses set the item, outcome, data and prompt."""

    modes = ("mcq",)
    reveals = ("question",)
    action_forms: ClassVar[dict[str, str]] = {"commit": "commit: <choice letter>"}
    judging = MultipleChoiceJudging()
    policies = MultipleChoicePolicies()
    prompts: PromptPart = MultipleChoicePrompts()
    leaks = MultipleChoiceLeaks()

    def public_text(self, item: MultipleChoiceItem) -> str:
        return f"{item.question} {' '.join(item.choices)}"

    def solution_text(self, item: MultipleChoiceItem) -> str:
        return f"The intended answer: {LETTERS[item.label]}. {item.choices[item.label]}"

    def secret_texts(self, item: MultipleChoiceItem) -> list[str]:
        return []  # the secret is which option is right: checked by the differential walk (``leaks.twin``)

    def validate_config(self, config: EpisodeConfig) -> None:
        if set(config.allowed_actions) != {"commit"}:
            raise ValueError(f"{self.name} only allows 'commit'")
