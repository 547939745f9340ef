"""Rebuild the shipped CreativityBench sample with the task pipeline, offline and byte for byte.

Usage::

    python scripts/build_sample_data.py            # writes envs/data/{affordance_kb.jsonl,creativity_tasks.jsonl.gz}
    python scripts/build_sample_data.py --out DIR  # writes the two files into DIR instead

It is the one command below with the sample's settings (see ``lateralgym tasks build --help``)::

    lateralgym tasks build --kb scripts/sample_data --seeds scripts/sample_data --only-seeded \\
        --judge rules --embedder lexical --embed-field category --cluster-scope kb --distractor-scope kb \\
        --per-tier 100 --checkpoints scripts/sample_data/checkpoints --out envs/data/creativity_tasks.jsonl.gz

plus the merged KB (every ``kb_*.jsonl`` entity, sorted by id) written to ``affordance_kb.jsonl``.

Inputs (``scripts/sample_data/``)
    ``kb_*.jsonl``: one ``Entity`` per line, ids ``<scene>/<snake_name>/<variant>``.
    ``seeds_*.jsonl``: one ``TaskSeed`` per line: a hand-written stage C answer (task text, recipient,
    other items, four-step solution) for one gold affordance. Only seeded affordances can be golds
    offline: they are the only ones with a task text.
    ``checkpoints/``: the pipeline's stored stage answers: the seeds' task texts (stage C) and the
    rule-based comparator's verdicts (stages D and F, ``lateralgym.databuild`` ``_tasks_rules``), so the
    build runs with no model. Delete the folder and rerun to regenerate them from the seeds and the rules.

Settings that differ from the paper, because the KB is small (~16 entities a scene)
    Embedding: the lexical fallback (hashed words and trigrams, no model), of each affordance's
    functional category rather than its description (lexical vectors of two paraphrases are far apart).
    Clusters span the whole KB, not one scene, and distractors come from the whole KB, so a kitchen
    task may show a garden object. Every seeded gold is used (``--per-tier 100``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from lateralgym.envs import LateralGymError
from lateralgym.envs.benchmarks.creativity.databuild._tasks_run import SAMPLE_JOB, build_sample

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "scripts" / "sample_data"
OUT = ROOT / "envs" / "data"

__all__ = ["SAMPLE_JOB", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Rebuild the sample; returns the exit status (1 with a one-line error on bad input)."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("--src", type=Path, default=SRC, help="folder of kb_*.jsonl and seeds_*.jsonl")
    parser.add_argument("--out", type=Path, default=OUT, help="folder to write the two files to (default: envs/data)")
    parser.add_argument("--checkpoints", type=Path, help="stored stage answers (default: SRC/checkpoints)")
    args = parser.parse_args(argv)
    try:
        summary = build_sample(args.src, args.out, args.checkpoints or args.src / "checkpoints")
    except LateralGymError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
