"""LateralGym's runner against inspect_ai on the same BrainTeaser multiple-choice items, at equal concurrency.

Both sides answer the shipped BrainTeaser sample items (``load_sample_items("brainteaser")``), repeated
to the same number of items, against the same loopback OpenAI-compatible server with 100 ms latency
(the tests' scripted server; it answers inspect's ``multiple_choice()`` prompt with ``ANSWER: A`` and
LateralGym's with ``Answer: A``). inspect_ai: a ``Task`` of a ``MemoryDataset`` of ``Sample(input=question,
choices=[...], target=letter)`` with the ``multiple_choice()`` solver and the ``choice()`` scorer, model
``openai/bench`` with ``model_base_url`` at the server, ``max_connections`` = the concurrency, the chat
completions API (``responses_api=False``: the server, like LateralGym, speaks only that), every other
setting (retries, timeouts, log format) at its default. LateralGym: ``lateralgym.episodes.run`` with the
player ``openai/bench``, ``concurrency`` = ``llm_concurrency`` = the concurrency, the cache off.

Each measurement runs in its own subprocess (the server stays in this one), so CPU and peak RSS are
that side's alone. Prints, per concurrency and side: items/s over the run itself, CPU ms per item over
the run, start-up seconds (imports and set-up before the run), peak RSS of the process, log bytes per
item (inspect's log dir vs LateralGym's run dir) and the accuracy each side scored (a check that both
read the same replies: they must agree); then the ratios LateralGym / inspect. Goal (issue 13): >= 3x
inspect_ai's items/s at c = 64.

No traffic leaves the machine: inspect's telemetry and key-override hooks are opt-in environment
variables, cleared here; when ``unshare -n`` is available (root), the script re-runs itself inside a
loopback-only network namespace as well. Needs ``pip install 'lateralgym[bench]'``.
Run: ``python benchmarks/bench_vs_inspect.py [--quick]``.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
LATENCY_S = 0.1
KEY = "sk-bench-not-a-key"
LETTERS = "ABCDEFGH"
_NETNS_FLAG = "LATERALGYM_BENCH_NETNS"


def _quiet_env() -> None:
    """Environment for both sides: a fake key, loopback without proxies, no opt-in inspect hooks."""
    os.environ["OPENAI_API_KEY"] = KEY
    os.environ["NO_PROXY"] = os.environ["no_proxy"] = "127.0.0.1,localhost"
    for name in ("INSPECT_TELEMETRY", "INSPECT_API_KEY_OVERRIDE", "INSPECT_REQUIRED_HOOKS", "INSPECT_EVAL_MODEL"):
        os.environ.pop(name, None)
    os.environ["INSPECT_DISPLAY"] = "none"
    os.environ["HF_HUB_OFFLINE"] = "1"


def _maybe_reexec_in_namespace() -> None:
    """Re-run this script in a loopback-only network namespace when ``unshare -n`` works here."""
    if os.environ.get(_NETNS_FLAG) or shutil.which("unshare") is None:
        return
    probe = subprocess.run(["unshare", "-n", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        print("note: unshare -n is not available; running without a network namespace (inspect hooks are off)")
        return
    os.environ[_NETNS_FLAG] = "1"
    inner = 'ip link set lo up && exec "$0" "$@"'
    os.execvp("unshare", ["unshare", "-n", "sh", "-c", inner, sys.executable, *sys.argv])


def _items(count: int) -> list[Any]:
    from lateralgym.envs import load_sample_items

    teasers = list(load_sample_items("brainteaser"))
    return [teasers[i % len(teasers)] for i in range(count or len(teasers))]


def _dir_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def _run_inspect(base_url: str, count: int, concurrency: int, out: Path) -> tuple[float, float, float]:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset, Sample
    from inspect_ai.scorer import choice
    from inspect_ai.solver import multiple_choice

    samples = [
        Sample(input=item.question, choices=list(item.choices), target=LETTERS[item.label], id=f"{item.id}-{i}")
        for i, item in enumerate(_items(count))
    ]
    task = Task(dataset=MemoryDataset(samples), solver=multiple_choice(), scorer=choice())
    cpu0, start = time.process_time(), time.perf_counter()
    try:
        logs = inspect_eval(
            task,
            model="openai/bench",
            model_base_url=base_url,
            model_args={"responses_api": False},  # chat completions, as LateralGym and the server speak
            max_connections=concurrency,
            log_dir=str(out),
        )
    except Exception as error:  # inspect exits silently on some set-up errors (a too-old openai, say)
        raise SystemExit(f"inspect_ai failed: {type(error).__name__}: {error}") from error
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
    log = logs[0]
    if log.status != "success" or log.results is None:
        raise SystemExit(f"inspect run did not succeed: {log.status} {log.error}")
    accuracy = float(log.results.scores[0].metrics["accuracy"].value)
    return elapsed, cpu, accuracy


def _run_lateralgym(base_url: str, count: int, concurrency: int, out: Path) -> tuple[float, float, float]:
    from lateralgym.episodes import EpisodeEnd, read_log, run

    teasers = _items(0)
    cpu0, start = time.process_time(), time.perf_counter()
    result = run(
        "brainteaser",
        player="openai/bench",
        base_url=base_url,
        items=teasers,
        repeats=count // len(teasers),  # each item once per repeat, as inspect's repeated samples
        concurrency=concurrency,
        llm_concurrency=concurrency,
        out=str(out),
        use_cache=False,
        progress=False,
    )
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu0
    if result.errored or result.ran != count:
        raise SystemExit(f"LateralGym run: {result.ran} of {count} ran, {result.errored} errored: {result.first_error}")
    ends = [r for r in read_log(result.run_dir / "steps.jsonl") if isinstance(r, EpisodeEnd)]
    accuracy = sum(1 for e in ends if isinstance(e.outcome, dict) and e.outcome.get("correct")) / len(ends)
    return elapsed, cpu, accuracy


def _worker(side: str, base_url: str, count: int, concurrency: int) -> None:
    """One measurement in this (fresh) process; prints one JSON line."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        runner = _run_inspect if side == "inspect" else _run_lateralgym
        if side == "inspect":
            import inspect_ai  # noqa: F401  (imported before the clock, as LateralGym's modules are)
        else:
            import lateralgym.episodes  # noqa: F401
        setup = time.perf_counter() - started
        elapsed, cpu, accuracy = runner(base_url, count, concurrency, out)
        log_bytes = _dir_bytes(out)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
    print(
        json.dumps(
            {
                "elapsed": elapsed,
                "cpu": cpu,
                "setup": setup,
                "peak_mb": peak_kb / 1024,
                "log": log_bytes,
                "acc": accuracy,
            }
        )
    )


