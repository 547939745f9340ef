"""llama-cpp-python's OpenAI-compatible server on a socket LateralGym bound for it, requiring the key it
was given: ``python -m lateralgym.agents._llama_serve FD SETTINGS`` (run under ``_local_guard``).

``python -m llama_cpp.server --port N`` binds the port itself once the model is loaded, seconds after it
starts: until then the port is free, any process may take it, and whatever answers there would be taken
for the model (and sent every prompt). Here the server serves on the listening socket LateralGym bound
before starting it (``FD``, inherited), so the port is never free while the server is wanted; and it
requires the key in ``KEY_ENV`` on every request (``ServerSettings.api_key``), taken out of the
environment before the model loads.

``SETTINGS`` is a JSON object of llama-cpp-python's ``ModelSettings`` (``model``, ``model_alias``,
``n_ctx``, ``n_threads``, ...).
"""

from __future__ import annotations

import json
import os
import socket
import sys

from lateralgym.agents._local_identity import KEY_ENV

USAGE = "usage: python -m lateralgym.agents._llama_serve FD SETTINGS_JSON (the key in the environment)"


def main(argv: list[str]) -> None:
    """Serve ``argv``'s model settings on ``argv``'s socket, with the environment's key."""
    key = os.environ.pop(KEY_ENV, "")
    if len(argv) != 2 or not argv[0].isdigit() or not key:
        print(USAGE, file=sys.stderr)
        raise SystemExit(2)
    listener = socket.socket(fileno=int(argv[0]))
    import uvicorn
    from llama_cpp.server.app import create_app
    from llama_cpp.server.settings import ModelSettings, ServerSettings

    app = create_app(
        server_settings=ServerSettings(api_key=key),
        model_settings=[ModelSettings.model_validate(json.loads(argv[1]))],
    )
    uvicorn.Server(uvicorn.Config(app)).run(sockets=[listener])


if __name__ == "__main__":
    main(sys.argv[1:])
