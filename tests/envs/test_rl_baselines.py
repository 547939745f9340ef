"""The honest baselines of RL numbers and the text policy's input (numpy only; the PPO runs need the rl extra).

* ``best_rule`` chooses its feature on the train tasks only and plays it on the test tasks; a rule
  inspects everything it may, then commits the argmax of its feature.
* ``seed_interval`` is the mean over seeds with a Student-t 95 % interval.
* ``TextCreativity`` keeps ``DiscreteCreativity``'s actions and masks, builds its rows from the text
  the player reads (no overlap score), and shows the same rows for two tasks that differ only in
  what is hidden.
* ``best_text_rule`` does the same over the text rows' cosines (the text policy's untrained start);
  a text rule's score of a commit is the encoder's cosine of the task and that part's text.
* ``bench_rl_training.py`` ends with one JSON line of the documented shape (a tiny run, rl extra).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lateralgym.envs import EpisodeConfig, load_sample_items, write_jsonl
from lateralgym.envs.benchmarks.creativity import CreativityEnv
from lateralgym.envs.benchmarks.creativity.rl.baselines import (
    COMMIT_FEATURES,
    TEXT_SCORES,
    best_rule,
    best_text_rule,
    rule_policy,
    seed_interval,
    text_rule_policy,
)
from lateralgym.envs.benchmarks.creativity.rl.evaluation import evaluate_policy, split_tasks, training_config
from lateralgym.envs.benchmarks.creativity.rl.text import TEXT_FLAGS, TextCreativity, make_encoder
from lateralgym.envs.benchmarks.creativity.rl.wrappers import DiscreteCreativity

TASKS = load_sample_items("creativity")
CONFIG = training_config(EpisodeConfig.named("creativity-interactive"))
HAVE_RL = importlib.util.find_spec("sb3_contrib") is not None and importlib.util.find_spec("torch") is not None
ROOT = Path(__file__).resolve().parents[2]


def test_a_rule_inspects_everything_then_commits_its_features_argmax() -> None:
    task = split_tasks(TASKS, "test")[0]
    env = DiscreteCreativity(CreativityEnv(CONFIG, items=[task]))
    obs, _ = env.reset(seed=0)
    act = rule_policy("state_overlap", max_entities=env.E, max_parts=env.P)
    rng = np.random.default_rng(0)
    kinds = []
    done = False
    while not done:
        action = act(obs, env.action_masks(), rng)
        kinds.append("inspect" if action < env.E else "commit")
        obs, _, terminated, truncated, info = env.step(action)
        done = terminated or truncated
    assert kinds[-1] == "commit" and kinds.count("commit") == 1
    assert info["outcome"]["gold_inspected"] and kinds.count("inspect") == len(task.entities)
    with pytest.raises(ValueError, match="unknown feature"):
        rule_policy("nope", max_entities=16, max_parts=8)


def test_best_rule_chooses_on_train_and_reports_on_test() -> None:
    train, test = split_tasks(TASKS, "train")[:40], split_tasks(TASKS, "test")[:20]
    found = best_rule(CONFIG, train, test, max_entities=16, max_parts=8, repeats=1)
    assert set(found.train_gold_rates) == set(COMMIT_FEATURES)
    assert found.train_gold_rates[found.feature] == max(found.train_gold_rates.values())
    assert found.test.item_ids == [t.id for t in test]  # scored on the test tasks only
    again = evaluate_policy(rule_policy(found.feature, max_entities=16, max_parts=8), CONFIG, test, name="again")
    assert again.gold_correct_rate == found.test.gold_correct_rate


def test_seed_interval() -> None:
    stats = seed_interval([10.0, 12.0, 14.0, 16.0, 18.0])
    assert stats.mean == 14.0 and stats.per_seed == [10.0, 12.0, 14.0, 16.0, 18.0]
    # t(0.975, 4) = 2.776; sd = 3.162; half-width = 2.776 * 3.162 / sqrt(5) = 3.93
    assert stats.low == pytest.approx(14.0 - 3.926, abs=1e-3) and stats.high == pytest.approx(14.0 + 3.926, abs=1e-3)
    assert seed_interval([100.0, 92.0, 100.0], bounds=(0.0, 100.0)).high == 100.0  # a rate stays a rate
    one = seed_interval([7.5])
    assert (one.low, one.high) == (7.5, 7.5)
    with pytest.raises(ValueError):
        seed_interval([])


def _text_env(tasks: list) -> TextCreativity:  # type: ignore[type-arg]
    return TextCreativity(CreativityEnv(CONFIG, items=tasks), make_encoder("lexical", dim=16))


def test_the_text_wrapper_keeps_actions_and_masks_and_reads_only_the_text() -> None:
    task = split_tasks(TASKS, "test")[3]
    text, plain = _text_env([task]), DiscreteCreativity(CreativityEnv(CONFIG, items=[task]))
    obs, _ = text.reset(seed=1)
    plain.reset(seed=1)
    assert text.observation_space.contains(obs) and obs.shape == text.observation_space.shape
    assert text.action_space == plain.action_space
    width = text.row_width
    assert width == 2 * 16 + len(TEXT_FLAGS) + text.P
    for action in [0, 1, text.E, text.E + 1]:  # inspect, inspect, then commits
        assert (text.action_masks() == plain.action_masks()).all()
        obs, _, terminated, _, _ = text.step(action)
        plain.step(action)
        assert text.observation_space.contains(obs)
        if terminated:
            break
    rows = obs[text.scene_size :].reshape(text.n_actions, width)
    assert np.abs(rows[:, : 2 * 16]).max() > 0  # the text reached the rows


def test_the_text_rows_do_not_change_with_what_is_hidden() -> None:
    """Two copies of a task whose gold part differs look the same to the policy until it commits."""
    task = split_tasks(TASKS, "test")[5]
    entity = task.entity(task.gold.entity)
    assert entity is not None
    other = next(p.name for p in entity.parts if p.name != task.gold.part)
    twin = task.model_copy(update={"gold": task.gold.model_copy(update={"part": other})})
    first, second = _text_env([task]), _text_env([twin])
    a, _ = first.reset(seed=2)
    b, _ = second.reset(seed=2)
    assert (a == b).all()
    for _ in range(3):
        a, *_ = first.step(0 if first.action_masks()[0] else int(np.flatnonzero(first.action_masks())[0]))
        b, *_ = second.step(0 if second.action_masks()[0] else int(np.flatnonzero(second.action_masks())[0]))
        assert (a == b).all()


def test_a_text_rule_commits_what_the_encoder_finds_closest_to_the_task() -> None:
    """After inspecting everything, the part_cosine rule commits the revealed part whose text's vector
    is closest to the task's: the sum of a commit row's ``t * a`` columns is that cosine."""
    task = split_tasks(TASKS, "train")[4]
    env = _text_env([task])
    obs, info = env.reset(seed=3)
    act = text_rule_policy("part_cosine", env)
    rng = np.random.default_rng(0)
    while True:
        mask = env.action_masks()
        action = act(obs, mask, rng)
        if action >= env.E:
            break
        obs, _, _, _, info = env.step(action)
    assert not env.action_masks()[: env.E].any()  # every entity inspected before the commit
    public, encoder = info["public"], env.encoder
    cosines = {}
    for slot, name in enumerate(public["entities"]):
        for j, (part, text) in enumerate(env.parts(name)):
            vectors = encoder.encode([public["task"], f"{part.replace('_', ' ')}: {text}"])
            cosines[env.E + slot * env.P + j] = float(vectors[0] @ vectors[1])
            row = obs[env.scene_size :].reshape(env.n_actions, env.row_width)[env.E + slot * env.P + j]
            assert float(row[: encoder.dim].sum()) == pytest.approx(cosines[env.E + slot * env.P + j], abs=1e-5)
    assert cosines[action] == pytest.approx(max(cosines.values()), abs=1e-6)
    with pytest.raises(ValueError, match="part_cosine"):
        text_rule_policy("overlap", env)


def test_the_best_text_rule_is_chosen_on_train_and_played_on_test() -> None:
    train, test = split_tasks(TASKS, "train")[:12], split_tasks(TASKS, "test")[:6]
    encoder = make_encoder("lexical", dim=16)
    chosen = best_text_rule(CONFIG, train, test, wrap=lambda env: TextCreativity(env, encoder), repeats=1)
    assert set(chosen.train_gold_rates) == set(TEXT_SCORES)
    assert chosen.train_gold_rates[chosen.feature] == max(chosen.train_gold_rates.values())
    assert chosen.test.item_ids == [t.id for t in test] and chosen.test.policy == f"text_rule:{chosen.feature}"


@pytest.mark.skipif(not HAVE_RL, reason="the rl extra is not installed (pip install -e '.[rl]')")
def test_the_benchmark_ends_with_one_json_line(tmp_path: Path) -> None:
    data = write_jsonl([*split_tasks(TASKS, "train")[:24], *split_tasks(TASKS, "test")[:10]], tmp_path / "tasks.jsonl")
    command = [sys.executable, str(ROOT / "benchmarks" / "bench_rl_training.py"), "--data", str(data)]
    command += ["--seeds", "0,1", "--timesteps", "64", "--eval-every", "64", "--envs", "2", "--policy", "both"]
    command += ["--encoder", "lexical", "--affordance-head", "--out", str(tmp_path / "runs")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["split"] == {"train": 24, "test": 10}
    names = {"ppo_features", "ppo_text", "random", "heuristic", "best_rule", "text_rule"}
    names |= {"ppo_features_untrained", "ppo_text_untrained"}
    for metric in ("test_gold", "test_entity", "test_gold_inspection"):
        assert set(report[metric]) == names
        for stats in report[metric].values():
            assert len(stats["per_seed"]) == 2 and stats["low"] <= stats["mean"] <= stats["high"]
            assert all(0.0 <= v <= 100.0 for v in stats["per_seed"])
    assert len(report["best_rule_features"]) == 2
    assert report["settings"]["affordance_head"] is True and len(report["text_rule_scores"]) == 2


def test_the_ceiling_benchmark_fits_on_train_and_ends_with_one_json_line(tmp_path: Path) -> None:
    """``bench_rl_ceiling.py`` (numpy and scipy only): per input kind the rule's and the supervised
    scorer's gold rates on train and test, over the seeds, with lambda chosen per seed by cross-validation
    (its curve reported), and on test intervals over task texts with the paired difference scorer minus rule."""
    data = write_jsonl([*split_tasks(TASKS, "train")[:16], *split_tasks(TASKS, "test")[:8]], tmp_path / "tasks.jsonl")
    command = [sys.executable, str(ROOT / "benchmarks" / "bench_rl_ceiling.py"), "--data", str(data)]
    command += ["--seeds", "0,1", "--encoder", "lexical"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["split"] == {"train": 16, "test": 8}
    assert set(report["ceiling"]) == {"features", "text"}
    head = subprocess.run([*command, "--inputs", "head"], capture_output=True, text=True, timeout=600)
    assert head.returncode == 0, head.stderr[-3000:]
    with_head = json.loads(head.stdout.strip().splitlines()[-1])["ceiling"]
    assert set(with_head) == {"head"} and with_head["head"]["rule"] == "cosines_plus_fit"
    assert "validation rule" in head.stdout  # the rates lambda was chosen from are printed
    assert report["folds"] == 3  # 5 asked, but the 16 train tasks have 3 gold entities: one fold each
    for figures in [*report["ceiling"].values(), with_head["head"]]:
        assert len(figures["lambdas"]) == 2
        # per seed, each lambda's validation rate on every fold; the chosen lambda has the best mean
        assert len(figures["cv_curves"]) == 2 and all(
            len(curve) == len(report["lambda_grid"]) for curve in figures["cv_curves"]
        )
        for curve, chosen in zip(figures["cv_curves"], figures["lambdas"], strict=True):
            assert all(len(rates) == 3 for rates in curve.values())
            assert sum(curve[f"{chosen:g}"]) >= max(sum(rates) for rates in curve.values()) - 1e-9
        for name in ("rule_test", "fit_test"):  # over test texts, seeds pooled
            assert 0.0 <= figures["by_text"][name]["low"] <= figures["by_text"][name]["high"] <= 100.0
        difference = figures["fit_minus_rule"]
        assert difference["low"] <= difference["mean"] <= difference["high"]
        assert abs(difference["mean"] - (figures["fit_test"]["mean"] - figures["rule_test"]["mean"])) < 1e-6
        for name in ("rule_train", "rule_test", "fit_train", "fit_test"):
            stats = figures[name]
            assert len(stats["per_seed"]) == 2 and 0.0 <= stats["low"] <= stats["mean"] <= stats["high"] <= 100.0