def _measure(side: str, base_url: str, count: int, concurrency: int) -> dict[str, float]:
    command = [sys.executable, __file__, "--worker", side, "--base-url", base_url]
    command += ["--items", str(count), "--concurrency", str(concurrency)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"{side} worker failed (exit {done.returncode}):\n{done.stdout[-2000:]}{done.stderr[-3000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _responder(body: dict[str, Any]) -> str:
    text = "\n".join(str(m.get("content", "")) for m in body["messages"])
    return "ANSWER: A" if "'ANSWER: $LETTER'" in text else "Answer: A"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="one round of the 75 sample items instead of 300 items")
    parser.add_argument("--worker", choices=("inspect", "lateralgym"), help=argparse.SUPPRESS)
    parser.add_argument("--base-url", help=argparse.SUPPRESS)
    parser.add_argument(
        "--items",
        type=int,
        default=300,
        help="items per measurement, rounded to whole rounds of the 75 sample items (default 300)",
    )
    parser.add_argument("--concurrency", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    _quiet_env()
    if args.worker:
        _worker(args.worker, args.base_url, args.items, args.concurrency)
        return
    if importlib.util.find_spec("inspect_ai") is None:
        sys.exit("bench_vs_inspect needs inspect_ai: pip install 'lateralgym[bench]'")
    _maybe_reexec_in_namespace()
    from importlib.metadata import version

    sys.path.insert(0, str(ROOT / "tests"))
    from llm_server import ScriptedLLMServer

    per_round = len(_items(0))  # whole rounds of the sample items, so both sides ask the same questions
    count = per_round * max(1, round((per_round if args.quick else args.items) / per_round))
    server = ScriptedLLMServer(responder=_responder, latency_s=LATENCY_S).start()
    netns = "loopback-only netns" if os.environ.get(_NETNS_FLAG) else "host network"
    print(
        f"inspect_ai {version('inspect_ai')}; server latency {LATENCY_S * 1000:.0f} ms; {os.cpu_count()} CPUs; "
        f"{count} BrainTeaser items per measurement; {netns}"
    )
    print(
        f"{'c':>3} {'side':10} {'items/s':>8} {'CPU ms/item':>11} {'start-up s':>10} {'peak RSS MB':>11} "
        f"{'log B/item':>10} {'accuracy':>8}"
    )
    ratios = []
    for c in (8, 64):
        row = {}
        for side in ("inspect", "lateralgym"):
            m = _measure(side, server.base_url, count, c)
            row[side] = m
            print(
                f"{c:3d} {side:10} {count / m['elapsed']:8.1f} {1000 * m['cpu'] / count:11.1f} {m['setup']:10.2f} "
                f"{m['peak_mb']:11.0f} {m['log'] / count:10.0f} {m['acc']:8.3f}"
            )
        lg, ins = row["lateralgym"], row["inspect"]
        ratios.append(
            f"c={c}: items/s {ins['elapsed'] / lg['elapsed']:.2f}x, CPU/item {lg['cpu'] / ins['cpu']:.2f}x, "
            f"peak RSS {lg['peak_mb'] / ins['peak_mb']:.2f}x, log bytes {lg['log'] / ins['log']:.2f}x"
        )
    server.stop()
    print("LateralGym / inspect_ai (goal: items/s >= 3x at c=64):")
    for line in ratios:
        print("  " + line)


if __name__ == "__main__":
    main()
