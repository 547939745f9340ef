"""The rules of one MacGyver problem: read it, give one solution (or say it cannot be done)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lateralgym.envs._actions import Ask, Commit, Inspect, explanation
from lateralgym.envs._benchmark import Outcome
from lateralgym.envs._config import EpisodeConfig
from lateralgym.envs._engine import Handled, Scene, usage_text
from lateralgym.envs._judging import Judge
from lateralgym.envs.benchmarks.macgyver._judges import MacGyverJudgement
from lateralgym.envs.benchmarks.macgyver._schema import CORRECT, MacGyverProblem

__all__ = ["MacGyverOutcome", "MacGyverScene", "opening_text"]


class MacGyverOutcome(Outcome):
    """A MacGyver episode's outcome: the verdict on the solution and the problem's kind."""

    verdict: str | None
    """One of ``VERDICTS``; None without a graded answer."""
    claims_unsolvable: bool = False
    feasibility: str | None = None
    efficient: bool | None = None
    solvable: bool
    unconventional: bool | None = None

    def succeeded(self) -> bool:
        return self.verdict in CORRECT

    def badge(self) -> str:
        return (self.verdict or "no answer").replace("_", " ")


def opening_text(problem: MacGyverProblem, config: EpisodeConfig) -> str:
    """The problem and what to reply."""
    return (
        f"PROBLEM: {problem.problem}\n"
        "Solve it with only what the problem says is there: give your solution as numbered steps. If it "
        "cannot be solved with what is there, say that it is not possible, and why.\n"
        f"{usage_text(config)}"
    )


class MacGyverScene(Scene[MacGyverProblem, MacGyverOutcome]):
    """The rules of one MacGyver problem."""

    def __init__(
        self, item: MacGyverProblem, config: EpisodeConfig, judge: Judge | None, rng: np.random.Generator
    ) -> None:
        super().__init__(item, config, judge, rng)
        self.verdict: str | None = None
        self.judgement: MacGyverJudgement | None = None

    def brief(self) -> str:
        return opening_text(self.item, self.config)

    async def handle(self, action: Inspect | Ask | Commit) -> Handled:
        assert isinstance(action, Commit)
        text = explanation(action)
        if not text.strip():
            return Handled(message="Give your solution: commit: <the steps, or why it is not possible>.", valid=False)
        reply = await self.grade(Commit(answer=text))
        self.verdict = reply.label
        self.judgement = reply.detail if isinstance(reply.detail, MacGyverJudgement) else None
        correct = reply.label in CORRECT
        reward = self.config.rewards.correct if correct else 0.0
        return Handled(
            message=f"Solution recorded: {reply.label.replace('_', ' ')}.", reward=reward, terminated=True, judge=reply
        )

    def outcome(self, turns: int, invalid_actions: int) -> MacGyverOutcome:
        judged = self.judgement
        return MacGyverOutcome(
            **self.common(turns, invalid_actions, committed=self.verdict is not None),
            verdict=self.verdict,
            claims_unsolvable=judged.claims_unsolvable if judged else False,
            feasibility=judged.feasibility if judged else None,
            efficient=judged.efficient if judged else None,
            solvable=self.item.solvable,
            unconventional=self.item.unconventional,
        )

    def public(self) -> dict[str, Any]:
        """The problem text."""
        return {"problem": self.item.problem}
