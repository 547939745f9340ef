"""Peak memory of streaming metrics over a large step log, against reading the log into a list."""

from __future__ import annotations

import tempfile
import time
import tracemalloc
from pathlib import Path

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
                    outcome={
                        "solved": n % 3 == 0,
                        "turns": 1 + n % 15,
                        "questions": n % 15,
                        "yes": 1,
                        "no": 2,
                        "irrelevant": 3,
                        "band": ["easy", "medium", "hard"][n % 3],
                        "difficulty": 1 + n % 9,
                    },
                    meta={"band": ["easy", "medium", "hard"][n % 3]},
                    turns=1 + n % 15,
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
