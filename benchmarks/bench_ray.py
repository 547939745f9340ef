"""The Ray backend against the local runner on the same work, in one run (needs ``lateralgym[ray]``).

Two workloads: SPLAT with the offline heuristic player and reference judge (pure CPU: what going
through Ray costs per episode), and SPLAT with an LLM player and an LLM judge against a loopback
OpenAI-compatible server with 20 ms latency (the tests' scripted server). Each runs with the local
runner and with ``--backend ray`` on 2 actors; Ray's start-up is timed on its own and left out of the
ratio. Prints wall time, episodes/s, the ratio Ray/local and the per-episode overhead.

Ray probes outside addresses even with its dashboard and telemetry off, so this script re-runs
itself inside a loopback-only network namespace (``unshare -n``; needs root) unless it already is in
one. Run: ``python benchmarks/bench_ray.py [--episodes 280] [--concurrency 16]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _in_loopback_namespace() -> bool:
    """Whether this process's network namespace has loopback only (``ip`` asks the kernel; /sys may
    show the namespace it was mounted in)."""
    links = subprocess.run(["ip", "-o", "link", "show"], capture_output=True, text=True, check=True).stdout
    return [line.split(":")[1].strip() for line in links.splitlines()] == ["lo"]


def _reexec_in_namespace() -> None:
    if os.environ.get("LATERALGYM_BENCH_NETNS"):  # already re-run once: refuse to loop
        sys.exit("bench_ray: could not get a loopback-only network namespace (unshare -n needs root)")
    os.environ["LATERALGYM_BENCH_NETNS"] = "1"
    command = [sys.executable, *sys.argv]
    inner = 'ip link set lo up && exec "$0" "$@"'
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    os.execvp("unshare", ["unshare", "-n", "sh", "-c", inner, *command])


def _timed(**kwargs: Any) -> tuple[float, int]:
    from lateralgym.episodes import run

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        result = run("splat", out=tmp, progress=False, use_cache=False, cache_dir=Path(tmp) / "cache", **kwargs)
        elapsed = time.perf_counter() - start
        assert result.errored == 0, result.first_error
        return elapsed, result.ran


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=280, help="episodes per measurement (default 280)")
    parser.add_argument("--concurrency", type=int, default=16, help="episodes in flight (default 16)")
    args = parser.parse_args()
    if not _in_loopback_namespace():
        _reexec_in_namespace()
    import ray

    sys.path.insert(0, str(ROOT / "tests"))
    from _scripted import cooperative_model
    from llm_server import ScriptedLLMServer

    from lateralgym.envs import load_sample_items

    puzzles = list(load_sample_items("splat"))
    repeats = max(1, args.episodes // len(puzzles))
    start = time.perf_counter()
    ray.init(include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False, configure_logging=False)
    print(f"Ray start-up: {time.perf_counter() - start:.2f} s (left out of the ratios below)")
    server = ScriptedLLMServer(responder=cooperative_model(puzzles), latency_s=0.02).start()  # type: ignore[union-attr]
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-key")
    workloads = {
        "offline (heuristic + reference judge)": {"player": "heuristic"},
        "LLM player + LLM judge (20 ms server)": {
            "player": "openai/bench",
            "judge": "openai/bench",
            "base_url": server.base_url,
            "llm_concurrency": 2 * args.concurrency,
        },
    }
    print(
        f"{'workload':40} {'episodes':>8} {'local s':>8} {'ray s':>8} {'local ep/s':>10} {'ray ep/s':>9} "
        f"{'ray/local':>9} {'overhead/ep':>11}"
    )
    for name, kwargs in workloads.items():
        common = {"repeats": repeats, "concurrency": args.concurrency, **kwargs}
        local, episodes = _timed(**common)
        remote, _ = _timed(backend="ray", ray_actors=2, **common)
        overhead_ms = 1000 * (remote - local) / episodes
        print(
            f"{name:40} {episodes:8d} {local:8.2f} {remote:8.2f} {episodes / local:10.1f} {episodes / remote:9.1f} "
            f"{local / remote:9.2f} {overhead_ms:9.1f}ms"
        )
    server.stop()
    ray.shutdown()
    print(f"\nmachine: {os.cpu_count()} CPUs; ratio > 1 means Ray was faster than the local runner")


if __name__ == "__main__":
    main()
