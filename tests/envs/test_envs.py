"""The Gymnasium envs: conformance, invalid actions, determinism and the no-leak walk."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
import pytest
from _items import PAINT_TASK, PUZZLES, STORY

import lateralgym
from lateralgym.envs import ConfigError, EpisodeConfig, EpisodeOverError, item_key, load_sample_items
from lateralgym.envs.benchmarks.brainteaser import BrainTeaserEnv
from lateralgym.envs.benchmarks.creativity import CreativityEnv, CreativityTask
from lateralgym.envs.benchmarks.splat import SplatEnv
from lateralgym.envs.testing import check_no_leak, check_scene, find_leaks

TINY = {
    "creativity-static": (CreativityEnv, [PAINT_TASK]),
    "creativity-cot": (CreativityEnv, [PAINT_TASK]),
    "creativity-interactive": (CreativityEnv, [PAINT_TASK]),
    "brainteaser": (BrainTeaserEnv, list(PUZZLES)),
    "splat": (SplatEnv, [STORY]),
}


@pytest.mark.parametrize("name", sorted(TINY))
def test_check_scene_on_tiny_items(name: str) -> None:
    env_class, items = TINY[name]
    config = EpisodeConfig.named(name)
    checked = check_scene(lambda: env_class(config, items=items))
    assert checked >= len(items) * 2


def walked_items(benchmark: str) -> list[Any]:
    """The sample items a whole-sample walk visits: all of them, except CreativityBench's 400-odd tasks (a
    walk over each took ~50 s on two shared cores), where it is a deterministic stratified subset: the
    first task by id of every (cluster band, level), (similarity, distractor count), scene and split cell."""
    items = load_sample_items(benchmark)
    if benchmark != "creativity":
        return items
    chosen: dict[str, CreativityTask] = {}
    seen: set[tuple[object, ...]] = set()
    for task in sorted(items, key=lambda t: t.id):
        f = task.factors
        cells = {
            ("band", f.cluster_band, f.gold_level),
            ("tier", f.distractor_similarity, f.distractor_count),
            ("scene", task.scene),
            ("split", task.split),
        }
        if cells - seen:
            chosen[task.id] = task
            seen |= cells
    return list(chosen.values())


@pytest.mark.parametrize("env_id", sorted(lateralgym.ENV_IDS))
def test_registered_envs_pass_conformance_on_all_sample_items(env_id: str) -> None:
    """check_env, determinism, and every sample item (CreativityBench: a stratified subset) walked through
    probing actions without a leak."""
    benchmark = EpisodeConfig.named(lateralgym.ENV_IDS[env_id]).benchmark
    items = walked_items(benchmark)
    env = gymnasium.make(env_id, items=items)
    unwrapped = env.unwrapped
    checked = check_scene(lambda: gymnasium.make(env_id, items=items).unwrapped)
    assert checked > len(unwrapped.items)


def test_explore_invalid_actions_are_answered_and_counted() -> None:
    env = CreativityEnv(EpisodeConfig.named("creativity-explore"), items=[PAINT_TASK])
    env.reset(seed=0)
    cases = {
        "inspect: laptop": "no entity called 'laptop'",
        "hello there": "Invalid action",
        '{"kind": "inspect"}': "entity: Field required",
        "{not json": "invalid JSON",
        "commit: steel soup spoon": "needs an entity and a part",
    }
    for turn, (action, expected) in enumerate(cases.items(), start=1):
        obs, reward, terminated, truncated, info = env.step(action)
        assert expected in obs["text"], (action, obs["text"])
        assert info["valid_action"] is False
        assert obs["turn"] == turn and not terminated and reward == 0.0
    assert env.invalid_actions == 5


def test_static_mode_rejects_inspect_and_ends_the_single_turn() -> None:
    env = CreativityEnv(EpisodeConfig.named("creativity-static"), items=[PAINT_TASK])
    env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step("inspect: steel soup spoon")
    assert "not allowed in this mode" in obs["text"]
    assert terminated and not truncated and reward == 0.0
    assert info["outcome"]["committed"] is False and info["outcome"]["gold_correct"] is False
    with pytest.raises(EpisodeOverError):
        env.step("commit: steel soup spoon | handle | pry")


def test_brainteaser_choice_forms_and_out_of_range() -> None:
    env = BrainTeaserEnv(EpisodeConfig.named("brainteaser"), items=list(PUZZLES))
    for action, correct in [
        ("commit: A", True),
        ("commit: (a)", True),
        ("commit: 0", True),
        ("commit: B", False),
        ("commit: He flew a simulator.", True),
    ]:
        env.reset(options={"item_id": "SP-1"})
        _, reward, terminated, _, info = env.step(action)
        assert terminated and info["outcome"]["correct"] is correct, action
        assert reward == (1.0 if correct else 0.0)
    env.reset(options={"item_id": "SP-1"})
    obs, _, terminated, _, info = env.step({"kind": "commit", "choice": 7})
    assert "Choose one of the options A-D" in obs["text"] and info["valid_action"] is False and terminated


def test_splat_rounds_truncate_at_max_turns() -> None:
    config = EpisodeConfig.named("splat")
    env = SplatEnv(config, items=[STORY])
    env.reset(seed=0)
    labels = []
    for _ in range(config.max_turns):
        obs, reward, terminated, truncated, info = env.step("ask: Was it a film?")
        labels.append(obs["text"].split(".")[0])
    assert truncated and not terminated and config.max_turns == 15
    assert info["outcome"]["solved"] is False and info["outcome"]["turns"] == 15
    assert info["outcome"]["repeated_questions"] == 14
    assert labels[0] == "Yes" and "No turns left" in obs["text"]


def test_splat_solved_by_explanation() -> None:
    env = SplatEnv(EpisodeConfig.named("splat"), items=[STORY])
    env.reset(seed=0)
    obs, _, terminated, _, _ = env.step("commit: a cat did it")
    assert obs["text"].startswith("Not yet.") and not terminated
    obs, reward, terminated, _, info = env.step(
        "commit: It was a silent film shown in a cinema; the violinist was an actor on the screen."
    )
    assert terminated and reward == 1.0 and info["outcome"]["solved"] and info["outcome"]["turns"] == 2


def test_reset_by_item_id_and_errors() -> None:
    env = BrainTeaserEnv(EpisodeConfig.named("brainteaser"), items=list(PUZZLES))
    _, info = env.reset(options={"item_id": "SP-1_CR"})
    assert info["item"] == item_key("SP-1_CR") and env.item_id == "SP-1_CR" and "label" not in str(info)
    with pytest.raises(ConfigError, match="no item with id 'nope'"):
        env.reset(options={"item_id": "nope"})
    with pytest.raises(ConfigError, match="needs MCQPuzzle items"):
        BrainTeaserEnv(EpisodeConfig.named("brainteaser"), items=[STORY])


def test_same_seed_same_item_and_observation() -> None:
    env_a, env_b = gymnasium.make("lateralgym/BrainTeaser-v1"), gymnasium.make("lateralgym/BrainTeaser-v1")
    picked = {env_a.reset(seed=s)[1]["item"] for s in range(20)}
    assert len(picked) > 5  # seeds spread over the items
    for seed in (0, 1, 42):
        assert env_a.reset(seed=seed)[0]["text"] == env_b.reset(seed=seed)[0]["text"]


def test_observations_are_sanitised_into_the_space() -> None:
    odd = STORY.model_copy(update={"story": "A story with emoji \U0001f600 and a \x07 bell."})
    env = SplatEnv(EpisodeConfig.named("splat"), items=[odd])
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    # Unicode end to end: the emoji reaches the player; the bell (a control character) does not.
    assert "\U0001f600" in obs["text"] and "\x07" not in obs["text"] and "?" not in obs["text"].split("STORY")[1][:40]


def test_interactive_masks_track_inspection() -> None:
    env = CreativityEnv(EpisodeConfig.named("creativity-interactive"), items=[PAINT_TASK])
    obs, info = env.reset(seed=0)
    assert obs["entity_mask"].tolist()[:4] == [1, 1, 1, 0] and obs["inspected_mask"].sum() == 0
    assert info["public"]["revealed"] == {}
    slot = info["public"]["entities"].index("steel soup spoon")
    obs, *_, info = env.step("inspect: Steel Soup Spoon")
    assert np.flatnonzero(obs["inspected_mask"]).tolist() == [slot]
    assert set(info["public"]["revealed"]) == {"steel soup spoon"}


def test_entity_order_is_drawn_from_the_seed() -> None:
    """Releases can list the gold first; the scene order must not give it away."""
    env = CreativityEnv(EpisodeConfig.named("creativity-static"), items=[PAINT_TASK])
    orders = {tuple(env.reset(seed=s)[1]["public"]["entities"]) for s in range(12)}
    assert len(orders) > 2
    assert env.reset(seed=5)[1]["public"]["entities"] == env.reset(seed=5)[1]["public"]["entities"]
    fixed = EpisodeConfig.named("creativity-static").with_options(shuffle_entities=False)
    env = CreativityEnv(fixed, items=[PAINT_TASK])
    assert env.reset(seed=3)[1]["public"]["entities"] == [e.name for e in PAINT_TASK.entities]


def test_gold_inspection_bonus_is_paid_at_the_end_not_on_the_inspecting_step() -> None:
    rewards = EpisodeConfig.named("creativity-interactive").rewards.model_copy(update={"gold_inspection": 0.1})
    config = EpisodeConfig.named("creativity-interactive").model_copy(update={"rewards": rewards})
    env = CreativityEnv(config, items=[PAINT_TASK])
    env.reset(seed=0)
    step_rewards = [env.step(f"inspect: {e.name}")[1] for e in PAINT_TASK.entities]
    assert step_rewards == [0.0, 0.0, 0.0]  # nothing marks the gold
    _, reward, terminated, _, _ = env.step("commit: cotton tea towel | cloth_body | pry")
    assert terminated and reward == pytest.approx(0.1)


def test_no_leak_check_catches_a_leaking_scene() -> None:
    """The leak predicate is not vacuous: the hidden texts are found when present."""
    assert find_leaks(f"Here you go: {PAINT_TASK.solution.apply_affordance}", PAINT_TASK)
    assert find_leaks("handle [gold part]: physical", PAINT_TASK)
    assert find_leaks(STORY.answer.upper(), STORY)
    assert not find_leaks(STORY.story, STORY)


def test_no_leak_walk_over_every_sample_item_in_every_mode() -> None:
    for name in ("creativity-static", "creativity-interactive", "brainteaser", "splat"):
        env = lateralgym.make(name, items=walked_items(EpisodeConfig.named(name).benchmark))
        checked = check_no_leak(env)
        assert checked >= len(env.items) * 2, name
    walked = walked_items("creativity")
    assert 18 <= len(walked) <= 45 and len(load_sample_items("creativity")) >= 400


def _assert_task_ids_stay_hidden(path: Path, gold_part: str) -> None:
    from lateralgym.envs.benchmarks.creativity import load_creativitybench

    tasks = load_creativitybench(path)
    assert gold_part in tasks[0].id  # the trap is real
    for task in tasks:
        for name in ("creativity-static", "creativity-interactive"):
            env = CreativityEnv(EpisodeConfig.named(name), items=[task])
            obs, info = env.reset(seed=0)
            assert task.id not in obs["text"] + repr(info) and info["item"] == item_key(task.id)
            assert check_no_leak(env) >= 2


def test_official_creativitybench_ids_never_reach_the_player(official_data: Path) -> None:
    """The release's task ids spell out the gold entity and part: agents get an opaque key instead."""
    _assert_task_ids_stay_hidden(official_data / "creativitybench" / "sample_tasks.json", "magnetic-bit-holder")


def test_real_creativitybench_ids_never_reach_the_player(shared_data: Path) -> None:
    """The same on the real release sample in ../shared/data (skipped without it)."""
    _assert_task_ids_stay_hidden(shared_data / "creativitybench" / "sample_tasks.json", "led-bulbs")
