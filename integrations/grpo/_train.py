"""``train_grpo``: TRL's ``GRPOTrainer`` on a config's train items, greedy held-out play before and after.

See the package docstring for what a run folder holds; text and tool rollouts are ``_text.py`` and
``_tools.py``, the figures ``_settings.py``, the files ``_files.py``.
"""

from __future__ import annotations

import math
import os
import time
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lateralgym.envs import EpisodeConfig, curriculum_for, get_benchmark, load_config_items, split_items
from lateralgym.integrations._chat_env import ChatEnv
from lateralgym.integrations.grpo._curriculum import CurriculumSampler, observed_reward, row_items
from lateralgym.integrations.grpo._files import (
    CURVE,
    append_step,
    curve_until,
    last_checkpoint,
    memory_guard,
    plot,
    read_episodes,
    write_episodes,
)
from lateralgym.integrations.grpo._heldout import held_out, paired_difference
from lateralgym.integrations.grpo._manifest import (
    MANIFEST,
    MODEL_DIR,
    CheckpointManifest,
    read_checkpoint,
    write_checkpoint,
)
from lateralgym.integrations.grpo._model import load, timed_log_callback, tool_template
from lateralgym.integrations.grpo._play import play_greedy, play_greedy_tools
from lateralgym.integrations.grpo._settings import (
    EpisodeFigures,
    GRPOError,
    GRPOSettings,
    GRPOSummary,
    StepFigures,
    grpo_missing,
)
from lateralgym.integrations.grpo._text import REWARD_METRIC, VALID_METRIC, reward_funcs, rollout_func, training_rows
from lateralgym.integrations.grpo._tools import tool_environment, tool_rewards

__all__ = ["evaluation", "split_train_test", "spread", "train_grpo"]


def split_train_test(
    config: EpisodeConfig, items: Sequence[Any] | None, eval_items: int | None
) -> tuple[list[Any], list[Any]]:
    pool = list(items) if items is not None else list(load_config_items(config))
    train, test = split_items(pool, "train"), split_items(pool, "test")
    if not train:
        raise GRPOError(
            f"config {config.name!r}: none of its {len(pool)} items is in the train split (every item carries "
            "split: test, or hashes there); give a dataset with train items (--data)"
        )
    if not test:
        raise GRPOError(f"config {config.name!r}: no held-out (test) item to evaluate on; give a larger dataset")
    return train, spread(test, eval_items) if eval_items else test


def spread(items: Sequence[Any], count: int) -> list[Any]:
    """``count`` of ``items`` evenly spaced over their order (all when there are no more): a dataset lists
    one answer's items together, so its first ``count`` would be a few answers' variants."""
    if count >= len(items):
        return list(items)
    return [items[int(k * len(items) / count)] for k in range(count)]


