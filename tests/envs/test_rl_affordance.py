"""The text policy's affordance head (``rl/affordance.py``): fitted on the train split only, read from
what the player sees, saved without code, and where a text policy with it starts."""

from __future__ import annotations

import functools
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from lateralgym.envs import EpisodeConfig, load_sample_items, write_jsonl
from lateralgym.envs._matching import snake
from lateralgym.envs.benchmarks.creativity import CreativityEnv
from lateralgym.envs.benchmarks.creativity._schema import Affordance, Entity
from lateralgym.envs.benchmarks.creativity.rl.affordance import (
    FOLDS,
    AffordanceHead,
    affordance_text,
    entity_fold,
    fit_affordance_head,
    part_text,
    text_fold,
)
from lateralgym.envs.benchmarks.creativity.rl.baselines import (
    AFFORDANCE_SCORES,
    TEXT_SCORES,
    best_text_rule,
    text_rule_policy,
    text_scores,
)
from lateralgym.envs.benchmarks.creativity.rl.evaluation import evaluate_policy, split_tasks, training_config
from lateralgym.envs.benchmarks.creativity.rl.text import TEXT_FLAGS, TextCreativity, make_encoder

TASKS = load_sample_items("creativity")
CONFIG = training_config(EpisodeConfig.named("creativity-interactive"))
TRAIN, TEST = split_tasks(TASKS, "train")[:40], split_tasks(TASKS, "test")[:12]
ENCODER = make_encoder("lexical", dim=32)
ROOT = Path(__file__).resolve().parents[2]
needs_rl = pytest.mark.skipif(
    importlib.util.find_spec("sb3_contrib") is None or importlib.util.find_spec("torch") is None,
    reason="the rl extra is not installed (pip install -e '.[rl]')",
)


class Recording:
    """An encoder that remembers every text it is asked for (around the lexical one)."""

    def __init__(self) -> None:
        self.name, self.dim = ENCODER.name, ENCODER.dim
        self.seen: list[str] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.seen.extend(texts)
        return ENCODER.encode(texts)


@pytest.fixture(scope="module")
def head() -> AffordanceHead:
    return fit_affordance_head(TRAIN, TEST, ENCODER)


def test_no_held_out_gold_entity_enters_the_fit() -> None:
    """The fit reads the train tasks and the entities they show, minus every entity (any variant)
    named as a held-out task's gold: a category only a held-out gold offers never becomes a column."""
    held = {snake(t.gold.entity) for t in TEST}
    recording = Recording()
    marked = [
        t.model_copy(
            update={
                "entities": tuple(
                    e
                    if snake(e.name) not in held
                    else e.model_copy(
                        update={
                            "parts": tuple(
                                p.model_copy(
                                    update={
                                        "affordances": tuple(
                                            a.model_copy(update={"category": "held_out_only", "action": "leak marker"})
                                            for a in p.affordances
                                        )
                                    }
                                )
                                for p in e.parts
                            )
                        }
                    )
                    for e in t.entities
                )
            }
        )
        for t in TRAIN
    ]
    assert any(snake(e.name) in held for t in marked for e in t.entities)  # the train tasks do show them
    fitted = fit_affordance_head(marked, TEST, recording)
    assert "held_out_only" not in fitted.categories
    assert not any("leak marker" in text for text in recording.seen)
    assert not any(t.task in recording.seen for t in TEST if t.task not in {x.task for x in TRAIN})
    assert {t.gold.affordance.category for t in TRAIN} <= set(fitted.categories)


def uses(entity: Entity) -> list[Affordance]:
    return [a for p in entity.parts for a in p.affordances]


def kinds(entity: Entity) -> set[str]:
    return {a.category for a in uses(entity)}


def test_no_entity_is_read_by_an_offer_map_that_saw_it() -> None:
    """Cross-fitting: an entity's parts are read by the map fitted without its fold, so taking the
    entity out of the fit altogether leaves what the head reads for it unchanged."""
    entities = {e.name: e for t in TRAIN for e in t.entities}
    golds = {t.gold.entity for t in TRAIN}
    name = next(
        n
        for n, e in entities.items()
        if n not in golds
        and uses(e)
        and all(any(a.category in kinds(o) for o in entities.values() if o is not e) for a in uses(e))
    )
    without = [t.model_copy(update={"entities": tuple(e for e in t.entities if e.name != name)}) for t in TRAIN]
    without = [t for t in without if len(t.entities) >= 2]
    entity = entities[name]
    vectors = ENCODER.encode([part_text(p) for p in entity.parts])
    with_it, without_it = fit_affordance_head(TRAIN, TEST, ENCODER), fit_affordance_head(without, TEST, ENCODER)
    assert with_it.categories == without_it.categories
    owners = [name] * len(entity.parts)
    assert np.allclose(with_it.offer(vectors, owners), without_it.offer(vectors, owners), atol=1e-6)
    # the fit's input did change (the entity is gone from every task), yet what is read for it did not
    assert sum(len(t.entities) for t in without) < sum(len(t.entities) for t in TRAIN)
    assert len({entity_fold(n) for n in entities}) == FOLDS


