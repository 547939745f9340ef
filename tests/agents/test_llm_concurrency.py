"""The request cap holds across event loops and threads, and a cancelled waiter never keeps a slot."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from llm_server import ScriptedLLMServer

from lateralgym.agents._llm_client import ConcurrencyLimiter, LLMClient, set_default_concurrency

MakeClient = Callable[..., LLMClient]


@pytest.fixture
def default_cap_of_two() -> Iterator[None]:
    set_default_concurrency(2)
    try:
        yield
    finally:
        set_default_concurrency(8)


def test_async_and_sync_callers_share_the_default_cap(
    llm_server: ScriptedLLMServer, make_client: MakeClient, default_cap_of_two: None
) -> None:
    """A player on the runner's loop and a judge behind ``complete_sync`` (the background loop)."""
    llm_server.latency_s = 0.1
    player, judge = make_client(), make_client()

    async def players() -> None:
        async with player:
            await asyncio.gather(*(player.complete(f"player {i}") for i in range(6)))

    with ThreadPoolExecutor(6) as pool:
        judged = [pool.submit(judge.complete_sync, f"judge {i}") for i in range(6)]
        asyncio.run(players())
        assert all(f.result().text == "ok" for f in judged)

    assert llm_server.chat_calls == 12
    assert llm_server.max_in_flight == 2  # per-loop semaphores would let 4 through


def test_loops_in_several_threads_share_one_limiter(llm_server: ScriptedLLMServer, make_client: MakeClient) -> None:
    llm_server.latency_s = 0.05
    limiter = ConcurrencyLimiter(3)
    clients = [make_client(concurrency=limiter) for _ in range(3)]

    def own_loop(client: LLMClient) -> None:
        async def run() -> None:
            async with client:
                await asyncio.gather(*(client.complete(f"{id(client)} {i}") for i in range(5)))

        asyncio.run(run())

    threads = [threading.Thread(target=own_loop, args=(c,)) for c in clients]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert llm_server.chat_calls == 15 and llm_server.max_in_flight == 3
    assert limiter.in_use == 0


def test_cancelled_waiters_give_their_slots_back() -> None:
    limiter = ConcurrencyLimiter(1)

    async def run() -> list[int]:
        order: list[int] = []
        gate = asyncio.Event()

        async def hold(n: int) -> None:
            async with limiter.slot():
                order.append(n)
                await gate.wait()

        first = asyncio.create_task(hold(0))
        waiters = [asyncio.create_task(hold(n)) for n in (1, 2, 3)]
        await asyncio.sleep(0.01)
        waiters[0].cancel()  # still waiting
        await asyncio.sleep(0)
        gate.set()  # the holder leaves; its slot goes to waiter 2, not the cancelled 1
        await first
        waiters[1].cancel()  # granted the slot but cancelled before it ran: the slot passes on
        await asyncio.gather(*waiters, return_exceptions=True)
        return order

    assert asyncio.run(run()) == [0, 3]
    assert limiter.in_use == 0


def test_slot_is_released_when_the_block_raises() -> None:
    limiter = ConcurrencyLimiter(2)

    async def fail() -> None:
        async with limiter.slot():
            raise RuntimeError("boom")

    async def run() -> None:
        results = await asyncio.gather(*(fail() for _ in range(5)), return_exceptions=True)
        assert all(isinstance(r, RuntimeError) for r in results)

    asyncio.run(run())
    assert limiter.in_use == 0


def test_a_sync_call_that_blocks_a_loop_does_not_wait_on_that_loops_slots(
    llm_server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    """Blocking code inside async code (an LLM judge in a plain ``env.step``) must not hang."""
    llm_server.latency_s = 0.2
    client = make_client(concurrency=1)
    result: list[str] = []

    async def blocking_inside_a_loop() -> None:
        async with client:
            holder = asyncio.create_task(client.complete("holds the only slot"))
            await asyncio.sleep(0.05)  # in flight now; it can only finish when this loop runs again
            result.append(client.complete_sync("asked while the loop is blocked").text)
            await holder

    thread = threading.Thread(target=lambda: asyncio.run(blocking_inside_a_loop()), daemon=True)
    thread.start()
    thread.join(timeout=20)
    assert not thread.is_alive(), "the blocking call waited for a slot its own loop held"
    assert result == ["ok"] and client.limiter.in_use == 0
