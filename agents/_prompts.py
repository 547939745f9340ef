"""The texts an LLM player is prompted with, one protocol per benchmark and mode.

The protocols follow the papers' set-ups (CreativityBench static, chain-of-thought and interactive;
BrainTeaser zero- and few-shot; SPLAT's question-or-explain rounds), written for this project in
our own words. The worked BrainTeaser examples are original puzzles, not taken from any dataset.

``conversation_start`` assembles the opening messages; the player then feeds each env reply back
as the next user message.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from lateralgym.envs.brainteaser import LETTERS

__all__ = [
    "BRAINTEASER_EXAMPLES",
    "PromptPlan",
    "WorkedExample",
    "conversation_start",
    "prompt_plan",
    "system_prompt",
]

Reasoning = Literal["direct", "cot"]

# -- CreativityBench -----------------------------------------------------------------------------

_CREATIVITY_STATIC = """\
You help someone solve an everyday problem by putting an object that happens to be nearby to an \
unusual use. You will be given the problem in the first person, a description of the \
surroundings, and a list of entities. Each entity is listed with its parts, and each part with \
its physical attributes (material, shape, size, weight, rigidity) and its current state \
(visibility, accessibility, moisture, temperature).

Choose the one entity, and the one part of it, that would best get the job done, even when that \
is not what the object was made for. Decide from the attributes: what the part's material, \
shape, size and state make it able to do. Write the entity and part names exactly as they appear \
in the list.
"""

_CREATIVITY_DIRECT_FORMAT = """\
Reply with a single JSON object and nothing else:
{"gold_entity": "<entity name>", "gold_part": "<part name>", "how_to_use": "<one or two sentences \
on how you would use that part>"}
"""

_CREATIVITY_COT_FORMAT = """\
Work it out step by step before answering:
1. What does the problem physically call for (for example a thin stiff edge, something \
absorbent, weight, grip, heat resistance)?
2. For the promising entities, which parts have attributes that supply it, and which state \
attributes (wet, hot, out of reach) help or get in the way?
3. What can the best part therefore be used to do here, and why are the other candidates worse?
Write your reasoning first. Then finish with your answer as one JSON object in a ```json code \
block; only the last JSON object counts:
{"gold_entity": "<entity name>", "gold_part": "<part name>", "how_to_use": "<how you would use it>"}
"""

_CREATIVITY_INTERACTIVE = """\
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

_CREATIVITY_INTERACTIVE_COT = """\
Before each move, think briefly about what the problem needs and what you have learnt so far; \
then end your reply with the JSON object of your move (only the last JSON object counts).
"""

# -- BrainTeaser ---------------------------------------------------------------------------------

_BRAINTEASER = """\
You will be given a brain teaser: a short puzzle that seems to have an obvious answer but is \
built to trip up ordinary common-sense reasoning, together with lettered options. Exactly one \
option is intended; "None of above" is right only when none of the other options works. Take \
the wording literally and look for the hidden assumption, the double meaning or the play on \
letters and words.
"""

_BRAINTEASER_DIRECT_FORMAT = "Reply with the letter of your choice, written as: Answer: <letter>\n"

_BRAINTEASER_COT_FORMAT = """\
First explain in a few sentences which assumption the puzzle invites and how each option fares. \
Then end with a final line written as: Answer: <letter>
"""

# -- SPLAT ---------------------------------------------------------------------------------------

_SPLAT = """\
You are playing a situation puzzle, a game of lateral thinking. You get a short story that \
leaves out the facts that make sense of it; a judge knows what really happened. Your goal is to \
uncover the full explanation in as few rounds as you can.

Each round, do exactly one of these:
- ask one question that can be answered with yes or no; the judge replies Yes, No or Irrelevant;
- or, once you are confident, give your full explanation of what happened; the judge tells you \
whether it is correct, or says not yet (sometimes with a hint).

Guidelines:
- One question per round, never several at once, and never a question you already asked.
- Build on the answers you have; when a line of questions keeps getting No or Irrelevant, drop \
the assumption behind it (who the people are, where it happens, what the objects really are).
- An explanation must account for every strange detail of the story, not just part of it.
"""

_SPLAT_DIRECT_FORMAT = """\
Reply with a single line, either
Question: <your yes/no question>
or
Answer: <your full explanation>
"""

_SPLAT_COT_FORMAT = """\
You may reason briefly first, but end your reply with exactly one line, either
Question: <your yes/no question>
or
Answer: <your full explanation>
"""

_GENERIC = """\
You are playing a reasoning game. Read each message and reply with one action in the form the \
message asks for.
"""

_ENV_FORMS_ACCEPTED = (
    "The environment's own command forms (shown after 'Allowed actions:') are accepted too, "
    "but prefer the format above."
)


class WorkedExample(BaseModel):
    """A solved puzzle shown to the player before its own (few-shot prompting)."""

    model_config = ConfigDict(frozen=True)

    question: str
    """The puzzle."""
    choices: tuple[str, ...]
    """The options, in order (``A`` first)."""
    reasoning: str
    """The short explanation a chain-of-thought answer gives."""
    answer: int
    """Index of the intended option."""

    def observation(self) -> str:
        """The puzzle laid out as the BrainTeaser env shows puzzles."""
        options = "\n".join(f"{LETTERS[n]}. {text}" for n, text in enumerate(self.choices))
        return f"QUESTION: {self.question}\nCHOICES:\n{options}"

    def reply(self, reasoning: Reasoning) -> str:
        """The model reply the example demonstrates."""
        answer = f"Answer: {LETTERS[self.answer]}"
        return f"{self.reasoning}\n{answer}" if reasoning == "cot" else answer


BRAINTEASER_EXAMPLES: tuple[WorkedExample, ...] = (
    WorkedExample(
        question=(
            "Ines kept a candle burning on her windowsill every night for a whole month, yet at the end "
            "it was exactly as tall as on the day she bought it. How?"
        ),
        choices=(
            "She bought an unusually tall candle.",
            "It was a battery-powered candle with a flickering bulb, so nothing burned away.",
            "She lit it for only a second each night.",
            "None of above.",
        ),
        reasoning=(
            "The puzzle invites us to picture a wax candle that melts as it burns. A tall candle or a "
            "brief lighting would still lose some height; a candle that only glows electrically never "
            "gets shorter."
        ),
        answer=1,
    ),
    WorkedExample(
        question="Which four-letter word reads the same backwards and names the middle of the day?",
        choices=("Dawn", "Dusk", "Noon", "None of above."),
        reasoning=(
            "This is about the letters, not the clock. Dawn and dusk are not the middle of the day, and "
            "only N-O-O-N is spelled the same in both directions."
        ),
        answer=2,
    ),
    WorkedExample(
        question="Which of these words contains each of the vowels a, e, i, o and u?",
        choices=("Audio", "Mountain", "Lettuce", "None of above."),
        reasoning=(
            "Check the letters one by one: audio has no e, mountain has no e, lettuce has no a, i or o. "
            "No listed word has all five, so the last option is the one that holds."
        ),
        answer=3,
    ),
)
"""Original worked puzzles for few-shot BrainTeaser prompts (sentence, word, and a none-of-above case)."""


class PromptPlan(BaseModel):
    """Which protocol a player follows in an episode, decided from ``info`` at its start."""

    model_config = ConfigDict(frozen=True)

    benchmark: str | None
    """``creativity``, ``brainteaser``, ``splat`` (``None``: unknown; a generic prompt is used)."""
    mode: str | None
    """The config's mode: ``static``, ``cot``, ``interactive``, ``mcq``, ``multiturn``."""
    reasoning: Reasoning
    """``cot`` asks for reasoning before the answer; ``direct`` asks for the answer alone."""
    few_shot: bool
    """Whether worked examples precede the puzzle (BrainTeaser only)."""


def prompt_plan(info: dict[str, Any], *, reasoning: Reasoning | None = None, few_shot: bool = False) -> PromptPlan:
    """The protocol for an episode: ``reasoning=None`` follows the config (``cot`` mode -> ``cot``)."""
    benchmark = info.get("benchmark")
    mode = info.get("mode")
    chosen: Reasoning = reasoning if reasoning is not None else ("cot" if mode == "cot" else "direct")
    return PromptPlan(
        benchmark=benchmark, mode=mode, reasoning=chosen, few_shot=few_shot and benchmark == "brainteaser"
    )


def system_prompt(plan: PromptPlan) -> str:
    """The built-in system prompt for a protocol."""
    cot = plan.reasoning == "cot"
    if plan.benchmark == "creativity":
        if plan.mode == "interactive":
            body = _CREATIVITY_INTERACTIVE + (_CREATIVITY_INTERACTIVE_COT if cot else "")
        else:
            body = _CREATIVITY_STATIC + (_CREATIVITY_COT_FORMAT if cot else _CREATIVITY_DIRECT_FORMAT)
    elif plan.benchmark == "brainteaser":
        body = _BRAINTEASER + (_BRAINTEASER_COT_FORMAT if cot else _BRAINTEASER_DIRECT_FORMAT)
    elif plan.benchmark == "splat":
        body = _SPLAT + (_SPLAT_COT_FORMAT if cot else _SPLAT_DIRECT_FORMAT)
    else:
        return _GENERIC
    return f"{body}{_ENV_FORMS_ACCEPTED}"


def conversation_start(plan: PromptPlan, observation_text: str, system: str | None = None) -> list[dict[str, str]]:
    """The opening messages: the system prompt, any worked examples, then the first observation.

    Args:
        plan: The protocol.
        observation_text: The env's first observation text (the brief).
        system: A system prompt replacing the built-in one.
    """
    messages = [{"role": "system", "content": system if system is not None else system_prompt(plan)}]
    if plan.few_shot:
        for example in BRAINTEASER_EXAMPLES:
            messages.append({"role": "user", "content": example.observation()})
            messages.append({"role": "assistant", "content": example.reply(plan.reasoning)})
    messages.append({"role": "user", "content": observation_text})
    return messages
