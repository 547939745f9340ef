"""Our JSONL streamed (``iter_items``, what ``lateralgym data stats`` reads): each line validated by pydantic
from its bytes, the checked way (``json.loads``, then the model) only for lines that refuses. Whatever a file
holds, the stream gives what ``load_items`` gives: the same records, or the same one-line error."""

from __future__ import annotations

import gzip
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from lateralgym.envs import (
    DatasetError,
    all_benchmarks,
    dataset_stats,
    iter_items,
    load_items,
    load_sample_items,
    write_jsonl,
)
from lateralgym.envs import _samples as samples
from lateralgym.envs._samples import iter_jsonl, read_jsonl
from lateralgym.envs._streamed import json_validator, shallow
from lateralgym.envs.benchmarks.creativity import CreativityTask


@pytest.fixture(scope="module")
def tasks() -> list[CreativityTask]:
    return load_sample_items("creativity")[:6]  # type: ignore[return-value]


def _outcome(load: Callable[[], Any]) -> tuple[str, Any]:
    try:
        return "records", list(load())
    except DatasetError as exc:
        return "error", str(exc)


def assert_same_as_load_items(path: Path) -> tuple[str, Any]:
    """The stream's outcome is ``load_items``' (records equal and of the same models, or the same message)."""
    streamed, loaded = _outcome(lambda: iter_items(path)), _outcome(lambda: load_items(path))
    assert streamed == loaded
    if streamed[0] == "records":
        assert [type(r) for r in streamed[1]] == [type(r) for r in loaded[1]]
    else:
        assert "\n" not in streamed[1]
    return streamed


def _compact(tmp_path: Path, tasks: list[CreativityTask]) -> list[str]:
    return write_jsonl(tasks, tmp_path / "compact.jsonl").read_text(encoding="utf-8").splitlines()


def test_the_compact_form_streams_to_the_loaded_tasks_sharing_each_definition(
    tmp_path: Path, tasks: list[CreativityTask]
) -> None:
    path = write_jsonl(tasks, tmp_path / "t.jsonl")
    streamed = list(iter_items(path))
    assert streamed == tasks and assert_same_as_load_items(path)[0] == "records"
    by_id = {e.id: e for e in streamed[0].entities}
    assert any(e.id in by_id for t in streamed[1:] for e in t.entities)
    assert all(e is by_id[e.id] for t in streamed for e in t.entities if e.id in by_id)  # the definition's object
    assert json_validator(CreativityTask) is not None  # the model's lines take the fast way


def test_the_embedded_form_and_a_gzip_stream_alike(tmp_path: Path, tasks: list[CreativityTask]) -> None:
    embedded = tmp_path / "embedded.jsonl"
    embedded.write_text("".join(t.model_dump_json() + "\n" for t in tasks), encoding="utf-8")
    assert list(iter_items(embedded)) == tasks
    assert list(iter_items(write_jsonl(tasks, tmp_path / "t.jsonl.gz"))) == tasks


@pytest.mark.parametrize("name", [b.name for b in all_benchmarks() if b.data.sample_file])
def test_every_benchmarks_jsonl_streams_as_it_loads(tmp_path: Path, name: str) -> None:
    items = load_sample_items(name)
    path = write_jsonl(items, tmp_path / f"{name}.jsonl")
    assert assert_same_as_load_items(path) == ("records", items)
    assert dataset_stats(iter_items(path), path) == dataset_stats(load_items(path), path)


def _edit(lines: list[str], number: int, change: Callable[[dict[str, Any]], object]) -> list[str]:
    record = json.loads(lines[number - 1])
    change(record)
    return [*lines[: number - 1], json.dumps(record), *lines[number:]]


def _embed_first(lines: list[str], record: dict[str, Any]) -> None:
    """The record's first entity written whole, in place of its id."""
    definitions = {d["entity"]["id"]: d["entity"] for d in map(json.loads, lines) if list(d) == ["entity"]}
    record["entities"][0] = definitions[record["entities"][0]]


def _set(key: str, value: object) -> Callable[[dict[str, Any]], object]:
    return lambda record: record.__setitem__(key, value)


