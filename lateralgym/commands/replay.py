"""``lateralgym replay``: re-step a run's episodes from its log, verify them and print the transcript."""

from __future__ import annotations

import argparse
import sys

from lateralgym.cli import EXIT_DIVERGED, EXIT_OK
from lateralgym.commands import add_trust_flags, open_run_dirs
from lateralgym.commands._paths import one_run


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``replay``."""
    replay = sub.add_parser(
        "replay",
        help="re-step a run's episodes from the log, verify them and print the transcript",
        description="Rebuild the env from the run's config, re-apply every logged action and check each "
        "observation, reward and ending against the log; report the first divergence precisely. Offline "
        "judges run live; an LLM judge's logged replies are replayed (no API calls). Exits 1 when an episode "
        "diverges or the log records an episode more than once.",
    )
    replay.add_argument("run_dir", help="a run directory")
    replay.add_argument("--episode", metavar="ID", help="only this episode id (ITEM#REPEAT) or item id")
    replay.add_argument("--quiet", action="store_true", help="verify only; no transcript")
    add_trust_flags(replay)
    replay.set_defaults(handler=_cmd_replay)


def _cmd_replay(args: argparse.Namespace) -> int:
    open_run_dirs(args)
    from lateralgym.episodes import replay, transcript

    run_dir = one_run(args.run_dir)
    if not args.quiet:
        print(transcript(run_dir, args.episode))
    results = replay(run_dir, args.episode)
    diverged = [r for r in results if r.divergence is not None]
    duplicated = [r.episode_id for r in results if r.duplicated]
    partial = sum(not r.complete for r in results)
    for r in diverged:
        assert r.divergence is not None
        print(r.divergence.describe(), file=sys.stderr)
    if duplicated:
        shown = ", ".join(duplicated[:5]) + (", ..." if len(duplicated) > 5 else "")
        print(
            f"lateralgym: warning: {len(duplicated)} episodes are recorded more than once in the log (two processes "
            f"wrote it at once?) and were not replayed: {shown}",
            file=sys.stderr,
        )
    replayed = [r for r in results if not r.duplicated]
    print(
        f"replayed {len(replayed)} episodes, {sum(r.steps for r in replayed)} steps: "
        + (f"{len(diverged)} diverged" if diverged else "all observations and rewards match the log")
        + (f" ({partial} unfinished)" if partial else "")
        + (f"; {len(duplicated)} recorded more than once" if duplicated else "")
    )
    return EXIT_DIVERGED if diverged or duplicated else EXIT_OK
