"""Peak memory of streaming metrics over a large step log, against reading the log into a list."""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from pathlib import Path

from lateralgym.envs.benchmarks.splat import SplatOutcome
from lateralgym.episodes import EpisodeEnd, StepLogWriter, compute_metrics, read_log

EPISODES = 20_000


def write_log(path: Path) -> None:
    with StepLogWriter(path) as writer:
        for n in range(EPISODES):
            writer.write(
                EpisodeEnd(
                    run_id="bench",
                    episode_id=f"sp-{n}#0",
                    item_id=f"sp-{n}",
                    benchmark="splat",
                    outcome=SplatOutcome(
                        solved=n % 3 == 0,
                        turns=1 + n % 15,
                        max_turns=15,
                        invalid_actions=0,
                        committed=n % 3 == 0,
                        questions=6,
                        yes=1,
                        no=2,
                        irrelevant=3,
                        repeated_questions=0,
                        first_commit_turn=1 + n % 15 if n % 3 == 0 else None,
                        attempts=1 if n % 3 == 0 else 0,
                        band=["easy", "medium", "hard"][n % 3],
                        difficulty=1 + 3 * (n % 3),
                    ).model_dump(mode="json"),
                    meta={"band": ["easy", "medium", "hard"][n % 3]},
                )
            )


def peak(fn) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    tracemalloc.start()
    start = time.perf_counter()
    fn()
    elapsed = time.perf_counter() - start
    _, top = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return top / 2**20, elapsed


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "steps.jsonl"
        write_log(log)
        size = log.stat().st_size / 2**20
        base_mb, base_s = peak(lambda: compute_metrics(list(read_log(log))))
        stream_mb, stream_s = peak(lambda: compute_metrics(read_log(log)))
    print(f"log: {EPISODES} episodes, {size:.1f} MiB")
    print(f"{'':28} {'peak MiB':>10} {'seconds':>10}")
    print(f"{'list then metrics (baseline)':28} {base_mb:10.1f} {base_s:10.2f}")
    print(f"{'streaming metrics':28} {stream_mb:10.1f} {stream_s:10.2f}")
    print(f"memory ratio streaming/baseline: {stream_mb / base_mb:.3f}")


if __name__ == "__main__":
    main()
