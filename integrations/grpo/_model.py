"""The model GRPO trains: a spec resolved to a folder or a GGUF, loaded in float32 (a GGUF dequantised once
into a cache folder), and, for tool rollouts, a chat template TRL can parse tool calls from."""

from __future__ import annotations

import importlib.resources
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lateralgym.integrations.grpo._settings import GRPOError, grpo_missing

__all__ = ["load", "load_model", "resolve_model", "tool_template"]


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
    model, tokenizer, _ = load(spec, cache_dir)
    return model, tokenizer


def load(spec: str, cache_dir: Path | None) -> tuple[Any, Any, dict[str, float]]:
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


TOOL_TEMPLATE = "TRL's Qwen 2.5 (tool calling)"
"""What ``GRPOSummary.chat_template`` says when ``tool_template`` gave a model TRL's template."""


def tool_template(tokenizer: Any) -> str:
    """Make sure TRL can run tool calls through ``tokenizer``'s chat template; returns which template it is.

    A template that renders tool calls is kept. A ChatML tokenizer (``<|im_start|>`` / ``<|im_end|>``,
    SmolLM2's) whose template cannot is given TRL's own Qwen 2.5 template, which TRL parses.

    Raises:
        GRPOError: the template has no tool calling and the tokenizer is not ChatML.
    """
    from trl.chat_template_utils import add_response_schema, supports_tool_calling

    which = "the model's own"
    if not supports_tool_calling(tokenizer):
        vocab = tokenizer.get_vocab()
        if "<|im_start|>" not in vocab or tokenizer.eos_token != "<|im_end|>":
            raise GRPOError(
                "--rollout tools: the model's chat template cannot render tool calls, so TRL refuses it; use "
                "--rollout text, or a model whose template has tool calling (Qwen 2.5 / 3, Llama 3.1 / 3.2, ...)"
            )
        template = importlib.resources.files("trl") / "chat_templates" / "qwen2_5.jinja"
        tokenizer.chat_template = template.read_text(encoding="utf-8")
        which = TOOL_TEMPLATE
    if getattr(tokenizer, "response_template", None) is None and getattr(tokenizer, "response_schema", None) is None:
        try:  # how TRL reads tool calls back (it does the same when the trainer starts)
            add_response_schema(tokenizer)
        except ValueError:
            raise GRPOError(
                "--rollout tools: TRL cannot parse tool calls written with this model's chat template (it knows "
                "Qwen 2.5 / 3, Llama 3.1 / 3.2, GPT-OSS, Gemma 4, ...); use --rollout text"
            ) from None
    return which


def timed_log_callback(record: Callable[[int, dict[str, float], float], None], untimed: float) -> Any:
    """A trainer callback that times each step and hands each of the trainer's logs to ``record`` as
    (global step, logs, seconds of the last step; ``untimed`` before the first step ends)."""
    from transformers import TrainerCallback

    class TimedLog(TrainerCallback):  # type: ignore[misc]  # transformers is seen as Any (grpo extra)
        def __init__(self) -> None:
            self.started = time.perf_counter()
            self.seconds = untimed

        def on_step_begin(self, *_: Any, **__: Any) -> None:
            self.started = time.perf_counter()

        def on_step_end(self, *_: Any, **__: Any) -> None:
            self.seconds = time.perf_counter() - self.started

        def on_log(self, _: Any, state: Any, __: Any, logs: dict[str, float] | None = None, **___: Any) -> None:
            if logs:
                record(int(state.global_step), logs, self.seconds)

    return TimedLog()
