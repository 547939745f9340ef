"""How far the RL policies' inputs can go on held-out tasks: a supervised scorer told the gold answer.

PPO learns from a reward; this asks what the same inputs allow when the answer itself is given. For
each task (train and test split, as ``bench_rl_training.py``) the scene is fully inspected, then every
valid commit action's row is read (``DiscreteCreativity``'s features, or ``TextCreativity``'s text
columns), and a linear scorer shared by every action (softmax over the valid commits, the structure
of ``ppo.ActionScorer``'s logit) is fitted by maximum likelihood of the gold commit on the *train*
tasks, with an L2 penalty of strength ``lambda`` towards the zero-training rule (chosen on a
validation part of the train tasks split by gold entity, never on test), then scored on the test
tasks: the share whose argmax is the gold part.

If this supervised scorer cannot beat a zero-training rule on test, no policy over these inputs
will learn to (PPO gets less: a reward, not the answer), and the gap is in the inputs or the data,
not in the RL. ``--inputs head`` reads the text policy with its affordance head (``rl/affordance.py``,
fitted on train only, with the validation and test golds held out of it as ``train_ppo`` holds out
the test golds): the scorer is linear in both cosines' products, the head's log fit and its need x
offer per category, and starts at ``text_rule``'s "cosines plus fit", which is where
``train ppo --policy text --affordance-head`` starts; so it says how far PPO's start is from what
those inputs allow. Prints per seed (the seed draws the entity and part orders) and the mean with a
95 % interval; the last line of stdout is one JSON object with the figures.

Needs no torch (scipy's L-BFGS); ``--inputs text`` needs the ``embed`` extra for ``--encoder st:``.
Usage: ``python benchmarks/bench_rl_ceiling.py [--inputs features|text|head|both] [--seeds 0,1,2]``
(``both``: features and text).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
from collections.abc import Callable, Sequence

import numpy as np
from scipy import optimize  # type: ignore[import-untyped]

from lateralgym.envs import EpisodeConfig
from lateralgym.envs.benchmarks.creativity import CreativityEnv
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask
from lateralgym.envs.benchmarks.creativity.rl.affordance import START_FIT_WEIGHT, fit_affordance_head
from lateralgym.envs.benchmarks.creativity.rl.baselines import seed_interval
from lateralgym.envs.benchmarks.creativity.rl.evaluation import load_tasks, split_tasks, training_config
from lateralgym.envs.benchmarks.creativity.rl.text import TextCreativity, make_encoder
from lateralgym.envs.benchmarks.creativity.rl.wrappers import ACTION_FEATURES, DiscreteCreativity

Rows = list[tuple[np.ndarray, np.ndarray]]
"""Per task: the valid commits' input rows (n x k) and which of them is the gold commit (n booleans)."""


def commit_rows(env: DiscreteCreativity, tasks: Sequence[CreativityTask], seed: int, columns: slice) -> Rows:
    """Inspect everything, then every valid commit's row (``columns`` of it) and whether it is the gold."""
    found: Rows = []
    for k, task in enumerate(tasks):
        obs, info = env.reset(seed=seed * 100_003 + k, options={"index": k})
        for slot in range(env.E):
            if env.action_masks()[slot]:
                obs, _, _, _, info = env.step(slot)
        width = (obs.size - env.scene_size) // env.n_actions
        rows = obs[env.scene_size :].reshape(env.n_actions, width)
        valid = np.flatnonzero(env.action_masks()[env.E :]) + env.E
        gold = np.zeros(valid.size, dtype=bool)
        for n, action in enumerate(valid):
            commit = env.decode(int(action))
            gold[n] = commit.entity == task.gold.entity and getattr(commit, "part", None) == task.gold.part
        found.append((rows[valid][:, columns].astype(np.float64), gold))
    return found


LAMBDAS = (1e-4, 1e-3, 1e-2, 1e-1, 1.0, 10.0)
"""The L2 strengths validation chooses from (towards the rule's weights)."""


def head_rows(rows: Rows, similarity: int) -> Rows:
    """The head's inputs as the scorer reads them: the cosines' products, the log of the summed need x
    offer (``ActionScorer``'s log fit; 0 on a row without one) and the need x offer per category."""
    found: Rows = []
    for x, y in rows:
        fits = x[:, similarity:]
        total = fits.sum(axis=1)
        log_fit = np.where(total > 0, np.log(np.maximum(total, 1e-8)), 0.0)
        found.append((np.hstack([x[:, :similarity], log_fit[:, None], fits]), y))
    return found


def fit(train: Rows, lam: float, start: np.ndarray) -> np.ndarray:
    """Maximum likelihood of the gold commit under a softmax over each task's valid commits, with
    ``lam * |w - start|^2``; tasks whose gold part is not among the commits are left out."""
    usable = [(x, y) for x, y in train if y.any()]

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        total, grad = lam * float((w - start) @ (w - start)), 2 * lam * (w - start)
        for x, y in usable:
            scores = x @ w
            top = scores.max()
            p = np.exp(scores - top)
            p /= p.sum()
            total -= float(np.log(p[y].sum() + 1e-300))
            grad -= x.T @ (np.where(y, p, 0.0) / p[y].sum() - p)
        return total / len(usable), grad / len(usable)

    return np.asarray(optimize.minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 300}).x)


