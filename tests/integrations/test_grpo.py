"""GRPO's plumbing without a model: the reward is the env's through the player's parser, the split and
the held-out figures are right, and bad input gets one line (the training itself: ``--runllm``)."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import pytest

import lateralgym.cli
from lateralgym.envs import EpisodeConfig, load_sample_items, split_items
from lateralgym.integrations import (
    ChatEnv,
    EpisodeFigures,
    GRPOError,
    GRPOSettings,
    episode_figures,
    held_out,
    resolve_model,
)
from lateralgym.integrations.grpo._play import episode_of, step_all
from lateralgym.integrations.grpo._text import EPISODE_KEY, reward_funcs, training_rows
from lateralgym.integrations.grpo._train import split_train_test

LETTERS = "ABCDE"


def test_the_reward_is_the_env_reward_through_the_players_parser() -> None:
    chat = ChatEnv("riddlesense")
    rows = chat.dataset(limit=3)
    items = {r.id: r for r in load_sample_items("riddlesense")}
    logged: list[tuple[str, float]] = []
    (reward,) = reward_funcs(chat, shaping=0.0)
    infos = [row["info"] for row in rows]
    labels = [items[json.loads(i)["item_id"]].label for i in infos]
    right = [[{"role": "assistant", "content": f"Answer: {LETTERS[label]}"}] for label in labels]
    log = lambda name, value: logged.append((name, value))  # noqa: E731 - TRL's log_metric
    assert reward(None, right, infos, log_metric=log) == [1.0, 1.0, 1.0]
    wrong = [[{"role": "assistant", "content": LETTERS[(label + 1) % 5]}] for label in labels]
    assert reward(None, wrong, infos, log_metric=log) == [0.0, 0.0, 0.0]
    garbage = [[{"role": "assistant", "content": "I think it might be something, hard to say"}] for _ in infos]
    assert reward(None, garbage, infos, log_metric=log) == [0.0, 0.0, 0.0]
    rewards = [v for n, v in logged if n == "lateralgym/reward"]
    valid = [v for n, v in logged if n == "lateralgym/valid"]
    assert (rewards, valid) == ([1.0, 0.0, 0.0], [1.0, 1.0, 0.0])  # each step's figures go to TRL's log
    (shaped,) = reward_funcs(chat, shaping=0.1)
    assert shaped(None, wrong, infos) == [0.1, 0.1, 0.1]  # readable but wrong: only the shaping


def test_two_items_with_the_same_prompt_stay_two_episodes() -> None:
    """A rollout finds its episode by the identity its prompt carries, never by the prompt's text."""
    riddle = load_sample_items("riddlesense")[0]
    twins = [riddle, riddle.model_copy(update={"id": "twin-of-" + riddle.id})]
    rows = training_rows(ChatEnv("riddlesense", items=twins))
    assert [r["prompt"][1:] for r in rows][0] == [r["prompt"][1:] for r in rows][1]  # the same text
    names = [json.loads(r["prompt"][0][EPISODE_KEY])["item_id"] for r in rows]
    assert names == [riddle.id, "twin-of-" + riddle.id]


def test_held_out_figures() -> None:
    flags = [{"committed": True}, {"committed": False}, {"committed": True}, {"committed": True}]
    records = [
        EpisodeFigures(reward=r, moves=1, valid_moves=v, questions=0, success=r == 1.0, outcome_flags=f)
        for r, v, f in zip((1.0, 0.0, 0.0, 0.0), (1, 0, 1, 1), flags, strict=True)
    ]
    figures = held_out(records)
    assert (figures.n, figures.reward_mean, figures.valid_rate, figures.success_rate) == (4, 0.25, 0.75, 0.25)
    assert figures.invalid_rate == 0.25 and figures.outcome_rates == {"committed": 0.75}
    low, high = figures.success_interval  # Wilson: 1 of 4
    assert math.isclose(low, 0.0456, abs_tol=1e-3) and math.isclose(high, 0.6994, abs_tol=1e-3)
    with pytest.raises(GRPOError):
        held_out([])


def test_episode_stats_count_questions_and_moves_of_a_multi_turn_episode() -> None:
    import asyncio

    chat = ChatEnv("splat")
    state = chat.start(seed=0)
    for text in ("Was he thirsty?", "Did it happen at night?", "Answer: he had hiccups and the scare cured them"):
        if not state.done:
            asyncio.run(chat.step(state, text))
    stats = episode_figures(chat, state)
    assert stats.moves == len(state.turns) and stats.questions == 2
    assert stats.valid_moves == stats.moves and stats.messages[0]["role"] == "assistant"


