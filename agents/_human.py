"""A person playing in the terminal: reads observations, types moves the way people write them.

Besides the env's command forms (``inspect: ...``, ``ask: ...``, ``commit: ...``) a person may
write what the benchmark's own reader understands: a bare letter for a multiple-choice answer, a
bare question ending in ``?`` for a situation puzzle, ``Answer: ...`` for an explanation. ``help``,
``hint`` and an unreadable line cost no turn; ``quit`` (or Ctrl-D) stops the run cleanly, leaving
the episode to ``--resume``. After each episode the person sees the verdict and the reference
solution (never shown to any model).

After ``lateralgym run --resume`` the episode left under way goes on at the turn after the last one
played: the person is shown the puzzle and the moves and replies so far again (``show_played``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, ClassVar, TextIO

from lateralgym.agents._base import Agent, PlayedTurn
from lateralgym.envs import Action, ConfigError, Invalid, PlayerQuit, get_benchmark, parse_action

HELP = """\
How to play:
  {forms}
  You may also write: a letter (multiple choice), a question ending in '?' (situation puzzles),
  'Answer: <your explanation>'.
  help  this text (costs no turn)      hint  what you know so far (costs no turn)
  quit  stop here (Ctrl-D too); finish later with 'lateralgym run --resume RUN_DIR'"""


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
        if not isinstance(action, Invalid):
            return action
        try:
            benchmark = get_benchmark(str(info.get("benchmark")))
        except ConfigError:
            return action
        return benchmark.prompts.parse_reply(text, info, None)

    def _help(self, info: dict[str, Any]) -> str:
        try:
            forms = list(get_benchmark(str(info.get("benchmark"))).action_forms.values())
        except ConfigError:
            forms = ["inspect: <entity>", "ask: <question>", "commit: <answer>"]
        return HELP.format(forms="\n  ".join(forms))

    def _known(self, info: dict[str, Any]) -> str:
        public = info.get("public") or {}
        history = public.get("history") or []
        if history:
            return "So far:\n" + "\n".join(f"  {q} -> {label}" for q, label in history)
        revealed = public.get("revealed") or {}
        if revealed:
            return "Inspected so far: " + ", ".join(revealed)
        return "Nothing asked or inspected yet; the judge gives no hints beyond its answers."

    def _write(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()


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
