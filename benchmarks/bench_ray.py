"""The Ray backend on 1, 2 and 4 actors against the local runner on the same work (needs ``lateralgym[ray]``).

Two workloads, both SPLAT: the offline heuristic player with the reference judge (pure CPU: what
going through Ray costs per episode), and an LLM player with an LLM judge (``openai/gpt-4o-mini``, a
priced name, as a real run's calls are priced) against a loopback OpenAI-compatible server with
20 ms latency (the tests' scripted server, in a process of its own so its CPU is not the driver's).
Each runs with the local runner and with ``--backend ray`` on 1, 2 and 4 actors, in interleaved
rounds (the order rotates each round). Ray's start-up (``ray.init``) is timed on its own and left
out; each Ray run's own set-up (its actors made, each importing LateralGym and building its player
and judge) is in its time, as it is in a real run.

Prints per workload and setting (medians over the rounds): wall seconds, episodes/s, episodes/s per
actor, the rate against the local runner's in the same round (min/median/max), the wall time per
episode above the local runner's (ms; negative when Ray was faster), and the CPU one episode costs:
in the driver (the one process that writes the log: the part that does not spread over machines)
and in the workers (read from ``/proc`` while they run, so slightly low). The last line is JSON.

Ray probes outside addresses even with its dashboard and telemetry off, so this script re-runs
itself inside a loopback-only network namespace (``unshare -n``; needs root) unless it already is in
one. Run: ``python benchmarks/bench_ray.py [--episodes 280] [--concurrency 16] [--rounds 2]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MODEL = "openai/gpt-4o-mini"
"""In the shipped price list: every call is priced, as a real run's are."""
LATENCY_S = 0.02
WORKER_TITLE = b"ray::EpisodeWorker"
"""How Ray names an ``EpisodeWorker`` actor's process (``/proc/PID/cmdline``)."""


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


def _serve(latency_s: float) -> None:
    """The scripted server, in this (sub)process until stdin closes; prints its URL."""
    sys.path.insert(0, str(ROOT / "tests"))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _scripted import cooperative_model
    from llm_server import ScriptedLLMServer

    from lateralgym.envs import load_sample_items

    server = ScriptedLLMServer(responder=cooperative_model(load_sample_items("splat")), latency_s=latency_s)
    server.start()
    print(server.base_url, flush=True)
    sys.stdin.read()
    server.stop()


class _WorkerCPU:
    """CPU seconds of the ``EpisodeWorker`` processes alive while it runs (sampled from ``/proc``)."""

    def __init__(self, every_s: float = 0.2) -> None:
        self.every_s = every_s
        self.seen: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._tick = os.sysconf("SC_CLK_TCK")

    def __enter__(self) -> _WorkerCPU:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    @property
    def seconds(self) -> float:
        return sum(self.seen.values())

    def _sample(self) -> None:
        while True:
            for pid in (int(p) for p in os.listdir("/proc") if p.isdigit()):
                try:
                    if not Path(f"/proc/{pid}/cmdline").read_bytes().startswith(WORKER_TITLE):
                        continue
                    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:  # gone meanwhile
                    continue
                cpu = (int(fields[11]) + int(fields[12])) / self._tick  # utime + stime
                self.seen[pid] = max(cpu, self.seen.get(pid, 0.0))
            if self._stop.wait(self.every_s):
                return


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(settings: dict[str, Any]) -> dict[str, float]:
    """One run: wall seconds, episodes, the driver's CPU and the workers' CPU."""
    from lateralgym.episodes import RunOptions, run

    with tempfile.TemporaryDirectory() as tmp:
        options = RunOptions(out=Path(tmp), progress=False, use_cache=False, cache_dir=Path(tmp) / "cache", **settings)
        with _WorkerCPU() as workers:
            cpu, start = _cpu_s(), time.perf_counter()
            result = run("splat", options)
            elapsed, cpu = time.perf_counter() - start, _cpu_s() - cpu
        if result.errored:
            raise SystemExit(f"bench_ray {settings}: {result.errored} episodes errored: {result.first_error}")
    return {"seconds": elapsed, "episodes": result.ran, "driver_cpu_s": cpu, "worker_cpu_s": workers.seconds}


