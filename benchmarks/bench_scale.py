"""Scale of data: a 14,000-task CreativityBench file, a 1,000,000-line step log, a 20,000-episode viewer.

Each figure is measured in a fresh subprocess (so peak RSS is that job's alone) next to a baseline
measured the same way in the same run: plain streaming ``json.loads`` of the same file. Goals
(issue 13): the 14K file loads in <= 2 s at <= 300 MB; ``lateralgym report`` over 1M lines in
constant memory (<= 200 MB) and <= 60 s; the viewer of a 20K-episode run opens in a headless browser
in <= 5 s. Run: ``python benchmarks/bench_scale.py [--tasks 14000] [--lines 1000000] [--episodes 20000]``.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
from pathlib import Path

MEASURE = """
import json, resource, sys, time
path = sys.argv[2]
start, cpu = time.perf_counter(), time.process_time()
imported = import_cpu = 0.0
if sys.argv[1] == "plain":
    with open(path, encoding="utf-8") as f:
        n = sum(1 for line in f if json.loads(line))
elif sys.argv[1] == "load":
    from lateralgym.envs import load_items
    imported, start, cpu = time.perf_counter() - start, time.perf_counter(), time.process_time()  # import apart
    n = len(load_items(path))
elif sys.argv[1] == "stats":  # the whole ``lateralgym data stats`` command
    import contextlib, io
    from lateralgym.cli import main
    import_cpu = time.process_time() - cpu  # part of the figure, also shown apart
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["data", "stats", path]) == 0
    n = 0
elif sys.argv[1] == "report":  # the whole command: metrics, summary, report.md and its plots
    import contextlib, io, pathlib
    from lateralgym.cli import main
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["report", str(pathlib.Path(path).parent)]) == 0
    n = 0
elif sys.argv[1] == "metrics":
    from lateralgym.episodes import metrics_from_log
    n = metrics_from_log(path).episodes
elif sys.argv[1] == "viewer":
    from lateralgym.episodes import write_viewer
    page = write_viewer(path)
    pages = page.with_name(page.stem + "-pages")
    n = page.stat().st_size + sum(p.stat().st_size for p in pages.glob("*.js"))
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu  # CPU: steadier on a shared machine
try:  # this process's own peak: ru_maxrss outlives exec, so it can report the parent's (which made the data)
    with open("/proc/self/status", encoding="ascii") as status:
        rss_mb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
except (OSError, StopIteration):
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "cpu_seconds": cpu, "rss_mb": rss_mb, "n": n, "import_seconds": imported,
                  "import_cpu_seconds": import_cpu}))
