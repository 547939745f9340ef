"""A stand-in for llama-cpp-python's server, for the ``local/`` provider's tests (no model, no llama.cpp).

Started as ``local_stand_in.py --fd N --alias NAME ... [--say TEXT]`` (the argv ``stand_in_command``
builds; ``--say``: TEXT is its reply to a request without a grammar), it
serves the scripted OpenAI-compatible test server (``llm_server.py``) on the listening socket it
inherited, listing ``NAME`` as its model and requiring the key in its environment (``KEY_ENV``), as
llama-cpp-python's server does under LateralGym, and answers every chat request as a model constrained to
the request's grammar would: ``ok`` to the constraint check, the first form the grammar allows
(``Answer: A``, ``Question: ...?``, the first JSON form) otherwise. Environment variables make it
misbehave the way real servers do:

* ``STAND_IN_DIR``: a folder where it writes ``pid`` (its process id), ``port`` (its socket's port),
  ``key`` (the key it requires) and ``requests.jsonl`` (each chat body it received);
* ``STAND_IN_EXIT=1``: write a line of log and exit before serving (a model file it cannot load);
* ``STAND_IN_ANY_KEY=1``: answer every request whatever key it carries (any server's default: an impostor);
* ``STAND_IN_ALIAS=NAME``: list NAME as its model, not the alias it was given;
* ``STAND_IN_DIE_AFTER=N``: exit at once on the N+1-th chat request (a server dying mid-run);
* ``STAND_IN_DELAY=S``: hold every chat reply S seconds (a slow model, to catch a run in flight);
* ``STAND_IN_LOAD=S``: take S seconds before it answers at all (a large model loading).
"""

from __future__ import annotations

import json
import os
import re
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm_server import ScriptedLLMServer  # noqa: E402

KEY_ENV = "LATERALGYM_SERVER_KEY"
"""Where a server command finds its key (``lateralgym.agents._local_identity.KEY_ENV``; not imported:
importing ``lateralgym.agents`` would add a second to every start)."""
HERE = Path(__file__).resolve()


def stand_in_command(model: Path, alias: str, fd: int, threads: int, n_ctx: int) -> list[str]:
    """The argv that starts this stand-in (a ``ServerCommand``)."""
    return [str(HERE), "--model", str(model), "--fd", str(fd), "--alias", alias, "--threads", str(threads),
            "--ctx", str(n_ctx)]  # fmt: skip


def reply_for(body: dict[str, Any]) -> str:
    """What a model decoding under the request's grammar would write (free text without one)."""
    grammar = str(body.get("grammar") or "")
    if grammar == 'root ::= "ok"':
        return "ok"
    if not grammar:
        return "I am not sure what to do here."
    move = re.search(r"^move\d+ ::= (.*)$", grammar, re.M)
    first = move[1].split(" | ")[0] if move else ""
    if '"Answer: " choice' in first:
        return "Answer: A"
    if '"Question: "' in first:
        return "Question: Was it about the weather?"
    if '"Answer: "' in first:
        return "Answer: It was all a dream."
    literals = re.findall(r'"((?:[^"\\]|\\.)*)"', first)
    choices = {
        name: re.findall(r'"((?:[^"\\]|\\.)*)"', rule) for name, rule in re.findall(r"^(\w+) ::= (.*)$", grammar, re.M)
    }
    out = []
    for token in re.findall(r'"(?:[^"\\]|\\.)*"|\w+', first):
        if token.startswith('"'):
            out.append(json.loads(token))
        elif token.startswith("choice"):
            out.append(json.loads(choices[token][0]))
        elif token.startswith("text"):
            out.append('"use it carefully"')
    return "".join(out) if literals else "ok"


def main(argv: list[str]) -> None:
    listener = socket.socket(fileno=int(argv[argv.index("--fd") + 1]))
    alias = os.environ.get("STAND_IN_ALIAS") or argv[argv.index("--alias") + 1]
    key = os.environ.pop(KEY_ENV)
    folder = Path(os.environ["STAND_IN_DIR"]) if os.environ.get("STAND_IN_DIR") else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
        # each written whole, then renamed: a test polling for the file never reads it half written
        for name, value in (("pid", os.getpid()), ("port", listener.getsockname()[1]), ("key", key)):
            (folder / f".{name}.tmp").write_text(str(value))
            os.replace(folder / f".{name}.tmp", folder / name)  # "key": for the tests that look for it elsewhere
    if os.environ.get("STAND_IN_EXIT"):
        print("error loading model: the file is not a model this server can read", file=sys.stderr)
        raise SystemExit(1)
    time.sleep(float(os.environ.get("STAND_IN_LOAD", "0")))
    die_after = int(os.environ.get("STAND_IN_DIE_AFTER", "-1"))
    delay = float(os.environ.get("STAND_IN_DELAY", "0"))
    seen = [0]

    say = argv[argv.index("--say") + 1] if "--say" in argv else None

    def respond(body: dict[str, Any]) -> str:
        seen[0] += 1
        if folder is not None:
            with (folder / "requests.jsonl").open("a", encoding="utf-8") as log:
                log.write(json.dumps(body) + "\n")
        if 0 <= die_after < seen[0]:
            os._exit(3)
        time.sleep(delay)
        return say if say is not None and not body.get("grammar") else reply_for(body)

    responder: Callable[[dict[str, Any]], str] = respond
    required = None if os.environ.get("STAND_IN_ANY_KEY") else key
    server = ScriptedLLMServer(responder=responder, listener=listener, models=[alias], require_key=required).start()
    try:
        while True:
            time.sleep(3600)
    finally:
        server.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
