"""Runs a local model server as a child that cannot outlive LateralGym: ``python -m
lateralgym.agents._local_guard (-m MODULE | PATH) [ARGS...]``.

The server (``-m llama_cpp.server ...``) runs in this process, as ``python -m`` would run it, while a
thread reads standard input, a pipe whose other end only the LateralGym process holds. When that
process ends in any way (done, Ctrl-C, an exception, ``kill -9``), the pipe closes, the read returns
and this process exits at once, model and all: no orphan server is left holding a port and memory.
"""

from __future__ import annotations

import os
import runpy
import sys
import threading

USAGE = "usage: python -m lateralgym.agents._local_guard (-m MODULE | PATH) [ARGS...]"


def _exit_when_the_parent_goes() -> None:
    while sys.stdin.buffer.read(1 << 12):
        pass  # nothing is ever written: the read returns only at end of file
    os._exit(0)  # not sys.exit: the server's own threads must not keep the process alive


def main(argv: list[str]) -> None:
    """Start the watch, then run the server module (or file) with ``argv``'s arguments."""
    if not argv or (argv[0] == "-m" and len(argv) < 2):
        print(USAGE, file=sys.stderr)
        raise SystemExit(2)
    threading.Thread(target=_exit_when_the_parent_goes, name="parent-watch", daemon=True).start()
    code = 0
    try:
        if argv[0] == "-m":
            sys.argv = [argv[1], *argv[2:]]
            runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
        else:
            sys.argv = list(argv)
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except BaseException:  # noqa: BLE001 - its traceback is the log the parent reports from
        import traceback

        traceback.print_exc()
        code = 1
    # Not the interpreter's own shutdown: the watch thread, blocked reading standard input, would hold
    # the stream's lock and make it abort with a message of its own in place of the server's.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
