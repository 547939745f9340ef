"""The default ``local/`` runtime: transformers on CPU torch, replies constrained by llguidance
(``lateralgym.agents._transformers_serve``), served as LateralGym serves every local model: on the
socket it binds, under a key of its own, through ``LocalModelServer``.

The model is a tiny Llama made here (two layers, random weights, a byte-level tokenizer with a ChatML
template), so the server's real code paths run in seconds without any download: what it writes is noise,
which is the point of the constraint checks (a constrained reply is a move whatever the model wants).
Skipped when the ``local`` extra is not installed.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from local_servers import write_gguf

from lateralgym.agents._local_model import local_runtime_missing

pytestmark = pytest.mark.skipif(
    local_runtime_missing() is not None,
    reason=f"the transformers runtime is not installed: {local_runtime_missing()}",
)

ALIAS = "tiny"
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-layer Llama with random weights and a byte-level tokenizer, saved as transformers saves one."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-llama")
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    vocab = {char: n for n, char in enumerate(sorted(alphabet))}
    backend = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, eos_token="<|im_end|>", bos_token="<|im_start|>")
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    tokenizer.chat_template = CHATML
    tokenizer.save_pretrained(folder)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=1024, eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
    )  # fmt: skip
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def server(tiny_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """The tiny model served by ``_transformers_serve`` through ``LocalModelServer`` (context 256 tokens)."""
    from lateralgym.agents import LocalModelServer

    def command(model: Path, alias: str, fd: int, threads: int, n_ctx: int, *, cache_slots: int = 1) -> list[str]:
        settings = {"folder": str(tiny_model), "alias": alias, "threads": threads, "context": n_ctx,
                    "cache_slots": cache_slots, "dtype": "float32"}  # fmt: skip
        return ["-m", "lateralgym.agents._transformers_serve", str(fd), json.dumps(settings)]

    gguf = write_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf")  # the header LocalModelServer reads
    with LocalModelServer(gguf, alias=ALIAS, threads=1, n_ctx=256, command=command, cache_slots=2) as running:
        yield running


def post(server: Any, body: dict[str, Any], key: str | None = None) -> tuple[int, bytes]:
    request = urllib.request.Request(
        f"{server.base_url}/chat/completions",
        data=json.dumps({"model": ALIAS, "messages": [{"role": "user", "content": "Pick one."}], **body}).encode(),
        headers={"Authorization": f"Bearer {key or server.api_key}", "Content-Type": "application/json"},
    )
    try:
        with DIRECT.open(request, timeout=120) as response:
            return int(response.status), response.read()
    except urllib.error.HTTPError as exc:
        with exc:
            return int(exc.code), exc.read()


def content(reply: bytes) -> str:
    return str(json.loads(reply)["choices"][0]["message"]["content"])


def test_the_server_proves_itself_and_refuses_a_wrong_key(server: Any) -> None:
    from lateralgym.agents._local_identity import check_server

    assert check_server(server.base_url, server.api_key, ALIAS)
    status, _ = post(server, {"max_tokens": 2}, key="not-the-key")
    assert status == 401
    command_line = Path(f"/proc/{server.pid}/cmdline").read_bytes()
    assert b"_transformers_serve" in command_line and server.api_key.encode() not in command_line


def test_a_grammar_makes_any_model_write_a_move(server: Any) -> None:
    from lateralgym.envs import ActionGrammar, FreeText, LineForm, OneOf

    grammar = ActionGrammar(
        (LineForm("commit", "Answer: ", OneOf(("A", "B", "C", "D"))), LineForm("ask", "Question: ", FreeText(12, "?")))
    )
    for seed in range(3):
        status, reply = post(server, {"grammar": grammar.gbnf(), "temperature": 1.0, "seed": seed, "max_tokens": 120})
        assert status == 200, reply
        text = content(reply)
        assert text in {"Answer: A", "Answer: B", "Answer: C", "Answer: D"} or (
            text.startswith("Question: ") and text.endswith("?") and "\n" not in text
        ), text


def test_a_json_schema_makes_it_write_the_object(server: Any) -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"enum": ["yes", "no"]}},
        "required": ["answer"],
        "additionalProperties": False,
    }
    body = {"response_format": {"type": "json_schema", "json_schema": {"name": "m", "schema": schema}}}
    status, reply = post(server, {**body, "temperature": 0, "max_tokens": 40})
    assert status == 200, reply
    assert json.loads(content(reply)) in ({"answer": "yes"}, {"answer": "no"})


def test_temperature_zero_replies_the_same_with_and_without_the_prompt_cache(server: Any) -> None:
    body = {"temperature": 0, "max_tokens": 12}
    first = content(post(server, body)[1])
    again = content(post(server, body)[1])  # the prompt's cached states are reused
    other = post(server, {**body, "messages": [{"role": "user", "content": "Something else entirely."}]})
    assert other[0] == 200
    assert content(post(server, body)[1]) == first == again


def test_a_reply_streams_and_counts_its_tokens(server: Any) -> None:
    status, reply = post(server, {"stream": True, "temperature": 0, "max_tokens": 5})
    assert status == 200
    events = [line.removeprefix(b"data: ") for line in reply.splitlines() if line.startswith(b"data: ")]
    assert events[-1] == b"[DONE]"
    chunks = [json.loads(event) for event in events[:-1]]
    assert chunks[-1]["choices"][0]["finish_reason"] in ("stop", "length")
    assert chunks[-1]["usage"]["completion_tokens"] <= 5


def test_what_it_cannot_answer_is_refused_with_400(server: Any) -> None:
    long_chat = {"messages": [{"role": "user", "content": "word " * 400}]}  # past the 256 tokens of context
    cases = [
        (long_chat, "more than the server's context of 256"),
        ({"grammar": "root ::= ("}, "does not compile"),
        ({"response_format": {"type": "xml"}}, "not supported"),
        ({"n": 2}, "n must be 1"),
    ]
    for body, message in cases:
        status, reply = post(server, body)
        assert status == 400 and message in json.loads(reply)["error"]["message"], reply