def test_no_task_text_is_read_by_a_need_map_that_saw_it() -> None:
    """Cross-fitting: a train task's text is read by the need map fitted without its fold, so what
    that task is labelled with cannot change what the head reads for it (the other folds' maps do)."""
    task = TRAIN[7]
    other = next(
        t.gold.affordance.category for t in TRAIN if t.gold.affordance.category != task.gold.affordance.category
    )
    relabelled = task.model_copy(
        update={
            "gold": task.gold.model_copy(
                update={"affordance": task.gold.affordance.model_copy(update={"category": other})}
            )
        }
    )
    tasks = [relabelled if t is task else t for t in TRAIN]
    first, second = fit_affordance_head(TRAIN, TEST, ENCODER), fit_affordance_head(tasks, TEST, ENCODER)
    vector = ENCODER.encode([task.task])
    assert np.allclose(first.need(vector, [task.task]), second.need(vector, [task.task]), atol=1e-6)
    elsewhere = next(t.task for t in TRAIN if text_fold(t.task) != text_fold(task.task))
    assert not np.allclose(first.need(vector, [elsewhere]), second.need(vector, [elsewhere]), atol=1e-6)


def test_the_head_learns_what_the_train_texts_need_and_the_parts_offer(head: AffordanceHead) -> None:
    need = head.need(ENCODER.encode([t.task for t in TRAIN]), [t.task for t in TRAIN])
    assert need.shape == (len(TRAIN), head.size) and np.allclose(need.sum(axis=1), 1.0)
    gold = [head.categories.index(t.gold.affordance.category) for t in TRAIN]
    # read out of fold (no map saw the text it reads), the gold's kind still gets more than its share
    assert float(np.mean(need[np.arange(len(gold)), gold])) > 2 / head.size
    # out of fold, on entities the map never saw, a part's own kinds of use get more than their share
    entities = {e.name: e for t in TRAIN for e in t.entities}
    mass, share = [], []
    for name, entity in entities.items():
        for part in entity.parts:
            own = sorted({head.categories.index(a.category) for a in part.affordances})
            if own:
                mass.append(head.offer(ENCODER.encode([part_text(part)]), [name])[0][own].sum())
                share.append(len(own) / head.size)
    assert float(np.mean(mass)) > 2 * float(np.mean(share))
    first = next(a for e in entities.values() for a in uses(e))
    assert affordance_text(first).startswith(first.action)


