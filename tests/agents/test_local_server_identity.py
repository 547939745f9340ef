"""A ``local/`` model's port and requests cannot be taken over by another process (issue 37, finding 1).

Before, LateralGym chose a free port, closed it and passed its number to the server, which bound it
seconds later (once the model was loaded): a process binding it first answered the readiness check (any
200 on ``/v1/models``), was sent every prompt (a judge's hidden explanation included), and its replies
were cached under the genuine model's sha256 and replayed later. Now this process binds the port and
the server inherits the listening socket; the server requires a key drawn for it; the readiness check
(``check_server``) requires proof of the key; and cached replies are keyed by the server's identity.

The check is driven here against servers on 127.0.0.1 that the tests start (``ScriptedLLMServer``: with
no key it answers everything 200, as any OpenAI-compatible server does by default); the whole path
through the stand-in server (``tests/local_stand_in.py``) started by the real code, on real sockets.
"""

from __future__ import annotations

import json
import os
import socket
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from llm_server import ScriptedLLMServer
from local_servers import write_gguf
from local_stand_in import KEY_ENV as STAND_IN_KEY_ENV
from local_stand_in import stand_in_command

from lateralgym.agents import (
    LOCAL_MODELS,
    LLMCallError,
    LLMClient,
    LocalModel,
    LocalModelServer,
    ModelSpec,
    register_local_model,
    serving,
)
from lateralgym.agents._local_identity import KEY_ENV, LocalServerIdentityError, check_server, new_key
from lateralgym.cli import main
from lateralgym.episodes import run

ALIAS = "stand-in"


# -- the readiness check, against servers the tests start ----------------------------------------------


def test_a_server_that_answers_any_key_is_refused() -> None:
    key = new_key()
    with ScriptedLLMServer(models=[ALIAS]) as impostor:  # answers everything 200, its model list included
        port = impostor.port
        with pytest.raises(LocalServerIdentityError) as caught:
            check_server(impostor.base_url, key, ALIAS)
    message = str(caught.value)
    assert "\n" not in message and key not in message
    assert f"127.0.0.1:{port} is not the local model server LateralGym started" in message
    assert "answered a request with a wrong key (HTTP 200, not 401)" in message
    assert impostor.chat_calls == 0 and len(impostor.requests) == 1  # it was never sent the key
    assert impostor.requests[0].headers["authorization"] != f"Bearer {key}"


def test_a_server_that_refuses_the_key_is_refused() -> None:
    with ScriptedLLMServer(models=[ALIAS], require_key=new_key()) as other:
        with pytest.raises(
            LocalServerIdentityError, match=r"refused the key given to the server it started \(HTTP 401\)"
        ):
            check_server(other.base_url, new_key(), ALIAS)


def test_a_server_of_another_model_is_refused() -> None:
    key = new_key()
    with ScriptedLLMServer(models=["qwen"], require_key=key) as other:
        with pytest.raises(LocalServerIdentityError, match="serves qwen, not stand-in"):
            check_server(other.base_url, key, ALIAS)


def test_the_server_that_knows_the_key_passes_and_nothing_listening_is_not_ready_yet() -> None:
    key = new_key()
    with ScriptedLLMServer(models=[ALIAS], require_key=key) as genuine:
        assert check_server(genuine.base_url, key, ALIAS) is True
        asked = [request.headers.get("authorization") for request in genuine.requests]
        port = genuine.port
    assert asked[0] != f"Bearer {key}" and asked[1] == f"Bearer {key}" and len(asked) == 2  # a wrong key first
    assert check_server(f"http://127.0.0.1:{port}/v1", key, ALIAS) is False  # stopped: nothing answers


# -- the whole path: LateralGym starts the server ------------------------------------------------------


