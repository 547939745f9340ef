"""The error family of the data engine: bad checkpoints, a locked build, a missing extra."""

from __future__ import annotations

from lateralgym.envs import LateralGymError


class DataBuildError(LateralGymError):
    """A data build cannot go on: its message is one line that says what to do.

    Work already checkpointed is kept; rerunning the same command resumes from it.
    """
