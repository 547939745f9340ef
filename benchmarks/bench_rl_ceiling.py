"""How far the RL policies' inputs can go on held-out tasks: a supervised scorer told the gold answer.

PPO learns from a reward; this asks what the same inputs allow when the answer itself is given. For
each task (train and test split, as ``bench_rl_training.py``) the scene is fully inspected, then every
valid commit action's row is read (``DiscreteCreativity``'s features, or ``TextCreativity``'s text
columns), and a linear scorer shared by every action (softmax over the valid commits, the structure
of ``ppo.ActionScorer``'s logit) is fitted by maximum likelihood of the gold commit on the *train*
tasks, with an L2 penalty of strength ``lambda`` towards the zero-training rule, then scored on the
test tasks: the share whose argmax is the gold part. ``lambda`` is chosen by ``--folds``-fold (5)
cross-validation over the train split, in folds by gold entity (no entity's tasks on both sides of
a fold): the highest mean validation rate across folds, a tie going to the stronger pull; then the
scorer is refitted on the whole train split with it. Test is never read to choose.

If this supervised scorer cannot beat a zero-training rule on test, no policy over these inputs
will learn to (PPO gets less: a reward, not the answer), and the gap is in the inputs or the data,
not in the RL. ``--inputs head`` reads the text policy with its affordance head (``rl/affordance.py``,
fitted on train only, with the validation and test golds held out of it as ``train_ppo`` holds out
the test golds): the scorer is linear in both cosines' products, the head's log fit and its need x
offer per category, and starts at ``text_rule``'s "cosines plus fit", which is where
``train ppo --policy text --affordance-head`` starts; so it says how far PPO's start is from what
those inputs allow (each fold's validation tasks read a head fitted without their golds).

Prints per seed (the seed draws the entity and part orders) the chosen lambda and its curve (mean
validation rate per lambda), the figures' mean over seeds with a Student-t interval, and on test a
95 % interval from a bootstrap over distinct task texts (a text's distractor variants and seeds
drawn together: ``evaluation.task_interval``) with the paired difference scorer minus rule on the
same tasks (``paired_difference``). The last line of stdout is one JSON object with the figures.

Needs no torch (scipy's L-BFGS); ``--inputs text`` needs the ``embed`` extra for ``--encoder st:``.
Usage: ``python benchmarks/bench_rl_ceiling.py [--inputs features|text|head|both] [--seeds 0,1,2] [--folds 5]``
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

from lateralgym.envs import EpisodeConfig, snake
from lateralgym.envs.benchmarks.creativity import CreativityEnv
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask
from lateralgym.envs.benchmarks.creativity.rl.affordance import (
    START_FIT_WEIGHT,
    AffordanceHead,
    fit_affordance_head,
)
from lateralgym.envs.benchmarks.creativity.rl.baselines import seed_interval
from lateralgym.envs.benchmarks.creativity.rl.evaluation import (
    Evaluation,
    load_tasks,
    paired_difference,
    split_tasks,
    task_interval,
    training_config,
)
from lateralgym.envs.benchmarks.creativity.rl.text import CachedEncoder, TextCreativity, make_encoder
from lateralgym.envs.benchmarks.creativity.rl.wrappers import ACTION_FEATURES, DiscreteCreativity, PartOrder

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
    ``lam * |w - start|^2``; tasks whose gold part is not among the commits are left out. The tasks'
    rows are stacked into one matrix, so each step of L-BFGS is a few array operations."""
    usable = [(x, y) for x, y in train if y.any()]
    if not usable:
        return start.copy()
    x = np.vstack([rows for rows, _ in usable])
    gold = np.concatenate([y for _, y in usable])
    sizes = np.array([len(y) for _, y in usable])
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    task = np.repeat(np.arange(len(usable)), sizes)

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        scores = x @ w
        p = np.exp(scores - np.maximum.reduceat(scores, starts)[task])
        p /= np.add.reduceat(p, starts)[task]
        gold_mass = np.add.reduceat(np.where(gold, p, 0.0), starts)
        total = lam * float((w - start) @ (w - start)) - float(np.log(gold_mass + 1e-300).sum())
        grad = 2 * lam * (w - start) - x.T @ (np.where(gold, p, 0.0) / gold_mass[task] - p)
        return total / len(usable), grad / len(usable)

    return np.asarray(optimize.minimize(loss, start, jac=True, method="L-BFGS-B", options={"maxiter": 300}).x)


def hits(rows: Rows, w: np.ndarray) -> list[bool]:
    """Per task: is its highest-scoring valid commit the gold (the first on a tie)."""
    return [bool(y[int(np.argmax(x @ w))]) for x, y in rows]


def gold_rate(rows: Rows, w: np.ndarray) -> float:
    """Percent of tasks whose highest-scoring valid commit is the gold (the first on a tie)."""
    return 100.0 * float(np.mean(hits(rows, w)))


