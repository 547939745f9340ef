"""The Ray backend, end to end, in a real local Ray inside a loopback-only network namespace.

Ray's processes probe outside addresses (a DNS server to learn the machine's IP, the cloud metadata
address) even with the dashboard and usage reporting off, and no traffic may leave the machine: so
every test here runs its Ray, its LLM server and its driver in a fresh network namespace that has
only loopback (``unshare -n``, then ``ip link set lo up``), and skips when that is not possible
(no ``unshare``, not root, no ``ip``) or when the ``ray`` extra is not installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed (pip install 'lateralgym[ray]')")

TESTS = Path(__file__).resolve().parent.parent


def _namespace_prefix() -> list[str]:
    """``unshare -n`` + bring up loopback, or skip with the reason it cannot be made here."""
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs 'unshare' and 'ip' to make a loopback-only network namespace for Ray")
    probe = subprocess.run(
        ["unshare", "-n", "sh", "-c", "ip link set lo up && ip -o addr show"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot make a network namespace here ({probe.stderr.strip()[:120]}); Ray tests need one")
    interfaces = {line.split()[1] for line in probe.stdout.splitlines()}
    assert interfaces == {"lo"}, f"the namespace must hold loopback only, got {interfaces}"
    return ["unshare", "-n", "sh", "-c", 'ip link set lo up && exec "$0" "$@"']


DRIVER = textwrap.dedent(
    """
    import json, os, re, signal, sys, threading, time
    from pathlib import Path

    import ray
    from llm_server import ScriptedLLMServer
    from lateralgym.envs import load_sample_items
    from lateralgym.episodes import EpisodeEnd, read_log, run

    out = Path(sys.argv[1])
    PUZZLES = {p.story: p for p in load_sample_items("splat")}

    def actor(body):
        text = "\\n".join(str(m.get("content", "")) for m in body["messages"])
        if "FULL EXPLANATION (secret" in text:
            secret = re.search(r"FULL EXPLANATION \\(secret, for you only\\): (.*)", text).group(1).strip()
            if "proposes an explanation" in text:
                return "correct" if secret[:40] in text.split("secret, for you only")[-1] else "not yet"
            return "yes"
        puzzle = next(p for story, p in PUZZLES.items() if story in text)
        asked = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if asked < 3:
            return f"Question: Is round {asked + 1} about the {puzzle.title.lower()}?"
        return f"Answer: {puzzle.answer}"

    server = ScriptedLLMServer(responder=actor, latency_s=0.05).start()
    killed = {}

    def kill_a_worker():
        # once two episodes are in the log and others are in flight, SIGKILL one worker process
        while True:
            logs = list((out / "runs").glob("*/steps.jsonl"))
            if logs and logs[0].read_text().count('"episode_end"') >= 2:
                break
            time.sleep(0.05)
        run_id = logs[0].parent.name
        worker = ray.get_actor(f"lateralgym-{run_id}-0")
        pid = ray.get(worker.pid.remote())
        os.kill(pid, signal.SIGKILL)
        killed["pid"] = pid
        killed["ends_before"] = logs[0].read_text().count('"episode_end"')

    threading.Thread(target=kill_a_worker, daemon=True).start()
    result = run(
        "splat",
        player="openai/test-player",
        judge="openai/test-judge",
        base_url=server.base_url,
        limit=12,
        concurrency=6,
        out=out / "runs",
        cache_dir=out / "cache",
        use_cache=False,
        progress=False,
        backend="ray",
        ray_actors=2,
    )
    ends = [r for r in read_log(result.run_dir / "steps.jsonl") if isinstance(r, EpisodeEnd)]
    print(json.dumps({
        "run_dir": str(result.run_dir), "planned": result.planned, "ran": result.ran, "errored": result.errored,
        "killed": killed, "ends": [e.episode_id for e in ends],
        "solved": sum(bool(e.outcome and e.outcome["solved"]) for e in ends),
        "errors": [e.error for e in ends if e.error],
        "server_requests": len(server.requests),
    }))
    server.stop()
    """
)


@contextmanager
def busy_cores() -> Iterator[None]:
    """Every core of the machine kept busy by a spinning process, for as long as the block runs: a
    killed worker then takes seconds to come back (the retry window the backend once had was 0.6 s)."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdout=subprocess.DEVNULL)
        for _ in range(os.cpu_count() or 2)
    ]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
            burner.wait(timeout=30)


def test_a_splat_llm_run_on_ray_survives_a_killed_worker_with_every_episode_exactly_once(tmp_path: Path) -> None:
    """With every core busy (``busy_cores``), as on a loaded CI machine."""
    prefix = _namespace_prefix()
    script = tmp_path / "driver.py"
    script.write_text(DRIVER, encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]),
        "RAY_USAGE_STATS_ENABLED": "0",
        "OPENAI_API_KEY": "sk-test-not-a-real-key",
    }
    with busy_cores():
        done = subprocess.run(
            [*prefix, sys.executable, str(script), str(tmp_path)],
            capture_output=True,
            text=True,
            env=env,
            timeout=600,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert not result["errors"], result["errors"]
    assert result["killed"].get("pid"), "the driver never killed a worker"
    assert result["killed"]["ends_before"] < 12, "the worker was killed after the run was over"
    # every planned episode ended exactly once, none errored: the killed worker's episodes ran again
    assert result["planned"] == 12 and result["errored"] == 0
    assert sorted(result["ends"]) == sorted(set(result["ends"])) and len(result["ends"]) == 12
    # 8 model calls an episode (3 questions and an answer, each judged): the killed worker's
    # episodes in flight were played again from their start on a worker Ray brought back
    assert result["server_requests"] > 12 * 8
    assert result["solved"] == 12  # the scripted model solves every puzzle after three questions
    # the log the driver wrote replays: its lines are whole episodes, in a consistent order
    from lateralgym.episodes import replay

    replayed = replay(result["run_dir"])
    assert len(replayed) == 12 and all(r.divergence is None and r.complete for r in replayed)
