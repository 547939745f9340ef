"""RL on tool repurposing, on held-out test tasks: PPO (features or text) against every cheap baseline, over seeds.

For each seed, trains ``lateralgym.envs.benchmarks.creativity.rl.ppo.train_ppo`` (MaskablePPO, one
action scorer shared by every action) on the train split of the CreativityBench tasks (split by gold
entity) and reports, on the test split, next to it and on the same tasks and seeds: a uniformly
random valid-action policy, the heuristic player, and the best zero-training rule (``best_rule``:
"inspect every entity, then commit the argmax of one feature", the feature chosen on the train
tasks), and for the text policy the best zero-training text rule (``text_rule``: commit what the
encoder finds closest to the task, the score chosen on the train tasks: the text policy's untrained
start). ``--policy both`` trains the features policy and the text policy (sentence embeddings of the
task and of each action's text; the ``embed`` extra) with the same seeds. An entity's parts fill its
action slots in an order drawn per episode (``--part-order file`` keeps the file's order, where the
sample's gold part is listed first in most tasks and "slot 0" is a rule of its own). Every figure is the mean
over the seeds with a 95 % Student-t interval; per-seed values are kept.

The last line of stdout is one JSON object::

    {"split": {"train": n, "test": n}, "test_gold": {NAME: {"mean", "low", "high", "per_seed"}},
     "task_interval": {NAME: {"mean", "low", "high"}}, "paired": {"ppo_text-text_rule": {"mean", "low", "high"}}, ...}

with NAME in ``ppo_features``, ``ppo_text``, ``random``, ``heuristic``, ``best_rule``, ``text_rule``
and ``ppo_features_untrained`` / ``ppo_text_untrained`` (each policy at its start, before PPO)
(percent 0-100; a policy not trained this run is left out), plus the same for ``test_entity`` and
``test_gold_inspection``, and the machine, the seconds and the settings. ``task_interval`` is each
policy's gold rate with a 95 % interval from a bootstrap over distinct task texts (a text's distractor
variants and every seed's episodes of it drawn together: the interval over tasks, which the seeds' one
ignores), and ``paired`` the difference of two policies on the same tasks and seeds with the same
clustered bootstrap (``rl/evaluation.py``: ``task_interval``, ``paired_difference``). ``--affordance-head`` gives
the text policy an affordance head fitted on the train split only (``rl/affordance.py``); its text
rule then also considers the head's log fit (``baselines.AFFORDANCE_SCORES``).

``--curriculum`` says how training episodes draw their task (``lateralgym.envs.Curriculum``):
``uniform`` (the default, the env's own draw), ``adaptive`` (difficulty levels, cluster band x
distractor count, whose recent train gold rate is near 0.5 come most often), or ``both``: each policy
trained under both with the same seeds, the adaptive runs named ``ppo_features_adaptive`` /
``ppo_text_adaptive`` and paired with the uniform runs on the same tasks and seeds.

Needs the rl extra (``pip install -e '.[rl]'``; ``.[rl,embed]`` for the text policy).
Usage: ``python benchmarks/bench_rl_training.py --seeds 0,1,2,3,4 [--policy features|text|both]
[--timesteps 20000] [--part-order shuffled|file] [--curriculum uniform|adaptive|both] [--data PATH] [--out DIR]``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lateralgym.envs import EpisodeConfig
from lateralgym.envs.benchmarks.creativity.rl.baselines import seed_interval
from lateralgym.envs.benchmarks.creativity.rl.evaluation import (
    Evaluation,
    load_tasks,
    paired_difference,
    split_tasks,
    task_interval,
)
from lateralgym.envs.benchmarks.creativity.rl.ppo import TEXT_INIT, TrainSummary, train_ppo

PERCENT = (0.0, 100.0)
"""Every figure is a rate in percent: its interval over seeds stays inside."""

PAIRS = (
    ("ppo_text", "text_rule"),
    ("ppo_text", "best_rule"),
    ("ppo_text", "ppo_text_untrained"),
    ("ppo_features", "best_rule"),
    ("ppo_features", "ppo_features_untrained"),
    ("ppo_text_adaptive", "ppo_text"),
    ("ppo_features_adaptive", "ppo_features"),
)
"""Paired differences reported (the same tasks and seeds): a trained policy against its start and the rules."""

METRICS: dict[str, Callable[[Evaluation], float]] = {
    "test_gold": lambda e: e.gold_correct_rate,
    "test_entity": lambda e: e.entity_correct_rate,
    "test_gold_inspection": lambda e: e.gold_inspection_rate,
}


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def evaluations(summary: TrainSummary, policy: str, curriculum: str = "uniform") -> dict[str, Evaluation]:
    """This seed's figures by policy name (the baselines once, from the first policy trained; an adaptive
    curriculum's run is ``ppo_<policy>_adaptive``, its untrained start the uniform run's)."""
    suffix = "_adaptive" if curriculum == "adaptive" else ""
    found = {f"ppo_{policy}{suffix}": summary.trained, "random": summary.random, "heuristic": summary.heuristic}
    if summary.untrained is not None:
        found[f"ppo_{policy}{suffix}_untrained"] = summary.untrained
    if summary.best_rule is not None:
        found["best_rule"] = summary.best_rule.test
    if summary.text_rule is not None:
        found["text_rule"] = summary.text_rule.test
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--config", default="creativity-interactive", help="CreativityBench config")
    parser.add_argument("--data", help="task file (default: the shipped sample)")
    parser.add_argument("--timesteps", type=int, default=20_000, help="PPO environment steps per seed")
    parser.add_argument("--eval-every", type=int, default=2_500, help="timesteps between test evaluations")
    parser.add_argument("--seeds", default="0,1,2,3,4", help="comma-separated training seeds (default 0,1,2,3,4)")
    parser.add_argument("--policy", choices=("features", "text", "both"), default="features")
    parser.add_argument("--encoder", default="st:", help="the text policy's encoder (st:, lexical)")
    parser.add_argument("--envs", type=int, default=8, help="parallel environments in PPO's batch")
    parser.add_argument(
        "--text-init",
        type=float,
        default=TEXT_INIT,
        help=f"text policy: start at this times the encoder's cosine (default {TEXT_INIT:g})",
    )
    parser.add_argument(
        "--affordance-head",
        action="store_true",
        help="text policy: add an affordance head fitted on the train split only (rl/affordance.py)",
    )
    parser.add_argument(
        "--part-order",
        choices=("shuffled", "file"),
        default="shuffled",
        help="part slots: shuffled per episode or file",
    )
    parser.add_argument(
        "--curriculum",
        choices=("uniform", "adaptive", "both"),
        default="uniform",
        help="how training episodes draw their task: uniform, adaptive, or both (compared on the same seeds)",
    )
    parser.add_argument("--out", type=Path, help="where each run goes (default: a temporary folder)")
    args = parser.parse_args()

    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    policies = ["features", "text"] if args.policy == "both" else [args.policy]
    curricula = ["uniform", "adaptive"] if args.curriculum == "both" else [args.curriculum]
    config = EpisodeConfig.named(args.config)
    tasks = load_tasks(config, args.data)
    train, test = split_tasks(tasks, "train"), split_tasks(tasks, "test")
    out = args.out or Path(tempfile.mkdtemp(prefix="bench-rl-"))
    print(f"machine: {cpu_model()}, {os.cpu_count()} CPUs visible, load average {os.getloadavg()[0]:.1f}")
    print(
        f"{len(train)} train / {len(test)} test tasks (split by gold entity); seeds {seeds}; policies {policies}; "
        f"curricula {curricula}"
    )
    per_seed: dict[str, dict[str, list[float]]] = {m: {} for m in METRICS}
    played: dict[str, list[Evaluation]] = {}
    """Each policy's evaluations by seed (the same test tasks and seeds for every policy)."""
    seconds: dict[str, list[float]] = {}
    chosen: list[str] = []
    text_chosen: list[str] = []
    start = time.perf_counter()
    for seed in seeds:
        for n, (policy, curriculum) in enumerate((p, c) for p in policies for c in curricula):
            summary = train_ppo(
                config,
                tasks,
                timesteps=args.timesteps,
                out=out / f"{policy}-{curriculum}-seed{seed}",
                seed=seed,
                eval_every=args.eval_every,
                n_envs=args.envs,
                policy=policy,
                encoder=args.encoder,
                part_order=args.part_order,
                text_init=args.text_init,
                affordance_head=args.affordance_head and policy == "text",
                curriculum=curriculum,
            )
            name = f"ppo_{policy}{'_adaptive' if curriculum == 'adaptive' else ''}"
            seconds.setdefault(name, []).append(summary.seconds)
            found = evaluations(summary, policy, curriculum)
            if curriculum == "adaptive" and "uniform" in curricula:  # the same start as the uniform run's
                found.pop(f"{name}_untrained", None)
            if n > 0:  # the baselines do not depend on the policy trained: counted once per seed
                first = curriculum == curricula[0]  # the text rule once per seed, from the text policy's first run
                found = {k: v for k, v in found.items() if k.startswith("ppo_") or (k == "text_rule" and first)}
            elif summary.best_rule is not None:
                chosen.append(summary.best_rule.feature)
            if summary.text_rule is not None and curriculum == curricula[0]:
                text_chosen.append(summary.text_rule.feature)
            for metric, read in METRICS.items():
                for name, result in found.items():
                    per_seed[metric].setdefault(name, []).append(100 * read(result))
            for name, result in found.items():
                played.setdefault(name, []).append(result)
            rule = f", best rule {100 * summary.best_rule.test.gold_correct_rate:.1f} %" if summary.best_rule else ""
            print(
                f"seed {seed} {policy:8} {curriculum:8}: "
                f"ppo gold {100 * summary.trained.gold_correct_rate:5.1f} %{rule}, "
                f"{summary.timesteps} timesteps in {summary.seconds:.0f} s",
                flush=True,
            )
    wall = time.perf_counter() - start

    print(f"\n{'policy (test tasks)':20} {'gold % [95% CI]':>24} {'entity %':>10} {'gold-insp %':>12}  per-seed gold")
    gold = {name: seed_interval(values, PERCENT) for name, values in per_seed["test_gold"].items()}
    for name, stats in gold.items():
        entity = seed_interval(per_seed["test_entity"][name], PERCENT).mean
        inspected = seed_interval(per_seed["test_gold_inspection"][name], PERCENT).mean
        interval = f"{stats.mean:5.1f} [{stats.low:5.1f}, {stats.high:5.1f}]"
        values = ", ".join(f"{v:.1f}" for v in stats.per_seed)
        print(f"{name:20} {interval:>24} {entity:10.1f} {inspected:12.1f}  {values}")
    intervals = {name: task_interval(results) for name, results in played.items()}
    print("\nover distinct task texts (a text's variants and seeds drawn together), gold % [95% CI]:")
    for name, interval in intervals.items():
        print(f"  {name:26} {interval.mean:5.1f} [{interval.low:5.1f}, {interval.high:5.1f}]")
    paired = {
        f"{a}-{b}": paired_difference(played[a], played[b])
        for a, b in PAIRS
        if a in played and b in played and len(played[a]) == len(played[b])
    }
    for pair, diff in paired.items():
        above = "above 0" if diff.low > 0 else "not above 0"
        print(f"  paired {pair:30} {diff.mean:+5.1f} points [{diff.low:+5.1f}, {diff.high:+5.1f}] ({above})")
    print(f"best rule's feature by seed (chosen on the train tasks): {chosen}")
    if text_chosen:
        print(f"text rule's score by seed (chosen on the train tasks): {text_chosen}")
    for policy in policies:
        trained = gold.get(f"ppo_{policy}")
        for baseline in ("best_rule", "text_rule"):
            rule = gold.get(baseline)
            if trained is None or rule is None:
                continue
            margin = trained.mean - rule.mean
            goal = trained.mean >= rule.mean + 3 and trained.low > rule.mean
            print(
                f"ppo_{policy} - {baseline}: {margin:+.1f} points; goal (>= +3 points, interval above the rule's "
                f"mean): {'met' if goal else 'not met'}"
            )
    print(f"wall time {wall:.0f} s; artefacts in {out}")
    report = {
        "split": {"train": len(train), "test": len(test)},
        **{
            metric: {n: seed_interval(v, PERCENT).model_dump() for n, v in values.items()}
            for metric, values in per_seed.items()
        },
        "task_interval": {name: interval.model_dump() for name, interval in intervals.items()},
        "paired": {pair: diff.model_dump() for pair, diff in paired.items()},
        "best_rule_features": chosen,
        "seconds": {name: sum(values) for name, values in seconds.items()},
        "settings": {
            "config": config.name,
            "timesteps": args.timesteps,
            "seeds": seeds,
            "encoder": args.encoder,
            "part_order": args.part_order,
            "text_init": args.text_init,
            "affordance_head": args.affordance_head,
            "curricula": curricula,
        },
        "text_rule_scores": text_chosen,
        "machine": {"cpu": cpu_model(), "cpus": os.cpu_count()},
    }
    print(json.dumps(report, sort_keys=True))


if __name__ == "__main__":
    main()
