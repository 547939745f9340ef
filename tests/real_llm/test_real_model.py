"""A real small model plays every shipped config through ``local/smollm2`` (opt-in: ``pytest --runllm``).

Each test runs the command a new user would, ``lateralgym run CONFIG --player local/smollm2 --limit 5``
(SPLAT adds ``--judge local/smollm2 --max-turns 3``; CreativityBench's interactive and explore modes use
``--limit 2 --max-turns 4``): LateralGym starts SmolLM2-135M-Instruct's server on 127.0.0.1 for the
command (the default runtime: transformers on CPU torch, constrained by llguidance), constrains the
player's replies to the benchmark's action grammar (the default for ``local/`` models) and stops the
server at the end. The checks are the issue's thresholds and the protocol, never the model's skill: at
most 10 % of the moves invalid, CreativityBench's static, CoT and interactive modes score at least one
episode, episodes end without errors, SPLAT's judge answers in its vocabulary, the paper's metrics are
present and the model file's sha256 is in the manifest. What went wrong with bad input is one line: a
file that is no model, a port taken, a server dying mid-run (its episodes error, are counted, and
``--resume`` finishes them), and a constraint the server refuses (llama.cpp's, with ``runtime=llama``).
Skipped unless ``--runllm`` is given, and when the ``local`` extra is not installed.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

from lateralgym.cli import main
from lateralgym.envs import SHIPPED_CONFIGS, EpisodeConfig
from lateralgym.episodes import EpisodeEnd, StepLine, read_log, read_run, run

pytestmark = pytest.mark.runllm

PLAYER = "local/smollm2"
MAX_INVALID_RATE = 0.10
SCORED_MODES = ("static", "cot", "interactive")
"""CreativityBench modes whose runs must score at least one episode (explore is ours, not scored by the paper)."""
JUDGE_VOCABULARY = {"yes", "no", "irrelevant", "unclear", "correct", "not_yet", "incorrect"}


def done_when(name: str) -> list[str]:
    """The issue's command for one shipped config (after ``lateralgym run CONFIG --player local/smollm2``)."""
    config = EpisodeConfig.named(name)
    if config.benchmark == "splat":
        return ["--judge", PLAYER, "--max-turns", "3", "--limit", "5"]
    if config.mode in ("interactive", "explore"):
        return ["--limit", "2", "--max-turns", "4"]
    return ["--limit", "5"]


def one_run(root: Path) -> Path:
    (run_dir,) = [p for p in root.iterdir() if p.is_dir()]
    return run_dir


