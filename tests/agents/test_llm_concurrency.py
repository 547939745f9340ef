"""The request cap holds per event loop, a cancelled waiter never keeps a slot, and nothing deadlocks."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from llm_server import ScriptedLLMServer

from lateralgym.agents._llm_client import ConcurrencyLimiter, LLMClient, default_concurrency, set_default_concurrency

MakeClient = Callable[..., LLMClient]


@pytest.fixture
def default_cap_of_two() -> Iterator[None]:
    set_default_concurrency(2)
    try:
        yield
    finally:
        set_default_concurrency(8)


def asked(prefix: str) -> Callable[[Any], bool]:
    """Picks the requests whose last message starts with ``prefix``."""
    return lambda body: str(body["messages"][-1]["content"]).startswith(prefix)


def test_n_concurrent_calls_never_exceed_the_cap(
    llm_server: ScriptedLLMServer, make_client: MakeClient, default_cap_of_two: None
) -> None:
    assert default_concurrency() == 2
    llm_server.latency_s = 0.05
    player, judge = make_client(), make_client()

    async def run() -> None:
        async with player, judge:
            await asyncio.gather(
                *(player.complete(f"player {i}") for i in range(8)),
                *(judge.complete(f"judge {i}", role="judge") for i in range(8)),
            )

    asyncio.run(run())
    assert llm_server.chat_calls == 16
    assert llm_server.max_in_flight == 2  # players and judges on one loop share its cap


def test_sync_and_async_callers_each_have_their_loops_cap(
    llm_server: ScriptedLLMServer, make_client: MakeClient, default_cap_of_two: None
) -> None:
    """A player on the runner's loop, and sync callers (all on the one background loop)."""
    llm_server.latency_s = 0.1
    player, judge = make_client(), make_client()

    async def players() -> None:
        async with player:
            await asyncio.gather(*(player.complete(f"player {i}") for i in range(6)))

    with ThreadPoolExecutor(6) as pool:
        judged = [pool.submit(judge.complete_sync, f"judge {i}", role="judge") for i in range(6)]
        asyncio.run(players())
        assert all(f.result().text == "ok" for f in judged)

    assert llm_server.chat_calls == 12
    assert llm_server.peak_in_flight(asked("player")) == 2
    assert llm_server.peak_in_flight(asked("judge")) == 2  # six threads, one background loop, one cap
    assert llm_server.max_in_flight <= 4


def test_loops_in_several_threads_each_get_the_shared_limiters_cap(
    llm_server: ScriptedLLMServer, make_client: MakeClient
) -> None:
    llm_server.latency_s = 0.05
    limiter = ConcurrencyLimiter(3)
    clients = [make_client(concurrency=limiter) for _ in range(3)]
    leftover: list[int] = []

    def own_loop(n: int, client: LLMClient) -> None:
        async def run() -> None:
            async with client:
                await asyncio.gather(*(client.complete(f"loop{n} {i}") for i in range(5)))
            leftover.append(limiter.in_use)

        asyncio.run(run())

    threads = [threading.Thread(target=own_loop, args=(n, c)) for n, c in enumerate(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert llm_server.chat_calls == 15 and llm_server.max_in_flight <= 9
    assert [llm_server.peak_in_flight(asked(f"loop{n}")) for n in range(3)] == [3, 3, 3]
    assert leftover == [0, 0, 0]


def test_an_int_gives_a_client_its_own_cap(
    llm_server: ScriptedLLMServer, make_client: MakeClient, default_cap_of_two: None
) -> None:
    llm_server.latency_s = 0.05
    own, shared = make_client(concurrency=3), make_client()

    async def run() -> None:
        async with own, shared:
            await asyncio.gather(
                *(own.complete(f"own {i}") for i in range(6)), *(shared.complete(f"shared {i}") for i in range(6))
            )

    asyncio.run(run())
    assert llm_server.peak_in_flight(asked("own")) == 3
    assert llm_server.peak_in_flight(asked("shared")) == 2


def test_cancelled_waiters_give_their_slots_back() -> None:
    limiter = ConcurrencyLimiter(1)

    async def run() -> tuple[list[int], int]:
        order: list[int] = []

        async def take(n: int) -> None:
            async with limiter.slot():
                order.append(n)

        held = limiter.slot()
        await held.__aenter__()  # this task holds the only slot
        waiters = [asyncio.create_task(take(n)) for n in (1, 2, 3)]
        await asyncio.sleep(0.01)
        waiters[0].cancel()  # still waiting
        await asyncio.sleep(0)
        await held.__aexit__(None, None, None)  # the slot goes to waiter 2 (not the cancelled 1) ...
        waiters[1].cancel()  # ... which is cancelled before it ran: the slot passes on to 3
        await asyncio.wait_for(asyncio.gather(*waiters, return_exceptions=True), 5)  # a kept slot would hang
        return order, limiter.in_use

    assert asyncio.run(run()) == ([3], 0)


def test_slot_is_released_when_the_block_raises() -> None:
    limiter = ConcurrencyLimiter(2)

    async def fail() -> None:
        async with limiter.slot():
            raise RuntimeError("boom")

    async def run() -> int:
        results = await asyncio.gather(*(fail() for _ in range(5)), return_exceptions=True)
        assert all(isinstance(r, RuntimeError) for r in results)
        return limiter.in_use

    assert asyncio.run(run()) == 0


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
            result.append(str(client.limiter.in_use))

    thread = threading.Thread(target=lambda: asyncio.run(blocking_inside_a_loop()), daemon=True)
    thread.start()
    thread.join(timeout=20)
    assert not thread.is_alive(), "the blocking call waited for a slot its own loop held"
    assert result == ["ok", "0"]


def test_bad_limit() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ConcurrencyLimiter(0)
