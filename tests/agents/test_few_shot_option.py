"""The player's few-shot options: ``few_shot`` (true/false or a count) and ``demos`` (a file)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from official_data import DEMONSTRATION_QUESTIONS, write_brainteaser_demonstrations

from lateralgym.agents._llm_client import LLMConfigError
from lateralgym.agents._llm_player import PLAYER_OPTIONS, LLMPlayer
from lateralgym.agents._llm_spec import ModelSpec
from lateralgym.agents._prompts import conversation_start

BASE = "openai/test-model?base_url=http://127.0.0.1:9/v1"


@pytest.fixture(autouse=True)
def fake_key(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    yield


@pytest.mark.parametrize(
    ("value", "typed"),
    [("true", True), ("1", True), ("false", False), ("0", False), ("2", 2), ("4", 4), ("8", 8)],
)
def test_few_shot_is_a_flag_or_a_count(value: str, typed: bool | int) -> None:
    options = ModelSpec.parse(f"openai/x?few_shot={value}").role_options(PLAYER_OPTIONS, role="player")
    assert options == {"few_shot": typed} and type(options["few_shot"]) is type(typed)


@pytest.mark.parametrize("value", ["maybe", "-2", "2.5", ""])
def test_a_bad_few_shot_value_says_what_is_expected(value: str) -> None:
    with pytest.raises(LLMConfigError, match="expected true/false or a number of worked examples"):
        ModelSpec.parse(f"openai/x?few_shot={value}").role_options(PLAYER_OPTIONS, role="player")


def test_few_shot_4_with_demos_prompts_with_four_official_demonstrations(tmp_path: Path) -> None:
    demos = write_brainteaser_demonstrations(tmp_path)
    player = LLMPlayer.from_spec(f"{BASE}&few_shot=4&demos={demos}", cache_dir=tmp_path / "cache")
    assert (player.few_shot, player.demos) == (4, str(demos))
    info = {"benchmark": "brainteaser", "mode": "mcq", "turn": 0, "item": "k"}
    player.reset({"text": "QUESTION: q"}, info)
    assert player.plan is not None
    request = player.plan.request()
    assert (request.few_shot, request.shots, request.demonstrations) == (True, 4, str(demos))
    messages = conversation_start(player.plan, "QUESTION: q")
    shown = [m["content"] for m in messages if m["role"] == "user"][:-1]
    assert [DEMONSTRATION_QUESTIONS[i] in text for i, text in zip((0, 1, 4, 5), shown, strict=True)] == [True] * 4


def test_demos_without_few_shot_or_without_a_file_is_refused(tmp_path: Path) -> None:
    demos = write_brainteaser_demonstrations(tmp_path)
    with pytest.raises(LLMConfigError, match="demos=PATH needs few_shot"):
        LLMPlayer.from_spec(f"{BASE}&demos={demos}", cache_dir=tmp_path / "cache")
    with pytest.raises(LLMConfigError, match="no file"):
        LLMPlayer.from_spec(f"{BASE}&few_shot=4&demos={tmp_path / 'missing.npy'}", cache_dir=tmp_path / "cache")


def test_few_shot_true_keeps_its_meaning(tmp_path: Path) -> None:
    player = LLMPlayer.from_spec(f"{BASE}&few_shot=true", cache_dir=tmp_path / "cache")
    player.reset({"text": "q"}, {"benchmark": "brainteaser", "mode": "mcq", "turn": 0})
    assert player.plan is not None and player.plan.request().shots is None and player.few_shot is True
