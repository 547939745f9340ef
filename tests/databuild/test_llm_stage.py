"""ask_json over HTTP to the loopback server: cached, validated, re-asked with the error, counted."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from llm_server import Fault, ScriptedLLMServer
from pydantic import BaseModel, Field

from lateralgym.agents import LLMClient
from lateralgym.databuild import CheckpointStore, StageCounters, ask_json, extract_json_object

MESSAGES = [{"role": "user", "content": "Name a part of a ladle as JSON."}]


class PartName(BaseModel):
    name: str = Field(min_length=2)
    count: int = Field(ge=1)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[CheckpointStore]:
    with CheckpointStore(tmp_path / "checkpoints") as opened:
        yield opened


def client(server: ScriptedLLMServer, **fields: object) -> LLMClient:
    settings: dict[str, object] = {"timeout": 10.0, "max_retries": 1, **fields}
    return LLMClient("openai/annotator", base_url=server.base_url, use_cache=False, backoff_base_s=0.01, **settings)


def ask(
    llm: LLMClient, store: CheckpointStore, counters: StageCounters, key: str = "k", **options: Any
) -> PartName | None:
    async def asked() -> PartName | None:
        try:
            return await ask_json(
                llm,
                stage="parts",
                key=key,
                messages=MESSAGES,
                schema=PartName,
                store=store,
                counters=counters,
                **{"temperature": 0.7, **options},
            )
        finally:
            await llm.aclose()  # on the loop that opened its connections

    return asyncio.run(asked())


def test_a_valid_reply_in_prose_is_stored_and_a_second_ask_costs_nothing(
    llm_server: ScriptedLLMServer, store: CheckpointStore
) -> None:
    llm_server.enqueue('Sure! Here it is:\n```json\n{"name": "bowl", "count": 1}\n```\nAnything else?')
    counters = StageCounters("parts")
    assert ask(client(llm_server), store, counters) == PartName(name="bowl", count=1)
    assert ask(client(llm_server), store, counters) == PartName(name="bowl", count=1)
    assert llm_server.chat_calls == 1
    assert (counters.calls, counters.cached, counters.written) == (1, 1, 1)
    assert counters.prompt_tokens == 8 and counters.completion_tokens > 0  # the server counts words
    assert llm_server.requests[0].body["temperature"] == 0.7
    assert store.get("parts", "k") == {"name": "bowl", "count": 1}


def test_invalid_replies_are_re_asked_with_the_validation_error(
    llm_server: ScriptedLLMServer, store: CheckpointStore
) -> None:
    llm_server.enqueue("I would rather not.", '{"name": "b", "count": 0}', '{"name": "bowl", "count": 2}')
    counters = StageCounters("parts")
    assert ask(client(llm_server), store, counters) == PartName(name="bowl", count=2)
    assert (counters.calls, counters.retried, counters.invalid_skipped, counters.written) == (3, 2, 0, 1)
    second, third = (request.body["messages"] for request in llm_server.requests[1:])
    assert second[-2] == {"role": "assistant", "content": "I would rather not."}
    assert "holds no JSON object" in second[-1]["content"]
    feedback = third[-1]["content"]
    assert "name: String should have at least 2 characters" in feedback
    assert "count: Input should be greater than or equal to 1" in feedback


def test_a_re_ask_samples_at_the_re_ask_temperature_with_its_own_seed_and_the_first_ask_does_not(
    llm_server: ScriptedLLMServer, store: CheckpointStore
) -> None:
    # A judge asked at temperature 0 would write its invalid reply again: its re-asks sample instead.
    replies = ('{"name": "x", "count": 1}', '{"name": "x", "count": 1}', '{"name": "bowl", "count": 1}')
    llm_server.enqueue(*replies)
    counters = StageCounters("parts")
    assert ask(client(llm_server, temperature=0), store, counters, temperature=0.0, reask_temperature=0.9)
    first, *reasks = (request.body for request in llm_server.requests)
    assert first["temperature"] == 0 and "seed" not in first  # the configured ask, as the paper's
    assert [body["temperature"] for body in reasks] == [0.9, 0.9]
    seeds = [body["seed"] for body in reasks]
    assert len(set(seeds)) == 2  # each attempt its own seed, so a seed-honouring server samples anew
    # The seeds are stable: the same question re-asked in another build sends the same ones.
    llm_server.enqueue(*replies)
    ask(client(llm_server), store, StageCounters("parts"), key="other", temperature=0.0, reask_temperature=0.9)
    llm_server.enqueue(*replies)
    with CheckpointStore(store.root.parent / "again") as fresh:
        ask(client(llm_server), fresh, StageCounters("parts"), temperature=0.0, reask_temperature=0.9)
    other, again = llm_server.requests[4:6], llm_server.requests[7:9]
    assert [r.body["seed"] for r in again] == seeds != [r.body["seed"] for r in other]
    # reask_temperature=None: every ask at the stage's temperature, no seed.
    llm_server.enqueue(*replies)
    ask(client(llm_server), store, StageCounters("parts"), key="plain", temperature=0.0, reask_temperature=None)
    assert all(r.body["temperature"] == 0 and "seed" not in r.body for r in llm_server.requests[9:])


def test_after_every_re_ask_fails_nothing_is_written_and_the_next_run_asks_again(
    llm_server: ScriptedLLMServer, store: CheckpointStore
) -> None:
    llm_server.enqueue('{"name": "x"}', "[1, 2]", '{"count": 1}')
    counters = StageCounters("parts")
    assert ask(client(llm_server), store, counters) is None
    assert (counters.calls, counters.retried, counters.invalid_skipped, counters.written) == (3, 2, 1, 0)
    assert store.records("parts") == {}
    llm_server.enqueue('{"name": "rim", "count": 1}')
    assert ask(client(llm_server), store, counters) == PartName(name="rim", count=1)
    assert llm_server.chat_calls == 4


def test_timeouts_and_api_errors_after_the_clients_retries_are_counted_errored(
    llm_server: ScriptedLLMServer, store: CheckpointStore
) -> None:
    llm_server.enqueue(Fault.delay(3.0), Fault.delay(3.0))  # past the 0.3 s timeout, twice (1 retry)
    counters = StageCounters("parts")
    assert ask(client(llm_server, timeout=0.3), store, counters) is None
    llm_server.enqueue(Fault.status(400))  # not retryable
    assert ask(client(llm_server), store, counters, key="other") is None
    assert (counters.calls, counters.errored, counters.written) == (2, 2, 0)
    assert store.records("parts") == {}
    llm_server.enqueue(Fault.status(503), '{"name": "lip", "count": 3}')  # retried inside the client
    assert ask(client(llm_server), store, counters, key="third") == PartName(name="lip", count=3)
    assert counters.errored == 2 and counters.retried == 0


def test_hundreds_of_questions_are_in_flight_at_once_under_the_clients_cap(
    llm_server: ScriptedLLMServer, store: CheckpointStore
) -> None:
    llm_server.responder = lambda body: '{"name": "bowl", "count": 1}'
    llm_server.latency_s = 1.0  # long enough for the whole first wave to be in flight together
    counters = StageCounters("parts")
    llm = client(llm_server, concurrency=120)

    async def many() -> list[PartName | None]:
        questions = [
            ask_json(
                llm,
                stage="parts",
                key=f"q{i}",
                messages=[{"role": "user", "content": f"question {i}"}],
                schema=PartName,
                store=store,
                counters=counters,
                temperature=0.7,
            )
            for i in range(200)
        ]
        peak = 0

        async def watch() -> None:
            nonlocal peak
            while True:
                peak = max(peak, llm.limiter.in_use)
                await asyncio.sleep(0.01)

        watcher = asyncio.create_task(watch())
        try:
            return await asyncio.gather(*questions)
        finally:
            watcher.cancel()
            peaks.append(peak)
            await llm.aclose()

    peaks: list[int] = []
    answers = asyncio.run(many())
    assert counters.errored == 0, counters
    assert all(answer is not None for answer in answers) and counters.written == 200
    assert llm_server.max_in_flight >= 60  # the server saw them together
    assert 60 <= peaks[0] <= 120  # and the client's cap held
    assert len(store.records("parts")) == 200


def test_a_checkpoint_that_no_longer_fits_the_schema_says_which_file_to_delete(
    llm_server: ScriptedLLMServer, store: CheckpointStore
) -> None:
    store.put("parts", "k", {"name": "bowl"})
    from lateralgym.databuild import DataBuildError

    with pytest.raises(DataBuildError, match=r"parts.jsonl, key 'k': checkpoint does not fit PartName .*delete"):
        ask(client(llm_server), store, StageCounters("parts"))
    assert llm_server.chat_calls == 0


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": {"b": [1, 2]}}\n```', {"a": {"b": [1, 2]}}),
        ('Use {braces} like {"a": 1} here', {"a": 1}),
        ('[{"a": 1}]', {"a": 1}),
    ],
)
def test_extract_json_object_finds_the_object_amid_prose(text: str, expected: dict[str, object]) -> None:
    assert extract_json_object(text) == expected


def test_extract_json_object_refuses_text_without_one() -> None:
    with pytest.raises(ValueError, match="no JSON object"):
        extract_json_object("[1, 2, 3] and {not json}")
