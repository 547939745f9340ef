"""AR-Bench's own config settings (the ``options:`` block of its configs): SPLAT's, plus the process reward."""

from __future__ import annotations

from lateralgym.envs._process import RewardMode
from lateralgym.envs.benchmarks.splat import SplatOptions

__all__ = ["ARBenchOptions"]


class ARBenchOptions(SplatOptions):
    """SPLAT's protocol, and whether questions earn a process reward."""

    reward: RewardMode = "sparse"
    """``sparse`` (default): only the config's ``rewards``; ``dense``: each question also earns +1/K for
    every key question it asks for the first time (K: the puzzle's key questions, six in the release)
    and -1/(2K) when it nearly repeats an earlier question (``lateralgym.envs.QuestionRewards``). Its steps log
    the reward (``process``), and the run reports each episode's key-question recall."""
