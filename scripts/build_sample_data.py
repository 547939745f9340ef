"""Rebuild the shipped CreativityBench sample with the task pipeline, offline and byte for byte.

Usage::

    python scripts/build_sample_data.py            # writes envs/data/{affordance_kb.jsonl.gz,creativity_tasks.jsonl.gz}
    python scripts/build_sample_data.py --out DIR  # writes the two files into DIR instead

It is the one command below with the sample's settings (see ``lateralgym tasks build --help``)::

    lateralgym tasks build --kb scripts/sample_data --seeds scripts/sample_data --only-seeded \\
        --judge rules --embedder lexical --embed-field category --cluster-scope scene --distractor-scope kb \\
        --per-tier 100 --tiers-per-gold 2 --out envs/data/creativity_tasks.jsonl.gz

plus the merged KB (every ``kb_*.jsonl`` entity, sorted by id) written to ``affordance_kb.jsonl.gz``. It
takes about 20 s on two cores.

Inputs (``scripts/sample_data/``)
    ``kb_*.jsonl``: one ``Entity`` per line, ids ``<scene>/<snake_name>/<variant>`` (416 entities, eight
    scenes; ``kb_a`` to ``kb_c`` the first sample's 137, the others written for the second).
    ``seeds_*.jsonl``: one ``TaskSeed`` per line: a hand-written stage C answer (task text, recipient,
    other items, four-step solution) for one gold affordance (1,101 seeds). Only seeded affordances can be
    golds offline: they are the only ones with a task text.
    The stage answers are not stored: the seeds are stage C, and the rule-based comparator
    (``lateralgym.databuild`` ``_tasks_rules``) answers stages D and F the same way every time, so a build
    into an empty checkpoint folder (a temporary one unless ``--checkpoints`` names one) gives the same bytes.

Settings that differ from the paper, because the KB is small (~52 entities a scene)
    Embedding: the lexical fallback (hashed words and trigrams, no model), of each affordance's
    functional category rather than its description (lexical vectors of two paraphrases are far apart):
    a cluster is a kind of use within one scene, as in the paper. Distractors come from the whole KB, so
    a kitchen task may show a garden object. Every seeded gold is used (``--per-tier 100``), each in two
    distractor tiers (``--tiers-per-gold 2``: 2,198 tasks over 1,099 task texts).

The first sample (137 entities, 439 tasks over 84 texts) ships too, as the dataset ``creativity-v1``
(``--data creativity-v1``): the figures measured before the second sample were measured on it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
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
    parser.add_argument(
        "--checkpoints", type=Path, help="keep the stage answers in this folder (default: a temporary one)"
    )
    args = parser.parse_args(argv)
    try:
        if args.checkpoints is not None:
            summary = build_sample(args.src, args.out, args.checkpoints)
        else:
            with tempfile.TemporaryDirectory() as scratch:
                summary = build_sample(args.src, args.out, Path(scratch))
    except LateralGymError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
