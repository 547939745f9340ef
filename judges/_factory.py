"""Build a judge from the spec string a config or the command line names."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from lateralgym.envs import Commit, ConfigError, CreativityTask, Item, SituationPuzzle
from lateralgym.envs._judging import QA, Judge, JudgeReply
from lateralgym.judges._exact import ExactMatchJudge
from lateralgym.judges._kb import KBJudge
from lateralgym.judges._reference import ReferenceJudge

OFFLINE_JUDGES: dict[str, Callable[[], Judge]] = {
    "exact": ExactMatchJudge,
    "kb": KBJudge,
    "reference": ReferenceJudge,
}
"""Judges that need no model, by spec."""


class LLMJudge:
    """One LLM judging every benchmark: SPLAT's protocol for situation puzzles, the rubric and
    failure categories for CreativityBench, exact match for BrainTeaser choices."""

    def __init__(self, client: Any, samples: int = 1, temperature: float | None = None) -> None:
        from lateralgym.judges._llm_creativity import LLMCreativityJudge
        from lateralgym.judges._llm_splat import LLMSplatJudge

        self.name: str = client.spec.name
        self.client = client
        self._splat = LLMSplatJudge(client, samples=samples, temperature=temperature)
        self._creativity = LLMCreativityJudge(client, samples=samples, temperature=temperature)

    def _judge(self, item: Item) -> Judge:
        if isinstance(item, SituationPuzzle):
            return self._splat
        if isinstance(item, CreativityTask):
            return self._creativity
        return ExactMatchJudge()

    def answer(self, item: Item, question: str, history: tuple[QA, ...]) -> JudgeReply:
        return self._judge(item).answer(item, question, history)

    def grade(self, item: Item, commit: Commit, history: tuple[QA, ...]) -> JudgeReply:
        return self._judge(item).grade(item, commit, history)


def make_judge(
    spec: str,
    *,
    base_url: str | None = None,
    cache_dir: str | Path | None = None,
    use_cache: bool = True,
    samples: int = 1,
    temperature: float | None = None,
    **fields: Any,
) -> Judge:
    """The judge ``spec`` names: ``exact``, ``kb``, ``reference``, or an LLM as ``provider/model``.

    Args:
        spec: offline judge name or model string (``openai/gpt-4o-mini``, ``openai/NAME`` with
            ``base_url`` for an OpenAI-compatible server, ``anthropic/...`` through litellm).
        base_url: OpenAI-compatible server for the LLM judge.
        cache_dir: response cache directory (default ``.lateralgym-cache/llm``).
        use_cache: read and write the response cache.
        samples: LLM judge: majority vote over this many samples.
        temperature: LLM judge sampling temperature.
        **fields: other ``ModelSpec`` fields (``timeout``, ``max_retries``, ``seed``, ...).

    Raises:
        ConfigError: the spec names no known judge (``LLMConfigError`` for a bad model setup).
    """
    factory = OFFLINE_JUDGES.get(spec)
    if factory is not None:
        return factory()
    if "/" in spec:
        from lateralgym.agents import LLMClient

        client = LLMClient(spec, base_url=base_url, cache_dir=cache_dir, use_cache=use_cache, **fields)
        return LLMJudge(client, samples=samples, temperature=temperature)
    raise ConfigError(
        f"unknown judge {spec!r}; offline judges are: {', '.join(OFFLINE_JUDGES)}; "
        "or name a model as provider/model (e.g. openai/gpt-4o-mini)"
    )
