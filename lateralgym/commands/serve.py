"""``lateralgym serve``: serve a config's episodes to OpenEnv clients (openenv-core's own server).

The flags become typed values here (the config as ``lateralgym run`` builds it, the judge's
``RunOptions``, the address); ``lateralgym.integrations.serve`` does the rest.
"""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path

from lateralgym.cli import EXIT_OK
from lateralgym.commands import add_import_flag, load_imports
from lateralgym.envs import SHIPPED_CONFIGS


def register(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Add ``serve``."""
    serve = sub.add_parser(
        "serve",
        help="serve a config's episodes to RL trainers over HTTP / WebSocket (an OpenEnv server)",
        description=textwrap.fill(
            "Serve a config as an OpenEnv environment (openenv-core's server; pip install 'lateralgym[serve]'): "
            "each WebSocket client gets its own episode session; openenv-core's GenericEnvClient(base_url=URL) "
            "plays it. Actions are {\"text\": MOVE}, exactly the moves 'lateralgym run' players make; reset takes "
            "seed, item_id and split. With --out every served episode is logged as a run is, so replay, view, "
            "report and compare read it. Ctrl-C stops the server.",
            96,
        ),
        epilog="examples:\n  lateralgym serve CONFIG --port 8000\n"
        "  lateralgym serve CONFIG --judge openai/gpt-4o-mini --max-sessions 16 --out runs\n"
        "  lateralgym serve --import my_game.py my-game --data my_items.jsonl",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "config",
        help=f"a shipped config ({', '.join(SHIPPED_CONFIGS)}), a YAML or TOML file, or a benchmark's name",
    )
    add_import_flag(serve)
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)"
    )
    serve.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000; 0: any free port)")
    serve.add_argument(
        "--max-sessions",
        type=int,
        default=64,
        metavar="N",
        help="WebSocket sessions at once (default 64); a client beyond them is refused with openenv-core's "
        "CAPACITY_REACHED error",
    )
    serve.add_argument("--out", metavar="DIR", help="log every served episode into a run directory under DIR")
    serve.add_argument("--data", metavar="PATH", help="dataset file (official release format or LateralGym JSONL)")
    serve.add_argument("--format", metavar="NAME", help="the --data file's format (default: detected)")
    serve.add_argument("--seed", type=int, help="the config's run seed (recorded; each reset gives its own seed)")
    serve.add_argument("--max-turns", type=int, metavar="T", help="override the config's turn limit")
    serve.add_argument(
        "--judge",
        help="judge: one of the benchmark's offline judges, or a model spec provider/model, local/smollm2 "
        "(default: the config's)",
    )
    serve.add_argument("--judge-base-url", metavar="URL", help="OpenAI-compatible server for a model judge")
    serve.add_argument("--judge-samples", type=int, metavar="K", help="model judge: majority vote of K samples")
    serve.add_argument("--no-cache", action="store_true", help="bypass the LLM response cache")
    serve.add_argument("--cache-dir", metavar="DIR", help="LLM response cache (default ./.lateralgym-cache/llm)")
    serve.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="set one of the benchmark's own options, as 'lateralgym run --option'",
    )
    serve.add_argument(
        "--unsafe-free-hints", action="store_true", help="allow the config's 'hints: free' (see 'lateralgym run')"
    )
    serve.set_defaults(handler=_cmd_serve)


def _cmd_serve(args: argparse.Namespace) -> int:
    from lateralgym.commands.run import config_from_args
    from lateralgym.episodes import RunOptions
    from lateralgym.integrations.serve import ServeSettings, serve

    if args.format is not None and args.data is None:
        from lateralgym.envs import LateralGymError

        raise LateralGymError("--format names the format of a --data file; give --data too")
    imports = load_imports(args.imports)
    config = config_from_args(args, imports)
    options = RunOptions(
        judge=args.judge,
        judge_base_url=args.judge_base_url,
        judge_samples=args.judge_samples,
        cache_dir=args.cache_dir,
        use_cache=not args.no_cache,
    )
    settings = ServeSettings(
        host=args.host,
        port=args.port,
        max_sessions=args.max_sessions,
        out=Path(args.out) if args.out else None,
    )
    serve(config, options, settings)
    return EXIT_OK