def _spread(values: Sequence[float]) -> dict[str, float]:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=280, help="episodes per measurement (default 280)")
    parser.add_argument("--concurrency", type=int, default=16, help="episodes in flight, all actors together (16)")
    parser.add_argument("--actors", default="1,2,4", help="actor counts, comma-separated (default 1,2,4)")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds (default 2)")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(LATENCY_S)
        return
    if not _in_loopback_namespace():
        _reexec_in_namespace()
    import ray

    from lateralgym.envs import load_sample_items

    repeats = max(1, args.episodes // len(load_sample_items("splat")))
    start = time.perf_counter()
    ray.init(include_dashboard=False, _node_ip_address="127.0.0.1", log_to_driver=False, configure_logging=False)
    ray_start_s = time.perf_counter() - start
    server = subprocess.Popen(
        [sys.executable, __file__, "--serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    base_url = server.stdout.readline().strip()
    os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-key")
    workloads: dict[str, dict[str, Any]] = {
        "offline": {"player": "heuristic"},
        "llm": {
            "player": MODEL,
            "judge": MODEL,
            "base_url": base_url,
            "llm_concurrency": 2 * args.concurrency,
        },
    }
    settings = ["local"] + [int(n) for n in args.actors.split(",")]
    print(
        f"Ray start-up {ray_start_s:.1f} s (left out); {os.cpu_count()} CPUs; load "
        f"{Path('/proc/loadavg').read_text().split()[:3]}; SPLAT, {repeats} repeats of each sample puzzle; "
        f"concurrency {args.concurrency}; {args.rounds} interleaved rounds; medians, ratio min/med/max"
    )
    print(
        f"{'workload':8} {'setting':8} {'eps':>4} {'wall s':>7} {'ep/s':>6} {'ep/s/actor':>10} "
        f"{'vs local':>15} {'+ms/ep':>7} {'driver CPU ms/ep':>16} {'worker CPU ms/ep':>16}"
    )
    figures: list[dict[str, Any]] = []
    for name, workload in workloads.items():
        runs: dict[str, list[dict[str, float]]] = {str(s): [] for s in settings}
        for round_ in range(args.rounds):
            turn = round_ % len(settings)
            for setting in settings[turn:] + settings[:turn]:
                extra = {} if setting == "local" else {"backend": "ray", "ray_actors": setting}
                common = {"repeats": repeats, "concurrency": args.concurrency}
                runs[str(setting)].append(_timed({**common, **workload, **extra}))
        local = runs["local"]
        for setting in settings:
            got = runs[str(setting)]
            actors = 1 if setting == "local" else int(setting)
            episodes = int(got[0]["episodes"])
            wall = statistics.median(r["seconds"] for r in got)
            row = {
                "workload": name,
                "setting": str(setting),
                "actors": actors,
                "episodes": episodes,
                "seconds": wall,
                "episodes_per_s": episodes / wall,
                "episodes_per_s_per_actor": episodes / wall / actors,
                "vs_local": _spread([a["seconds"] / b["seconds"] for a, b in zip(local, got, strict=True)]),
                "extra_ms_per_episode": statistics.median(
                    1000 * (b["seconds"] - a["seconds"]) / episodes for a, b in zip(local, got, strict=True)
                ),
                "driver_cpu_ms_per_episode": statistics.median(1000 * r["driver_cpu_s"] / episodes for r in got),
                "worker_cpu_ms_per_episode": statistics.median(1000 * r["worker_cpu_s"] / episodes for r in got),
            }
            figures.append(row)
            spread = row["vs_local"]
            ratio = f"{spread['min']:.2f}/{spread['median']:.2f}/{spread['max']:.2f}"
            print(
                f"{name:8} {str(setting):8} {episodes:4d} {wall:7.2f} {row['episodes_per_s']:6.1f} "
                f"{row['episodes_per_s_per_actor']:10.1f} {ratio:>15} {row['extra_ms_per_episode']:7.1f} "
                f"{row['driver_cpu_ms_per_episode']:16.1f} {row['worker_cpu_ms_per_episode']:16.1f}",
                flush=True,
            )
    server.communicate("")
    ray.shutdown()
    print(f"load at the end {Path('/proc/loadavg').read_text().split()[:3]}; vs local > 1: Ray was faster")
    print(json.dumps({"bench": "ray", "ray_start_s": ray_start_s, "latency_s": LATENCY_S, "rows": figures}))


if __name__ == "__main__":
    main()
