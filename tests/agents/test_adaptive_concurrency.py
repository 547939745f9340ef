"""The adaptive cap: halves on 429, grows while latency holds, and never lets more in flight than it allows."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from llm_server import Fault, ScriptedLLMServer, ScriptItem

from lateralgym.agents import AdaptiveLimiter, ConcurrencyLimiter, LLMClient


class CapacityServer(ScriptedLLMServer):
    """A server that answers 429 (Retry-After 0.05 s) to any request beyond ``capacity`` in flight."""

    def __init__(self, capacity: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.capacity = capacity
        self.rate_limited = 0

    def _next_item(self, body: dict[str, Any]) -> ScriptItem:
        with self._lock:
            over = self._state.in_flight > self.capacity
            if over:
                self.rate_limited += 1
        return Fault.rate_limit(retry_after=0.05) if over else super()._next_item(body)


def _calls(server: ScriptedLLMServer, limiter: ConcurrencyLimiter, tmp_path: Path, n: int) -> list[Any]:
    async def go() -> list[Any]:
        async with LLMClient(
            "openai/scripted-model",
            base_url=server.base_url,
            cache_dir=tmp_path / "cache",
            use_cache=False,
            concurrency=limiter,
            backoff_base_s=0.01,
            timeout=5.0,
            max_retries=30,
            raise_on_error=False,  # a starved request (retries exhausted) is counted, not raised
        ) as client:
            return list(await asyncio.gather(*(client.complete(f"question {i}") for i in range(n))))

    return asyncio.run(go())


def test_a_rate_limited_server_gets_fewer_429s_from_the_adaptive_cap_than_from_a_fixed_one(tmp_path: Path) -> None:
    counts = {}
    for name, limiter in (("fixed", ConcurrencyLimiter(64)), ("adaptive", AdaptiveLimiter(64))):
        # slow replies, so requests pile up however busy the machine is
        server = CapacityServer(capacity=4, latency_s=0.2).start()
        try:
            replies = _calls(server, limiter, tmp_path / name, 120)
        finally:
            server.stop()
        counts[name] = server.rate_limited
        if isinstance(limiter, AdaptiveLimiter):
            assert all(r.error is None for r in replies)  # every call got through, none starved
            assert limiter.halvings >= 1
        else:  # 64 in flight against room for 4: hammered with 429s, some requests starve outright
            counts["fixed starved"] = sum(r.error is not None for r in replies)
    assert counts["adaptive"] < counts["fixed"], counts


def test_the_adaptive_cap_grows_to_its_limit_against_a_server_that_keeps_up(tmp_path: Path) -> None:
    server = ScriptedLLMServer(latency_s=0.02).start()
    limiter = AdaptiveLimiter(32, start=2, latency_tolerance=50.0)  # growth alone: latency noise set aside
    try:
        replies = _calls(server, limiter, tmp_path, 400)
    finally:
        server.stop()
    assert all(r.error is None for r in replies)
    assert limiter.peak_allowance == 32 and limiter.halvings == 0
    assert server.max_in_flight > 2  # more than it started with were in flight at once
    assert server.max_in_flight <= 32


def test_growth_waits_for_a_window_of_successes_and_stops_while_latency_climbs() -> None:
    limiter = AdaptiveLimiter(100, start=8, cooldown_s=1000.0)
    for _ in range(7):
        limiter.observe(1.0, rate_limited=False)
    assert limiter.allowance == 8  # a window is as many successes as the allowance
    limiter.observe(1.0, rate_limited=False)
    assert limiter.allowance == 10  # + a quarter
    for _ in range(50):  # the server is queueing: average latency far above the best
        limiter.observe(9.0, rate_limited=False)
    assert limiter.allowance == 10
    limiter.observe(9.0, rate_limited=True)
    assert limiter.allowance == 5 and limiter.halvings == 1
    limiter.observe(9.0, rate_limited=True)  # the same burst of 429s, within the cooldown: once only
    assert limiter.allowance == 5 and limiter.halvings == 1


def test_the_allowance_never_drops_below_one_nor_starts_above_the_limit() -> None:
    limiter = AdaptiveLimiter(3, cooldown_s=0.0)
    assert limiter.allowance == 3
    for _ in range(5):
        limiter.observe(0.1, rate_limited=True)
    assert limiter.allowance == 1
