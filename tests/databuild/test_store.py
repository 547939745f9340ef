"""CheckpointStore: append-only stage files that survive kills, refuse a second build, and never duplicate."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lateralgym.databuild import CheckpointStore, DataBuildError
from lateralgym.envs import LateralGymError


def lines(path: Path) -> list[dict[str, object]]:
    # split("\n"), not splitlines(): a record may hold U+0085 or U+2028, which are no line ends in JSONL
    return [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line]


def test_records_round_trip_in_first_written_order(tmp_path: Path) -> None:
    with CheckpointStore(tmp_path) as store:
        store.put("parts", "kitchen/ladle", {"parts": ["bowl", "handle"]})
        store.put("parts", "garage/hammer", {"parts": ["head"]})
        store.put("states", "kitchen/ladle|bowl", {"wet": True, "note": "café ☕"})
        assert store.get("parts", "kitchen/ladle") == {"parts": ["bowl", "handle"]}
        assert store.get("parts", "nowhere") is None
    with CheckpointStore(tmp_path) as reopened:
        assert list(reopened.records("parts")) == ["kitchen/ladle", "garage/hammer"]
        assert reopened.get("states", "kitchen/ladle|bowl") == {"wet": True, "note": "café ☕"}
        assert reopened.stages() == ["parts", "states"]
    assert lines(tmp_path / "parts.jsonl")[1] == {"key": "garage/hammer", "record": {"parts": ["head"]}}


def test_put_is_idempotent_the_first_record_wins(tmp_path: Path) -> None:
    with CheckpointStore(tmp_path) as store:
        store.put("parts", "k", {"n": 1})
        store.put("parts", "k", {"n": 2})
    with CheckpointStore(tmp_path) as store:
        store.put("parts", "k", {"n": 3})
        assert store.get("parts", "k") == {"n": 1}
    assert len(lines(tmp_path / "parts.jsonl")) == 1


def test_a_second_build_of_the_same_directory_fails_in_one_line(tmp_path: Path) -> None:
    first = CheckpointStore(tmp_path)
    with pytest.raises(DataBuildError) as caught:
        CheckpointStore(tmp_path)
    message = str(caught.value)
    assert "another build is using this directory" in message and "\n" not in message
    assert isinstance(caught.value, LateralGymError)
    first.close()
    with CheckpointStore(tmp_path) as again:  # the lock went with the first store
        assert again.records("parts") == {}


def test_a_torn_last_line_is_ignored_and_truncated(tmp_path: Path) -> None:
    with CheckpointStore(tmp_path) as store:
        store.put("affordances", "a", {"n": 1})
        store.put("affordances", "b", {"n": 2})
    path = tmp_path / "affordances.jsonl"
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"key": "c", "record": {"n"')  # a write killed half-way
    with CheckpointStore(tmp_path) as store:
        assert list(store.records("affordances")) == ["a", "b"]
        assert path.read_bytes() == whole  # truncated back to the last whole line
        store.put("affordances", "c", {"n": 3})
    assert [entry["key"] for entry in lines(path)] == ["a", "b", "c"]


def test_a_corrupt_complete_line_is_an_error_naming_it(tmp_path: Path) -> None:
    (tmp_path / "parts.jsonl").write_text('{"key": "a", "record": {}}\nnot json\n{"key": "b", "record": {}}\n')
    with CheckpointStore(tmp_path) as store, pytest.raises(DataBuildError, match=r"parts.jsonl, line 2: .*delete"):
        store.records("parts")


def test_bad_stage_names_and_records_are_refused(tmp_path: Path) -> None:
    with CheckpointStore(tmp_path) as store:
        with pytest.raises(DataBuildError, match="stage name"):
            store.put("../escape", "k", {})
        with pytest.raises(DataBuildError, match="not JSON"):
            store.put("parts", "k", {"value": float("nan")})
        assert store.get("parts", "k") is None  # nothing half-written
    with pytest.raises(DataBuildError, match="closed"):
        store.get("other", "k")


@settings(max_examples=40, deadline=None)
@given(
    records=st.lists(st.dictionaries(st.text(max_size=5), st.integers() | st.text(max_size=8), max_size=3), max_size=8),
    cut=st.floats(min_value=0.0, max_value=1.0),
)
def test_a_kill_at_any_byte_keeps_exactly_the_whole_records(
    tmp_path_factory: pytest.TempPathFactory, records: list[dict[str, object]], cut: float
) -> None:
    root = tmp_path_factory.mktemp("store")
    with CheckpointStore(root) as store:
        for index, record in enumerate(records):
            store.put("stage", f"key{index}", record)
    path = root / "stage.jsonl"
    data = path.read_bytes() if path.exists() else b""
    keep = int(len(data) * cut)
    path.write_bytes(data[:keep])
    whole_lines = data[:keep].count(b"\n")
    with CheckpointStore(root) as store:
        survived = store.records("stage")
        assert list(survived.values()) == records[:whole_lines]
        for index, record in enumerate(records):  # the resumed build writes what was lost, nothing twice
            store.put("stage", f"key{index}", record)
    assert [entry["record"] for entry in lines(path)] == records
