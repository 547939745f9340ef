"""A person playing in the terminal: reads observations, types moves the way people write them.

Besides the env's command forms (``inspect: ...``, ``ask: ...``, ``commit: ...``) a person may
write what the benchmark's own reader understands: a bare letter for a multiple-choice answer, a
bare question ending in ``?`` for a situation puzzle, ``Answer: ...`` for an explanation. ``help``,
``hint`` and an unreadable line cost no turn; ``quit`` (or Ctrl-D) stops the run cleanly, leaving
the episode to ``--resume``. After each episode the person sees the verdict and the reference
solution (never shown to any model).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from lateralgym.agents._base import Agent
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
        return benchmark.parse_reply(text, info, None)

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