def entity_folds(tasks: Sequence[CreativityTask], k: int) -> np.ndarray:
    """Each task's fold (0 to ``k`` - 1), by gold entity: every task of a gold entity (snake_case
    name, so its variants too) is in one fold. Entities go largest first to the fold with the fewest
    tasks so far (ties: the lower fold), so folds hold about as many tasks; no randomness.

    Raises:
        ValueError: fewer than two folds asked for, or fewer gold entities than folds.
    """
    names = [snake(t.gold.entity) for t in tasks]
    sizes: dict[str, int] = {}
    for name in names:
        sizes[name] = sizes.get(name, 0) + 1
    if k < 2 or len(sizes) < k:
        raise ValueError(f"{k} folds need at least 2 folds and {k} gold entities (the train split has {len(sizes)})")
    load, fold_of = [0] * k, {}
    for name in sorted(sizes, key=lambda n: (-sizes[n], n)):
        fold = min(range(k), key=lambda f: (load[f], f))
        fold_of[name], load[fold] = fold, load[fold] + sizes[name]
    return np.array([fold_of[name] for name in names], dtype=int)


def cross_validate(
    fold_rows: Sequence[Rows], folds: np.ndarray, lambdas: Sequence[float], start: np.ndarray
) -> dict[float, list[float]]:
    """Per lambda, the validation gold rate of each fold: fitted on the other folds' tasks, scored on
    its own. ``fold_rows[f]`` are every train task's rows as fold ``f`` reads them (the same rows for
    every fold, except with the affordance head, whose fold ``f`` copy never saw fold ``f``'s golds)."""
    curve: dict[float, list[float]] = {lam: [] for lam in lambdas}
    for f, rows in enumerate(fold_rows):
        fit_part = [r for r, fold in zip(rows, folds, strict=True) if fold != f]
        valid_part = [r for r, fold in zip(rows, folds, strict=True) if fold == f]
        for lam in lambdas:
            curve[lam].append(gold_rate(valid_part, fit(fit_part, lam, start)))
    return curve


def choose_lambda(curve: dict[float, list[float]]) -> float:
    """The lambda of the highest mean validation rate across folds; on a tie, the stronger (larger)."""
    means = {lam: float(np.mean(rates)) for lam, rates in curve.items()}
    best = max(means.values())
    return max(lam for lam, mean in means.items() if mean >= best - 1e-9)


def as_evaluation(name: str, tasks: Sequence[CreativityTask], correct: list[bool]) -> Evaluation:
    """A scorer's test results as an ``Evaluation`` for ``task_interval`` and ``paired_difference``
    (only the gold-correct figures mean anything here: no episode was played to the end)."""
    nan = float("nan")
    return Evaluation(
        policy=name,
        episodes=len(correct),
        gold_correct_rate=float(np.mean(correct)),
        entity_correct_rate=nan,
        gold_inspection_rate=1.0,
        mean_return=nan,
        mean_turns=nan,
        masked_actions=0,
        item_ids=[t.id for t in tasks],
        texts=[t.task for t in tasks],
        gold_correct=correct,
    )


def head_columns(rows: Rows, similarity: int, have: Sequence[str], want: Sequence[str]) -> Rows:
    """Rows read with a head over categories ``have``, with their per-category columns put in the order
    ``want`` (0 for a category that head lacks), so one weight vector reads every fold's head alike."""
    index = [list(have).index(c) if c in have else -1 for c in want]
    found: Rows = []
    for x, y in rows:
        fits = np.zeros((x.shape[0], len(want)))
        for k, at in enumerate(index):
            if at >= 0:
                fits[:, k] = x[:, similarity + at]
        found.append((np.hstack([x[:, :similarity], fits]), y))
    return found


