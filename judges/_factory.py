"""Build a judge from the spec string a config names."""

from __future__ import annotations

from collections.abc import Callable

from lateralgym.envs import ConfigError
from lateralgym.envs._judging import Judge
from lateralgym.judges._exact import ExactMatchJudge
from lateralgym.judges._kb import KBJudge
from lateralgym.judges._reference import ReferenceJudge

OFFLINE_JUDGES: dict[str, Callable[[], Judge]] = {
    "exact": ExactMatchJudge,
    "kb": KBJudge,
    "reference": ReferenceJudge,
}
"""Judges that need no model, by spec."""


def make_judge(spec: str) -> Judge:
    """The judge ``spec`` names: ``exact``, ``kb`` or ``reference``.

    Raises:
        ConfigError: the spec names no known judge.
    """
    factory = OFFLINE_JUDGES.get(spec)
    if factory is None:
        raise ConfigError(f"unknown judge {spec!r}; offline judges are: {', '.join(OFFLINE_JUDGES)}")
    return factory()
