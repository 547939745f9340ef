"""What a run's judge can and cannot do, in one line, for the places a judge is chosen or reported.

An offline judge states its own limits (a ``limits`` class attribute, e.g. a word-overlap
``reference`` judge); exact-match judges (multiple choice, an entity and part) grade
as the papers do and state none.
"""

from __future__ import annotations

from lateralgym.envs import ConfigError, get_benchmark

__all__ = ["judge_note"]


def judge_note(benchmark: str, judge: str) -> str | None:
    """The limits the judge named ``judge`` states for ``benchmark``; None for model judges and
    judges that state none."""
    try:
        factory = get_benchmark(benchmark).offline_judges.get(judge.partition("?")[0])
    except ConfigError:
        return None
    limits = getattr(factory, "limits", None)
    return str(limits) if limits else None
