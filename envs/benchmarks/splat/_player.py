"""The SPLAT player side: the LLM protocol (our own wording of SPLAT §4 / App. A.2) and the offline
policies (random, heuristic, oracle). The reply parser (``_reply.py``) loads when a model's reply is read."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from lateralgym.envs._actions import Action, Ask, Commit
from lateralgym.envs._benchmark import PromptRequest
from lateralgym.envs._matching import content_stems
from lateralgym.envs._parts import PolicyPart, PromptPart
from lateralgym.envs.benchmarks.splat._scene import SituationPuzzle

if TYPE_CHECKING:
    from lateralgym.envs._grammar import ActionGrammar

SYSTEM = """\
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

DIRECT_FORMAT = """\
Reply with a single line, either
Question: <your yes/no question>
or
Answer: <your full explanation>
"""

COT_FORMAT = """\
You may reason briefly first, but end your reply with exactly one line, either
Question: <your yes/no question>
or
Answer: <your full explanation>
"""

REASK = """\
I could not find your move in that reply. Reply with one line only, either
Question: <one yes/no question about the story>
or
Answer: <your full explanation of what happened>
"""
"""The format re-ask after an unparsable reply (weak models often write prose instead of a move)."""

QUESTION_LABEL = "Question: "
ANSWER_LABEL = "Answer: "
"""The labels of the two move lines the prompt asks for (``DIRECT_FORMAT``) and the parser reads first."""
QUESTION_CHARS = 200
EXPLANATION_CHARS = 600
COT_REASONING_CHARS = 480


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


class SplatPolicies(PolicyPart[SituationPuzzle]):
    """The offline players of a situation puzzle."""

    def random_action(self, info: Mapping[str, Any], rng: np.random.Generator) -> Action:
        """Mostly a question about a random story word, sometimes an explanation built on one."""
        story = content_stems(info.get("public", {}).get("story", "")) or {"something"}
        word = str(rng.choice(sorted(story)))
        if rng.random() < 0.8:
            return Ask(question=f"Is the {word} important?")
        return Commit(answer=f"It has to do with the {word}.")

    def heuristic_action(self, info: Mapping[str, Any], rng: np.random.Generator, memory: dict[str, Any]) -> Action:
        """Asks about common lateral-thinking words and story words, then explains with the words the
        judge said yes to (it rarely solves a puzzle: a floor, not a competitor)."""
        public = info.get("public", {})
        asked: list[str] = memory.setdefault("asked", [])
        probes = int(memory.get("probes", 10))
        history = public.get("history", [])
        yes_words = [w for q, label in history if label == "yes" for w in content_stems(q)]
        if len(asked) < probes:
            story = sorted(content_stems(public.get("story", "")))
            candidates = [w for w in (*PROBE_WORDS, *story) if w not in asked]
            if candidates:
                word = candidates[int(rng.integers(len(candidates)))] if len(asked) % 2 else candidates[0]
                asked.append(word)
                return Ask(question=f"Does the answer involve {word}?")
        keep = [w for w in dict.fromkeys(yes_words) if w not in {"answer", "involve"}]
        return Commit(answer="The answer involves " + ", ".join(keep or ["a misunderstanding"]) + ".")

    def oracle_action(self, item: SituationPuzzle, info: Mapping[str, Any]) -> Action:
        """Commit the hidden answer itself."""
        return Commit(answer=item.answer)


class SplatPrompts(PromptPart):
    """SPLAT §5's player protocol in our own words: ``Question:`` or ``Answer:`` lines."""

    # Weak models write prose instead of a move: re-ask once with the format, then read the prose
    # (``fallback_move``); both are counted per call and per run (``format_reasks``, ``fallbacks``).
    player_reasks = 1

    def system_prompt(self, request: PromptRequest) -> str:
        return SYSTEM + (COT_FORMAT if request.reasoning == "cot" else DIRECT_FORMAT)

    def parse_reply(self, text: str, info: Mapping[str, Any], reasoning: str | None) -> Action:
        from lateralgym.envs.benchmarks.splat._reply import parse_situation_reply  # a model's reply

        return parse_situation_reply(text, last_label=reasoning == "cot")

    def reask_text(self, reason: str, request: PromptRequest) -> str:
        return REASK

    def fallback_action(self, text: str, info: Mapping[str, Any]) -> Action | None:
        from lateralgym.envs.benchmarks.splat._reply import fallback_move

        return fallback_move(text)

    def action_grammar(self, info: Mapping[str, Any], reasoning: str | None) -> ActionGrammar | None:
        """``Question: <...?>`` or ``Answer: <explanation>`` on one line (after a line of reasoning under
        ``cot``); on the last round only the explanation, the one move that can still solve the puzzle."""
        from lateralgym.envs._grammar import ActionGrammar, FreeText, LineForm, final_turn  # a model's constraint

        answer = LineForm("commit", ANSWER_LABEL, FreeText(EXPLANATION_CHARS))
        question = LineForm("ask", QUESTION_LABEL, FreeText(QUESTION_CHARS, end="?"))
        forms = (answer,) if final_turn(info) else (question, answer)
        return ActionGrammar(forms, reasoning=COT_REASONING_CHARS if reasoning == "cot" else 0)