@pytest.mark.parametrize("name", SHIPPED_CONFIGS)
def test_a_real_model_plays_every_shipped_config_with_valid_moves(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = EpisodeConfig.named(name)
    started = time.monotonic()
    args = ["run", name, "--player", PLAYER, *done_when(name), "--out", str(tmp_path / "runs"), "--no-progress"]
    code = main([*args, "--cache-dir", str(tmp_path / "cache")])
    minutes = (time.monotonic() - started) / 60
    out = capsys.readouterr().out
    assert code == 0, out[-2000:]
    assert out.startswith("time: about "), "a local run's first line estimates its time"

    run_dir = one_run(tmp_path / "runs")
    summary = json.loads((run_dir / "summary.json").read_text())
    moves = summary["moves"]
    with capsys.disabled():
        print(
            f"\n{name}: {minutes:.1f} min, moves {moves}, headline {summary['headline']}, "
            f"player usage {summary['llm_usage']['player']}"
        )
    assert moves["total"] > 0 and moves["invalid_rate"] <= MAX_INVALID_RATE, moves
    if config.benchmark == "creativity" and config.mode in SCORED_MODES:
        assert summary["headline"]["scored_episodes"] >= 1, summary["headline"]

    manifest = read_run(run_dir).manifest
    assert manifest is not None and [s.spec for s in manifest.served] == [PLAYER]
    assert len(manifest.served[0].sha256) == 64

    records = list(read_log(run_dir / "steps.jsonl"))
    player_moves = [r for r in records if isinstance(r, StepLine) and r.agent == "player"]
    assert all(m.llm is not None and m.llm.parsed_action is not None for m in player_moves)
    assert all(m.llm is not None and m.llm.constrained == "grammar" for m in player_moves)
    ends = [r for r in records if isinstance(r, EpisodeEnd)]
    assert ends and all(e.error is None and isinstance(e.outcome, dict) for e in ends)
    assert summary["headline"] and summary["llm_usage"]["player"]["completion_tokens"] > 0
    if config.benchmark == "splat":
        labels = Counter(str(r.judge_label) for r in records if isinstance(r, StepLine) and r.judge_label is not None)
        assert set(labels) <= JUDGE_VOCABULARY and summary["llm_usage"]["judge"]["calls"] > 0
        assert {"acc", "oa"} <= set(summary["headline"])


# -- bad input: one line each ----------------------------------------------------------------------


def test_a_gguf_that_is_no_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"GGUF" + b"\x00" * 64)  # the magic, and nothing a model needs
    assert main(["run", "brainteaser", "--player", f"local/{fake}", "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and str(fake) in err and not (tmp_path / "runs").exists()


def test_a_port_already_taken(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        args = ["run", "brainteaser", "--player", f"{PLAYER}?port={port}", "--out", str(tmp_path / "runs")]
        assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"port {port} on 127.0.0.1 is taken" in err


def test_the_real_server_requires_its_key_and_its_port_stays_held() -> None:
    from lateralgym.agents import LocalModelServer
    from lateralgym.agents._local_identity import check_server

    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    with LocalModelServer(threads=1) as server:
        assert check_server(server.base_url, server.api_key, server.alias)
        with pytest.raises(urllib.error.HTTPError) as refused:
            direct.open(f"{server.base_url}/models", timeout=30)
        refused.value.close()
        command_line = Path(f"/proc/{server.pid}/cmdline").read_bytes()
        key = server.api_key
        with pytest.raises(OSError), socket.create_server(("127.0.0.1", server.port)):
            pass  # the port is this process's: no other can take it
    assert refused.value.code == 401 and b"_transformers_serve" in command_line and key.encode() not in command_line


def _server_pids() -> list[int]:
    """This process's local model servers (the guard runs the server in its own process)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().split()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if int(stat[3]) == os.getpid() and b"lateralgym.agents._local_guard" in command:
            found.append(int(entry.name))
    return found


def test_a_server_dying_mid_run_errors_its_episodes_and_resume_finishes_them(tmp_path: Path) -> None:
    log = tmp_path / "runs"

    def kill_after_the_first_move() -> None:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline:
            steps = list(log.glob("*/steps.jsonl"))
            if steps and '"type":"step"' in steps[0].read_text():
                for pid in _server_pids():
                    os.kill(pid, signal.SIGKILL)
                return
            time.sleep(0.2)

    killer = threading.Thread(target=kill_after_the_first_move)
    killer.start()
    result = run(
        "riddlesense", player=f"{PLAYER}?max_retries=0", limit=5, concurrency=1, out=log,
        cache_dir=tmp_path / "cache", progress=False, stop_after_errors=0,
    )  # fmt: skip
    killer.join()
    assert result.errored >= 1 and result.metrics.errored == result.errored
    assert "connection" in result.error_kinds
    resumed = run(None, resume=result.run_dir, progress=False)
    assert resumed.errored == 0 and resumed.metrics.errored == 0 and resumed.metrics.episodes == 5


def test_json_schema_is_obeyed_too(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["run", "brainteaser", "--limit", "1", "--out", str(tmp_path / "runs"), "--no-progress"]
    assert main([*args, "--player", f"{PLAYER}?constrain=json_schema"]) == 0
    summary = json.loads((one_run(tmp_path / "runs") / "summary.json").read_text())
    assert summary["moves"]["invalid"] == 0 and summary["moves"]["constrained"] == {"json_schema": 1}


def test_a_constraint_the_server_refuses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # llama-cpp-python's server knows response_format json_object, not OpenAI's json_schema form.
    from lateralgym.agents._local_model import local_runtime_missing

    if local_runtime_missing("llama"):
        pytest.skip(f"--runllm: {local_runtime_missing('llama')}")
    player = f"{PLAYER}?runtime=llama"
    args = ["run", "brainteaser", "--limit", "1", "--out", str(tmp_path / "runs"), "--no-progress"]
    assert main([*args, "--player", f"{player}&constrain=json_schema"]) == 4
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "refused constrain=json_schema" in err and not (tmp_path / "runs").exists()
    assert main([*args, "--player", f"{player}&constrain=json_schema,off"]) == 0  # said so: falls back
    assert "falling back to constrain=off" in capsys.readouterr().err


def test_kill_9_leaves_no_server(tmp_path: Path) -> None:
    script = (
        "import sys\nfrom lateralgym.cli import main\n"
        f"sys.exit(main(['run', 'creativity-static', '--player', '{PLAYER}', '--limit', '5', '--out', "
        f"{str(tmp_path / 'runs')!r}, '--no-progress']))"
    )
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    process.stdout.readline()  # the time estimate: the server is up and answering
    children = _children(process.pid)
    assert children
    process.kill()
    process.wait()
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_alive(pid) for pid in children):
        time.sleep(0.2)
    assert not any(_alive(pid) for pid in children)


def _children(parent: int) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().split()[3]) == parent:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def test_a_local_model_judges_human_labelled_guesses(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``lateralgym judges eval DATA --judge local/smollm2``: the model served for the command answers
    every guess of a TurtleBench-format folder (written here), and the figures are the counts' own."""
    folder = tmp_path / "turtle"
    folder.mkdir()
    stories = [
        {
            "title": "The Empty Porch",
            "surface": "Every evening a woman leaves her porch light on though nobody ever visits. Why?",
            "bottom": "Her son is a night-shift nurse; the light tells him, from the hill road, that she is well.",
        }
    ]
    (folder / "stories.json").write_text(json.dumps(stories), encoding="utf-8")
    cases = [
        ("The light is a signal to her son", "Correct"),
        ("She is afraid of burglars", "Incorrect"),
        ("Her son sees the light from the road", "Correct"),
        ("She forgot to switch it off", "Incorrect"),
    ]
    lines = [f"{guess}\t|\tThe Empty Porch\t|\t{label}" for guess, label in cases]
    (folder / "cases.list").write_text("\n".join(lines), encoding="utf-8")
    assert main(["judges", "eval", str(folder), "--judge", "local/smollm2", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert figures["n"] == 4 and figures["majority"] == 0.5
    assert 0.0 <= figures["accuracy"] <= 1.0
    if figures["precision"] is not None:  # the model confirmed some guess: precision is over those
        assert 0.0 <= figures["precision"] <= 1.0
