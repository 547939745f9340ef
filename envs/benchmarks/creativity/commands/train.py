"""``lateralgym train ppo``: train a MaskablePPO policy on CreativityBench tasks, test it on held-out ones."""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

from lateralgym.envs import LateralGymError
from lateralgym.envs.support import TRAIN_DESCRIPTION, TRAIN_HELP, command_group

DESCRIPTION = """\
Train MaskablePPO (sb3-contrib) on the interactive CreativityBench env: discrete inspect/commit
actions, invalid ones masked, one scorer shared by every action. --policy features reads
DiscreteCreativity's hand-made word-overlap features; --policy text reads TextCreativity's rows
built from sentence embeddings of the task and each action's text (--encoder st: is the embed
extra's MiniLM, lexical needs no model). The tasks are split by gold entity: the policy trains on
the train tasks and is evaluated, greedy, on the test tasks (gold entities it never committed in
training) every --eval-every timesteps and at the end, next to the untrained policy, a random
valid-action policy, the heuristic player and the best zero-training one-feature rule (chosen on
the train tasks) on the same tasks and seeds; a text policy also next to the best zero-training text
rule (commit what the encoder finds closest to the task). --affordance-head gives the text policy a
head that maps the encoder's vectors to kinds of use (fitted on the train split only; no test
task's gold entity enters it). An entity's parts fill its action slots
in an order drawn per episode (--part-order file keeps the file's), so no slot means "the answer".

Writes into --out: model.zip (load with lateralgym.envs.benchmarks.creativity.rl.ppo.load_policy;
with --affordance-head also affordance_head.npz: AffordanceHead.load, then TextCreativity(head=...)),
learning_curve.png (train return and test gold rate against timesteps, with the baselines) and
summary.json (every figure, before and after, the task ids of each split). Needs the rl extra:
pip install 'lateralgym[rl]' (and 'lateralgym[embed]' for --policy text --encoder st:).
"""