def test_a_run_on_a_server_that_answers_any_key_fails_in_one_line_before_any_prompt(
    stand_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STAND_IN_ANY_KEY", "1")  # what any OpenAI-compatible server on the port would do
    code = main(
        ["run", "brainteaser", "--player", "local/stand-in", "--out", str(tmp_path / "runs"),
         "--cache-dir", str(tmp_path / "cache")]
    )  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0, err
    assert "is not the local model server LateralGym started" in err and "wrong key" in err
    assert not (stand_in / "requests.jsonl").exists()  # not one prompt was sent to it
    assert not (tmp_path / "runs").exists() and not (tmp_path / "cache").exists()


def test_a_server_listing_another_model_is_refused_in_one_line(
    stand_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("STAND_IN_ALIAS", "another-model")
    code = main(["run", "brainteaser", "--player", "local/stand-in", "--out", str(tmp_path / "runs")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0 and "serves another-model, not stand-in" in err


def test_the_port_is_held_while_the_server_loads(
    stand_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The old race: the port is known while the server loads; a process binding it first answered for it.
    monkeypatch.setenv("STAND_IN_LOAD", "3")
    attempts: list[tuple[str, str]] = []
    impostors: list[ScriptedLLMServer] = []

    def squat() -> None:
        port_file = stand_in / "port"
        while not port_file.exists():
            threading.Event().wait(0.02)
        port = int(port_file.read_text())
        for host in ("127.0.0.1", "0.0.0.0"):  # noqa: S104 - a squatter binds what it can
            squatter = socket.socket()
            try:
                squatter.bind((host, port))
                squatter.listen()
            except OSError as exc:
                squatter.close()
                attempts.append((host, type(exc).__name__))
                continue
            attempts.append((host, "bound"))  # then it answers everything 200, as any server would
            impostors.append(ScriptedLLMServer(models=[ALIAS], listener=squatter, default_reply="hijacked").start())

    squatter = threading.Thread(target=squat, daemon=True)
    squatter.start()
    try:
        with serving():
            client = LLMClient("local/stand-in", cache_dir=tmp_path / "cache")
            squatter.join(timeout=60)
            text = client.complete_sync("hello").text
            client.close()
    finally:
        for impostor in impostors:
            impostor.stop()
    assert attempts == [("127.0.0.1", "OSError"), ("0.0.0.0", "OSError")]  # noqa: S104
    assert text == "I am not sure what to do here." and not impostors
    assert json.loads((stand_in / "requests.jsonl").read_text().splitlines()[-1])["messages"][0]["content"] == "hello"


def test_after_the_server_dies_its_port_stays_held_and_requests_fail_at_once(
    stand_in: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("STAND_IN_DIE_AFTER", "1")
    with serving():
        # A timeout of its own: a request left waiting in the port's queue would end as a timeout.
        client = LLMClient("local/stand-in?max_retries=0&timeout=60", cache_dir=tmp_path / "cache")
        assert client.complete_sync("first").text
        port = int((stand_in / "port").read_text())
        failures = []
        for text in ("second", "third"):  # the server exits on the second; the third finds it gone
            with pytest.raises(LLMCallError) as caught:
                client.complete_sync(text)
            failures.append(caught.value.kind)
        with pytest.raises(OSError), socket.create_server(("127.0.0.1", port)):
            pass
        client.close()
    assert failures == ["connection", "connection"]


def test_the_key_goes_with_every_request_and_nowhere_else(
    stand_in: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with serving():
        LLMClient("local/stand-in", cache_dir=tmp_path / "cache")
        key = (stand_in / "key").read_text()
        pid = int((stand_in / "pid").read_text())
        command_line = Path(f"/proc/{pid}/cmdline").read_bytes()
        without = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        port = int((stand_in / "port").read_text())
        with pytest.raises(urllib.error.HTTPError) as refused:
            without.open(f"http://127.0.0.1:{port}/v1/models", timeout=10)
        refused.value.close()
        # the run below shares this server: every request it makes (the timing call, the constraint check,
        # each move) must carry the key, or the server refuses it
        result = run(
            "brainteaser", player="local/stand-in", limit=2, out=tmp_path / "runs", cache_dir=tmp_path / "cache",
            progress=False,
        )  # fmt: skip
    assert refused.value.code == 401 and key.encode() not in command_line and KEY_ENV == STAND_IN_KEY_ENV
    assert result.errored == 0 and result.metrics.episodes >= 2
    printed = capsys.readouterr()
    written = [path for root in (tmp_path / "runs", tmp_path / "cache") for path in root.rglob("*") if path.is_file()]
    assert written and not [path for path in written if key.encode() in path.read_bytes()]
    assert key not in printed.out + printed.err and not any(key in value for value in os.environ.values())


def say_one_thing(model: Path, alias: str, fd: int, threads: int, n_ctx: int) -> list[str]:
    """The stand-in as another server of the same file: it replies another text."""
    return [*stand_in_command(model, alias, fd, threads, n_ctx), "--say", "another server's reply"]


def test_replies_of_another_server_of_the_same_file_are_not_replayed(stand_in: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with serving():
        first = LLMClient("local/stand-in", cache_dir=cache)
        assert first.complete_sync("hello").text == "I am not sure what to do here."
        assert first.complete_sync("hello").cache_hit  # the same server's replies replay
        first.close()
    model = write_gguf(tmp_path / "stand-in.gguf")  # the same file, served by another server
    register_local_model(LocalModel(ALIAS, "another stand-in", "nothing", lambda: model, command=say_one_thing))
    try:
        with serving():
            other = LLMClient("local/stand-in", cache_dir=cache)
            call = other.complete_sync("hello")
            other.close()
    finally:
        LOCAL_MODELS.pop(ALIAS, None)
    assert not call.cache_hit and call.text == "another server's reply"


def test_a_servers_spec_names_its_key_by_a_variable_until_it_stops(tmp_path: Path) -> None:
    model = write_gguf(tmp_path / "m.gguf")
    with LocalModelServer(model, alias=ALIAS, command=stand_in_command) as server:
        spec = server.spec()
        parsed = ModelSpec.parse(spec)
        assert parsed.api_key_env is not None and os.environ[parsed.api_key_env] == server.api_key
        assert server.api_key not in spec
        client = LLMClient(spec, cache_dir=tmp_path / "cache")
        assert client.complete_sync("hello").text == "I am not sure what to do here."
        client.close()
    assert parsed.api_key_env not in os.environ