def train_grpo(
    config: EpisodeConfig,
    model: str,
    out: Path,
    settings: GRPOSettings | None = None,
    *,
    items: Sequence[Any] | None = None,
    resume: bool = False,
    init: Path | None = None,
    cache_dir: Path | None = None,
    progress: Callable[[int, StepFigures], None] | None = None,
) -> GRPOSummary:
    """Train ``model`` with GRPO on ``config``'s train items; evaluate greedily on its test items.

    Args:
        config: any benchmark's config (single-turn or multi-turn).
        model: ``local/smollm2``, ``local/PATH.gguf`` or a Hugging Face model folder.
        out: the run folder (``summary.json``, checkpoints, the final model).
        settings: how to train (``GRPOSettings``).
        items: the items to split (default: the config's dataset or sample).
        resume: continue from the last checkpoint in ``out``.
        init: a checkpoint folder (``train sft`` / ``train grpo`` wrote it, ``manifest.json``) to start from
            instead of ``model``, which must be the base model its manifest names.
        cache_dir: where a GGUF is dequantised (default ``~/.cache/lateralgym/models``).
        progress: called after each step with the step number and its logged figures.

    Raises:
        GRPOError: a missing extra, a model that does not load, no train or test items, out of memory,
            a resume with no checkpoint, an ``init`` of another base model or config or trained on a held-out
            item (``CheckpointError``; each a one-line message, nothing in ``out`` overwritten).
    """
    missing = grpo_missing()
    if missing:
        raise GRPOError(missing)
    settings = settings or GRPOSettings()
    checkpoint = last_checkpoint(out) if resume else None
    if resume and checkpoint is None:
        raise GRPOError(f"nothing to resume: {out} holds no checkpoints/checkpoint-N; start without --resume")
    if not resume and ((out / MANIFEST).exists() or (out / MODEL_DIR).exists()):
        raise GRPOError(f"--out {out} already holds a trained model: give a new folder")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    import transformers
    import trl
    from datasets import Dataset
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(settings.threads)
    torch.manual_seed(settings.seed)
    # TRL 1.16 still calls transformers 5's renamed gradient-checkpointing API: noise, not the user's to fix
    warnings.filterwarnings("ignore", message=r".*gradient_checkpointing.*deprecated", category=FutureWarning)
    train, test = split_train_test(config, items, settings.eval_items)
    if settings.curriculum == "adaptive" and settings.rollout == "tools":
        raise GRPOError("--curriculum adaptive draws the text rollouts' prompts: use it with --rollout text")
    curriculum = curriculum_for(get_benchmark(config.benchmark), train, settings.curriculum, seed=settings.seed)
    init_folder, manifest = None, None
    if init is not None:
        held = [str(getattr(item, "id", "")) for item in test]
        init_folder, manifest = read_checkpoint(init, config, model, held)
    lm, tokenizer, _ = load(str(init_folder / MODEL_DIR) if init_folder is not None else model, cache_dir)
    template = tool_template(tokenizer) if settings.rollout == "tools" else "the model's own"
    out.mkdir(parents=True, exist_ok=True)
    evaluate = evaluation(config, test, settings.eval_max_new_tokens, tokenizer, settings.rollout)
    before = read_episodes(out / "eval_before.jsonl") if checkpoint is not None else []
    if len(before) != len(test):  # a resumed run keeps the starting model's evaluation
        before = _played_before(init_folder, manifest, test, settings)
    if len(before) != len(test):
        with memory_guard(lambda: "the held-out evaluation before training", "--eval-items", out):
            before = evaluate(lm)
    write_episodes(out / "eval_before.jsonl", before)

    steps = curve_until(out, checkpoint)
    write_episodes(out / CURVE, steps)
    multi_turn = config.max_turns > 1
    extra: dict[str, Any] = {}
    if settings.rollout == "tools":
        env_class, rows = tool_environment(config, train)
        funcs = tool_rewards()
        extra = {"environment_factory": env_class, "max_tool_calling_iterations": config.max_turns}
        weights = [settings.valid_shaping]  # TRL adds the env's reward (get_reward) at weight 1
        length = config.max_turns * (settings.max_completion_length + 128)
    elif multi_turn:
        train_chat = ChatEnv(config, items=train)
        rows = training_rows(train_chat)
        rollout, funcs = rollout_func(train_chat, tokenizer, settings)
        extra = {"rollout_func": rollout}
        weights = [1.0, settings.valid_shaping]
        length = config.max_turns * (settings.max_completion_length + 256)
    else:
        train_chat = ChatEnv(config, items=train)
        rows = training_rows(train_chat)
        funcs = reward_funcs(train_chat, settings.valid_shaping)
        weights = [1.0]
        length = settings.max_completion_length
    trainer_only = {k: extra.pop(k) for k in ("environment_factory", "rollout_func") if k in extra}
    step_levels: Counter[str] = Counter()
    item_rows: dict[int, int] = {}
    if settings.rollout == "text":
        positions = row_items(rows, train)
        item_rows = {position: row for row, position in enumerate(positions)}
        row_item = {str(row["info"]): position for row, position in zip(rows, positions, strict=True)}
        funcs = [observed_reward(funcs[0], curriculum, row_item, step_levels), *funcs[1:]]
    batch = settings.num_generations * settings.prompts_per_step
    args = GRPOConfig(
        output_dir=str(out / "checkpoints"),
        max_steps=settings.steps,
        learning_rate=settings.learning_rate,
        lr_scheduler_type="constant",
        warmup_steps=0,
        beta=settings.beta,
        num_generations=settings.num_generations,
        per_device_train_batch_size=batch,
        gradient_accumulation_steps=1,
        max_completion_length=length,
        temperature=settings.temperature,
        top_k=0,
        reward_weights=weights,
        use_cpu=True,
        bf16=False,
        fp16=False,
        logging_steps=1,
        save_strategy="steps",
        save_steps=settings.save_every,
        save_total_limit=1,  # the latest checkpoint is what --resume needs; each holds ~1.5 GB at 135M
        report_to="none",
        seed=settings.seed,
        data_seed=settings.seed,
        dataloader_num_workers=0,
        dataloader_pin_memory=False,
        disable_tqdm=True,
        **extra,
    )

    def log_step(global_step: int, logs: dict[str, float], seconds: float) -> None:
        """Each step's figures, read from TRL's log (the rewards log them), as a ``StepFigures`` line."""
        if REWARD_METRIC not in logs:
            return
        figures = StepFigures(
            step=global_step,
            reward=float(logs[REWARD_METRIC]),
            valid=float(logs.get(VALID_METRIC, math.nan)),
            seconds=seconds,
            levels=dict(sorted(step_levels.items())),
        )
        step_levels.clear()
        steps.append(figures)
        append_step(out, figures)
        if progress is not None:
            progress(figures.step, figures)

    trainer_class = GRPOTrainer
    if settings.curriculum == "adaptive":
        if len(item_rows) != len(train):
            raise GRPOError(f"--curriculum adaptive: {len(train) - len(item_rows)} train items have no prompt row")

        class CurriculumTrainer(GRPOTrainer):  # type: ignore[misc]  # trl is seen as Any (grpo extra)
            """TRL's trainer whose train prompts the curriculum draws (``CurriculumSampler``)."""

            def _get_train_sampler(self, dataset: Any = None) -> Any:
                return CurriculumSampler(
                    curriculum,
                    [item_rows[n] for n in range(len(train))],
                    prompts=self.args.generation_batch_size // self.num_generations,
                    generations=self.num_generations,
                    reuse=self.num_iterations * self.args.steps_per_generation,
                    length=len(rows),
                )

        trainer_class = CurriculumTrainer
    trainer = trainer_class(
        model=lm,
        reward_funcs=funcs,
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        callbacks=[timed_log_callback(log_step, untimed=math.nan)],
        **trainer_only,
    )
    trainer.remove_callback(PrinterCallback)
    start = time.perf_counter()
    try:
        with memory_guard(
            lambda: f"step {trainer.state.global_step + 1}", "--num-generations or --max-completion-length", out
        ):
            trainer.train(resume_from_checkpoint=str(checkpoint) if checkpoint is not None else None)
    except KeyboardInterrupt:
        # Trainer's own checkpoint writer (model, optimizer, scheduler, RNG, step): what --resume reads
        trainer._save_checkpoint(trainer.model, trial=None)
        raise
    elapsed = time.perf_counter() - start
    final = out / "model"
    trainer.save_model(str(final))
    tokenizer.save_pretrained(str(final))
    with memory_guard(lambda: "the held-out evaluation after training", "--eval-items", out):
        after = evaluate(trainer.model)
    write_episodes(out / "eval_after.jsonl", after)
    timed = [s.seconds for s in steps if not math.isnan(s.seconds)]
    summary = GRPOSummary(
        config=config.name,
        benchmark=config.benchmark,
        model=model,
        settings=settings,
        train_items=[str(getattr(i, "id", "")) for i in train],
        eval_items=[r.item_id for r in before],
        steps=int(trainer.state.global_step),
        seconds=elapsed,
        seconds_per_step=sum(timed) / len(timed) if timed else None,
        eval_before=held_out(before),
        eval_after=held_out(after),
        paired={m: paired_difference(after, before, m) for m in ("reward", "valid")},
        init=str(init_folder) if init_folder is not None else None,
        train_reward=[s.reward for s in steps],
        train_valid=[s.valid for s in steps],
        multi_turn=multi_turn,
        chat_template=template,
        versions={"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__},
        checkpoint=str(final),
    )
    (out / "summary.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    write_checkpoint(
        out,
        stage="grpo",
        config=config,
        model=model,
        trained=summary.train_items,
        seed=settings.seed,
        settings=settings.model_dump(mode="json"),
        versions=summary.versions,
        init=init_folder,
    )
    plot(summary, out / "learning_curve.png")
    return summary


def evaluation(
    config: EpisodeConfig, test: Sequence[Any], max_new_tokens: int, tokenizer: Any, rollout: str = "text"
) -> Callable[[Any], list[EpisodeFigures]]:
    """Greedy play of the held-out items, as the run's rollouts play: with the player's prompts, or tool calls."""
    if rollout == "tools":
        env_class, rows = tool_environment(config, test)
        return lambda model: play_greedy_tools(model, tokenizer, env_class, rows, max_new_tokens)
    chat = ChatEnv(config, items=test)
    rows = chat.dataset()
    return lambda model: play_greedy(model, tokenizer, chat, rows, max_new_tokens)


def _played_before(
    init: Path | None, manifest: CheckpointManifest | None, test: Sequence[Any], settings: GRPOSettings
) -> list[EpisodeFigures]:
    """The checkpoint's own held-out episodes (``eval_after.jsonl``) when they are this run's items played as
    this run plays them (text rollouts, the same token cap): greedy play of the same model gives them again."""
    if init is None or manifest is None or settings.rollout != "text":
        return []
    if manifest.settings.get("eval_max_new_tokens") != settings.eval_max_new_tokens:
        return []
    played = read_episodes(init / "eval_after.jsonl")
    ids = [str(getattr(item, "id", "")) for item in test]
    return played if [r.item_id for r in played] == ids else []
