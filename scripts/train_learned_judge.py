"""Rebuild the learned SPLAT judge's shipped weights from a TurtleBench folder.

Usage::

    python scripts/train_learned_judge.py PATH/TurtleBench/data/en
    python scripts/train_learned_judge.py PATH/TurtleBench/data/en --commit 6547a5f --out weights.npz

TurtleBench (public repository mazzzystar/TurtleBench, Apache-2.0) holds 1,532 players' guesses about 32
situation puzzles, each labelled by people Correct / Incorrect / Unknown. The script reads the folder as
``lateralgym judges eval`` does, embeds every guess, hidden story and story surface with the ``embed``
extra's MiniLM (``pip install 'lateralgym[embed]'``), fits the logistic head on all of it (Correct =
confirmed) and writes ``envs/benchmarks/splat/learned_judge.npz`` (default ``--out``) with the data's sha256
and an attribution string naming the repository, the commit and the licence. The shipped file was made from
``data/en`` at commit 6547a5f; the same folder gives the same weights up to floating-point noise (a few
minutes on two cores, most of it the embedding).

How well it judges stories it was not trained on is measured apart, by leave-stories-out cross-validation::

    lateralgym judges eval PATH/TurtleBench/data/en --judge learned --cv stories
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from lateralgym.envs import JudgeCase, LateralGymError
from lateralgym.envs.benchmarks.splat._learned_head import DEFAULT_C
from lateralgym.envs.benchmarks.splat._learned_judge import SHIPPED_WEIGHTS, LearnedJudge
from lateralgym.envs.benchmarks.splat._turtlebench import load_turtlebench
from lateralgym.judges._cards import data_digest

SOURCE = (
    "Trained on the human labels of TurtleBench (https://github.com/mazzzystar/TurtleBench, {folder} at commit "
    "{commit}; Apache License 2.0, (c) the TurtleBench authors). Only the learned weights are shipped, none of "
    "TurtleBench's text."
)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", help="a TurtleBench folder (stories.json + cases.list), e.g. TurtleBench/data/en")
    parser.add_argument("--commit", default="6547a5f", help="the TurtleBench commit the folder is from")
    parser.add_argument("--out", default=str(SHIPPED_WEIGHTS), help=f"the weights file (default {SHIPPED_WEIGHTS})")
    parser.add_argument("--model", default="st:", help="the embedder (default st:, the embed extra's MiniLM)")
    parser.add_argument("--c", type=float, default=DEFAULT_C, help=f"inverse L2 strength (default {DEFAULT_C})")
    args = parser.parse_args(argv)
    folder = Path(args.data)
    try:
        cases = load_turtlebench(folder)
        source = SOURCE.format(folder=f"data/{folder.resolve().name}", commit=args.commit)
        judge = LearnedJudge(model=args.model, untrained=True).trained_on(
            cases, c=args.c, data_sha256=data_digest(folder), source=source
        )
    except LateralGymError as exc:
        print(f"train_learned_judge: error: {exc}", file=sys.stderr)
        return 2
    judge.head.save(Path(args.out))
    rows = np.concatenate([judge.features(group[0].item, [c.message for c in group]) for group in _by_story(cases)])
    confirmed = np.array([c.expected == c.positive for group in _by_story(cases) for c in group])
    accuracy = float(np.mean((judge.head.probability(rows) >= judge.head.threshold) == confirmed))
    print(
        f"wrote {args.out}: {judge.head.cases} guesses, in-sample accuracy {accuracy:.3f} (not an estimate: use --cv)"
    )
    return 0


def _by_story(cases: list[JudgeCase]) -> list[list[JudgeCase]]:
    groups: dict[str, list[JudgeCase]] = {}
    for case in cases:
        groups.setdefault(case.group, []).append(case)
    return list(groups.values())


if __name__ == "__main__":
    raise SystemExit(main())
