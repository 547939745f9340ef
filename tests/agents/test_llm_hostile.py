"""Whatever a server sends, a call comes back as a writable ``ModelCall``, caches and replays exactly,
and goes through the step log; a reply without usable text is retried, never cached.

The replies are generated (hypothesis) and served by the real scripted server on 127.0.0.1: lone
surrogates (a ``\\udc00`` escape in the JSON), NUL and other control characters, right-to-left
marks, emoji, huge texts, credential-shaped runs, in the reply text, the model name the server
reports and its finish reason.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from llm_server import Fault, Reply, ScriptedLLMServer

from lateralgym.agents._llm_cache import CACHE_FORMAT, ResponseCache
from lateralgym.agents._llm_client import LLMClient
from lateralgym.agents._llm_secrets import redact
from lateralgym.agents._llm_usage import litellm_available
from lateralgym.envs._calls import ModelCall, cap_text, reply_cap, writable
from lateralgym.episodes import EpisodeEnd, StepLine, StepLogWriter, read_log
from lateralgym.episodes._log import observation

ODD = (
    "\ud800",
    "\udc00",
    "\udfff",
    "\x00",
    "\x1b[31m",
    "\r\n",
    "\x85",
    "\u2028",
    "\u202e",
    "\u200f",
    "\u2066",
    "\ufeff",
    "\ufffd",
    "😀",
    "👨\u200d👩\u200d👧",
    "\U0010ffff",
    '"',
    "\\",
    "</s>",
    "Bearer abcdefghijklmnopqrstuvwxyz",
    "http://user:pass-word@host/v1",
    "?api-key=abcdefgh",
)
"""Pieces real servers have sent, or that break naive writers; the last three look like credentials."""

chunk = st.one_of(
    st.sampled_from(ODD),
    st.text(max_size=12),
    st.text(st.characters(categories=["Cs", "Cc", "Cf", "Zl", "Zp"]), max_size=6),
)
reply_text = st.one_of(
    st.lists(chunk, max_size=12).map("".join),
    st.builds(lambda piece, times: piece * times, chunk.filter(bool), st.integers(2_000, 40_000)),  # huge
)
short_text = st.lists(chunk, max_size=4).map("".join)

MakeClient = Callable[..., LLMClient]


def capped_reply(sent: str) -> str:
    """The text a player's call keeps of ``sent``: received, then cut to the player's cap (a huge reply)."""
    return cap_text(received(sent), reply_cap("player"))[0]


HOSTILE = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def received(sent: str) -> str:
    """The text a client can receive for ``sent``: through JSON (where an escaped surrogate *pair*
    is one character) and made writable (a lone surrogate is U+FFFD)."""
    return writable(json.loads(json.dumps(sent)))


def _client(server: ScriptedLLMServer, cache_dir: Path, **fields: object) -> LLMClient:
    return LLMClient(
        "openai/scripted-model",
        base_url=server.base_url,
        cache_dir=cache_dir,
        backoff_base_s=0.001,
        # generous: no test here is about time, and litellm's first call imports for seconds on a busy machine
        **{"timeout": 120.0, "max_retries": 2, **fields},
    )


def _round_trip(call: ModelCall, run_dir: Path) -> ModelCall:
    """Write ``call`` in a step line and read it back."""
    with StepLogWriter(run_dir / "steps.jsonl") as writer:
        writer.write(
            StepLine(
                run_id="r",
                episode_id="e#0",
                item_id="e",
                step=1,
                action={"kind": "invalid", "text": call.text},
                valid=False,
                observation=observation("question", run_dir),
                reply=observation(call.text, run_dir),
                reward=0.0,
                llm=call,
            )
        )
    (line,) = read_log(run_dir / "steps.jsonl")
    assert isinstance(line, StepLine) and line.llm is not None
    return line.llm


@HOSTILE
@given(text=reply_text, served_by=short_text, finish_reason=short_text)
@example(text="\udc00", served_by="m", finish_reason="stop")  # the reply that used to end a run
@example(text="ok", served_by="scripted-\udc00", finish_reason="st\ud800op")
@example(text=" \n\t", served_by="m", finish_reason="stop")
def test_any_reply_is_a_writable_call_that_caches_replays_and_logs_exactly(
    llm_server: ScriptedLLMServer, text: str, served_by: str, finish_reason: str
) -> None:
    llm_server.reset()
    llm_server.enqueue(Reply(text, model=served_by or None, finish_reason=finish_reason or "stop"))
    with tempfile.TemporaryDirectory() as tmp, _client(llm_server, Path(tmp) / "cache") as client:
        call = client.complete_sync("Is a spoon a lever?")
        stored = list((Path(tmp) / "cache").rglob("*.json"))
        again = client.complete_sync("Is a spoon a lever?")

        if received(text).strip() or finish_reason == "length":
            assert (call.text, call.attempts) == (capped_reply(text), 1)
            assert call.served_by == (received(served_by) or "scripted-model")
            assert call.finish_reason == received(finish_reason or "stop")
        else:  # no text: malformed, asked again, and the server's next answer is its default
            assert (call.text, call.attempts) == ("ok", 2)
        for value in (call.text, call.served_by or "", call.finish_reason or "", call.model_dump_json()):
            value.encode("utf-8")  # strict: every field is writable as it stands

        shown = json.dumps(call.model_dump(mode="json"), ensure_ascii=False)
        if call.text.strip() and redact(shown) == shown:
            assert again.cache_hit and llm_server.chat_calls == call.attempts
            same = ("text", "served_by", "finish_reason", "prompt_tokens", "completion_tokens", "request_key")
            assert again.model_dump(include=set(same)) == call.model_dump(include=set(same))
        else:  # no text, or credential-shaped text: asked again, never written nor replayed altered
            assert not again.cache_hit and not stored

        assert _round_trip(call, Path(tmp) / "run") == call


@pytest.mark.skipif(not litellm_available(), reason="litellm is not installed (pip install -e '.[litellm]')")
@pytest.mark.filterwarnings("ignore:.*ReadOnly. qualifier:UserWarning")  # litellm 1.106.2 with pydantic 2.14
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=reply_text.filter(lambda t: bool(received(t).strip())), served_by=short_text)
@example(text="bad \udc00", served_by="x\ud800")
def test_any_reply_through_litellm_is_a_writable_call(llm_server: ScriptedLLMServer, text: str, served_by: str) -> None:
    llm_server.reset()
    llm_server.enqueue(Reply(text, model=served_by or None))
    with tempfile.TemporaryDirectory() as tmp, _client(llm_server, Path(tmp), backend="litellm") as client:
        call = client.complete_sync("Is a spoon a lever?")
        call.model_dump_json().encode("utf-8")
        assert call.text == capped_reply(text) and call.served_by == (received(served_by) or "scripted-model")
        assert _round_trip(call, Path(tmp) / "run") == call


def test_an_old_cache_entry_with_a_lone_surrogate_is_read_as_writable(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    key = "ab" * 32
    path = cache.path_for(key)
    path.parent.mkdir(parents=True)
    call = {"role": "player", "text": "commit: \udc00", "served_by": "m\ud800", "finish_reason": "st\udfffop"}
    # As an older version could write it: JSON escapes, valid ASCII on disk.
    path.write_text(json.dumps({"format": CACHE_FORMAT, "key": key, "call": call}), encoding="ascii")

    cached = cache.get(key)

    assert cached is not None
    assert (cached.text, cached.served_by, cached.finish_reason) == ("commit: \ufffd", "m\ufffd", "st\ufffdop")


@pytest.mark.parametrize(
    "stored",
    [{"text": ""}, {"text": "  \n"}, {"text": "fine", "error": "unparsable reply"}],
    ids=["empty", "blank", "errored"],
)
def test_an_entry_without_a_usable_reply_is_a_miss_and_is_never_written(tmp_path: Path, stored: dict[str, str]) -> None:
    cache = ResponseCache(tmp_path)
    key = "cd" * 32
    call = ModelCall(**stored)
    assert cache.put(key, {"model": "m"}, call) is None and not list(tmp_path.rglob("*.json"))
    path = cache.path_for(key)
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"format": CACHE_FORMAT, "key": key, "call": call.model_dump(mode="json")}))
    assert cache.get(key) is None


def test_model_copy_validates_so_no_unwritable_text_gets_in() -> None:
    call = ModelCall(text="fine")
    copied = call.model_copy(update={"error": "bad \udc00", "parsed_action": {"kind\ud800": ["x\udfff"]}})
    assert copied.error == "bad \ufffd" and copied.parsed_action == {"kind\ufffd": ["x\ufffd"]}
    copied.model_dump_json().encode("utf-8")


@HOSTILE
@given(text=reply_text, key=short_text)
def test_the_step_log_never_raises_on_odd_text(text: str, key: str) -> None:
    """Text that skipped ``ModelCall`` (an error message, a judge's raw text, metadata) is written
    with U+FFFD for what UTF-8 cannot hold, and reads back as that."""
    end = EpisodeEnd(
        run_id="r",
        episode_id="e#0",
        item_id="e",
        benchmark="splat",
        error=text,
        meta={key: [text, {"nested": key}]},
        outcome={"turns": 1, "note": text},
    )
    with tempfile.TemporaryDirectory() as tmp:
        with StepLogWriter(Path(tmp) / "steps.jsonl") as writer:
            writer.write(end)
        raw = (Path(tmp) / "steps.jsonl").read_bytes()
        raw.decode("utf-8")  # strict: the file is valid UTF-8
        (back,) = read_log(Path(tmp) / "steps.jsonl")
    assert isinstance(back, EpisodeEnd)
    assert back.error == writable(text)
    assert back.meta == writable({key: [text, {"nested": key}]})
    assert back.outcome == {"turns": 1, "note": writable(text)}


def test_null_and_non_utf8_faults_at_a_high_rate_are_retried_until_answered(tmp_path: Path) -> None:
    server = ScriptedLLMServer(fault_rate=0.4, fault_kinds=(Fault.null(), Fault.non_utf8(), Fault.empty()), seed=5)
    with server, _client(server, tmp_path, max_retries=8) as client:
        replies = [client.complete_sync(f"question {i}", use_cache=False) for i in range(30)]
        assert server.faults_served > 0
    assert all(r.text == "ok" and r.error is None for r in replies)
    assert sum(r.attempts for r in replies) > len(replies)
