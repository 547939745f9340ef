"""A person playing in the terminal: reads observations, types moves the way people write them.

Besides the game's own command forms (its ``action_forms``: ``ask: ...``, ``commit: ...``) a person
may write what the benchmark's own reader understands (a bare letter for a multiple-choice answer, a
bare question ending in ``?`` for a situation puzzle, ``Answer: ...`` for an explanation). ``help``
lists the game's forms and the lines of its action grammar (``Answer: A|B|C|D``), never a move the game
lacks. ``help``, ``hint``, an unreadable line and a move the game does not have (``inspect:`` in a game
without inspections) cost no turn; ``quit`` (or Ctrl-D) stops the run cleanly, leaving the episode to
``--resume``. After each episode the person sees the verdict and the reference
solution (never shown to any model).

After ``lateralgym run --resume`` the episode left under way goes on at the turn after the last one
played: the person is shown the puzzle and the moves and replies so far again (``show_played``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, ClassVar, TextIO

from lateralgym.agents._players import Agent, PlayedTurn
from lateralgym.envs import (
    Action,
    ConfigError,
    FreeText,
    Invalid,
    LineForm,
    OneOf,
    PlayerQuit,
    get_benchmark,
    parse_action,
)

HELP = """\
How to play:
  {forms}
  help  this text (costs no turn)      hint  what you know so far (costs no turn)
  quit  stop here (Ctrl-D too); finish later with 'lateralgym run --resume RUN_DIR'"""

_ENV_FORMS = {"inspect": "inspect: <entity>", "ask": "ask: <question>", "commit": "commit: <answer>"}
"""The engine's forms, for a benchmark that cannot be looked up."""


class HumanAgent(Agent):
    """Prints each observation and reads one move a line (see the module docstring).

    Args:
        stdin: where to read from (default the terminal).
        stdout: where to write to (default the terminal).
    """

    name = "human"
    resumes_mid_episode: ClassVar[bool] = True

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        super().__init__()
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> Action:
        self._write(f"\n{observation['text']}\n")
        while True:
            self._write(f"[turn {int(info.get('turn', 0)) + 1}] > ")
            line = self.stdin.readline()
            if not line:
                raise PlayerQuit("the player closed the input (Ctrl-D)")
            text = line.strip()
            word = text.lower()
            if not text:
                continue
            if word in ("quit", "exit", "q"):
                raise PlayerQuit("the player quit")
            if word in ("help", "h"):
                self._write(self._help(info) + "\n")
                continue
            if word == "hint":
                self._write(self._known(info) + "\n")
                continue
            action = self._read(text, info)
            if isinstance(action, Invalid):
                self._write(f"(not a move: {action.reason}; type 'help' — this cost no turn)\n")
                continue
            return action

    def show_played(self, opening: str, turns: Sequence[PlayedTurn]) -> None:
        """The screen as the person left it: the puzzle, then each move and reply (the last reply is
        shown by the next ``act``, as during play)."""
        self._write(f"(resumed: the {len(turns)} turn{'s' if len(turns) != 1 else ''} you played before)\n")
        shown = [opening, *(t.reply for t in turns)]
        for turn, text in zip(turns, shown, strict=False):
            self._write(f"\n{text}\n[turn {turn.turn}] > {move_text(turn.action)}\n")

    def episode_over(self, message: str, outcome: dict[str, Any], solution: str) -> None:
        verdict = "solved" if outcome.get("solved") or outcome.get("correct") or outcome.get("gold_correct") else ""
        self._write(f"\n{message}\n" + (f"Result: {verdict}.\n" if verdict else "") + f"{solution}\n")

    def _read(self, text: str, info: dict[str, Any]) -> Action:
        action = parse_action(text)
        forms = _game_forms(info)
        if not isinstance(action, Invalid):
            if action.kind not in forms:  # a move of the engine's the game does not have
                return Invalid(raw=text, reason=f"this game has no {action.kind!r} move; write {_either(forms)}")
            return action
        try:
            benchmark = get_benchmark(str(info.get("benchmark")))
        except ConfigError:
            return action
        read = benchmark.prompts.parse_reply(text, info, None)
        if isinstance(read, Invalid) and read.reason == action.reason:  # the engine's reason lists every form
            return Invalid(raw=text, reason=f"write {_either(forms)}")
        return read

    def _help(self, info: dict[str, Any]) -> str:
        lines = list(_game_forms(info).values())
        written = _grammar_lines(info)
        if written:
            lines.append("or as the prompt asks: " + "   ".join(written))
        return HELP.format(forms="\n  ".join(lines))

    def _known(self, info: dict[str, Any]) -> str:
        public = info.get("public") or {}
        history = public.get("history") or []
        if history:
            return "So far:\n" + "\n".join(f"  {q} -> {label}" for q, label in history)
        revealed = public.get("revealed") or {}
        if revealed:
            return "Inspected so far: " + ", ".join(revealed)
        forms = _game_forms(info)
        done = [word for kind, word in (("ask", "asked"), ("inspect", "inspected")) if kind in forms]
        if not done:
            return "Nothing to recall: this game has no questions or inspections; its puzzle is above."
        return f"Nothing {' or '.join(done)} yet; the judge gives no hints beyond its answers."

    def _write(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()


def _game_forms(info: dict[str, Any]) -> dict[str, str]:
    """The moves the episode's game has, kind -> how to write it (its ``action_forms``)."""
    try:
        return dict(get_benchmark(str(info.get("benchmark"))).action_forms)
    except ConfigError:
        return dict(_ENV_FORMS)


def _either(forms: dict[str, str]) -> str:
    return " or ".join(f"'{form}'" for form in forms.values())


def _grammar_lines(info: dict[str, Any]) -> list[str]:
    """The one-line replies of the game's action grammar now (``Answer: A|B|C|D``, ``Question: <...?>``);
    none when it states no grammar or only JSON forms."""
    try:
        grammar = get_benchmark(str(info.get("benchmark"))).prompts.action_grammar(info, None)
    except ConfigError:
        return []
    if grammar is None:
        return []
    return [form.label + _placeholder(form.value) for form in grammar.forms if isinstance(form, LineForm)]


def _placeholder(value: OneOf | FreeText) -> str:
    if isinstance(value, OneOf):
        return "|".join(value.options) if len(value.options) <= 8 else f"<one of {len(value.options)} names>"
    return "<a question ending in ?>" if value.end == "?" else "<text>"


def move_text(action: dict[str, Any]) -> str:
    """A logged move as a person writes it (``ask: ...``, ``commit: entity | part | how``, a letter)."""
    kind = action.get("kind")
    if kind == "inspect":
        return f"inspect: {action.get('entity', '')}"
    if kind == "ask":
        return f"ask: {action.get('question', '')}"
    if kind == "commit":
        if action.get("answer"):
            return f"commit: {action['answer']}"
        if isinstance(action.get("choice"), int):
            return "ABCDEFGH"[action["choice"]] if 0 <= action["choice"] < 8 else str(action["choice"])
        pieces = [str(action[k]) for k in ("entity", "part", "how_to_use") if action.get(k)]
        pieces += [f"{name}={value}" for name, value in (action.get("fields") or {}).items()]
        return "commit: " + " | ".join(pieces)
    return str(action.get("raw", action))
