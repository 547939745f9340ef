"""The run's prompt store: every prompt handed over is on disk, as sent, once ``close`` returns; a
directory that cannot be written costs a warning, never the call."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import pytest

from lateralgym.episodes._prompts_log import PromptStore, read_prompt


def _key(n: int) -> str:
    return hashlib.sha256(f"prompt {n}".encode()).hexdigest()


def test_every_prompt_is_on_disk_as_sent_once_closed(tmp_path: Path) -> None:
    store = PromptStore(tmp_path)
    sent = {_key(n): [{"role": "user", "content": f"riddle {n} \udc00 caf\u00e9"}] for n in range(300)}
    for key, messages in sent.items():
        store.add(key, messages)
        store.add(key, [{"role": "user", "content": "a later prompt under a key already stored"}])
    store.close()
    assert {p.name for p in (tmp_path / "prompts").iterdir()} == {f"{key}.json" for key in sent}
    for key, messages in sent.items():
        assert read_prompt(tmp_path, key) == messages  # the first one, the lone surrogate kept as written
    store.close()  # a second close has nothing to wait for


def test_a_store_closed_then_used_again_writes_again(tmp_path: Path) -> None:
    store = PromptStore(tmp_path)
    store.add(_key(1), [{"role": "user", "content": "one"}])
    store.close()
    store.add(_key(2), [{"role": "user", "content": "two"}])
    store.close()
    assert read_prompt(tmp_path, _key(2)) == [{"role": "user", "content": "two"}]


def test_bad_keys_are_never_written(tmp_path: Path) -> None:
    store = PromptStore(tmp_path)
    store.add("../../escape", [{"role": "user", "content": "x"}])
    store.close()
    assert not (tmp_path / "prompts").exists()


def test_an_unwritable_directory_warns_once_and_never_raises(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "run"
    blocker.write_text("a file where the run directory should be", encoding="utf-8")
    store = PromptStore(blocker)
    with caplog.at_level(logging.WARNING, logger="lateralgym.prompts"):
        for n in range(5):
            store.add(_key(n), [{"role": "user", "content": "lost"}])
        store.close()
    warnings = [r for r in caplog.records if "cannot store prompts" in r.getMessage()]
    assert len(warnings) == 1
    assert blocker.read_text(encoding="utf-8") == "a file where the run directory should be"
