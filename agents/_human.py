"""A person playing in the terminal: reads observations, types actions."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from lateralgym.agents._base import Agent
from lateralgym.envs import Action, parse_action


class HumanAgent(Agent):
    """Prints each observation and reads one action line (``inspect: ...``, ``ask: ...``, ``commit: ...``).

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
        self.stdout.write(f"\n{observation['text']}\n> ")
        self.stdout.flush()
        line = self.stdin.readline()
        if not line:
            raise EOFError("no more input: the human player closed the terminal")
        return parse_action(line.strip())
