"""The ``lateralgym`` command: the top-level parser, the exit statuses and ``main``, which turns
errors into one line on stderr and an exit status. Each sub-command lives in its own module of
``lateralgym.commands`` (its flags, and a handler that turns them into typed values and calls the
library); no logic of its own here."""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Sequence

from lateralgym.envs import LateralGymError, PlayerQuit

EXIT_OK = 0
EXIT_DIVERGED = 1
EXIT_USAGE = 2
EXIT_SOME_ERRORED = 3
EXIT_ALL_ERRORED = 4
EXIT_INTERRUPTED = 130

EXIT_CODES = f"""
exit status:
  {EXIT_OK}    done: every planned episode finished without an error
  {EXIT_DIVERGED}    replay: an episode diverged from its log, or the log records an episode twice
  {EXIT_USAGE}    a usage, config, data or run-directory error (one line on stderr; nothing ran or
       what ran is kept)
  {EXIT_SOME_ERRORED}    the run finished but some episodes ended in an error (an API outage): rerun
       them with 'lateralgym run --resume RUN_DIR'
  {EXIT_ALL_ERRORED}    every episode run ended in an error: nothing worked (a dead server, a wrong port
       or key, a setting the server refuses); fix that, then resume. Also when the
       check before a run finds a model server down or refusing the key (nothing ran)
  {EXIT_INTERRUPTED}  interrupted (Ctrl-C), or stopped by the person playing or judging ('quit',
       end of input): the run is unfinished; 'lateralgym run --resume RUN_DIR' finishes it
"""


def _description() -> str:
    """The top-level help: what LateralGym runs (the registered benchmarks), examples, exit statuses."""
    from lateralgym.envs import SHIPPED_CONFIGS, all_benchmarks

    titles = "; ".join(b.title or b.name for b in all_benchmarks())
    about = textwrap.fill(f"LateralGym: roll out players against lateral-thinking benchmarks ({titles}).", 96)
    offline = textwrap.fill(
        "Everything runs offline by default (scripted players, rule judges, the sample data shipped in the "
        f"package). Shipped configs: {', '.join(SHIPPED_CONFIGS)}. Examples:",
        96,
    )
    return f"""\
{about}

{offline}

  lateralgym configs                                  # each shipped config: benchmark, mode, judge
  lateralgym run CONFIG                               # its default player on its sample data
  lateralgym run CONFIG --player oracle --sample 6    # 6 items over its groups, upper bound
  lateralgym run CONFIG --data FILE                   # an official release file or our JSONL
  lateralgym run --import my_game.py my-game          # a benchmark in a file of your own
  lateralgym run --resume runs/RUN                    # finish a killed run
  lateralgym report runs/RUN                          # tables + Markdown report with plots
  lateralgym data stats FILE                          # what a dataset file holds
  lateralgym run CONFIG --player openai/qwen --judge openai/qwen --base-url http://127.0.0.1:8000/v1

LLM keys come from the environment (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) and are never written.
{EXIT_CODES}"""


class _Parser(argparse.ArgumentParser):
    """``argparse`` with "did you mean" for a mistyped flag (Python 3.11's has no ``suggest_on_error``).

    Each command's parser is one too (subparsers take their parent's class), so the flags a mistyped one is
    matched against are those of the command it was given to.
    """

    _KNOWN = "_flags_of_the_command"

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        parsed, extras = super().parse_known_args(args, namespace)
        if extras and not hasattr(parsed, self._KNOWN):  # the innermost parser, which returns first
            setattr(parsed, self._KNOWN, [o for a in self._actions for o in a.option_strings if o.startswith("--")])
        return parsed, extras

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        parsed, extras = self.parse_known_args(args, namespace)
        known = vars(parsed).pop(self._KNOWN, [])
        if extras:
            from lateralgym.envs import closest_name  # only on a mistake

            flags = [e.partition("=")[0] for e in extras if e.startswith("--")]
            guesses = [f"{f}: did you mean {c}?" for f in flags if (c := closest_name(f, known, cutoff=0.75))]
            self.error(f"unrecognized arguments: {' '.join(extras)}" + (f" ({'; '.join(guesses)})" if guesses else ""))
        return parsed


def _parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser of the command line ``argv``: with a core command named in it, only that command's
    module is loaded, and help texts that list every benchmark are built only when help is asked for."""
    from lateralgym.commands import ask_help, register_all

    words = list(sys.argv[1:] if argv is None else argv)
    helping = not words or any(w in ("-h", "--help") for w in words)
    ask_help(helping)
    command = next((w for w in words if not w.startswith("-")), None)
    parser = _Parser(
        prog="lateralgym",
        description=_description() if helping or command is None else "LateralGym",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    register_all(sub, only=command)  # every command in its own module (lateralgym/commands/*.py)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``lateralgym`` command; returns the exit status."""
    args = _parser(argv).parse_args(argv)
    try:
        try:
            return int(args.handler(args))
        finally:
            _stop_local_servers()
    except LateralGymError as exc:
        print(f"lateralgym: error: {exc}", file=sys.stderr)
        # a model server found down (or refusing its constraint) before the run: nothing worked, as when
        # every episode errors
        refused = type(exc).__name__ in ("EndpointCheckError", "ConstraintRejectedError")
        return EXIT_ALL_ERRORED if refused else EXIT_USAGE
    except BrokenPipeError:  # output piped into `head` and the like
        sys.stderr.close()
        return EXIT_OK
    except OSError as exc:  # a file the command was given or writes: one line, as for any other bad input
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"lateralgym: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return EXIT_USAGE
    except PlayerQuit:
        from lateralgym.commands.run import stopped_line
        from lateralgym.episodes import current_run_dir

        print(f"lateralgym: {stopped_line(current_run_dir())}", file=sys.stderr)
        return EXIT_INTERRUPTED  # the run is unfinished, as after Ctrl-C: a script must not take it for done
    except KeyboardInterrupt:
        resumes = getattr(args, "on_interrupt", None)  # a command's own way to go on (a data build's checkpoints)
        if resumes:
            print(f"lateralgym: interrupted; {resumes}", file=sys.stderr)
            return EXIT_INTERRUPTED
        print(f"lateralgym: interrupted; finish the run with: lateralgym run --resume {_run_dir()}", file=sys.stderr)
        return EXIT_INTERRUPTED


def _stop_local_servers() -> None:
    """Stop the local/ model servers the command started: they stop when it ends, however it ends, as on
    leaving ``lateralgym.agents.serving()`` (so not while an outer ``serving()`` block of a caller is open).
    Only the agents start servers: a command that never loaded them (``data stats``) does not import them."""
    agents = sys.modules.get("lateralgym.agents")
    if agents is not None:
        with agents.serving():  # an empty block: leaving the outermost one stops the servers
            pass


def _run_dir() -> str:
    """The run directory a stopped run was writing, for the line that says how to finish it."""
    from lateralgym.episodes import current_run_dir

    where = current_run_dir()
    return str(where) if where is not None else "RUN_DIR"


if __name__ == "__main__":
    sys.exit(main())