def gold_rate(rows: Rows, w: np.ndarray) -> float:
    """Percent of tasks whose highest-scoring valid commit is the gold (the first on a tie)."""
    return 100.0 * float(np.mean([bool(y[int(np.argmax(x @ w))]) for x, y in rows]))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--config", default="creativity-interactive", help="CreativityBench config")
    parser.add_argument("--data", help="task file (default: the shipped sample)")
    parser.add_argument("--inputs", choices=("features", "text", "head", "both"), default="both")
    parser.add_argument("--encoder", default="st:", help="the text inputs' encoder (st:, lexical)")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (entity and part orders)")
    parser.add_argument("--part-order", choices=("shuffled", "file"), default="shuffled")
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    config = training_config(EpisodeConfig.named(args.config))
    tasks = load_tasks(config, args.data)
    train, test = split_tasks(tasks, "train"), split_tasks(tasks, "test")
    # lambda is chosen on a validation part of the train tasks split as test is, by gold entity (the
    # last quarter of the train split's gold entities, sorted), so variants of one entity never
    # straddle it and reward memorising an answer
    golds = sorted({t.gold.entity for t in train})
    held = set(golds[len(golds) * 3 // 4 :])
    train = [t for t in train if t.gold.entity not in held] + [t for t in train if t.gold.entity in held]
    cut = sum(t.gold.entity not in held for t in train)
    print(f"{len(train)} train / {len(test)} test tasks; seeds {seeds}; part order {args.part_order}")
    report: dict[str, dict[str, object]] = {}
    for inputs in ("features", "text") if args.inputs == "both" else (args.inputs,):
        if inputs == "features":
            columns = slice(ACTION_FEATURES.index("part_revealed"), len(ACTION_FEATURES))
            names = ACTION_FEATURES[columns]
            rule, rule_w = "state_overlap", np.eye(len(names))[names.index("state_overlap")]  # best_rule's, here
            wrap: Callable[[CreativityEnv], DiscreteCreativity] = functools.partial(
                DiscreteCreativity, part_order=args.part_order
            )
        else:
            encoder = make_encoder(args.encoder)
            columns = slice(0, 2 * encoder.dim)
            rule, rule_w = "entity_plus_part_cosine", np.ones(2 * encoder.dim)  # the sum of both cosines
            wrap = functools.partial(TextCreativity, encoder=encoder, part_order=args.part_order)
        if inputs == "head":
            # the validation tasks read a head that never saw their golds, as test reads one fitted on train
            valid_head = fit_affordance_head(train[:cut], [*train[cut:], *test], encoder)
            test_head = fit_affordance_head(train, test, encoder)
            columns = slice(0, 2 * encoder.dim + len(test_head.categories))
            rule = "cosines_plus_fit"  # text_rule's, and the policy's start: 1 x cosines + the fit's weight
            rule_w = np.concatenate([np.ones(2 * encoder.dim), [START_FIT_WEIGHT], np.zeros(len(test_head.categories))])
        figures: dict[str, list[float]] = {"rule_train": [], "rule_test": [], "fit_train": [], "fit_test": []}
        lambdas: list[float] = []
        for seed in seeds:
            if inputs == "head":
                valid_wrap = functools.partial(wrap, head=valid_head)
                valid_rows = commit_rows(valid_wrap(CreativityEnv(config, items=train)), train, seed, columns)
                valid_rows = head_rows(valid_rows, 2 * encoder.dim)
                head_wrap = functools.partial(wrap, head=test_head)
                fit_rows = head_rows(
                    commit_rows(head_wrap(CreativityEnv(config, items=train)), train, seed, columns), 2 * encoder.dim
                )
                test_rows = head_rows(
                    commit_rows(head_wrap(CreativityEnv(config, items=test)), test, seed, columns), 2 * encoder.dim
                )
            else:
                fit_rows = commit_rows(wrap(CreativityEnv(config, items=train)), train, seed, columns)
                test_rows = commit_rows(wrap(CreativityEnv(config, items=test)), test, seed, columns)
                valid_rows = fit_rows
            start = rule_w * (1.0 if inputs == "features" else 5.0)
            validation = {lam: gold_rate(valid_rows[cut:], fit(valid_rows[:cut], lam, start)) for lam in LAMBDAS}
            chosen = max(validation, key=lambda lam: validation[lam])
            shown = ", ".join(f"{lam:g}: {rate:.1f}" for lam, rate in validation.items())
            print(f"{inputs:8} seed {seed}: validation rule {gold_rate(valid_rows[cut:], rule_w):.1f}; lambda {shown}")
            w = fit(fit_rows, chosen, start)
            lambdas.append(chosen)
            figures["rule_train"].append(gold_rate(fit_rows, rule_w))
            figures["rule_test"].append(gold_rate(test_rows, rule_w))
            figures["fit_train"].append(gold_rate(fit_rows, w))
            figures["fit_test"].append(gold_rate(test_rows, w))
            print(
                f"{inputs:8} seed {seed}: rule ({rule}) train {figures['rule_train'][-1]:5.1f} test "
                f"{figures['rule_test'][-1]:5.1f}; supervised (lambda {chosen:g}) train "
                f"{figures['fit_train'][-1]:5.1f} test {figures['fit_test'][-1]:5.1f}",
                flush=True,
            )
        stats = {name: seed_interval(values, (0.0, 100.0)) for name, values in figures.items()}
        for name, value in stats.items():
            print(f"{inputs:8} {name:10} {value.mean:5.1f} [{value.low:5.1f}, {value.high:5.1f}]")
        report[inputs] = {"rule": rule, "lambdas": lambdas, **{k: v.model_dump() for k, v in stats.items()}}
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(json.dumps({"split": {"train": len(train), "test": len(test)}, "ceiling": report}, sort_keys=True))


if __name__ == "__main__":
    main()
