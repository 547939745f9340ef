"""``train_sft``: a supervised warm start with TRL's ``SFTTrainer`` on the oracle's train-split moves.

The examples (``_demos.py``) are the LLM player's prompts with the oracle's moves written in the reply format
the prompt asks for; the loss is on the reply alone (TRL's prompt-completion route). Before and after,
the model plays the held-out (test) items greedily, exactly as ``train grpo`` evaluates. The run folder is a
checkpoint ``train grpo --init`` continues from: ``model/``, ``manifest.json`` (``_manifest.py``: config,
base model, data and split, seed, settings), ``trained_items.json``, ``sft_examples.jsonl`` (what it
trained on), ``summary.json`` (an ``SFTSummary``), ``eval_before.jsonl`` / ``eval_after.jsonl``,
``train_curve.jsonl`` (the loss a step).
"""

from __future__ import annotations

import hashlib
import math
import os
import time
import warnings
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lateralgym.envs import EpisodeConfig
from lateralgym.integrations.grpo._demos import oracle_examples, read_examples, write_examples
from lateralgym.integrations.grpo._files import memory_guard, write_episodes
from lateralgym.integrations.grpo._heldout import held_out, paired_difference
from lateralgym.integrations.grpo._manifest import MANIFEST, MODEL_DIR, write_checkpoint
from lateralgym.integrations.grpo._model import load, timed_log_callback
from lateralgym.integrations.grpo._settings import EpisodeFigures, GRPOError, HeldOut, ProblemInterval, grpo_missing
from lateralgym.integrations.grpo._train import evaluation, split_train_test

__all__ = ["SFTSettings", "SFTStep", "SFTSummary", "train_sft"]

EXAMPLES = "sft_examples.jsonl"
SFT_CURVE = "train_curve.jsonl"