DEEP = json.loads("[" * 80 + "]" * 80)
"""Lists nested 80 levels deep."""

# Each turns a good compact file (its lines) into a hostile or odd one; the last line is a task.
EDITS: dict[str, Callable[[list[str]], list[str]]] = {
    "bad JSON": lambda lines: [*lines[:-1], lines[-1][:-3]],
    "not UTF-8": lambda lines: [*lines[:-1], lines[-1].replace('"scene"', '"sc\udcffene"', 1)],
    "a byte-order mark and CRLF line ends": lambda lines: ["\ufeff" + lines[0], *(line + "\r" for line in lines[1:])],
    "blank lines between records": lambda lines: [lines[0], "", "   ", *lines[1:], "\t"],
    "a unicode-space-only line": lambda lines: [*lines, "\u2028\x1c"],
    "an undefined entity id": lambda lines: _edit(lines, len(lines), lambda r: r["entities"].append("x/none/9")),
    "an entity listed before its definition": lambda lines: [lines[-1], *lines[:-1]],
    "ids and whole entities mixed": lambda lines: _edit(lines, len(lines), lambda r: _embed_first(lines, r)),
    "a duplicate task id": lambda lines: [*lines, lines[-1]],
    "an integer past Python's digit limit": lambda lines: [
        *lines[:-1],
        lines[-1].replace('"gold_level":', '"gold_level":' + "9" * 4400 + ',"ignored":', 1),
    ],
    "a long integer within the limit": lambda lines: [
        *lines[:-1],
        lines[-1].replace('"gold_level":', '"gold_level":1' + "0" * 4000 + ',"ignored":', 1),
    ],
    "a flag where a count belongs": lambda lines: _edit(
        lines, len(lines), lambda r: r["factors"].__setitem__("gold_level", True)
    ),
    "a float where a count belongs": lambda lines: _edit(
        lines, len(lines), lambda r: r["factors"].__setitem__("gold_level", 1.0)
    ),
    "NaN where text belongs": lambda lines: [*lines[:-1], lines[-1].replace('"task":', '"task":NaN,"ignored":', 1)],
    "a lone surrogate escape": lambda lines: _edit(lines, len(lines), _set("task", "\ud800 odd")),
    "a raw control character in text": lambda lines: [*lines[:-1], lines[-1].replace('"task":"', '"task":"\x01', 1)],
    "an unknown key": lambda lines: _edit(lines, len(lines), _set("__class__", "os.system")),
    "deep nesting in an unknown key": lambda lines: _edit(
        lines, len(lines), _set("deep", json.loads("[" * 80 + "]" * 80))
    ),
    "deep nesting inside text": lambda lines: _edit(lines, len(lines), _set("task", "[" * 200 + "{" * 200)),
    "duplicate keys (the last one counts)": lambda lines: [
        *lines[:-1],
        lines[-1].replace('"split":', '"id":"renamed","split":', 1),
    ],
    "a definition line defined twice alike": lambda lines: [lines[0], *lines],
    "a definition line that differs": lambda lines: [
        lines[0],
        lines[0].replace('"name":"', '"name":"other ', 1),
        *lines[1:],
    ],
    "a definition line spaced out": lambda lines: [lines[0].replace('{"entity":', '{ "entity" :', 1), *lines[1:]],
    "a task that is not an object": lambda lines: [*lines, "[1, 2]"],
    "the gold outside the scene": lambda lines: _edit(
        lines, len(lines), lambda r: r["gold"].__setitem__("entity", "nothing here")
    ),
}


@pytest.mark.parametrize("name", sorted(EDITS))
def test_a_hostile_or_odd_line_streams_as_it_loads(tmp_path: Path, tasks: list[CreativityTask], name: str) -> None:
    lines = EDITS[name](_compact(tmp_path, tasks[:2]))
    path = tmp_path / "edited.jsonl"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape") + b"\n")
    assert_same_as_load_items(path)