def test_a_head_saves_as_arrays_and_loads_the_same(head: AffordanceHead, tmp_path: Path) -> None:
    head.save(tmp_path / "head.npz")
    again = AffordanceHead.load(tmp_path / "head.npz")
    vectors = ENCODER.encode(["a bent wire to reach under the sofa", "spoon bowl: physical - steel"])
    assert again.categories == head.categories and again.encoder == head.encoder
    assert np.allclose(again.need(vectors, ["a", "b"]), head.need(vectors, ["a", "b"]))
    assert np.allclose(again.offer(vectors, ["spoon", "key"]), head.offer(vectors, ["spoon", "key"]))
    np.save(tmp_path / "objects.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    for bad in (tmp_path / "objects.npy", tmp_path / "missing.npz"):
        with pytest.raises(ValueError, match="is not an affordance head") as caught:
            AffordanceHead.load(bad)
        assert "\n" not in str(caught.value)


def test_too_little_to_learn_from_is_one_clear_error() -> None:
    with pytest.raises(ValueError, match="at least two affordance categories"):
        fit_affordance_head([], TEST, ENCODER)


def _play_to_commit(env: TextCreativity) -> tuple[np.ndarray, dict]:  # type: ignore[type-arg]
    obs, info = env.reset(seed=4)
    while env.action_masks()[: env.E].any():
        obs, _, _, _, info = env.step(int(np.flatnonzero(env.action_masks()[: env.E])[0]))
    return obs, info


def test_commit_rows_carry_need_times_offer_of_what_the_player_read(head: AffordanceHead) -> None:
    task = TEST[2]
    recording = Recording()
    env = TextCreativity(CreativityEnv(CONFIG, items=[task]), recording, head=head)  # type: ignore[arg-type]
    assert env.afford_dims == head.size and env.row_width == 2 * 32 + head.size + len(TEXT_FLAGS) + env.P
    obs, info = _play_to_commit(env)
    assert env.observation_space.contains(obs)
    rows = obs[env.scene_size :].reshape(env.n_actions, env.row_width)
    fits = rows[:, 64 : env.text_dims]
    assert not fits[: env.E].any()  # inspect rows have no fit
    need = head.need(ENCODER.encode([info["public"]["task"]]), [info["public"]["task"]])[0]
    for slot, name in enumerate(info["public"]["entities"]):
        entity = task.entity(name)
        assert entity is not None
        for j, (part, text) in enumerate(env.parts(name)):
            shown = f"{part.replace('_', ' ')}: {text}"
            assert shown == part_text(entity.part(part))  # type: ignore[arg-type]  # the head read what the player reads
            offer = head.offer(ENCODER.encode([shown]), [name])[0]
            assert np.allclose(fits[env.E + slot * env.P + j], need * offer, atol=1e-6)
    assert not any(t == task.gold.affordance.action for t in recording.seen)  # nothing hidden was encoded


def test_text_rules_over_the_head_rank_by_its_log_fit(head: AffordanceHead) -> None:
    env = TextCreativity(CreativityEnv(CONFIG, items=[TEST[1]]), ENCODER, head=head)
    plain = TextCreativity(CreativityEnv(CONFIG, items=[TEST[1]]), ENCODER)
    assert text_scores(env) == TEXT_SCORES + AFFORDANCE_SCORES and text_scores(plain) == TEXT_SCORES
    with pytest.raises(ValueError, match="affordance_fit"):
        text_rule_policy("affordance_fit", plain)
    obs, _ = _play_to_commit(env)
    action = text_rule_policy("affordance_fit", env)(obs, env.action_masks(), np.random.default_rng(0))
    rows = obs[env.scene_size :].reshape(env.n_actions, env.row_width)
    fit = rows[:, 64 : env.text_dims].sum(axis=1)
    commits = np.flatnonzero(env.action_masks())
    assert action in commits and fit[action] == pytest.approx(fit[commits].max())
    wrap = functools.partial(TextCreativity, encoder=ENCODER, head=head)
    chosen = best_text_rule(CONFIG, TRAIN[:10], TEST[:4], wrap=wrap, repeats=1)
    assert set(chosen.train_gold_rates) == set(TEXT_SCORES + AFFORDANCE_SCORES)


def test_a_head_must_read_its_own_encoders_vectors(head: AffordanceHead) -> None:
    with pytest.raises(ValueError, match="32-dimensional"):
        TextCreativity(CreativityEnv(CONFIG, items=[TEST[0]]), make_encoder("lexical", dim=16), head=head)


@needs_rl
def test_a_text_policy_with_a_head_starts_at_the_cosines_plus_the_log_fit() -> None:
    """Over rows whose head columns are need x offer, the first logits are ``text_init`` times the
    summed cosines plus ``afford_init`` times the log of the summed fit (0 where a row has none)."""
    import torch

    from lateralgym.envs.benchmarks.creativity.rl.ppo import ActionScorer

    scene, actions, similarity, categories, rest = 3, 6, 8, 5, 4
    rows = torch.randn(2, actions, similarity + categories + rest)
    rows[..., similarity : similarity + categories] = torch.rand(2, actions, categories)
    rows[:, :2, similarity : similarity + categories] = 0.0  # two rows without a fit (inspect rows)
    features = torch.cat([torch.zeros(2, scene), rows.reshape(2, -1)], dim=1)
    scorer = ActionScorer(
        scene,
        actions,
        similarity + categories + rest,
        text_dims=similarity + categories,
        text_init=5.0,
        afford_dims=categories,
        afford_init=0.25,
    )
    torch.nn.init.zeros_(scorer.scorer[-1].weight)
    torch.nn.init.zeros_(scorer.scorer[-1].bias)
    fit = rows[..., similarity : similarity + categories].sum(-1)
    expected = 5.0 * rows[..., :similarity].sum(-1) + torch.where(fit > 0, 0.25 * torch.log(fit.clamp_min(1e-8)), 0.0)
    assert torch.allclose(scorer.forward_actor(features), expected, atol=1e-5)


@needs_rl
def test_maskable_ppo_keeps_the_heads_start_and_train_ppo_saves_the_head(tmp_path: Path) -> None:
    from sb3_contrib import MaskablePPO

    from lateralgym.envs import ConfigError
    from lateralgym.envs.benchmarks.creativity.rl.ppo import (
        AFFORD_INIT,
        ActionScoringPolicy,
        load_policy,
        policy_kwargs,
        train_ppo,
        training_envs,
        wrapper,
    )

    head = fit_affordance_head(TRAIN, TEST, ENCODER)
    envs = training_envs(CONFIG, TRAIN[:4], 1, wrapper("text", ENCODER, head=head))
    model = MaskablePPO(
        ActionScoringPolicy, envs, policy_kwargs=policy_kwargs(envs.envs[0].env), n_steps=8, batch_size=8, device="cpu"
    )
    scorer = model.policy.mlp_extractor
    assert float(scorer.afford_scale.detach()) == pytest.approx(AFFORD_INIT)
    assert bool((scorer.afford_weights == 0).all())
    with pytest.raises(ConfigError, match="--policy text"):
        train_ppo(CONFIG, [*TRAIN, *TEST], timesteps=8, out=tmp_path / "f", affordance_head=True)
    summary = train_ppo(
        CONFIG,
        [*TRAIN, *TEST],
        timesteps=16,
        out=tmp_path / "t",
        eval_every=16,
        eval_repeats=1,
        n_envs=2,
        policy="text",
        encoder="lexical",
        affordance_head=True,
    )
    saved = AffordanceHead.load(tmp_path / "t" / "affordance_head.npz")
    assert summary.affordance_categories == list(saved.categories) and summary.text_rule is not None
    assert summary.text_rule.train_gold_rates.keys() == set(TEXT_SCORES + AFFORDANCE_SCORES)
    # the saved model and head replay the trained policy's evaluation exactly
    replay = wrapper("text", make_encoder("lexical"), head=saved)
    again = evaluate_policy(load_policy(tmp_path / "t" / "model.zip"), CONFIG, TEST, name="trained", wrap=replay)
    assert again.gold_correct_rate == summary.trained.gold_correct_rate and again.item_ids == summary.test_items


def test_the_head_setting_benchmark_chooses_on_train_only_and_ends_with_one_json_line(tmp_path: Path) -> None:
    """``bench_rl_affordance.py``: per (C, weight) and for the cosines alone, the validation gold rate
    over the draws (validation parts of the train tasks), and the best setting chosen."""
    data = write_jsonl([*TRAIN[:30], *TEST[:4]], tmp_path / "tasks.jsonl")
    command = [sys.executable, str(ROOT / "benchmarks" / "bench_rl_affordance.py"), "--data", str(data)]
    command += ["--encoder", "lexical", "--draws", "2", "--c", "16", "--weights", "0.1,0.05"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["split"]["train"] == 30
    settings = {"C=16 weight=0.1", "C=16 weight=0.05"}
    expected = settings | {"cosines", "C=16 flattest offer"}
    assert set(report["validation_gold"]) == expected and report["chosen"] in settings
    for stats in report["validation_gold"].values():
        assert len(stats["per_seed"]) == 2 and 0.0 <= stats["low"] <= stats["mean"] <= stats["high"] <= 100.0
    best = max(v["mean"] for k, v in report["validation_gold"].items() if k in settings)
    assert report["validation_gold"][report["chosen"]]["mean"] == best


@needs_rl
def test_the_cli_asks_for_the_text_policy_when_given_a_head(capsys: pytest.CaptureFixture[str]) -> None:
    import lateralgym.cli

    assert lateralgym.cli.main(["train", "ppo", "--affordance-head", "--timesteps", "8"]) == 2
    error = capsys.readouterr().err.strip()
    assert "--affordance-head" in error and "--policy text" in error and len(error.splitlines()) == 1


def test_tasks_whose_entities_carry_no_affordances_say_what_to_use() -> None:
    """The official release's entities come without affordances: nothing for the offer map to learn."""
    bare = [
        t.model_copy(
            update={
                "entities": tuple(
                    e.model_copy(update={"parts": tuple(p.model_copy(update={"affordances": ()}) for p in e.parts)})
                    for e in t.entities
                )
            }
        )
        for t in TRAIN
    ]
    with pytest.raises(ValueError, match="official release's do not") as caught:
        fit_affordance_head(bare, TEST, ENCODER)
    assert "lateralgym tasks build" in str(caught.value) and "\n" not in str(caught.value)


def test_rows_with_a_head_do_not_change_with_what_is_hidden(head: AffordanceHead) -> None:
    """Two copies of a task whose gold part and use differ look the same to a policy with a head."""
    task = TEST[5]
    entity = task.entity(task.gold.entity)
    assert entity is not None
    other = next(p.name for p in entity.parts if p.name != task.gold.part)
    use = task.gold.affordance.model_copy(update={"category": "hidden_marker", "action": "a hidden use"})
    twin = task.model_copy(update={"gold": task.gold.model_copy(update={"part": other, "affordance": use})})
    first, second = (TextCreativity(CreativityEnv(CONFIG, items=[t]), ENCODER, head=head) for t in (task, twin))
    a, _ = first.reset(seed=2)
    b, _ = second.reset(seed=2)
    assert (a == b).all()
    while first.action_masks()[: first.E].any():
        action = int(np.flatnonzero(first.action_masks()[: first.E])[0])
        a, *_ = first.step(action)
        b, *_ = second.step(action)
        assert (a == b).all()
    assert np.abs(a[first.scene_size :].reshape(first.n_actions, first.row_width)[:, 64 : first.text_dims]).max() > 0
