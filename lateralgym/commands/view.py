"""``lateralgym view``: an offline HTML viewer of a run's episodes, or an index of a folder of runs."""

from __future__ import annotations

import argparse
from pathlib import Path

from lateralgym.commands import add_trust_flags, open_run_dirs
from lateralgym.commands._paths import one_run


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``view``."""
    view = sub.add_parser(
        "view",
        help="write an offline HTML viewer of a run's episodes, or an index of a folder of runs",
        description="Write RUN_DIR/viewer.html: every episode, step by step, with the model calls and the "
        "messages they were sent, and the reference answer (collapsed). Runs of more than 250 episodes are "
        "paged: the HTML holds an index of every episode and the first page, and the other pages sit in "
        "viewer-pages/ beside it (keep the folder next to the HTML when you move it); it opens from file://, "
        "no server needed. Given a folder of runs (runs/), write each run's viewer and runs/index.html "
        "listing them all.",
    )
    view.add_argument("run_dir", help="a run directory, or a folder of runs")
    view.add_argument("--out", metavar="FILE", help="where to write the HTML (default RUN_DIR/viewer.html)")
    add_trust_flags(view)
    view.set_defaults(handler=_cmd_view)


def _cmd_view(args: argparse.Namespace) -> int:
    open_run_dirs(args)
    from lateralgym.episodes import write_runs_index, write_viewer

    given = Path(args.run_dir)
    holds = [p for p in given.iterdir() if (p / "steps.jsonl").exists()] if given.is_dir() else []
    if not (given / "steps.jsonl").exists() and len(holds) > 1:  # a folder of runs: an index of them
        path = write_runs_index(given, Path(args.out) if args.out else None)
        print(f"wrote {path} and the viewer of each of its {len(holds)} runs (open it in a browser; it works offline)")
        return 0
    path = write_viewer(one_run(args.run_dir), Path(args.out) if args.out else None)
    print(f"wrote {path} (open it in a browser; it works offline)")
    return 0