def test_the_edits_reach_both_outcomes(tmp_path: Path, tasks: list[CreativityTask]) -> None:
    """The table above holds files that load and files that are refused (so it tests both paths)."""
    kinds = set()
    for name, edit in EDITS.items():
        path = tmp_path / f"{len(kinds)}-{abs(hash(name))}.jsonl"
        path.write_bytes("\n".join(edit(_compact(tmp_path, tasks[:2]))).encode("utf-8", "surrogateescape") + b"\n")
        kinds.add(_outcome(lambda p=path: iter_items(p))[0])  # type: ignore[misc]
    assert kinds == {"records", "error"}


def test_a_run_of_blank_lines_past_the_cap_is_refused_as_it_loads(
    tmp_path: Path, tasks: list[CreativityTask], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(samples, "MAX_BLANK_RUN", 3)
    lines = _compact(tmp_path, tasks[:1])
    path = tmp_path / "blank.jsonl.gz"
    path.write_bytes(gzip.compress(("\n".join([*lines[:-1], "", "", "", "", lines[-1]]) + "\n").encode("utf-8")))
    assert "blank lines in a row" in assert_same_as_load_items(path)[1]


class Loose(BaseModel):
    """A record model that takes any JSON in one field (so only the depth check refuses deep nesting)."""

    id: str
    payload: Any = None


@pytest.mark.parametrize(("depth", "refused"), [(60, False), (64, False), (65, True), (300, True)])
def test_nesting_past_the_limit_is_refused_even_where_the_model_takes_any_json(
    tmp_path: Path, depth: int, refused: bool
) -> None:
    nested = "[" * (depth - 1) + "]" * (depth - 1)  # the record's own object is the first level
    path = tmp_path / "loose.jsonl"
    path.write_text(f'{{"id": "a", "payload": "[[[["}}\n{{"id": "b", "payload": {nested}}}\n', encoding="utf-8")
    streamed = _outcome(lambda: iter_jsonl(path, Loose))
    assert streamed == _outcome(lambda: read_jsonl(path, Loose))
    assert streamed[0] == ("error" if refused else "records")
    if refused:
        assert "line 2" in streamed[1] and "more than 64 levels deep" in streamed[1]


class Lenient(BaseModel):
    """Unknown keys dropped (pydantic's default), whatever they hold."""

    id: str


def test_brackets_are_counted_only_for_models_that_take_deep_json() -> None:
    assert all(shallow(b.item_type) for b in all_benchmarks())  # every shipped record nests a few levels
    assert shallow(CreativityTask) and not shallow(Loose) and not shallow(Lenient)


def test_deep_unknown_keys_are_refused_where_the_model_drops_them(tmp_path: Path) -> None:
    path = tmp_path / "lenient.jsonl"
    path.write_text('{"id": "a", "dropped": ' + "[" * 70 + "]" * 70 + "}\n", encoding="utf-8")
    streamed = _outcome(lambda: iter_jsonl(path, Lenient))
    assert streamed == _outcome(lambda: read_jsonl(path, Lenient))
    assert streamed[0] == "error" and "more than 64 levels deep" in streamed[1]


HOSTILE_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-(10**30), 10**30),
        st.floats(allow_nan=True),
        st.text(max_size=8),
        st.sampled_from(["", " ", "kitchen", "test", "x/none/9"]),
    ),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)


def _places(value: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = []
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        found.append((*path, key))
        found += _places(child, (*path, key))
    return found


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_hostile_records_stream_as_they_load(data: st.DataObject) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        lines = _compact(Path(tmp), load_sample_items("creativity")[:2])
        number = data.draw(st.integers(1, len(lines)))
        record = json.loads(lines[number - 1])
        for _ in range(data.draw(st.integers(1, 3))):
            places = _places(record)
            if not places:
                break
            *parents, key = data.draw(st.sampled_from(places))
            parent = record
            for step in parents:
                parent = parent[step]
            if data.draw(st.booleans()) and isinstance(parent, dict):
                del parent[key]
            else:
                parent[key] = data.draw(HOSTILE_VALUES)
        lines[number - 1] = json.dumps(record, allow_nan=True)
        path = Path(tmp) / "hostile.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        assert_same_as_load_items(path)
