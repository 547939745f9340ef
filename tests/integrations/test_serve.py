"""``lateralgym serve``: every shipped config played through openenv-core's own client against the server,
compared move by move with the in-process env; many sessions at once, an LLM judge over HTTP, bad input."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from lateralgym.agents import make_agent
from lateralgym.envs import (
    SHIPPED_CONFIGS,
    EpisodeConfig,
    LateralEnv,
    action_to_text,
    load_config_items,
    split_items,
)
from lateralgym.episodes import RunOptions, read_log, replay, write_report

openenv_client = pytest.importorskip(
    "openenv.core", reason="openenv-core is not installed: pip install 'lateralgym[serve]'"
)
from lateralgym.integrations._openenv import public_info  # noqa: E402
from lateralgym.integrations.serve import ServeError, ServeSettings, bind, served  # noqa: E402

GenericEnvClient = openenv_client.GenericEnvClient


def _end_records(run_dir: Path) -> list[Any]:
    return [r for r in read_log(run_dir / "steps.jsonl") if r.type == "episode_end"]


def _run_dir(out: Path) -> Path:
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    return run_dir


@pytest.mark.parametrize("name", SHIPPED_CONFIGS)
def test_every_config_plays_over_openenv_exactly_as_in_process(name: str, tmp_path: Path) -> None:
    config = EpisodeConfig.named(name)
    items = load_config_items(config)
    local = LateralEnv(config, items=items)
    benchmark = local.benchmark
    played = 0
    with served(config, settings=ServeSettings(port=0, out=tmp_path)) as url:
        with GenericEnvClient(base_url=url).sync() as client:
            for index, (player, seed) in enumerate((("oracle", 3), ("random", 11))):
                item_id = benchmark.item_id(items[index])
                obs, info = local.reset(seed=seed, options={"item_id": item_id})
                result = client.reset(seed=seed, item_id=item_id)
                assert result.observation["text"] == obs["text"] and not result.done
                assert result.observation["info"] == public_info(info)
                agent = make_agent(player, items, seed=seed)
                agent.reset(obs, info, seed=seed)
                done = False
                while not done:
                    move = action_to_text(agent.act(obs, info))
                    obs, reward, terminated, truncated, info = local.step(move)
                    done = terminated or truncated
                    result = client.step({"text": move})
                    seen = result.observation
                    assert (seen["text"], result.reward, result.done) == (obs["text"], reward, done), move
                    assert seen["info"] == public_info(info)
                    assert "outcome" not in seen["info"]
                    if benchmark.name in ("splat", "creativity"):  # no hidden text in anything the client gets
                        shown = json.dumps(seen) + json.dumps(client.state())
                        assert not any(secret in shown for secret in benchmark.secret_texts(local.item) if secret)
                played += 1
    run_dir = _run_dir(tmp_path)
    ends = _end_records(run_dir)
    assert len(ends) == played and all(end.error is None for end in ends)
    assert all(r.divergence is None for r in replay(run_dir))  # the served log replays like a run's
    assert write_report(run_dir).exists()


def test_a_seed_alone_draws_the_item_and_a_split_keeps_to_its_items(tmp_path: Path) -> None:
    config = EpisodeConfig.named("creativity-interactive")
    items = load_config_items(config)
    local = LateralEnv(config, items=items)
    test_ids = [local.benchmark.item_id(item) for item in split_items(items, "test")]
    with served(config) as url, GenericEnvClient(base_url=url).sync() as client:
        for seed in (0, 5, 2**40):
            drawn = test_ids[int(np.random.default_rng(seed).integers(len(test_ids)))]
            obs, _ = local.reset(seed=seed, options={"item_id": drawn})
            assert client.reset(seed=seed, split="test").observation["text"] == obs["text"]
        state = client.state()
        assert state["config"] == "creativity-interactive" and state["item"].startswith("item-")
        assert drawn not in json.dumps(state)  # the dataset id stays on the server


def test_64_sessions_at_once_each_logged_exactly_once(tmp_path: Path) -> None:
    config = EpisodeConfig.named("splat")

    async def play(url: str, seed: int) -> float:
        async with GenericEnvClient(base_url=url) as client:
            await client.reset(seed=seed)
            total, done, turn = 0.0, False, 0
            while not done:  # two questions, then explanations until the episode ends
                move = ("ask: Did somebody die?", "ask: Was it an accident?")[turn] if turn < 2 else "commit: A dream."
                result = await client.step({"text": move})
                total, done, turn = total + (result.reward or 0.0), result.done, turn + 1
            return total

    async def all_of(url: str) -> list[float]:
        return await asyncio.gather(*(play(url, seed) for seed in range(64)))

    with served(config, settings=ServeSettings(port=0, max_sessions=64, out=tmp_path)) as url:
        rewards = asyncio.run(all_of(url))
    assert len(rewards) == 64
    ends = _end_records(_run_dir(tmp_path))
    assert len(ends) == 64 and len({end.episode_id for end in ends}) == 64
    assert all(end.error is None and end.outcome is not None for end in ends)
    assert sorted(end.reward for end in ends) == sorted(rewards)
    assert (_run_dir(tmp_path) / "summary.json").exists()


def test_splat_with_an_llm_judge_over_http_runs_sessions_side_by_side(llm_server: Any, tmp_path: Path) -> None:
    from llm_server import Fault

    for _ in range(8):
        llm_server.enqueue(Fault.delay(0.3))  # each answered "yes" after a pause: concurrent sessions overlap
    llm_server.default_reply = "yes"
    options = RunOptions(judge=f"openai/judge-model?base_url={llm_server.base_url}", use_cache=False)

    async def ask(url: str, seed: int) -> str:
        async with GenericEnvClient(base_url=url) as client:
            await client.reset(seed=seed)
            result = await client.step({"text": "ask: Was it on purpose?"})
            return str(result.observation["info"].get("judge_label"))

    async def all_of(url: str) -> list[str]:
        return await asyncio.gather(*(ask(url, seed) for seed in range(8)))

    with served(EpisodeConfig.named("splat"), options, ServeSettings(port=0, out=tmp_path)) as url:
        labels = asyncio.run(all_of(url))
    assert labels == ["yes"] * 8
    assert llm_server.peak_in_flight() >= 2  # the judge was awaited on the loop, not one session at a time
    ends = _end_records(_run_dir(tmp_path))
    assert len(ends) == 8 and all(end.error == "unfinished: the client left mid-episode" for end in ends)
    assert all(end.usage["judge"].calls == 1 for end in ends)


def test_bad_input_gets_one_clear_error_and_the_server_keeps_serving(tmp_path: Path) -> None:
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    settings = ServeSettings(port=0, max_sessions=3, out=tmp_path)
    with served(EpisodeConfig.named("splat"), settings=settings) as url:
        ws_url = url.replace("http", "ws", 1) + "/ws"
        with GenericEnvClient(base_url=url).sync() as client:
            with pytest.raises(RuntimeError, match="no episode yet: send reset first"):
                client.step({"text": "ask: hello?"})
            client.reset(seed=1)
            unknown = client.step({"text": "dance: wildly"})
            assert unknown.observation["text"].startswith("Invalid action") and not unknown.done
            assert unknown.observation["info"]["valid_action"] is False
            huge = client.step({"text": "ask: " + "x" * 10_000_000})
            assert "characters long" in huge.observation["text"]
            with pytest.raises(RuntimeError, match="Invalid message"):
                client.step({"text": "ask: hi?", "extra": 1})
            with pytest.raises(RuntimeError, match="reset takes seed, episode_id, item_id and split"):
                client.reset(seed=1, colour="red")
            with pytest.raises(RuntimeError, match="no item with id 'nope'"):
                client.reset(item_id="nope")
            client.reset(seed=2)
            done = client.step({"text": "commit: I give up."})
            while not done.done:
                done = client.step({"text": "commit: I give up."})
            with pytest.raises(RuntimeError, match="the episode is over: send reset"):
                client.step({"text": "ask: and now?"})

            with connect(ws_url) as raw:  # malformed JSON, then the same socket still plays
                raw.send("{not json")
                assert json.loads(raw.recv(timeout=10))["data"]["code"] == "INVALID_JSON"
                raw.send(json.dumps({"type": "reset", "data": {"seed": 4}}))
                assert json.loads(raw.recv(timeout=10))["type"] == "observation"

            with contextlib.suppress(OSError, ConnectionClosed), connect(ws_url) as vanishing:  # leaves mid-episode
                vanishing.send(json.dumps({"type": "reset", "data": {"seed": 5}}))
                vanishing.recv(timeout=10)
                vanishing.send(json.dumps({"type": "step", "data": {"text": "ask: Was it raining?"}}))
                vanishing.recv(timeout=10)
                vanishing.socket.shutdown(socket.SHUT_RDWR)  # no close frame: the connection just drops

            with connect(ws_url) as second, connect(ws_url) as third:  # 3 sessions held: a 4th is refused
                for raw in (second, third):
                    raw.send(json.dumps({"type": "reset", "data": {"seed": 6}}))
                    raw.recv(timeout=10)
                with connect(ws_url) as fourth:
                    refused = json.loads(fourth.recv(timeout=10))
                assert refused["data"]["code"] == "CAPACITY_REACHED"
            again = client.reset(seed=3)  # the first client plays on
            assert not again.done
    ends = _end_records(_run_dir(tmp_path))
    assert sum(end.error == "unfinished: the client left mid-episode" for end in ends) >= 2
    assert all(end.error is None or end.error.startswith("unfinished:") for end in ends)


def test_a_port_in_use_is_one_clear_line_and_a_public_host_warns(capsys: pytest.CaptureFixture[str]) -> None:
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        with pytest.raises(ServeError, match=f"port {port} on 127.0.0.1 is in use: pick another with --port"):
            bind("127.0.0.1", port)
    finally:
        holder.close()
    with served(EpisodeConfig.named("riddlesense"), settings=ServeSettings(host="0.0.0.0", port=0)) as url:
        assert "other machines can reach this server" in capsys.readouterr().err
        local = url.replace("0.0.0.0", "127.0.0.1")
        with GenericEnvClient(base_url=local).sync() as client:
            assert client.reset(seed=0).observation["legal_moves"] == [f"commit: {c}" for c in "ABCDE"]


def test_the_served_threads_stop_with_the_block() -> None:
    before = {t.name for t in threading.enumerate()}
    with served(EpisodeConfig.named("brainteaser")) as url:
        with GenericEnvClient(base_url=url).sync() as client:
            client.reset(seed=0)
    assert "lateralgym-serve" not in {t.name for t in threading.enumerate()} - before


def test_the_cli_serves_an_imported_benchmark_logs_it_and_stops_cleanly_on_ctrl_c(tmp_path: Path) -> None:
    example = Path(__file__).resolve().parents[2] / "docs" / "examples" / "twenty_questions.py"
    data = tmp_path / "zoo.animals.json"
    data.write_text(
        json.dumps({"animals": [{"name": "otter", "family": "mustelid", "facts": ["swims", "eats fish"]}]}),
        encoding="utf-8",
    )
    command = [sys.executable, "-m", "lateralgym.cli", "serve", "--import", str(example), "twenty-questions"]
    command += ["--data", str(data)]
    process = subprocess.Popen(
        [*command, "--port", "0", "--out", str(tmp_path / "runs")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("serving twenty-questions"), line + (process.stderr.read() if process.stderr else "")
        url = line.split(" at ", 1)[1].split(":", 2)
        base = f"{url[0]}:{url[1]}:{url[2].split(':', 1)[0].split('/')[0]}"
        with GenericEnvClient(base_url=base).sync() as client:
            client.reset(seed=0)
            client.step({"text": "ask: Does it live in water?"})
        port = int(base.rsplit(":", 1)[1])  # a second server on the same port: one line, exit 2
        second = subprocess.run([*command, "--port", str(port)], capture_output=True, text=True, timeout=120)
        assert second.returncode == 2 and second.stderr.strip().endswith("(0 takes any free one)")
        assert len(second.stderr.strip().splitlines()) == 1
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    run_dir = _run_dir(tmp_path / "runs")
    assert (run_dir / "summary.json").exists()
    (end,) = _end_records(run_dir)
    assert end.error == "unfinished: the client left mid-episode"
    replayed = subprocess.run(
        [sys.executable, "-m", "lateralgym.cli", "replay", str(run_dir), "--quiet", "--import", str(example)],
        capture_output=True,
        text=True,
    )
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["no-such-config"], "unknown config 'no-such-config'"),
        (["splat", "--max-sessions", "0"], "--max-sessions must be at least 1, got 0"),
        (["splat", "--judge", "no-such-judge"], "unknown judge 'no-such-judge'"),
        (["splat", "--port", "70000"], "--port must be from 0 to 65535"),
        (["splat", "--format", "jsonl"], "--format names the format of a --data file"),
    ],
)
def test_serve_refuses_bad_flags_in_one_line(flags: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    import lateralgym.cli

    assert lateralgym.cli.main(["serve", *flags, "--port", "0"] if "--port" not in flags else ["serve", *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1


def test_without_openenv_core_serve_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "lateralgym.integrations._openenv", raising=False)
    monkeypatch.setitem(sys.modules, "openenv.core.env_server.http_server", None)  # as if not installed
    with pytest.raises(ServeError, match=r"serving needs openenv-core .*pip install 'lateralgym\[serve\]'"):
        with served(EpisodeConfig.named("brainteaser")):
            pass