def test_a_batch_of_moves_is_played_at_once_each_on_its_own_episode() -> None:
    """``step_all`` (the plain reward's and the multi-turn rollout's step) plays each reply on its own
    state, in one event loop: the same rewards, answers and chats as stepping them one at a time."""
    import asyncio

    chat = ChatEnv("riddlesense")
    rows = chat.dataset(limit=4)
    items = {r.id: r for r in load_sample_items("riddlesense")}
    infos = [row["info"] for row in rows]
    labels = [items[json.loads(i)["item_id"]].label for i in infos]
    texts = [f"Answer: {LETTERS[label]}" if n % 2 == 0 else "no idea" for n, label in enumerate(labels)]
    (reward,) = reward_funcs(chat, shaping=0.0)
    one_by_one = []
    for info, text in zip(infos, texts, strict=True):
        state = chat.start(**episode_of({"info": info}))
        asyncio.run(chat.step(state, text))
        one_by_one.append(chat.reward(state))
    assert reward(None, [[{"role": "assistant", "content": t}] for t in texts], infos) == one_by_one == [1, 0, 1, 0]

    splat = ChatEnv("splat")
    states = [splat.start(seed=0), splat.start(seed=1)]
    answers = step_all(splat, states, ["Was he thirsty?", "Did it happen at night?"])
    assert [s.messages[-2]["content"] for s in states] == ["Was he thirsty?", "Did it happen at night?"]
    assert [a[0]["content"] for a in answers] == [s.messages[-1]["content"] for s in states]
    assert all(len(s.turns) == 1 for s in states)


def test_a_config_without_train_items_is_refused_in_one_line() -> None:
    config = EpisodeConfig.named("riddlesense")
    riddles = [r.model_copy(update={"id": f"only-{n}"}) for n, r in enumerate(load_sample_items("riddlesense"))]
    test_only = split_items(riddles, "test")
    with pytest.raises(GRPOError, match="none of its .* items is in the train split"):
        split_train_test(config, test_only, None)
    train, test = split_train_test(config, riddles, 2)
    assert train and len(test) == 2


def test_models_that_cannot_load_say_so(tmp_path: Path) -> None:
    with pytest.raises(GRPOError, match="unknown local model 'local/nope'"):
        resolve_model("local/nope")
    with pytest.raises(GRPOError, match="no such model folder"):
        resolve_model(str(tmp_path / "missing"))
    folder, cache = resolve_model(str(tmp_path))
    assert folder == tmp_path and cache is None
    with pytest.raises(ValueError):
        GRPOSettings(num_generations=1)


def test_the_command_names_the_extra_and_checks_its_flags(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "trl" else real(name, *a))
    assert lateralgym.cli.main(["train", "grpo", "--config", "riddlesense", "--model", "local/smollm2"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lateralgym: error: GRPO needs") and "pip install 'lateralgym[grpo]'" in err
    assert len(err.strip().splitlines()) == 1


def test_an_allocation_failure_is_one_line_that_names_the_checkpoint(tmp_path: Path) -> None:
    """A real failed allocation (Python's; torch's CPU allocator's when torch is here, a plain
    RuntimeError there) becomes one GRPOError line saying what to lower and where --resume starts."""
    from lateralgym.integrations.grpo._files import memory_guard as _memory_guard
    from lateralgym.integrations.grpo._files import out_of_memory

    with pytest.raises(GRPOError) as caught, _memory_guard(lambda: "step 3", "--num-generations", tmp_path):
        bytearray(1 << 60)  # more than any machine has: malloc fails
    assert str(caught.value) == "out of memory at step 3 (MemoryError): lower --num-generations"
    (tmp_path / "checkpoints" / "checkpoint-2").mkdir(parents=True)
    (tmp_path / "checkpoints" / "checkpoint-10").mkdir()
    with (
        pytest.raises(GRPOError, match=r"checkpoint-10: add --resume to continue$"),
        _memory_guard(lambda: "step 11", "--num-generations", tmp_path),
    ):
        bytearray(1 << 60)
    with pytest.raises(RuntimeError, match="not about memory"), _memory_guard(lambda: "step 1", "x", tmp_path):
        raise RuntimeError("not about memory")  # anything else passes through untouched
    if importlib.util.find_spec("torch") is not None:
        import torch

        with pytest.raises(RuntimeError) as failed:
            torch.empty(1 << 50, dtype=torch.uint8)
        assert out_of_memory(failed.value), str(failed.value)
