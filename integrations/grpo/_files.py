"""What a GRPO run folder holds besides the model: checkpoints, the training curve, the held-out episodes,
the plot, and the one line an allocation failure becomes."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from pydantic import BaseModel, ValidationError

from lateralgym.integrations.grpo._settings import EpisodeFigures, GRPOError, GRPOSummary, StepFigures

__all__ = [
    "CURVE",
    "append_step",
    "curve_until",
    "last_checkpoint",
    "memory_guard",
    "out_of_memory",
    "plot",
    "read_episodes",
    "write_episodes",
]


def last_checkpoint(out: Path) -> Path | None:
    found = [p for p in out.glob("checkpoints/checkpoint-*") if p.name.rsplit("-", 1)[1].isdigit()]
    found.sort(key=lambda p: int(p.name.rsplit("-", 1)[1]))
    return found[-1] if found else None


CURVE = "train_curve.jsonl"
"""One ``StepFigures`` line per optimizer step, written as it ends, so a resumed run's summary carries the
whole curve."""


def curve_until(out: Path, checkpoint: Path | None) -> list[StepFigures]:
    """The steps a resumed run keeps: those up to its checkpoint's (none for a fresh run)."""
    path = out / CURVE
    if checkpoint is None or not path.is_file():
        return []
    last = int(checkpoint.name.rsplit("-", 1)[1])
    kept: list[StepFigures] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            figures = StepFigures.model_validate_json(line)
        except ValidationError:
            continue  # a line cut by a kill: the step is trained again
        if figures.step <= last:
            kept.append(figures)
    return kept


def append_step(out: Path, figures: StepFigures) -> None:
    """Add a step's line to the curve file."""
    with (out / CURVE).open("a", encoding="utf-8") as stream:
        stream.write(figures.model_dump_json() + "\n")


CPU_OUT_OF_MEMORY = ("can't allocate memory", "not enough memory", "out of memory")


def out_of_memory(exc: BaseException) -> bool:
    """Whether ``exc`` is an allocation failure: Python's, torch's on a GPU, or torch's on the CPU."""
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return True
    return isinstance(exc, RuntimeError) and any(text in str(exc) for text in CPU_OUT_OF_MEMORY)


@contextlib.contextmanager
def memory_guard(during: Callable[[], str], lower: str, out: Path) -> Iterator[None]:
    """Turn an allocation failure during ``during()`` (read when it happens) into one line naming what
    to lower and, when a checkpoint exists, how to continue from it; anything else passes through."""
    try:
        yield
    except (RuntimeError, MemoryError) as exc:
        if not out_of_memory(exc):
            raise
        last = last_checkpoint(out)
        where = f"; the last checkpoint is {last}: add --resume to continue" if last else ""
        raise GRPOError(f"out of memory at {during()} ({type(exc).__name__}): lower {lower}{where}") from None


def read_episodes(path: Path) -> list[EpisodeFigures]:
    """A file ``write_episodes`` wrote; empty when it is missing or cut short (it is then written again)."""
    try:
        return [EpisodeFigures.model_validate_json(line) for line in path.read_text(encoding="utf-8").splitlines()]
    except (OSError, ValueError):
        return []


def write_episodes(path: Path, records: Sequence[BaseModel]) -> None:
    """One JSON line per record."""
    path.write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")


def plot(summary: GRPOSummary, path: Path) -> None:
    """Training reward and readable-move share per step, with the held-out figures before and after."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(7, 4))
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    steps = list(range(1, len(summary.train_reward) + 1))
    axes.plot(steps, summary.train_reward, marker=".", label="train reward (rollouts)")
    axes.plot(steps, summary.train_valid, marker=".", label="train readable moves")
    for value, style, label in (
        (summary.eval_before.reward_mean, ":", "held-out reward before"),
        (summary.eval_after.reward_mean, "--", "held-out reward after"),
    ):
        axes.axhline(value, ls=style, color="tab:red", label=label)
    axes.set_xlabel("rollout batch")
    axes.set_title(f"GRPO: {summary.model} on {summary.config}", fontsize=10)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=100)
