"""A judge's replies kept in full as an episode is played, and given back in the same order when a
resumed episode is replayed, so the judge is not asked again for turns it already answered.

``taped(judge)`` wraps a judge: every coroutine method the judge has (``answer``, ``grade``,
``respond``, ``grade_under``, ...) is recorded as a ``LoggedJudgeReply`` (what was asked, as a
digest, and the reply). While ``replaying``, the same calls are answered from the replies loaded
with ``load`` instead; a call that differs from the logged one, or one more than the log holds,
raises ``ReplayMismatch``. The wrapper has exactly the methods of the judge it wraps, so a scene's
checks of what its judge can do (a runtime protocol, ``getattr(judge, "grade_under", None)``)
see the same judge.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
from collections import deque
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from pydantic import BaseModel, ValidationError

from lateralgym.envs import Benchmark, Judge, JudgeReply, LateralGymError
from lateralgym.envs.support import resolved
from lateralgym.episodes._log import LoggedDetail, LoggedJudgeReply

__all__ = ["JudgeTape", "ReplayMismatch", "is_offline_judge", "taped"]


class ReplayMismatch(LateralGymError, ValueError):
    """A resumed episode's log and its env disagree on replay (a changed config, dataset or judge)."""


def is_offline_judge(judge: object, benchmark: Benchmark[Any, Any]) -> bool:
    """Whether ``judge`` is one of the benchmark's offline judges: deterministic and free, so a
    replay asks it again rather than keeping its replies."""
    factory = resolved(benchmark.judging.offline_judges.get(str(getattr(judge, "name", ""))))
    return isinstance(factory, type) and isinstance(judge, factory)


class JudgeTape:
    """The judge it wraps, its replies recorded (see the module docstring); built by ``taped``."""

    def __init__(self, judge: Judge) -> None:
        self.inner = judge
        self.name = judge.name
        self.replaying = False
        """True while a resumed episode's logged turns are replayed: calls are answered from the log."""
        self._recorded: list[LoggedJudgeReply] = []
        self._logged: deque[LoggedJudgeReply] = deque()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # the judge's other attributes (``synchronous``, ``client``, ...)

    def take(self) -> list[LoggedJudgeReply]:
        """The replies recorded since the last ``take`` (one step's), in order."""
        replies, self._recorded = self._recorded, []
        return replies

    def load(self, replies: Sequence[LoggedJudgeReply]) -> None:
        """The logged replies of the step about to be replayed."""
        self._logged = deque(replies)

    def unused(self) -> int:
        """Logged replies of the step replayed that no call asked for."""
        return len(self._logged)

    async def _call(self, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        inputs = _digest(method, args, kwargs)
        if self.replaying:
            if not self._logged:
                raise ReplayMismatch(f"the judge is asked ({method}) where the log holds no reply of it")
            logged = self._logged.popleft()
            if (logged.call, logged.inputs) != (method, inputs):
                raise ReplayMismatch(f"the judge is asked ({method}) something other than the log recorded")
            return _reply(logged)
        reply = await getattr(self.inner, method)(*args, **kwargs)
        if isinstance(reply, JudgeReply):
            self._recorded.append(_logged(method, inputs, reply))
        return reply


_classes: dict[type, type[JudgeTape]] = {}


def taped(judge: Judge) -> JudgeTape:
    """``judge`` wrapped in a ``JudgeTape`` that has the same coroutine methods as it."""
    kind = type(judge)
    cls = _classes.get(kind)
    if cls is None:
        methods = {
            name: _method(name)
            for name, member in inspect.getmembers(kind)
            if not name.startswith("_") and inspect.iscoroutinefunction(member)
        }
        cls = _classes[kind] = type(f"Taped{kind.__name__}", (JudgeTape,), methods)
    return cls(judge)


def _method(name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
    async def call(self: JudgeTape, *args: Any, **kwargs: Any) -> Any:
        return await self._call(name, args, kwargs)

    call.__name__ = name
    return call


def _plain(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def _digest(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """What a judge is asked, all but its first argument (the item, the same by the episode's id)."""
    text = json.dumps([method, _plain(args[1:]), _plain(kwargs)], sort_keys=True, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _logged(method: str, inputs: str, reply: JudgeReply) -> LoggedJudgeReply:
    detail = None
    if reply.detail is not None:
        kind = type(reply.detail)
        detail = LoggedDetail(type=f"{kind.__module__}:{kind.__qualname__}", data=reply.detail.model_dump(mode="json"))
    return LoggedJudgeReply(
        call=method,
        inputs=inputs,
        label=reply.label,
        hint=reply.hint,
        detail=detail,
        rubric=dict(reply.rubric),
        assessment=_plain(reply.assessment),
    )


def _reply(logged: LoggedJudgeReply) -> JudgeReply:
    """The judge's reply as the scene got it (its raw text and calls stay in the logged step)."""
    return JudgeReply(
        label=logged.label,
        hint=logged.hint,
        detail=None if logged.detail is None else _detail(logged.detail),
        rubric=logged.rubric,
        assessment=logged.assessment,
    )


def _detail(logged: LoggedDetail) -> BaseModel:
    """The logged detail as its own model; only a type whose module is already loaded (the judge's
    benchmark) is looked up: a log never makes anything be imported."""
    module, _, qualname = logged.type.partition(":")
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if not (isinstance(found, type) and issubclass(found, BaseModel)):
        raise ReplayMismatch(f"the judge's logged reply detail {logged.type} is not a model this judge gives")
    try:
        return found.model_validate(logged.data)
    except ValidationError as exc:
        raise ReplayMismatch(f"the judge's logged reply detail no longer reads as {logged.type}") from exc
