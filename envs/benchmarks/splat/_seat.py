"""``JudgeSeat``: any judge (reference, LLM or your own) playing the ``judge`` agent of the SPLAT AEC env."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from lateralgym.envs import Commit, ConfigError, item_key
from lateralgym.envs._engine import drive
from lateralgym.envs._judging import QA, Judge, JudgeReply
from lateralgym.envs._sync import run_sync
from lateralgym.envs.benchmarks.splat import SituationPuzzle


class JudgeSeat:
    """Turns a ``Judge`` into the ``judge`` agent of ``lateralgym.envs.benchmarks.splat.splat_v0``.

    The seat is privileged: it knows the puzzles and reads the move it must answer from the judge's
    ``info["pending"]``. It replies ``yes`` / ``no`` / ``irrelevant`` to a question and
    ``correct`` or ``not yet: <hint>`` to an explanation; the env still normalises the reply and
    leak-checks the hint before the player sees anything.

    Args:
        judge: the judge answering (``ReferenceJudge()``, ``make_judge("openai/...", benchmark="splat")``).
        items: the puzzles the env draws from.
    """

    def __init__(self, judge: Judge, items: Iterable[SituationPuzzle]) -> None:
        self.judge = judge
        self.name = f"seat:{judge.name}"
        self._items = {item_key(p.id): p for p in items}

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        """The judge's reply to the pending move."""
        puzzle = self._items.get(str(info.get("item")))
        if puzzle is None:
            raise ConfigError("the judge seat does not know this puzzle: give it the env's items")
        pending = info.get("pending")
        if not pending:
            return "irrelevant"
        history = tuple(QA(question=q, label=label) for q, label in info.get("history", []))
        if pending["kind"] == "message":  # SPLAT's paper protocol: one reply to the whole message
            respond = getattr(self.judge, "respond", None)
            if respond is not None:
                return self._run(respond(puzzle, pending.get("message") or "")).label
            graded = self._run(self.judge.grade(puzzle, Commit(answer=pending.get("message") or ""), ()))
            if graded.label == "correct":
                return "correct"
            return self._run(self.judge.answer(puzzle, pending.get("message") or "", ())).label
        if pending["kind"] == "ask":
            return self._run(self.judge.answer(puzzle, pending["question"], history)).label
        reply = self._run(self.judge.grade(puzzle, Commit(answer=pending.get("answer") or ""), history))
        if reply.label == "correct":
            return "correct"
        return f"not yet: {reply.hint}" if reply.hint else "not yet"

    def _run(self, coroutine: Any) -> JudgeReply:
        reply: JudgeReply = drive(coroutine) if getattr(self.judge, "synchronous", False) else run_sync(coroutine)
        return reply