"""


def compile_package() -> None:
    """Compile the package's bytecode first, as ``pip install`` does: where Python may not write ``.pyc``
    files (``PYTHONDONTWRITEBYTECODE``), each measured process would otherwise compile every module of the
    package from source (~0.25 s of CPU), which no installed package does."""
    import compileall
    import importlib.util

    for name in ("", ".envs", ".agents", ".judges", ".episodes", ".integrations", ".databuild"):
        spec = importlib.util.find_spec("lateralgym" + name)  # where it lives, without importing it
        for folder in (spec.submodule_search_locations or []) if spec else []:
            compileall.compile_dir(folder, quiet=1)


def measure(kind: str, path: Path) -> dict[str, float]:
    out = subprocess.run([sys.executable, "-c", MEASURE, kind, str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def make_tasks(target: Path, count: int) -> None:
    """``count`` copies (new ids) of the shipped tasks, written by our JSONL writer (the compact form).

    Each copy's verdicts (``judge_output``: the judge's reasons on every part) are its own, as in real
    data, where no two tasks share a verdict's text: a loader that shares repeated verdicts cannot
    flatter the figures with copies of 439 tasks' verdicts.
    """
    from lateralgym.envs import load_sample_items, write_jsonl
    from lateralgym.envs.benchmarks.creativity import CreativityTask

    tasks: list[CreativityTask] = load_sample_items("creativity")

    def copy(i: int) -> CreativityTask:
        task = tasks[i % len(tasks)]
        judged = [
            judgement.model_copy(
                update={
                    "parts": tuple(
                        part.model_copy(
                            update={
                                "similar_affordance_reason": f"{part.similar_affordance_reason} (task {i})",
                                "gold_change_reason": f"{part.gold_change_reason} (task {i})",
                            }
                        )
                        for part in judgement.parts
                    )
                }
            )
            for judgement in task.judge_output
        ]
        return task.model_copy(update={"id": f"{task.id}-copy{i}", "judge_output": tuple(judged)})

    write_jsonl([copy(i) for i in range(count)], target)


def make_run(tmp: Path, lines: int, episodes: int | None = None) -> Path:
    """A real run, its episodes copied under new ids until the log holds ``lines`` lines (or,
    when given, ``episodes`` episodes)."""
    from lateralgym.episodes import run

    result = run("splat", player="heuristic", out=tmp / "runs", progress=False, repeats=3)
    log = result.run_dir / "steps.jsonl"
    by_episode: dict[str, list[dict[str, object]]] = {}
    for line in log.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        by_episode.setdefault(str(record["episode_id"]), []).append(record)
    blocks = list(by_episode.values())
    written = copy = 0
    if episodes is not None:
        lines = sum(len(blocks[i % len(blocks)]) for i in range(episodes))
    with log.open("w", encoding="utf-8") as f:
        while written < lines:
            for block in blocks:
                for record in block:
                    copied = {
                        **record,
                        "episode_id": f"{record['episode_id']}~{copy}",
                        "item_id": f"{record['item_id']}~{copy}",
                    }
                    f.write(json.dumps(copied) + "\n")
                written += len(block)
                if written >= lines:
                    break
            copy += 1
    return result.run_dir


def browser_seconds(html: Path, fragment: str = "") -> tuple[float, float] | None:
    """Seconds until headless Chromium dumps the page with its episode shown (the whole process,
    start-up included), and the page's own milliseconds from navigation to that episode rendered."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if chromium is None:
        return None
    with tempfile.TemporaryDirectory() as profile:
        start = time.perf_counter()
        done = subprocess.run(
            [chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}"]
            + ["--virtual-time-budget=30000", "--dump-dom", html.as_uri() + fragment],
            capture_output=True,
            text=True,
            check=True,
            timeout=300,
        )
        seconds = time.perf_counter() - start
    shown = re.search(r'data-shown-ms="(\d+)"', done.stdout)
    if shown is None:
        raise SystemExit(f"the viewer {html} did not render an episode in Chromium")
    return seconds, int(shown.group(1)) / 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=int, default=14_000)
    parser.add_argument("--lines", type=int, default=1_000_000)
    parser.add_argument("--episodes", type=int, default=20_000, help="episodes in the viewer's run")
    parser.add_argument(
        "--only-tasks", action="store_true", help="the tasks file's figures only (no step log, no viewer)"
    )
    args = parser.parse_args()
    compile_package()
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        tasks = tmp / "tasks.jsonl"
        make_tasks(tasks, args.tasks)
        size = tasks.stat().st_size / 2**20
        plain, load = measure("plain", tasks), measure("load", tasks)
        print(
            f"{args.tasks} CreativityBench tasks ({size:.0f} MB, compact JSONL): load_items {load['seconds']:.2f} s "
            f"({load['cpu_seconds']:.2f} s CPU; + {load['import_seconds']:.2f} s importing lateralgym.envs), "
            f"{load['rss_mb']:.0f} MB peak; plain json.loads {plain['seconds']:.2f} s ({plain['cpu_seconds']:.2f} s "
            f"CPU), {plain['rss_mb']:.0f} MB; ratio {load['seconds'] / plain['seconds']:.1f}x time "
            f"({load['cpu_seconds'] / plain['cpu_seconds']:.1f}x CPU), {load['rss_mb'] / plain['rss_mb']:.1f}x memory "
            f"(goal <= 2 s, <= 300 MB)"
        )
        stats = measure("stats", tasks)
        print(
            f"`lateralgym data stats` of the {args.tasks} tasks (each task's verdicts distinct): "
            f"{stats['seconds']:.2f} s ({stats['cpu_seconds']:.2f} s CPU, import included), "
            f"{stats['rss_mb']:.0f} MB peak, {stats['import_cpu_seconds']:.2f} s CPU of it importing the package; "
            f"ratio to plain json.loads {stats['cpu_seconds'] / plain['cpu_seconds']:.1f}x CPU, "
            f"{stats['rss_mb'] / plain['rss_mb']:.1f}x memory (goal <= 2 s CPU, <= 300 MB, linear in tasks)"
        )
        if args.only_tasks:
            return
        run_dir = make_run(tmp, args.lines)
        log = run_dir / "steps.jsonl"
        plain, metrics, report = measure("plain", log), measure("metrics", log), measure("report", log)
        print(
            f"{args.lines} step lines ({log.stat().st_size / 2**20:.0f} MB, {metrics['n']:.0f} episodes): metrics "
            f"{metrics['seconds']:.1f} s, {metrics['rss_mb']:.0f} MB peak; `lateralgym report` (metrics, report.md, "
            f"plots) {report['seconds']:.1f} s, {report['rss_mb']:.0f} MB peak; "
            f"plain json.loads {plain['seconds']:.1f} s, {plain['rss_mb']:.0f} MB; "
            f"ratio {report['seconds'] / plain['seconds']:.1f}x (goal <= 60 s, <= 200 MB)"
        )
        small = make_run(tmp / "viewer", 0, episodes=args.episodes)
        viewer = measure("viewer", small)
        html = small / "viewer.html"
        last = json.loads(small.joinpath("steps.jsonl").read_text(encoding="utf-8").splitlines()[-1])["episode_id"]
        opened = browser_seconds(html)
        later = browser_seconds(html, "#" + urllib.parse.quote(last, safe=""))
        shown = (
            "no Chromium here"
            if opened is None or later is None
            else f"opens in headless Chromium in {opened[0]:.1f} s (first episode rendered {opened[1]:.2f} s after "
            f"navigation), at the last episode (its page loaded on demand) in {later[0]:.1f} s ({later[1]:.2f} s)"
        )
        print(
            f"viewer of {args.episodes} episodes: written in {viewer['seconds']:.1f} s, {viewer['n'] / 2**20:.0f} MB "
            f"on disk (HTML + page files), {viewer['rss_mb']:.0f} MB peak; {shown} (goal <= 5 s)"
        )


if __name__ == "__main__":
    main()
