"""``lateralgym models``: what ``local/`` can start on this machine, and what is installed."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``models``."""
    parser = sub.add_parser(
        "models",
        help="list the local models --player/--judge local/NAME can start, what is installed, and how they would run",
        description="The models a local/NAME spec starts (LateralGym serves them on 127.0.0.1 for the command, "
        "with transformers, or llama.cpp with ?runtime=llama), whether each is installed, and the threads and "
        "context it would get here. Any GGUF file "
        "works too: local/path/to/model.gguf.",
    )
    parser.set_defaults(handler=_cmd_models)


def _cmd_models(args: argparse.Namespace) -> int:
    from lateralgym.agents import local_model_rows
    from lateralgym.envs import SHIPPED_CONFIGS

    rows = local_model_rows()
    width = max(len(row["spec"]) for row in rows)
    for row in rows:
        print(f"{row['spec']:{width}}  {row['model']}")
        print(f"{'':{width}}  {row['state']}; here: {row['here']}")
    print(f"{'local/PATH.gguf':{width}}  any GGUF model file (llama.cpp's format), served the same way")
    print("\nUse one as --player or --judge (kb build / tasks build: --model), e.g.")
    print(f"  lateralgym run {SHIPPED_CONFIGS[0]} --player {rows[0]['spec']} --limit 5")
    return 0