class SFTSettings(BaseModel):
    """How an SFT run trains and evaluates."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    steps: int = Field(default=40, ge=1)
    """Optimizer steps (each ``batch_size`` examples, drawn in an order the seed shuffles)."""
    batch_size: int = Field(default=4, ge=1)
    learning_rate: float = Field(default=5e-5, gt=0)
    """Peak learning rate, decayed linearly to 0 over the steps."""
    max_length: int = Field(default=4096, ge=16)
    """Tokens of prompt and reply; a longer example is left out, never cut (a cut one loses its reply)."""
    eval_items: int | None = Field(default=None, ge=1)
    """Held-out items evaluated, spread evenly over the test split (None: every test item of the config)."""
    eval_max_new_tokens: int = Field(default=64, ge=1)
    """Tokens per move in the greedy held-out evaluation."""
    threads: int = Field(default=2, ge=1)
    seed: int = 0


class SFTStep(BaseModel):
    """One optimizer step (a line of ``train_curve.jsonl``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    step: int
    loss: float
    """Mean cross-entropy of the step's reply tokens."""
    seconds: float


class SFTSummary(BaseModel):
    """What ``train_sft`` did and measured (``summary.json``)."""

    model_config = ConfigDict(extra="forbid")

    config: str
    benchmark: str
    model: str
    settings: SFTSettings
    examples: int
    """Examples available (one a move of a solved oracle episode on a train item)."""
    examples_left_out: int
    """Examples longer than ``max_length`` tokens, left out."""
    examples_sha256: str
    train_items: int
    eval_items: list[str]
    steps: int
    seconds: float
    """Training wall time (evaluations excluded)."""
    seconds_per_step: float | None
    train_loss: list[float]
    eval_before: HeldOut
    """The base model."""
    eval_after: HeldOut
    paired: dict[str, ProblemInterval]
    """After minus before on the same items (``reward``, ``valid``), intervals over problems."""
    versions: dict[str, str]
    checkpoint: str


def _fits(examples: Sequence[Any], tokenizer: Any, limit: int) -> list[Any]:
    """The examples whose chat (prompt and reply) fits in ``limit`` tokens."""
    kept = []
    for example in examples:
        ids = tokenizer.apply_chat_template([*example.prompt, *example.completion], tokenize=True, return_dict=False)
        if len(ids) <= limit:
            kept.append(example)
    return kept


def train_sft(
    config: EpisodeConfig,
    model: str,
    out: Path,
    settings: SFTSettings | None = None,
    *,
    items: Sequence[Any] | None = None,
    examples: Path | None = None,
    before: Sequence[EpisodeFigures] | None = None,
    cache_dir: Path | None = None,
    progress: Callable[[SFTStep], None] | None = None,
) -> SFTSummary:
    """Fine-tune ``model`` on the oracle's moves on ``config``'s train items; evaluate on its test items.

    Args:
        config: any benchmark's config whose oracle solves its items.
        model: ``local/smollm2``, ``local/PATH.gguf`` or a Hugging Face model folder.
        out: the run folder (a checkpoint ``train grpo --init`` reads); one that holds a trained model is refused.
        settings: how to train (``SFTSettings``).
        items: the items to split (default: the config's dataset or sample).
        examples: an ``sft_examples.jsonl`` to train on (default: built from the oracle now).
        before: the base model's greedy episodes on the held-out items, when already played (greedy play of
            the same model gives them again; a benchmark plays them once for all its seeds).
        cache_dir: where a GGUF is dequantised.
        progress: called after each step.

    Raises:
        GRPOError: a missing extra, a model that does not load, no train or test items, an examples file
            of another config or with items that are not train items (``SFTDataError``), an ``out`` that
            already holds a checkpoint, out of memory (each one line; nothing already there is overwritten).
    """
    missing = grpo_missing()
    if missing:
        raise GRPOError(missing)
    settings = settings or SFTSettings()
    if (out / MANIFEST).exists() or (out / MODEL_DIR).exists():
        raise GRPOError(f"--out {out} already holds a trained model: give a new folder")
    train, test = split_train_test(config, items, settings.eval_items)
    if before is not None and [r.item_id for r in before] != [str(getattr(item, "id", "")) for item in test]:
        raise GRPOError("the base model's episodes given (before) are not of this run's held-out items")
    demos = read_examples(examples, config, train) if examples is not None else oracle_examples(config, train)
    if not demos:
        raise GRPOError(f"config {config.name!r}: the oracle solved no train item, so there is nothing to learn from")
    for name, value in (("HF_HUB_OFFLINE", "1"), ("TRANSFORMERS_OFFLINE", "1"), ("TOKENIZERS_PARALLELISM", "false")):
        os.environ.setdefault(name, value)
    import torch
    import transformers
    import trl
    from datasets import Dataset
    from transformers.trainer_callback import PrinterCallback
    from trl import SFTConfig, SFTTrainer

    torch.set_num_threads(settings.threads)
    torch.manual_seed(settings.seed)
    warnings.filterwarnings("ignore", message=r".*gradient_checkpointing.*deprecated", category=FutureWarning)
    lm, tokenizer, _ = load(model, cache_dir)
    kept = _fits(demos, tokenizer, settings.max_length)
    if not kept:
        raise GRPOError(f"every SFT example is longer than --max-length {settings.max_length} tokens: raise it")
    out.mkdir(parents=True, exist_ok=True)
    write_examples(out / EXAMPLES, demos)
    digest = hashlib.sha256((out / EXAMPLES).read_bytes()).hexdigest()
    evaluate = evaluation(config, test, settings.eval_max_new_tokens, tokenizer)
    if before is None:
        with memory_guard(lambda: "the held-out evaluation before training", "--eval-items", out):
            before = evaluate(lm)
    write_episodes(out / "eval_before.jsonl", before)

    curve: list[SFTStep] = []
    (out / SFT_CURVE).write_text("", encoding="utf-8")

    def log_loss(global_step: int, logs: dict[str, float], seconds: float) -> None:
        """Each step's loss and time, from the trainer's log, as an ``SFTStep`` line."""
        if "loss" not in logs:
            return
        step = SFTStep(step=global_step, loss=float(logs["loss"]), seconds=seconds)
        curve.append(step)
        with (out / SFT_CURVE).open("a", encoding="utf-8") as stream:
            stream.write(step.model_dump_json() + "\n")
        if progress is not None:
            progress(step)

    args = SFTConfig(
        output_dir=str(out / "checkpoints"),
        max_steps=settings.steps,
        per_device_train_batch_size=settings.batch_size,
        gradient_accumulation_steps=1,
        learning_rate=settings.learning_rate,
        lr_scheduler_type="linear",
        warmup_steps=0,
        max_length=settings.max_length,
        completion_only_loss=True,
        packing=False,
        use_cpu=True,
        bf16=False,
        fp16=False,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        seed=settings.seed,
        data_seed=settings.seed,
        dataloader_num_workers=0,
        dataloader_pin_memory=False,
        disable_tqdm=True,
    )
    tokenizer.padding_side = "right"  # training pads after the reply; generation pads on the left again below
    trainer = SFTTrainer(
        model=lm,
        args=args,
        train_dataset=Dataset.from_list([{"prompt": e.prompt, "completion": e.completion} for e in kept]),
        processing_class=tokenizer,
        callbacks=[timed_log_callback(log_loss, untimed=0.0)],
    )
    trainer.remove_callback(PrinterCallback)
    start = time.perf_counter()
    with memory_guard(lambda: f"SFT step {trainer.state.global_step + 1}", "--batch-size or --max-length", out):
        trainer.train()
    elapsed = time.perf_counter() - start
    tokenizer.padding_side = "left"
    final = out / MODEL_DIR
    trainer.save_model(str(final))
    tokenizer.save_pretrained(str(final))
    with memory_guard(lambda: "the held-out evaluation after training", "--eval-items", out):
        after = evaluate(trainer.model)
    write_episodes(out / "eval_after.jsonl", after)
    versions = {"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__}
    timed = [s.seconds for s in curve if not math.isnan(s.seconds)]
    summary = SFTSummary(
        config=config.name,
        benchmark=config.benchmark,
        model=model,
        settings=settings,
        examples=len(demos),
        examples_left_out=len(demos) - len(kept),
        examples_sha256=digest,
        train_items=len({e.item_id for e in kept}),
        eval_items=[r.item_id for r in before],
        steps=int(trainer.state.global_step),
        seconds=elapsed,
        seconds_per_step=sum(timed) / len(timed) if timed else None,
        train_loss=[s.loss for s in curve],
        eval_before=held_out(before),
        eval_after=held_out(after),
        paired={m: paired_difference(after, before, m) for m in ("reward", "valid")},
        versions=versions,
        checkpoint=str(final),
    )
    (out / "summary.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    write_checkpoint(
        out,
        stage="sft",
        config=config,
        model=model,
        trained=sorted({e.item_id for e in kept}),
        seed=settings.seed,
        settings=settings.model_dump(mode="json"),
        versions=versions,
        examples_sha256=digest,
    )
    return summary