def head_read(
    config: EpisodeConfig,
    encoder: CachedEncoder,
    part_order: PartOrder,
    seed: int,
    categories: Sequence[str],
    head: AffordanceHead,
    tasks: list[CreativityTask],
) -> Rows:
    """The head scorer's rows of ``tasks`` read through ``head``, its categories put in ``categories``' order."""
    similarity = 2 * encoder.dim
    env = TextCreativity(CreativityEnv(config, items=tasks), encoder=encoder, part_order=part_order, head=head)
    rows = commit_rows(env, tasks, seed, slice(0, similarity + len(head.categories)))
    return head_rows(head_columns(rows, similarity, head.categories, categories), similarity)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--config", default="creativity-interactive", help="CreativityBench config")
    parser.add_argument("--data", help="task file or sample name (default: the shipped sample)")
    parser.add_argument("--inputs", choices=("features", "text", "head", "both"), default="both")
    parser.add_argument("--encoder", default="st:", help="the text inputs' encoder (st:, lexical)")
    parser.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (entity and part orders)")
    parser.add_argument("--part-order", choices=("shuffled", "file"), default="shuffled")
    parser.add_argument(
        "--folds", type=int, default=5, help="cross-validation folds of the train split, by gold entity"
    )
    args = parser.parse_args()
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    config = training_config(EpisodeConfig.named(args.config))
    tasks = load_tasks(config, args.data)
    train, test = split_tasks(tasks, "train"), split_tasks(tasks, "test")
    # lambda is chosen by cross-validation over the train split in folds by gold entity, as test is split,
    # so variants of one entity never straddle a fold and reward memorising an answer; test is never read
    entities = len({snake(t.gold.entity) for t in train})
    k = min(args.folds, entities)  # a small task file has fewer gold entities than folds: one fold each
    if k < 2:
        raise SystemExit(f"bench_rl_ceiling: cross-validation needs at least 2 train gold entities, found {entities}")
    folds = entity_folds(train, k)
    print(
        f"{len(train)} train / {len(test)} test tasks ({len(set(t.task for t in test))} test texts); "
        f"seeds {seeds}; part order {args.part_order}; lambda by {k}-fold cross-validation "
        f"(fold tasks {np.bincount(folds).tolist()}{'' if k == args.folds else f'; {args.folds} asked'})"
    )
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
            # each fold's validation tasks read a head that never saw their golds, as test reads one fitted on train
            fold_heads = [
                fit_affordance_head(
                    [t for t, g in zip(train, folds, strict=True) if g != f],
                    [*(t for t, g in zip(train, folds, strict=True) if g == f), *test],
                    encoder,
                )
                for f in range(k)
            ]
            test_head = fit_affordance_head(train, test, encoder)
            rule = "cosines_plus_fit"  # text_rule's, and the policy's start: 1 x cosines + the fit's weight
            rule_w = np.concatenate([np.ones(2 * encoder.dim), [START_FIT_WEIGHT], np.zeros(len(test_head.categories))])

        figures: dict[str, list[float]] = {"rule_train": [], "rule_test": [], "fit_train": [], "fit_test": []}
        lambdas: list[float] = []
        curves: list[dict[str, list[float]]] = []
        rule_runs: list[Evaluation] = []
        fit_runs: list[Evaluation] = []
        for seed in seeds:
            if inputs == "head":
                read = functools.partial(head_read, config, encoder, args.part_order, seed, test_head.categories)
                fold_rows = [read(head, train) for head in fold_heads]
                fit_rows, test_rows = read(test_head, train), read(test_head, test)
            else:
                fit_rows = commit_rows(wrap(CreativityEnv(config, items=train)), train, seed, columns)
                test_rows = commit_rows(wrap(CreativityEnv(config, items=test)), test, seed, columns)
                fold_rows = [fit_rows] * k
            start = rule_w * (1.0 if inputs == "features" else 5.0)
            curve = cross_validate(fold_rows, folds, LAMBDAS, start)
            chosen = choose_lambda(curve)
            rule_valid = np.mean(
                [
                    gold_rate([r for r, g in zip(rows, folds, strict=True) if g == f], rule_w)
                    for f, rows in enumerate(fold_rows)
                ]
            )
            shown = ", ".join(f"{lam:g}: {np.mean(rates):.2f}" for lam, rates in curve.items())
            print(f"{inputs:8} seed {seed}: validation rule {rule_valid:.1f}; lambda {shown} (mean of {k} folds)")
            w = fit(fit_rows, chosen, start)
            lambdas.append(chosen)
            curves.append({f"{lam:g}": rates for lam, rates in curve.items()})
            rule_runs.append(as_evaluation(rule, test, hits(test_rows, rule_w)))
            fit_runs.append(as_evaluation("supervised", test, hits(test_rows, w)))
            figures["rule_train"].append(gold_rate(fit_rows, rule_w))
            figures["rule_test"].append(100.0 * rule_runs[-1].gold_correct_rate)
            figures["fit_train"].append(gold_rate(fit_rows, w))
            figures["fit_test"].append(100.0 * fit_runs[-1].gold_correct_rate)
            print(
                f"{inputs:8} seed {seed}: rule ({rule}) train {figures['rule_train'][-1]:5.1f} test "
                f"{figures['rule_test'][-1]:5.1f}; supervised (lambda {chosen:g}) train "
                f"{figures['fit_train'][-1]:5.1f} test {figures['fit_test'][-1]:5.1f}",
                flush=True,
            )
        stats = {name: seed_interval(values, (0.0, 100.0)) for name, values in figures.items()}
        for name, value in stats.items():
            print(f"{inputs:8} {name:10} {value.mean:5.1f} [{value.low:5.1f}, {value.high:5.1f}] (over seeds)")
        by_text = {"rule_test": task_interval(rule_runs), "fit_test": task_interval(fit_runs)}
        difference = paired_difference(fit_runs, rule_runs)
        for name, value in {**by_text, "fit_minus_rule": difference}.items():
            print(f"{inputs:8} {name:14} {value.mean:5.1f} [{value.low:5.1f}, {value.high:5.1f}] (over test texts)")
        report[inputs] = {
            "rule": rule,
            "lambdas": lambdas,
            "cv_curves": curves,
            **{k: v.model_dump() for k, v in stats.items()},
            "by_text": {k: v.model_dump() for k, v in by_text.items()},
            "fit_minus_rule": difference.model_dump(),
        }
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(
        json.dumps(
            {
                "split": {"train": len(train), "test": len(test)},
                "folds": k,
                "lambda_grid": list(LAMBDAS),
                "ceiling": report,
            },
            sort_keys=True,
        )
    )


if __name__ == "__main__":
    main()