EXAMPLES = """\
examples:
  lateralgym train ppo --config creativity-interactive
  lateralgym train ppo --config creativity-interactive --timesteps 40000 --seed 1 --out runs/ppo-1
  lateralgym train ppo --config creativity-interactive --policy text --encoder st:
  lateralgym train ppo --config creativity-interactive --policy text --affordance-head
  lateralgym train ppo --config my-creativity.yaml --data path/to/tasks.json --eval-every 5000
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``train ppo`` to the CLI (the ``train`` group is shared with the core's ``train grpo``)."""
    algorithms = command_group(sub, "train", help=TRAIN_HELP, description=TRAIN_DESCRIPTION)
    ppo = algorithms.add_parser(
        "ppo",
        help="MaskablePPO over the discrete CreativityBench wrapper",
        description=DESCRIPTION,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ppo.add_argument(
        "--config", default="creativity-interactive", help="a CreativityBench config name or YAML/TOML file"
    )
    ppo.add_argument("--data", help="a CreativityBench task file (default: the config's dataset, else the sample)")
    ppo.add_argument("--timesteps", type=int, default=20_000, help="environment steps to train (default 20000)")
    ppo.add_argument("--seed", type=int, default=0, help="seed of PPO, the envs and the evaluations (default 0)")
    ppo.add_argument("--out", type=Path, help="run directory (default runs/ppo-<config>-<time>)")
    ppo.add_argument("--eval-every", type=int, default=2_500, help="timesteps between evaluations on the test tasks")
    ppo.add_argument("--eval-repeats", type=int, default=2, help="greedy evaluation episodes per test task (default 2)")
    ppo.add_argument("--envs", type=int, default=8, help="parallel environments in the training batch (default 8)")
    ppo.add_argument(
        "--policy",
        choices=("features", "text"),
        default="features",
        help="the policy's input: word-overlap features (default) or the text's sentence embeddings",
    )
    ppo.add_argument(
        "--encoder", default="st:", help="--policy text: st: (the embed extra's MiniLM, default), st:PATH, lexical"
    )
    ppo.add_argument(
        "--part-order",
        choices=("shuffled", "file"),
        default="shuffled",
        help="how an entity's parts fill its action slots: shuffled per episode (default; the sample lists "
        "the gold part first in most tasks, which a policy could learn instead of the text) or the file's order",
    )
    ppo.add_argument(
        "--text-init",
        type=float,
        default=None,
        help="--policy text: the similarity it starts from, this times the encoder's cosine of task and "
        "action (default 5; 0 starts from the uniform policy)",
    )
    ppo.add_argument(
        "--affordance-head",
        action="store_true",
        help="--policy text: add an affordance head, two maps from the encoder's vectors to the knowledge "
        "base's kinds of use (what a task needs, what a part offers), fitted on the train split only; the "
        "policy then starts from the cosines plus the head's log fit (saved as affordance_head.npz); needs "
        "tasks whose entities carry affordances (the shipped sample, `lateralgym tasks build`; not the "
        "official release)",
    )
    ppo.add_argument(
        "--curriculum",
        choices=("uniform", "adaptive"),
        default="uniform",
        help="which train task each episode draws: uniform (default, the env's own draw) or adaptive, the "
        "difficulty levels (cluster band x distractor count) whose recent gold rate is near 0.5 most often; "
        "each episode's level is in curriculum.jsonl",
    )
    ppo.set_defaults(handler=_cmd_train_ppo)


def _cmd_train_ppo(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("sb3_contrib") is None or importlib.util.find_spec("torch") is None:
        raise LateralGymError("training needs the rl extra: pip install 'lateralgym[rl]'")
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from lateralgym.envs import EpisodeConfig
    from lateralgym.envs.benchmarks.creativity.rl.evaluation import load_tasks
    from lateralgym.envs.benchmarks.creativity.rl.ppo import TEXT_INIT, train_ppo

    config = EpisodeConfig.named(args.config)
    tasks = load_tasks(config, args.data)
    out = args.out or Path("runs") / f"ppo-{config.name}-{time.strftime('%Y%m%dT%H%M%S')}"
    console = Console()
    with Progress(
        TextColumn("[bold]ppo[/] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=console,
    ) as bar:
        job = bar.add_task(config.name, total=args.timesteps)
        summary = train_ppo(
            config,
            tasks,
            timesteps=args.timesteps,
            out=out,
            seed=args.seed,
            eval_every=args.eval_every,
            eval_repeats=args.eval_repeats,
            n_envs=args.envs,
            progress=lambda done: bar.update(job, completed=min(done, args.timesteps)),
            policy=args.policy,
            encoder=args.encoder,
            part_order=args.part_order,
            text_init=TEXT_INIT if args.text_init is None else args.text_init,
            affordance_head=args.affordance_head,
            curriculum=args.curriculum,
        )
    console.print(
        f"trained {summary.timesteps} timesteps in {summary.seconds:.0f} s "
        f"({summary.timesteps_per_second:.0f}/s) on {len(summary.train_items)} train tasks; "
        f"test: {len(summary.test_items)} tasks"
    )
    if summary.affordance_categories:
        kinds = len(summary.affordance_categories)
        console.print(f"affordance head: {kinds} kinds of use, fitted on the train split only")
    rows = [summary.untrained, summary.trained, summary.random, summary.heuristic]
    rows.append(summary.best_rule.test if summary.best_rule else None)
    rows.append(summary.text_rule.test if summary.text_rule else None)
    console.print(
        f"  {'policy (test tasks)':28} {'gold':>6} {'entity':>7} {'gold inspected':>15} {'turns':>6} {'invalid':>8}"
    )
    for result in rows:
        if result is None:
            continue
        console.print(
            f"  {result.policy:28} {100 * result.gold_correct_rate:5.1f}% {100 * result.entity_correct_rate:6.1f}% "
            f"{100 * result.gold_inspection_rate:14.1f}% {result.mean_turns:6.1f} {100 * result.invalid_rate:7.1f}%"
            f"  ({result.episodes} episodes)"
        )
    if summary.curriculum == "adaptive" and summary.curve and summary.curve[-1].curriculum:
        levels = summary.curve[-1].curriculum
        shown = ", ".join(f"{level} {100 * s['success']:.0f}%" for level, s in levels.items())
        console.print(f"adaptive curriculum, recent train gold rate per level: {shown}")
    head = ", affordance_head.npz" if summary.affordance_categories else ""
    console.print(f"Run directory: {out}  (model.zip{head}, learning_curve.png, summary.json, curriculum.jsonl)")
    return 0
