"""``lateralgym train ppo``: train a MaskablePPO policy on CreativityBench tasks, test it on held-out ones."""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

from lateralgym.envs import LateralGymError

DESCRIPTION = """\
Train MaskablePPO (sb3-contrib) on the interactive CreativityBench env through
lateralgym.envs.benchmarks.creativity.rl.wrappers.DiscreteCreativity: discrete inspect/commit
actions, invalid ones masked, word-overlap features per action. The tasks are split by gold
entity: the policy trains on the train tasks and is evaluated, greedy, on the test tasks (gold
entities it never committed in training) every --eval-every timesteps and at the end, next to a
random valid-action policy and the heuristic player on the same tasks and seeds.

Writes into --out: model.zip (load with sb3_contrib.MaskablePPO.load), learning_curve.png (train
return and test gold rate against timesteps) and summary.json (every figure, the task ids of
each split). Needs the rl extra: pip install 'lateralgym[rl]'.
"""

EXAMPLES = """\
examples:
  lateralgym train ppo --config creativity-interactive
  lateralgym train ppo --config creativity-interactive --timesteps 40000 --seed 1 --out runs/ppo-1
  lateralgym train ppo --config my-creativity.yaml --data path/to/tasks.json --eval-every 5000
"""


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``train`` (with its ``ppo`` algorithm) to the CLI."""
    train = sub.add_parser(
        "train",
        help="train an RL policy on CreativityBench tasks (needs the rl extra)",
        description="Train an RL policy on CreativityBench tasks and test it on held-out tasks.",
    )
    algorithms = train.add_subparsers(dest="algorithm", metavar="ALGORITHM", required=True)
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
    ppo.set_defaults(handler=_cmd_train_ppo)


def _cmd_train_ppo(args: argparse.Namespace) -> int:
    if importlib.util.find_spec("sb3_contrib") is None or importlib.util.find_spec("torch") is None:
        raise LateralGymError("training needs the rl extra: pip install 'lateralgym[rl]'")
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from lateralgym.envs import EpisodeConfig
    from lateralgym.envs.benchmarks.creativity.rl.evaluation import load_tasks
    from lateralgym.envs.benchmarks.creativity.rl.ppo import train_ppo

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
        )
    console.print(
        f"trained {summary.timesteps} timesteps in {summary.seconds:.0f} s "
        f"({summary.timesteps_per_second:.0f}/s) on {len(summary.train_items)} train tasks; "
        f"test: {len(summary.test_items)} tasks"
    )
    for result in (summary.trained, summary.random, summary.heuristic):
        console.print(
            f"  {result.policy:10} gold {100 * result.gold_correct_rate:5.1f} %  "
            f"entity {100 * result.entity_correct_rate:5.1f} %  "
            f"gold inspected {100 * result.gold_inspection_rate:5.1f} %  ({result.episodes} episodes)"
        )
    console.print(f"Run directory: {out}  (model.zip, learning_curve.png, summary.json)")
    return 0
