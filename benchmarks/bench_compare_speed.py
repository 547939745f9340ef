"""CPU time of ``lateralgym compare`` of two runs against the CPU time of the two runs that made the
data, for BrainTeaser and SPLAT: the shipped samples, and generated files of a few thousand items.

Each command runs in its own process (as a person runs them); its CPU time (user + system) is read
from ``getrusage(RUSAGE_CHILDREN)``. ``compare`` is timed twice: as it is (each scorer's
``headline_resampled`` scores 100 resamples at once) and with that hook switched off in the process
(every resample scored by the scorer in turn, as before it existed). Rounds alternate the runs and
both compares, so load on the machine falls on all alike; min / median / max over the rounds are
printed with the ratio compare / (both runs) per round. The generated items are written here.

    python benchmarks/bench_compare_speed.py [--rounds 3] [--groups 1000] [--puzzles 3000]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PLAYER = "random"


def brainteaser_file(path: Path, groups: int) -> Path:
    """``groups`` groups of three (original, semantic, context), sentence and word puzzles alternating."""
    with path.open("w", encoding="utf-8") as out:
        for g in range(groups):
            kind, prefix = ("sentence", "SP") if g % 2 == 0 else ("word", "WP")
            for variant, suffix in (("original", ""), ("semantic", "_SR"), ("context", "_CR")):
                choices = [f"choice {c} of puzzle {g} {variant}" for c in range(3)] + ["None of above."]
                record = {
                    "id": f"{prefix}-{g}{suffix}",
                    "group_id": f"{prefix}-{g}",
                    "kind": kind,
                    "variant": variant,
                    "question": f"Benchmark puzzle {g} ({variant}): which choice is right?",
                    "choices": choices,
                    "label": (g + len(suffix)) % 4,
                }
                out.write(json.dumps(record) + "\n")
    return path


def splat_file(path: Path, puzzles: int) -> Path:
    """``puzzles`` situation puzzles with difficulties 1-9 (three bands)."""
    with path.open("w", encoding="utf-8") as out:
        for n in range(puzzles):
            record = {
                "id": f"bench-{n}",
                "title": f"Bench puzzle {n}",
                "story": f"A keeper rings bell {n} at dawn although nobody lives on island {n}.",
                "answer": f"The bell {n} warns the boats of the reef {n} hidden at low tide.",
                "difficulty": 1 + n % 9,
            }
            out.write(json.dumps(record) + "\n")
    return path


CLI = """
import sys
from lateralgym.envs import all_benchmarks
from lateralgym.cli import main
if sys.argv[1] == "one-by-one":  # every scorer's resampled hook off: each resample scored in turn
    for benchmark in all_benchmarks():
        scorer_type = type(benchmark.metrics.scorer(mode=None, max_turns=15))
        setattr(scorer_type, "headline_resampled", lambda self, counts: None)
sys.exit(main(sys.argv[2:]))
"""


def cpu_of(command: list[str], mode: str = "as-is") -> float:
    """CPU seconds (user + system) of one ``lateralgym`` command in its own process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-c", CLI, mode, *command],
        check=True,
        stdout=subprocess.DEVNULL,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def measure(label: str, config: str, data: Path | None, rounds: int, work: Path) -> None:
    runs_cpu: list[float] = []
    compare_cpu: list[float] = []
    before_cpu: list[float] = []
    ratios: list[float] = []
    before_ratios: list[float] = []
    for r in range(rounds):
        out = work / f"{config}-{label}-{r}"
        pair = []
        for seed in (1, 2):
            command = ["run", config, "--player", PLAYER, "--seed", str(seed), "--no-progress", "--out", str(out)]
            pair.append(cpu_of(command + (["--data", str(data)] if data else [])))
        run_dirs = sorted(str(p) for p in out.iterdir() if p.is_dir())
        compared = cpu_of(["compare", *run_dirs])
        one_by_one = cpu_of(["compare", *run_dirs], "one-by-one")
        runs_cpu.append(sum(pair))
        compare_cpu.append(compared)
        before_cpu.append(one_by_one)
        ratios.append(compared / sum(pair))
        before_ratios.append(one_by_one / sum(pair))
    items = sum(1 for _ in data.open()) if data else "sample"

    def spread(values: list[float]) -> str:
        return f"{min(values):7.2f} / {statistics.median(values):7.2f} / {max(values):7.2f}"

    print(f"{config:12s} {label:9s} items={items!s:6s} runs CPU s (2 runs) min/med/max {spread(runs_cpu)}")
    print(f"{'':12s} {'':9s} {'':12s} compare CPU s          min/med/max {spread(compare_cpu)}")
    print(f"{'':12s} {'':9s} {'':12s} compare / runs         min/med/max {spread(ratios)}")
    print(f"{'':12s} {'':9s} {'':12s} one-by-one CPU s       min/med/max {spread(before_cpu)}")
    print(f"{'':12s} {'':9s} {'':12s} one-by-one / runs      min/med/max {spread(before_ratios)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--groups", type=int, default=1000, help="generated BrainTeaser groups (3 puzzles each)")
    parser.add_argument("--puzzles", type=int, default=3000, help="generated SPLAT puzzles")
    args = parser.parse_args()
    print(f"load average at start: {open('/proc/loadavg').read().split()[:3]}")
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        generated = {
            "brainteaser": brainteaser_file(work / "brainteaser.jsonl", args.groups),
            "splat": splat_file(work / "splat.jsonl", args.puzzles),
        }
        for config in ("brainteaser", "splat"):
            measure("sample", config, None, args.rounds, work)
            measure("generated", config, generated[config], args.rounds, work)
    print(f"load average at end: {open('/proc/loadavg').read().split()[:3]}")


if __name__ == "__main__":
    main()
