"""With a local model, the run's first line: how long it will take on this machine.

One timed call to each local server (``measure_speed``: how fast it reads a prompt and writes a reply)
times the run's plan (``dry_run``: calls and tokens per role, every episode ending at once to every
turn used). The server's prompt cache is counted: a later turn reads only what the chat gained since
(``EXCHANGE_TOKENS``), not the whole chat again. A local server answers one request at a time, so the
roles' times add up. Past ``LONG_RUN_S`` the line says which ``--sample`` (items that stand for the
set) or ``--max-turns`` brings the run back near it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel

from lateralgym.agents import LOCAL_PROVIDER, ServedModel, Speed
from lateralgym.envs import EpisodeConfig
from lateralgym.episodes._dryrun import EXCHANGE_TOKENS, DryRun, RoleEstimate, dry_run
from lateralgym.episodes._options import RunOptions

__all__ = ["LONG_RUN_S", "TimeEstimate", "estimate_time", "time_estimate"]

LONG_RUN_S = 600.0
"""A run estimated to take longer than this gets advice on shortening it."""


class TimeEstimate(BaseModel):
    """How long a run's local model calls will take, fewest to most."""

    low_s: float
    """Every episode ends after one turn."""
    high_s: float
    """Every episode uses every turn."""
    calls: tuple[int, int]
    """Local model calls, fewest to most."""
    speed: Speed
    """The first local server's measured speed."""
    served: str
    """What serves them (``local/smollm2, 1 thread``)."""
    episodes: int
    items: int
    max_turns: int

    def line(self) -> str:
        """The run's first line."""
        text = (
            f"time: about {_minutes(self.low_s)}"
            + (f" to {_minutes(self.high_s)}" if self.high_s > self.low_s * 1.05 else "")
            + f" for {self.calls[0]}"
            + (f"-{self.calls[1]}" if self.calls[1] > self.calls[0] else "")
            + f" local model calls ({self.served}: reads {self.speed.read_tokens_per_s:.0f}, writes "
            f"{self.speed.write_tokens_per_s:.0f} tokens/s, measured by one call)"
        )
        advice = self.advice()
        return f"{text}\n{advice}" if advice else text

    def advice(self) -> str | None:
        """Which flags bring a run longer than ``LONG_RUN_S`` back near it (None when it is shorter)."""
        if self.high_s <= LONG_RUN_S:
            return None
        share = LONG_RUN_S / self.high_s
        options = []
        fewer = int(self.items * share)
        if 1 <= fewer < self.items:
            options.append(f"--sample {fewer}")
        turns = int(self.max_turns * share)
        if self.max_turns > 1 and 1 <= turns < self.max_turns:
            options.append(f"--max-turns {turns}")
        if not options:
            return f"this run may take up to {_minutes(self.high_s)}; a smaller dataset or model would shorten it"
        return f"this run may take up to {_minutes(self.high_s)}: {' or '.join(options)} keeps it near 10 min"


def estimate_time(dry: DryRun, speed: Speed, served: str, local_roles: Sequence[str]) -> TimeEstimate:
    """The time of ``dry``'s calls of ``local_roles`` at ``speed`` (see the module docstring)."""
    low = high = 0.0
    calls = [0, 0]
    for role in dry.roles:
        if role.role not in local_roles:
            continue
        read_low, read_high = _read_tokens(role)
        low += read_low / speed.read_tokens_per_s + role.completion_tokens[0] / speed.write_tokens_per_s
        high += read_high / speed.read_tokens_per_s + role.completion_tokens[1] / speed.write_tokens_per_s
        calls = [calls[0] + role.calls[0], calls[1] + role.calls[1]]
    return TimeEstimate(
        low_s=low,
        high_s=high,
        calls=(calls[0], calls[1]),
        speed=speed,
        served=served,
        episodes=dry.episodes,
        items=dry.items,
        max_turns=dry.max_turns,
    )


def _read_tokens(role: RoleEstimate) -> tuple[int, int]:
    """Prompt tokens a server with a prompt cache reads: the first calls in full, each later one only
    what the chat gained since."""
    first = role.prompt_tokens[0]
    return first, first + (role.calls[1] - role.calls[0]) * EXCHANGE_TOKENS


async def time_estimate(
    config: EpisodeConfig,
    options: RunOptions,
    items: Sequence[Any],
    served: Sequence[ServedModel],
    dry: DryRun | None = None,
) -> TimeEstimate | None:
    """The estimate for a run whose player or judge is a ``local/`` model (None when neither is); ``dry``:
    the run's plan when already made.

    Raises:
        LocalModelError: the timing call failed (the server died, or streams nothing).
    """
    from lateralgym.agents import ModelSpec, is_model_spec, measure_speed

    roles = [
        role
        for role, spec in (("player", options.player), ("judge", options.judge))
        if spec and is_model_spec(spec) and ModelSpec.parse(spec).provider == LOCAL_PROVIDER
    ]
    if not roles or not served:
        return None
    dry = dry or dry_run(config, options, items=items)
    first = served[0]
    speed = await measure_speed(first.base_url, dry.first_prompt)
    who = f"{first.spec}, {first.threads} thread{'s' if first.threads != 1 else ''}"
    return estimate_time(dry, speed, who, roles)


def _minutes(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{seconds / 60:.0f} min"
