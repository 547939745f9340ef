"""A person as the SPLAT judge (``--judge human``): answers a player's questions and grades its explanations.

The person sees, in the terminal, each puzzle's story *and* its hidden answer (the player never
does: only the label the person gives reaches it, as with any judge), then every question the
player asks, and types ``y`` / ``n`` / ``i`` (yes, no, irrelevant); for an explanation, ``c``
(correct) or ``n`` (not yet). Under SPLAT's ``paper`` protocol any message may solve the puzzle,
so ``c`` is accepted there too. ``help`` repeats the keys, ``show`` the story and answer; ``quit``
or Ctrl-D stops the run cleanly for ``--resume``. Every reply is logged like any judge's (its label
and the typed text as ``judge_raw``), so a person judging a model's play makes agreement labels
for ``lateralgym agreement`` (SPLAT's M and R) by doing it.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from lateralgym.envs._actions import Commit
from lateralgym.envs._errors import PlayerQuit
from lateralgym.envs._judging import QA, JudgeReply
from lateralgym.envs.benchmarks.splat._scene import SituationPuzzle

__all__ = ["HumanJudge"]

_ANSWERS = {"y": "yes", "yes": "yes", "n": "no", "no": "no", "i": "irrelevant", "irrelevant": "irrelevant"}
_VERDICTS = {"c": "correct", "correct": "correct", "n": "not_yet", "not yet": "not_yet", "not_yet": "not_yet"}
_MESSAGE = {**_ANSWERS, "c": "correct", "correct": "correct"}

HELP = """\
You are the judge. Answer each question about the hidden story with
  y  yes          n  no          i  irrelevant (the answer does not matter to the story)
and each explanation with
  c  correct (it covers what really happened)      n  not yet
  show  the story and the hidden answer again       quit  stop here (Ctrl-D too); --resume finishes the run"""


class HumanJudge:
    """A person judging situation puzzles in the terminal (see the module docstring).

    Args:
        stdin: where to read from (default the terminal).
        stdout: where to write to (default the terminal).
    """

    name = "human"
    limits = "a person at the terminal, who sees the story and the hidden answer"
    synchronous = True
    """Its coroutines never suspend (it reads the terminal): ``LateralEnv.step`` drives them in place."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self._shown: object = None  # the item whose story the person saw last

    async def answer(self, item: Any, question: str, history: tuple[QA, ...]) -> JudgeReply:
        """yes / no / irrelevant, as the person types it."""
        self._introduce(item)
        self._write(f"\nThe player asks: {question}\n")
        return self._read("[y/n/i] > ", _ANSWERS)

    async def grade(self, item: Any, commit: Commit, history: tuple[QA, ...]) -> JudgeReply:
        """correct / not_yet, as the person types it."""
        self._introduce(item)
        self._write(f"\nThe player explains: {commit.answer or ''}\n")
        return self._read("[c]orrect or [n]ot yet > ", _VERDICTS)

    async def respond(self, item: Any, message: str) -> JudgeReply:
        """SPLAT's ``paper`` protocol: correct when the message solves the puzzle, else its answer."""
        self._introduce(item)
        self._write(f"\nThe player says: {message}\n")
        return self._read("[y/n/i, or c if it solves the puzzle] > ", _MESSAGE)

    def _introduce(self, item: Any) -> None:
        if item is self._shown:
            return
        self._shown = item
        self._write("\n" + "=" * 70 + "\n" + self._puzzle(item) + "\n" + HELP + "\n")

    @staticmethod
    def _puzzle(item: Any) -> str:
        if not isinstance(item, SituationPuzzle):
            return f"(an item of another benchmark: {type(item).__name__})"
        clues = "".join(f"\n  - {clue}" for clue in item.clues)
        return (
            f"PUZZLE {item.id}: {item.title}\nSTORY (the player sees this): {item.story}\n"
            f"HIDDEN ANSWER (only you see this): {item.answer}" + (f"\nKEY POINTS:{clues}" if clues else "")
        )

    def _read(self, prompt: str, labels: dict[str, str]) -> JudgeReply:
        while True:
            self._write(prompt)
            line = self.stdin.readline()
            if not line:
                raise PlayerQuit("the judge closed the input (Ctrl-D)")
            typed = " ".join(line.strip().lower().split())
            if typed in ("quit", "exit", "q"):
                raise PlayerQuit("the judge quit")
            if typed in ("help", "h", "?"):
                self._write(HELP + "\n")
                continue
            if typed == "show" and self._shown is not None:
                self._write(self._puzzle(self._shown) + "\n")
                continue
            label = labels.get(typed)
            if label is None:
                self._write(f"(type one of: {', '.join(sorted({k for k in labels if len(k) == 1}))}; or help)\n")
                continue
            return JudgeReply.model_validate({"label": label, "raw": f"human: {line.strip()}"})

    def _write(self, text: str) -> None:
        self.stdout.write(text)
        self.stdout.flush()
