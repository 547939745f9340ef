"""What every LLM judge shares: asking a model for a reply in a fixed vocabulary.

``LabelAsker`` asks, re-asks a reply outside the vocabulary ``max_reasks`` times with a stricter
message, and takes the majority over ``samples`` calls (each with its own ``seed``, so the response
cache keeps them apart). Its ``answer`` replies yes / no / irrelevant to the first question of a
player's message (the text up to the first ``?``), with the earlier questions in view. The player's
text always reaches the model between markers it cannot close (``quoted``). ``JUDGE_OPTIONS`` are the
options a judge spec may carry (``samples``, ``max_reasks``). A benchmark's LLM judge (its
``Benchmark.judging.llm_judge``) builds its prompts and reads its verdicts on top of these.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from lateralgym.agents import LLMCallError, OptionParser
from lateralgym.envs import QA, AnswerLabel, JudgeReply, ModelCall, UnclearLabel
from lateralgym.envs.support import extract_answer_label

if TYPE_CHECKING:
    from lateralgym.agents import LLMClient

__all__ = [
    "ANSWER_REASK",
    "JUDGE_OPTIONS",
    "MAX_HISTORY",
    "MAX_QUESTION_CHARS",
    "LabelAsker",
    "first_question",
    "join_raw",
    "judged_item",
    "majority",
    "quoted",
]

T = TypeVar("T")
ItemT = TypeVar("ItemT")

MAX_QUESTION_CHARS = 500
"""A question longer than this is cut before it reaches the model."""
MAX_HISTORY = 20
"""How many earlier questions (with their labels) the model sees, for pronouns like "was he"."""

ANSWER_REASK = "That reply is not allowed. Reply again with exactly one word: yes, no or irrelevant."

_MARKERS = re.compile(r"<<<|>>>")


def first_question(text: str) -> str:
    """The first question of a player's message: the text up to and including the first ``?``.

    Whitespace is collapsed and the result is cut at ``MAX_QUESTION_CHARS``; a message without
    a ``?`` is taken whole.
    """
    flat = " ".join(text.split())
    cut = flat.find("?")
    return (flat[: cut + 1] if cut >= 0 else flat)[:MAX_QUESTION_CHARS]


def quoted(text: str) -> str:
    """The player's text between markers it cannot close itself."""
    return f"<<<\n{_MARKERS.sub(' ', text)}\n>>>"


def majority(votes: Sequence[T], tie: T) -> T:
    """The most frequent vote; ``tie`` when two votes share the top count (or there are none)."""
    ranked = Counter(votes).most_common()
    if not ranked or (len(ranked) > 1 and ranked[0][1] == ranked[1][1]):
        return tie
    return ranked[0][0]


def judged_item(item: object, kind: type[ItemT], wrong: str) -> ItemT:
    """``item`` when it is a ``kind``; else a TypeError saying ``wrong`` (``{got}``: the item's type)."""
    if not isinstance(item, kind):
        raise TypeError(wrong.format(got=type(item).__name__))
    return item


def join_raw(calls: Sequence[ModelCall]) -> str:
    """The raw text of one call as is; of several (samples, re-asks), a JSON list."""
    texts = [call.text for call in calls]
    return texts[0] if len(texts) == 1 else json.dumps(texts, ensure_ascii=False)


def _non_negative(value: str) -> int:
    number = int(value)
    if number < 0:
        raise ValueError(f"expected 0 or more, got {number}")
    return number


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise ValueError(f"expected 1 or more, got {number}")
    return number


JUDGE_OPTIONS: dict[str, OptionParser] = {"samples": _positive, "max_reasks": _non_negative}
"""Role options a judge spec may carry besides the generation settings (see ``ModelSpec.role_options``):
``samples`` (calls per decision, majority vote) and ``max_reasks`` (follow-ups after an unclear reply)."""


class LabelAsker:
    """Asks a model for a reply in a fixed vocabulary: re-asks unclear replies, votes over samples.

    Shared by the LLM judges. ``ask`` returns the parsed reply of every sample (None when a sample
    stayed unclear after the re-asks) and every call made, in order (role ``judge``). When a call
    fails for good, the ``LLMCallError`` raised carries in ``calls`` every call of the decision so
    far, the failed one last.
    """

    def __init__(
        self, client: LLMClient, *, samples: int = 1, max_reasks: int = 1, temperature: float | None = None
    ) -> None:
        if samples < 1:
            raise ValueError(f"samples must be at least 1, got {samples}")
        if max_reasks < 0:
            raise ValueError(f"max_reasks must be 0 or more, got {max_reasks}")
        self.client = client
        self.samples = samples
        self.max_reasks = max_reasks
        self.temperature = temperature

    def params(self, sample: int) -> dict[str, Any]:
        """Request parameters of one sample: its own seed when sampling several times."""
        params: dict[str, Any] = {}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.samples > 1:
            params["seed"] = (self.client.spec.seed or 0) + sample
        return params

    async def ask_once(
        self, messages: Sequence[Mapping[str, str]], parse: Callable[[str], T | None], reask: str, sample: int = 0
    ) -> tuple[T | None, list[ModelCall]]:
        """One sample: ask, and re-ask up to ``max_reasks`` times while the reply does not parse.

        Raises:
            LLMCallError: the request failed after the client's retries (``calls``: this sample's).
        """
        chat = [dict(m) for m in messages]
        calls: list[ModelCall] = []
        for _ in range(self.max_reasks + 1):
            try:
                call = await self.client.complete(chat, role="judge", **self.params(sample))
            except LLMCallError as exc:
                exc.calls = (*calls, *exc.calls)
                raise
            calls.append(call)
            parsed = parse(call.text)
            if parsed is not None:
                return parsed, calls
            chat += [{"role": "assistant", "content": call.text}, {"role": "user", "content": reask}]
        return None, calls

    async def ask(
        self, messages: Sequence[Mapping[str, str]], parse: Callable[[str], T | None], reask: str
    ) -> tuple[list[T | None], list[ModelCall]]:
        """``samples`` independent samples (sequential, so a scripted server answers in order).

        Raises:
            LLMCallError: a request failed after the client's retries (``calls``: every one so far).
        """
        results: list[T | None] = []
        calls: list[ModelCall] = []
        for sample in range(self.samples):
            try:
                parsed, made = await self.ask_once(messages, parse, reask, sample)
            except LLMCallError as exc:
                exc.calls = (*calls, *exc.calls)
                raise
            results.append(parsed)
            calls += made
        return results, calls

    async def answer(
        self,
        system: str,
        question: str,
        history: Sequence[QA] = (),
        unclear: AnswerLabel | UnclearLabel = "irrelevant",
    ) -> JudgeReply:
        """A yes / no / irrelevant reply to the first question of ``question``, by majority; a sample
        that stays unreadable after the re-asks votes ``unclear``."""
        lines = [f"- {first_question(qa.question)} -> {qa.label}" for qa in history[-MAX_HISTORY:]]
        earlier = "Earlier questions and your replies:\n" + "\n".join(lines) + "\n\n" if lines else ""
        user = f"{earlier}The player's question:\n{quoted(first_question(question))}\nYour one-word reply:"
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        labels, calls = await self.ask(messages, extract_answer_label, ANSWER_REASK)
        votes = [label if label is not None else unclear for label in labels]
        return JudgeReply(label=majority(votes, "irrelevant"), raw=join_raw(calls), calls=tuple(calls))
