"""Token-level data: asked for only with ``logprobs=true`` / ``token_ids=true``, kept when the server sends it."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from llm_server import ScriptedLLMServer, reply_tokens, token_ids, token_logprob

from lateralgym.agents import LLMClient, ModelSpec
from lateralgym.agents._llm_backends import token_data


def test_token_data_is_off_by_default_and_asked_for_on_request(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    llm_server.enqueue("plain reply", "a reply with logprobs")
    plain = LLMClient("openai/m", base_url=llm_server.base_url, cache_dir=tmp_path).complete_sync("hi")
    spec = ModelSpec.parse("openai/m?logprobs=true&token_ids=true", base_url=llm_server.base_url)
    assert spec.logprobs and spec.token_ids and not ModelSpec.parse("openai/m").logprobs
    rich = LLMClient(spec, cache_dir=tmp_path).complete_sync("hi")
    first, second = (r.body for r in llm_server.requests)
    assert "logprobs" not in first and "return_token_ids" not in first
    assert second["logprobs"] is True and second["return_token_ids"] is True
    assert plain.tokens is None and plain.logprobs is None and plain.token_ids is None
    assert rich.tokens == reply_tokens("a reply with logprobs") and "".join(rich.tokens) == rich.text
    assert rich.logprobs == [token_logprob(t) for t in rich.tokens] and rich.token_ids == token_ids(rich.text)
    # a cache hit replays the token data of the original call
    again = LLMClient(spec, cache_dir=tmp_path).complete_sync("hi")
    assert again.cache_hit and again.logprobs == rich.logprobs and again.token_ids == rich.token_ids


def test_token_ids_are_read_from_vllm_token_strings_and_malformed_data_is_dropped() -> None:
    def choice(content: object, ids: object = None) -> SimpleNamespace:
        return SimpleNamespace(logprobs=SimpleNamespace(content=content), token_ids=ids)

    as_ids = [{"token": "token_id:17", "logprob": -0.5}, {"token": "token_id:4", "logprob": -1.0}]
    assert token_data(choice(as_ids)) == (["token_id:17", "token_id:4"], [-0.5, -1.0], [17, 4])
    assert token_data(choice([{"token": "a", "logprob": "not a number"}])) == (None, None, None)
    assert token_data(choice(None, ids=[1, "x"])) == (None, None, None)
    assert token_data({"logprobs": {"content": [{"token": "b", "logprob": -2}]}, "token_ids": [9]}) == (
        ["b"],
        [-2.0],
        [9],
    )
