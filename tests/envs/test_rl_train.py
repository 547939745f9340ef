"""Classic RL on tool repurposing: the gold-entity split, the action features, evaluation, MaskablePPO end to end."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

import lateralgym.cli
from lateralgym.envs import ConfigError, EpisodeConfig, load_sample_items
from lateralgym.envs._matching import snake
from lateralgym.envs.benchmarks.creativity import CreativityEnv
from lateralgym.envs.benchmarks.creativity.rl.evaluation import (
    evaluate_heuristic,
    evaluate_policy,
    random_policy,
    split_tasks,
    task_split,
    training_config,
)
from lateralgym.envs.benchmarks.creativity.rl.wrappers import ACTION_FEATURES, DiscreteCreativity

HAVE_RL = importlib.util.find_spec("sb3_contrib") is not None and importlib.util.find_spec("torch") is not None
needs_rl = pytest.mark.skipif(not HAVE_RL, reason="the rl extra is not installed (pip install -e '.[rl]')")

TASKS = load_sample_items("creativity")


def golds(tasks: list) -> set[str]:  # type: ignore[type-arg]
    return {snake(t.gold.entity) for t in tasks}


def test_split_is_by_gold_entity_and_covers_every_task() -> None:
    train, test = split_tasks(TASKS, "train"), split_tasks(TASKS, "test")
    assert train and test and len(train) + len(test) == len(TASKS)
    assert not golds(train) & golds(test)  # no gold entity is a gold on both sides
    assert split_tasks(list(reversed(TASKS)), "test") == list(reversed(test))  # stable, order kept
    # a dataset's own split field wins over the hash
    marked = SimpleNamespace(split="test", gold=train[0].gold)
    assert task_split(marked) == "test"  # type: ignore[arg-type]
    # without one, a stable hash of the gold entity's name decides (about a quarter test)
    hashed = {task_split(SimpleNamespace(split=None, gold=t.gold)) for t in TASKS}  # type: ignore[arg-type]
    assert hashed == {"train", "test"}
    again = [task_split(SimpleNamespace(split=None, gold=t.gold)) for t in TASKS]  # type: ignore[arg-type]
    assert again == [task_split(SimpleNamespace(split=None, gold=t.gold)) for t in TASKS]  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="train' or 'test"):
        split_tasks(TASKS, "dev")  # type: ignore[arg-type]


def test_action_block_describes_each_action() -> None:
    config = training_config(EpisodeConfig.named("creativity-interactive"))
    env = DiscreteCreativity(CreativityEnv(config, items=TASKS[:1]))
    obs, info = env.reset(seed=3)
    E, K = env.E, env.K
    col = {name: n for n, name in enumerate(ACTION_FEATURES)}
    assert env.observation_space.contains(obs) and obs.shape == (env.scene_size + env.n_actions * K,)
    rows = obs[env.scene_size :].reshape(env.n_actions, K)
    n = len(info["public"]["entities"])
    assert rows[:n, col["is_inspect"]].all() and not rows[n:E, col["is_inspect"]].any()
    assert sorted(rows[:n, col["name_rank"]])[-1] == 1.0 and not rows[E:, col["part_revealed"]].any()
    for slot in range(n):  # inspect everything: every part is then revealed and scored
        obs, *_ = env.step(slot)
    rows = obs[env.scene_size :].reshape(env.n_actions, K)
    commit = rows[E:]
    revealed = commit[:, col["part_revealed"]] == 1.0
    assert revealed.sum() == sum(len(e.parts) for e in TASKS[0].entities)
    best = np.flatnonzero(commit[:, col["best_overall"]] == 1.0)
    assert best.size >= 1 and np.allclose(
        commit[best, col["part_overlap"]], commit[revealed, col["part_overlap"]].max()
    )
    assert np.all(rows[:, col["inspected_share"]] == 1.0) and np.all(rows[:, col["already_inspected"]][:n] == 1.0)
    assert np.array_equal(revealed, env.action_masks()[E:])  # the mask and the features agree


def test_evaluation_plays_only_the_given_tasks_and_respects_masks() -> None:
    config = training_config(EpisodeConfig.named("creativity-interactive"))
    test = split_tasks(TASKS, "test")
    random = evaluate_policy(random_policy, config, test, name="random", repeats=2, seed=1)
    heuristic = evaluate_heuristic(config, test, seed=1)
    assert random.episodes == 2 * len(test) and heuristic.episodes == len(test)
    assert random.item_ids == heuristic.item_ids == [t.id for t in test]
    assert random.masked_actions == 0 and 0.0 <= random.gold_correct_rate <= random.entity_correct_rate <= 1.0
    assert heuristic.gold_inspection_rate > 0 and heuristic.mean_turns == pytest.approx(4.0)  # 3 inspections + commit
    with pytest.raises(ConfigError, match="no tasks"):
        evaluate_policy(random_policy, config, [], name="random")


def test_train_without_the_extra_says_how_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "sb3_contrib" else real(name, *a))
    assert lateralgym.cli.main(["train", "ppo", "--timesteps", "10"]) == 2
    assert "pip install 'lateralgym[rl]'" in capsys.readouterr().err


@pytest.fixture(scope="module")
def cli_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[subprocess.CompletedProcess[str], Path]:
    if not HAVE_RL:
        pytest.skip("the rl extra is not installed (pip install -e '.[rl]')")
    root = tmp_path_factory.mktemp("ppo")
    data = root / "tasks.jsonl"  # --data: the sample tasks as a LateralGym JSONL file
    data.write_text("".join(t.model_dump_json() + "\n" for t in TASKS), encoding="utf-8")
    out = root / "run"
    command = [sys.executable, "-m", "lateralgym.cli", "train", "ppo", "--config", "creativity-interactive"]
    command += ["--data", str(data), "--timesteps", "256", "--eval-every", "128", "--eval-repeats", "1"]
    command += ["--envs", "4", "--out", str(out)]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=600)
    return proc, out


@needs_rl
def test_cli_trains_and_writes_model_plot_and_summary(
    cli_run: tuple[subprocess.CompletedProcess[str], Path],
) -> None:
    from lateralgym.envs.benchmarks.creativity.rl.ppo import TrainSummary, load_policy

    proc, out = cli_run
    assert proc.returncode == 0, proc.stderr
    assert "Run directory" in proc.stdout and "heuristic" in proc.stdout
    assert (out / "learning_curve.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    summary = TrainSummary.model_validate(json.loads((out / "summary.json").read_text(encoding="utf-8")))
    assert summary.timesteps >= 256 and len(summary.curve) >= 3 and summary.curve[-1].timesteps == summary.timesteps
    # evaluation uses only test tasks, and no test gold entity is a gold entity in training
    by_id = {t.id: t for t in TASKS}
    test, train = [by_id[i] for i in summary.test_items], [by_id[i] for i in summary.train_items]
    assert summary.trained.item_ids == summary.random.item_ids == summary.heuristic.item_ids == summary.test_items
    assert test == split_tasks(TASKS, "test") and not golds(train) & golds(test)
    assert summary.trained.masked_actions == 0  # MaskablePPO never chose a masked action in evaluation
    # seeded and deterministic: on test tasks it never saw, the policy beats random valid actions
    assert summary.trained.gold_correct_rate > summary.random.gold_correct_rate
    # the saved model loads and plays
    config = training_config(EpisodeConfig.named("creativity-interactive"))
    again = evaluate_policy(load_policy(out / "model.zip"), config, test, name="trained", seed=0)
    assert again.gold_correct_rate == summary.trained.gold_correct_rate


@needs_rl
def test_training_envs_hold_only_train_tasks_and_maskable_ppo_respects_masks() -> None:
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks

    from lateralgym.envs.benchmarks.creativity.rl.ppo import ActionScoringPolicy, one_thread, training_envs

    one_thread()
    config = training_config(EpisodeConfig.named("creativity-interactive"))
    train, test = split_tasks(TASKS, "train"), split_tasks(TASKS, "test")
    vec = training_envs(config, train, 3)
    for items in vec.get_attr("items"):
        assert not golds(list(items)) & golds(test)
    model = MaskablePPO(ActionScoringPolicy, vec, n_steps=32, batch_size=32, seed=0, device="cpu")
    obs = vec.reset()
    for _ in range(150):  # sampled (not greedy) actions: every one inside the mask
        masks = get_action_masks(vec)
        assert masks.shape == (3, vec.action_space.n)
        actions, _ = model.predict(obs, action_masks=masks, deterministic=False)
        assert all(masks[i, a] for i, a in enumerate(actions))
        obs, _, _, infos = vec.step(actions)
        assert all(info["valid_action"] for info in infos)


@needs_rl
def test_a_text_policy_starts_from_the_encoders_cosine() -> None:
    """``ActionScorer``'s text layer starts at ``text_init`` on every weight: over rows of products of
    normalised vectors its first logits are ``text_init`` times the summed cosines (0: uniform)."""
    import torch

    from lateralgym.envs.benchmarks.creativity.rl.ppo import ActionScorer

    scene, actions, text_dims, rest = 3, 5, 8, 4
    rows = torch.randn(2, actions, text_dims + rest)
    features = torch.cat([torch.zeros(2, scene), rows.reshape(2, -1)], dim=1)
    for init in (5.0, 0.0):
        scorer = ActionScorer(scene, actions, text_dims + rest, text_dims=text_dims, text_init=init)
        torch.nn.init.zeros_(scorer.scorer[-1].weight)
        torch.nn.init.zeros_(scorer.scorer[-1].bias)  # the structure's MLP says nothing yet
        logits = scorer.forward_actor(features)
        assert torch.allclose(logits, init * rows[..., :text_dims].sum(dim=-1), atol=1e-5)


@needs_rl
def test_maskable_ppo_keeps_the_text_start_through_sb3s_orthogonal_init() -> None:
    """SB3 re-initialises every linear layer of the policy orthogonally when it builds it; the text
    layer must still start where ``text_init`` says (it once silently started random)."""
    from sb3_contrib import MaskablePPO

    from lateralgym.envs.benchmarks.creativity.rl.ppo import ActionScoringPolicy, policy_kwargs, training_envs, wrapper

    config = training_config(EpisodeConfig.named("creativity-interactive"))
    envs = training_envs(config, split_tasks(TASKS, "train")[:4], 1, wrapper("text", "lexical"))
    for init in (0.0, 5.0):
        kwargs = policy_kwargs(envs.envs[0].env, init)
        model = MaskablePPO(ActionScoringPolicy, envs, policy_kwargs=kwargs, n_steps=8, batch_size=8, device="cpu")
        weight = model.policy.mlp_extractor.text.weight
        assert bool((weight == init).all())
