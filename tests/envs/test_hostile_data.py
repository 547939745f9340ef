"""Hostile dataset files: nothing in a data file runs, and nonsense is refused with a one-line error.

A loader has two outcomes only: valid records, or a ``DatasetError`` on one printable line that names
the file (and, where there is one, the record and the field). Never another exception, never a side
effect. The crafted files here would run a shell command, ``eval`` or ``subprocess`` under a plain
``np.load(allow_pickle=True)``; each one leaves a marker file behind if it ever runs.
"""

from __future__ import annotations

import datetime
import io
import json
import os
import pickle
import resource
import struct
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from numpy.lib import format as npy_format
from official_data import (
    creativitybench_tasks,
    riddlesense_record,
    save_records,
    semeval_test_records,
    write_splat,
)

from lateralgym.envs._errors import DatasetError
from lateralgym.envs._loaders import detect_format, load_items, load_jsonl
from lateralgym.envs._npy import read_npy
from lateralgym.envs._samples import MAX_NESTING
from lateralgym.envs.benchmarks.brainteaser import load_brainteaser
from lateralgym.envs.benchmarks.brainteaser._schema import MCQPuzzle
from lateralgym.envs.benchmarks.creativity._loaders import load_creativitybench
from lateralgym.envs.benchmarks.creativity._schema import CreativityTask, Entity
from lateralgym.envs.benchmarks.riddlesense import load_riddlesense
from lateralgym.envs.benchmarks.splat import load_lateval
from lateralgym.envs.benchmarks.splat._scene import SituationPuzzle

MARKER = Path(tempfile.gettempdir()) / f"lateralgym-hostile-marker-{os.getpid()}"
"""Every crafted payload tries to create this file; it must never exist."""

HYPOTHESIS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(autouse=True)
def _no_marker() -> Iterator[None]:
    MARKER.unlink(missing_ok=True)
    yield
    ran = MARKER.exists()
    MARKER.unlink(missing_ok=True)
    assert not ran, "a data file ran code"


def assert_one_line(error: DatasetError, path: Path) -> str:
    """The error's message: one printable line naming the file."""
    message = str(error)
    assert message.isprintable(), message
    assert error.path == str(path) and message.startswith(str(path))
    return message


@contextmanager
def refused(path: Path, match: str | None = None) -> Iterator[pytest.ExceptionInfo[DatasetError]]:
    """Expect a one-line DatasetError naming ``path`` (and matching ``match``)."""
    with pytest.raises(DatasetError, match=match) as exc:
        yield exc
    assert_one_line(exc.value, path)


# ---------------------------------------------------------------- crafted pickles


def _text(value: str) -> bytes:
    """Pickle ``BINUNICODE``: a string of any length."""
    data = value.encode("utf-8", "surrogatepass")
    return b"X" + struct.pack("<I", len(data)) + data


def stack_global(module: str, name: str) -> bytes:
    """Protocol 4 ``STACK_GLOBAL``: push ``module.name``."""
    return _text(module) + _text(name) + b"\x93"


def text_global(module: str, name: str) -> bytes:
    """Protocol 0 ``GLOBAL``: push ``module.name``."""
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def call(push: bytes, argument: str) -> bytes:
    """A protocol 4 pickle of ``pushed_callable(argument)``."""
    return b"\x80\x04" + push + _text(argument) + b"\x85R."


def npy_file(payload: bytes, shape: tuple[int, ...] = (1,), version: tuple[int, int] = (1, 0)) -> bytes:
    """An object-array ``.npy`` header followed by ``payload`` as its pickle."""
    header = io.BytesIO()
    write = npy_format.write_array_header_1_0 if version == (1, 0) else npy_format.write_array_header_2_0
    write(header, {"descr": "|O", "fortran_order": False, "shape": shape})
    return header.getvalue() + payload


ATTACKS: dict[str, tuple[str, str, str]] = {
    "posix.system": ("posix", "system", f"touch {MARKER}"),
    "os.system": ("os", "system", f"touch {MARKER}"),
    "subprocess.getoutput": ("subprocess", "getoutput", f"touch {MARKER}"),
    "builtins.eval": ("builtins", "eval", f"open({str(MARKER)!r}, 'w').close()"),
    "builtins.exec": ("builtins", "exec", f"open({str(MARKER)!r}, 'w').close()"),
}
"""(module, name, argument): a call that creates ``MARKER`` when it runs."""

REFUSED_NAMES = [
    ("numpy", "load"),
    ("numpy", "ndarray.__reduce__"),  # a dotted name reaching past an admitted global
    ("numpy.lib.format", "read_array"),
    ("builtins", "getattr"),
    ("builtins", "__import__"),
    ("pickle", "loads"),
    ("nt", "system"),
    ("os\nsystem", "x"),
]
"""Globals that run nothing here but are still not data."""


class _Attack:
    """An object that pickles as a call of ``function(argument)``."""

    def __init__(self, function: Callable[[str], Any], argument: str) -> None:
        self.function, self.argument = function, argument

    def __reduce__(self) -> tuple[Any, ...]:
        return self.function, (self.argument,)


def _resolve(module: str, name: str) -> Callable[[str], Any]:
    resolved: Callable[[str], Any] = getattr(__import__(module), name)
    return resolved


@pytest.mark.parametrize("attack", sorted(ATTACKS))
@pytest.mark.parametrize("opcode", ["STACK_GLOBAL", "GLOBAL"])
def test_a_crafted_npy_runs_nothing_and_names_the_refused_global(tmp_path: Path, attack: str, opcode: str) -> None:
    module, name, argument = ATTACKS[attack]
    push = stack_global(module, name) if opcode == "STACK_GLOBAL" else text_global(module, name)
    path = tmp_path / "sentence_puzzle.npy"
    path.write_bytes(npy_file(call(push, argument)))
    for load in (load_brainteaser, load_items):
        with refused(path, match="refused to load") as exc:
            load(path)
        message = str(exc.value)
        assert f"asks for {attack}," in message and "nothing was run" in message


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_an_attack_inside_a_release_record_is_refused_after_the_array_globals(tmp_path: Path, attack: str) -> None:
    """The realistic file: numpy's own array rebuild first (admitted), the payload in one record's value."""
    module, name, argument = ATTACKS[attack]
    function = _resolve(module, name)
    records = [
        {"id": "SP-1", "question": "Q?", "label": 0, "choice_list": ["a", "b", "c", "None of above."]},
        {"id": "SP-2", "question": _Attack(function, argument), "label": 0, "choice_list": ["a", "b"]},
    ]
    path = save_records(tmp_path / "sentence_puzzle.npy", records)
    with refused(path, match="refused to load") as exc:
        load_items(path)
    assert f"asks for {function.__module__}.{function.__name__}," in str(exc.value)


@pytest.mark.parametrize(("module", "name"), REFUSED_NAMES)
def test_any_global_but_the_array_rebuild_is_refused(tmp_path: Path, module: str, name: str) -> None:
    path = tmp_path / "x.npy"
    path.write_bytes(npy_file(call(stack_global(module, name), "x")))
    with refused(path, match="refused to load") as exc:
        load_brainteaser(path)
    assert repr(f"{module}.{name}")[1:-1] in str(exc.value)


def test_a_crafted_answer_file_beside_a_test_split_is_refused(data: Path, tmp_path: Path) -> None:
    """The test split loads ``<stem>_answer.npy`` on its own: that file goes through the same unpickler."""
    puzzles = save_records(tmp_path / "SP_test.npy", semeval_test_records())
    answers = tmp_path / "SP_test_answer.npy"
    answers.write_bytes(npy_file(call(stack_global(*ATTACKS["posix.system"][:2]), ATTACKS["posix.system"][2])))
    with refused(answers, match="asks for posix.system"):
        load_items(puzzles)


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".txt"])
def test_a_text_file_with_numpys_magic_is_refused_as_text_never_unpickled(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"items{suffix}"
    path.write_bytes(npy_file(call(stack_global("posix", "system"), f"touch {MARKER}")))
    for read in (detect_format, load_items, load_jsonl, load_lateval):
        with refused(path, match="is not UTF-8 text"):
            read(path)
    # Named explicitly, the format is read through the same data-only unpickler.
    with refused(path, match="asks for posix.system"):
        load_items(path, format="brainteaser")


def test_binary_formats_claim_their_suffix_or_their_magic_under_an_unknown_suffix(data: Path, tmp_path: Path) -> None:
    npy = (data / "brainteaser" / "word_puzzle.npy").read_bytes()
    xlsx = (data / "splat" / "puzzles.xlsx").read_bytes()
    for name, content, expected in (
        ("wp.bin", npy, "brainteaser"),
        ("wp", npy, "brainteaser"),
        ("p.dat", xlsx, "splat"),
        ("wp.npy", npy, "brainteaser"),
    ):
        (tmp_path / name).write_bytes(content)
        assert detect_format(tmp_path / name) == expected, name
    # Another format's suffix wins over the magic bytes: neither binary reader claims the other's file.
    (tmp_path / "wp.xlsx").write_bytes(npy)
    assert detect_format(tmp_path / "wp.xlsx") == "splat"
    (tmp_path / "p.npy").write_bytes(xlsx)
    assert detect_format(tmp_path / "p.npy") == "brainteaser"
    with refused(tmp_path / "p.npy", match="zip archive"):
        load_items(tmp_path / "p.npy")


def test_a_memo_slot_far_past_the_pickle_is_refused_before_any_allocation(tmp_path: Path) -> None:
    """``LONG_BINPUT n`` makes CPython's unpickler reserve and clear 16 * n bytes: 10 bytes of file, 800 MB."""
    path = tmp_path / "memo.npy"
    path.write_bytes(npy_file(b"\x80\x04N" + b"r" + struct.pack("<I", 50_000_000) + b"."))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with refused(path, match="writes memo slot 50000000"):
        load_brainteaser(path)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000  # kilobytes


def test_a_plain_array_header_promising_more_than_the_file_holds(tmp_path: Path) -> None:
    header = io.BytesIO()
    npy_format.write_array_header_1_0(header, {"descr": "<U21", "fortran_order": False, "shape": (10**9, 2)})
    path = tmp_path / "x_answer.npy"
    path.write_bytes(header.getvalue() + b"\0" * 168)
    with refused(path, match="is truncated: its header promises"):
        load_brainteaser(path)


def test_a_pickle_that_disagrees_with_its_header(tmp_path: Path) -> None:
    path = tmp_path / "x.npy"
    array = np.empty(2, dtype=object)
    array[:] = [{"id": "SP-1"}, {"id": "SP-2"}]
    path.write_bytes(npy_file(pickle.dumps(array, protocol=4), shape=(5,)))
    with refused(path, match=r"header says object \(5,\) but it holds an array of object \(2,\)"):
        load_brainteaser(path)
    path.write_bytes(npy_file(pickle.dumps(np.array(["SP-1"]), protocol=4)))
    with refused(path, match=r"header says object \(1,\) but it holds an array of <U4 \(1,\)"):
        load_brainteaser(path)
    path.write_bytes(npy_file(pickle.dumps({"id": "SP-1"}, protocol=4)))
    with refused(path, match="not a numpy array"):
        load_brainteaser(path)


def test_every_generated_npy_reads_as_numpy_reads_it(data: Path) -> None:
    """The data-only reader gives what ``np.load(allow_pickle=True)`` gives on trusted files."""
    files = sorted((data / "brainteaser").glob("*.npy"))
    assert len(files) == 5
    for path in files:
        ours, numpys = read_npy(path), np.load(path, allow_pickle=True)
        assert ours.dtype == numpys.dtype and ours.shape == numpys.shape
        assert ours.tolist() == numpys.tolist(), path.name


def test_the_real_npy_files_read_as_numpy_reads_them(shared_data: Path) -> None:
    for path in sorted((shared_data / "brainteaser").glob("*.npy")):
        assert read_npy(path).tolist() == np.load(path, allow_pickle=True).tolist(), path.name


def test_numpy_scalars_and_version_2_headers_in_records_load(tmp_path: Path) -> None:
    """Files written from pandas hold NumPy numbers and strings in the dicts: ``scalar`` rebuilds them."""
    record = {
        "id": np.str_("SP-7"),
        "question": np.str_("Which weighs more?"),
        "label": np.int64(2),
        "choice_list": [np.str_("a"), np.float64(2000.0), "c", "None of above."],
    }
    array = np.empty(1, dtype=object)
    array[:] = [record]
    path = tmp_path / "pandas.npy"
    path.write_bytes(npy_file(pickle.dumps(array, protocol=3), version=(2, 0)))  # NumPy 1 writes protocol 3
    (puzzle,) = load_brainteaser(path)
    assert (puzzle.id, puzzle.label, puzzle.choices[1]) == ("SP-7", 2, "2000.0")


_OPCODES = [b"(", b"]", b"}", b")", b"N", b"\x88", b"\x89", b"t", b"\x85", b"\x86", b"\x87"]
_OPCODES += [b"R", b"b", b"e", b"u", b"a", b"s", b"l", b"d", b"0", b"2", b"\x94", b".", b"\x95" + bytes(8)]
_GLOBALS = [(m, n) for m, n, _ in ATTACKS.values()] + REFUSED_NAMES[:4]
_GLOBALS += [("numpy._core.multiarray", "_reconstruct"), ("numpy.core.multiarray", "scalar")]
_GLOBALS += [("numpy", "ndarray"), ("numpy", "dtype")]

pickle_pieces = st.one_of(
    st.sampled_from(_OPCODES),
    st.integers(0, 255).map(lambda n: b"K" + bytes([n])),
    st.integers(0, 30).map(lambda n: b"q" + bytes([n])),
    st.integers(0, 30).map(lambda n: b"h" + bytes([n])),
    st.integers(0, 2**32 - 1).map(lambda n: b"r" + struct.pack("<I", n)),
    st.sampled_from(_GLOBALS).map(lambda g: stack_global(*g)),
    st.sampled_from(_GLOBALS).map(lambda g: text_global(*g)),
    st.sampled_from([a for _, _, a in ATTACKS.values()] + ["O8", "<U21", "b"]).map(_text),
    st.binary(max_size=12),
)
"""Pieces of pickles: real opcodes, dangerous and admitted globals, the attacks' arguments, noise."""

ATTACK = [b"\x80\x04", stack_global("posix", "system"), _text(f"touch {MARKER}"), b"\x85", b"R", b"."]


@HYPOTHESIS
@given(pieces=st.lists(pickle_pieces, max_size=24), start=st.sampled_from([b"", b"\x80\x02", b"\x80\x04"]))
@example(pieces=ATTACK, start=b"")
@example(pieces=[b"N", b"r" + struct.pack("<I", 2**32 - 1), b"."], start=b"\x80\x04")
def test_any_bytes_after_a_valid_header_run_nothing_and_give_a_dataset_error(pieces: list[bytes], start: bytes) -> None:
    modules = set(sys.modules)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.npy"
        path.write_bytes(npy_file(start + b"".join(pieces)))
        with pytest.raises(DatasetError) as exc:
            load_brainteaser(path)
        assert_one_line(exc.value, path)
    assert not MARKER.exists()
    # a text opcode's decoding may load a stdlib codec (encodings.raw_unicode_escape) on first use:
    # the codec registry, not the data, imported it; anything else would be the data running code
    imported = {name for name in set(sys.modules) - modules if not name.startswith("encodings.")}
    assert not imported, f"unpickling imported a module: {sorted(imported)}"


@HYPOTHESIS
@given(payload=st.binary(max_size=300))
def test_random_bytes_after_a_valid_header_give_a_dataset_error(payload: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.npy"
        path.write_bytes(npy_file(payload))
        with pytest.raises(DatasetError) as exc:
            load_items(path)
        assert_one_line(exc.value, path)
    assert not MARKER.exists()


# ---------------------------------------------------------------- nonsense records, one case each


def write_json(path: Path, data: object) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def lateval(**changes: Any) -> list[dict[str, Any]]:
    good = {"id": 0, "question": "Why did he smile?", "answer": "He had won.", "clue": "```1.He won```"}
    return [good, {**good, "id": 1, **changes}]


@pytest.mark.parametrize(
    ("changes", "record", "field", "message"),
    [
        ({"id": None}, "index 1", "id", "expected an integer or text id, got NoneType None"),
        ({"id": True}, "index 1", "id", "got bool True"),
        ({"id": [1]}, "index 1", "id", r"got list \[1\]"),
        ({"id": "  "}, "index 1", "id", "is empty"),
        ({"id": "0"}, "index 1 (id 0)", "id", r"duplicate id 0 \(also at index 0\)"),
        ({"question": ["a", "b"]}, "index 1 (id 1)", "question", r"expected text, got list \['a', 'b'\]"),
        ({"question": 42}, "index 1 (id 1)", "question", "expected text, got int 42"),
        ({"answer": {"text": "x"}}, "index 1 (id 1)", "answer", "expected text, got dict"),
        ({"answer": None}, "index 1 (id 1)", "answer", "is empty"),
        ({"clue": ["1.a"]}, "index 1 (id 1)", "clue", "expected text, got list"),
        ({"id": "a\nb", "question": 1}, "index 1 (id 'a\\nb')", "question", "expected text"),
    ],
)
def test_lateval_nonsense_names_record_and_field(
    tmp_path: Path, changes: dict[str, Any], record: str, field: str, message: str
) -> None:
    path = write_json(tmp_path / "english.json", lateval(**changes))
    with refused(path, match=message) as exc:
        load_lateval(path)
    assert (exc.value.record, exc.value.field) == (record, field)


STORY = {"id": "s-1", "title": "", "story": "A man smiled.", "answer": "He had won.", "difficulty": 3}
MCQ = {
    "id": "SP-1",
    "group_id": "SP-1",
    "kind": "sentence",
    "variant": "original",
    "question": "Q?",
    "choices": ["a", "b"],
    "label": 0,
}


@pytest.mark.parametrize(
    ("records", "line", "field", "message"),
    [
        ([{**STORY, "story": ""}], "line 1", "story", "at least 1 character"),
        ([{**STORY, "answer": "  \n "}], "line 1", "answer", "at least 1 character"),
        ([{**STORY, "id": ""}], "line 1", "id", "at least 1 character"),
        ([{**STORY, "difficulty": True}], "line 1", "difficulty", "valid integer"),
        ([{**STORY, "difficulty": "3"}], "line 1", "difficulty", "valid integer"),
        ([{**STORY, "story": ["a", "b"]}], "line 1", "story", "valid string"),
        ([{**STORY, "clues": ["a", " "]}], "line 1", "clues.1", "at least 1 character"),
        ([STORY, {**STORY, "story": "Another."}], "line 2", "id", r"duplicate id s-1 \(also on line 1\)"),
        ([{**MCQ, "label": True}], "line 1", "label", "valid integer"),
        ([{**MCQ, "label": 1.0}], "line 1", "label", "valid integer"),
        ([{**MCQ, "choices": ["a", ""]}], "line 1", "choices.1", "at least 1 character"),
        ([{**MCQ, "question": None}], "line 1", "question", "valid string"),
    ],
)
def test_our_jsonl_nonsense_names_line_and_field(
    tmp_path: Path, records: list[dict[str, Any]], line: str, field: str, message: str
) -> None:
    path = tmp_path / "items.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    with refused(path, match=message) as exc:
        load_items(path)
    assert (exc.value.record, exc.value.field) == (line, field)


def test_duplicate_ids_in_every_official_loader(data: Path, tmp_path: Path) -> None:
    good = {"id": "SP-3", "question": "Q?", "label": 0, "choice_list": ["a", "b", "c", "None of above."]}
    path = save_records(tmp_path / "dup.npy", [good, good])
    with refused(path, match=r"duplicate id SP-3 \(also at index 0\)") as exc:
        load_brainteaser(path)
    assert (exc.value.record, exc.value.field) == ("index 1 (SP-3)", "id")

    tasks = creativitybench_tasks()
    path = write_json(tmp_path / "tasks.json", [tasks[0], tasks[0]])
    task_id = tasks[0]["task_id"]
    with refused(path, match="duplicate id") as exc:
        load_creativitybench(path)
    assert (exc.value.record, exc.value.field) == (f"index 1 ({task_id})", "task_id")

    riddle = riddlesense_record("What has keys but no locks?", "keys", ["piano", "door", "map", "car", "tree"], "A")
    path = tmp_path / "rs_dev.jsonl"
    path.write_text(json.dumps(riddle) + "\n" + json.dumps(riddle) + "\n", encoding="utf-8")
    with refused(path, match=r"also at line 1") as exc:
        load_riddlesense(path)
    assert (exc.value.record, exc.value.field) == ("line 2", "id")


def test_riddlesense_values_must_be_text(tmp_path: Path) -> None:
    riddle = riddlesense_record("What has keys but no locks?", "keys", ["piano", "door", "map", "car", "tree"], "A")
    for key, value, field in (
        ("id", None, None),  # a missing id is numbered by its line
        ("id", ["x"], "id"),
        ("answerKey", 1, "answerKey"),
    ):
        path = tmp_path / "rs_dev.jsonl"
        path.write_text(json.dumps({**riddle, key: value}) + "\n", encoding="utf-8")
        if field is None:
            assert load_riddlesense(path)[0].id == "rs-line-1"
            continue
        with refused(path, match="expected text") as exc:
            load_riddlesense(path)
        assert exc.value.field == field
    riddle["question"]["stem"] = {"text": "x"}
    path.write_text(json.dumps(riddle) + "\n", encoding="utf-8")
    with refused(path, match="expected text, got dict") as exc:
        load_riddlesense(path)
    assert exc.value.field == "question.stem"


def test_a_file_without_records_is_refused_by_load_items(tmp_path: Path) -> None:
    lateval_file = write_json(tmp_path / "english.json", [])
    assert load_lateval(lateval_file) == []  # a reader returns what is there; the dispatch refuses nothing
    for path in (lateval_file, save_records(tmp_path / "none.npy", []), write_splat(tmp_path / "puzzles.xlsx", [])):
        with refused(path, match="holds no records"):
            load_items(path, format="lateval" if path.suffix == ".json" else None)


def test_whole_numbers_are_ascii_digits_or_ints(tmp_path: Path) -> None:
    task = creativitybench_tasks()[0]
    for level in ("²", True, "9" * 30, -1):
        task["setting"]["level"] = level
        path = write_json(tmp_path / "tasks.json", [task])
        with refused(path, match="expected a whole number") as exc:
            load_creativitybench(path)
        assert exc.value.field == "setting.level"


def test_brainteaser_choice_order_is_a_permutation_of_integers(tmp_path: Path) -> None:
    record = {"id": "SP-3", "question": "Q?", "answer": "a", "distractor1": "b", "distractor2": "c"}
    record["distractor(unsure)"] = "None of above."
    for order in ([True, False, 2, 3], "0123", [0.0, 1.0, 2.0, 3.0]):
        path = save_records(tmp_path / "order.npy", [{**record, "choice_order": order}])
        with refused(path, match="expected a permutation of 0..3") as exc:
            load_brainteaser(path)
        assert exc.value.field == "choice_order"
    assert load_brainteaser(save_records(tmp_path / "ok.npy", [{**record, "choice_order": [1, 0, 2, 3]}]))[0].label == 1


def test_a_deeply_nested_value_inside_a_pickled_record_is_refused_not_recursed(tmp_path: Path) -> None:
    """Pickle builds nesting without recursion, so depth is the records' checks' business: none recurses."""
    record = {"id": "SP-3", "question": "PLACEHOLDER", "label": 0, "choice_list": ["a", "b"]}
    array = np.empty(1, dtype=object)
    array[:] = [record]
    depth = 200_000
    nested_list = b"]" * depth + b"a" * (depth - 1)  # EMPTY_LIST pushed depth times, each APPENDed into the last
    payload = pickle.dumps(array, protocol=3)  # no frames, so a piece can be swapped for a longer one
    assert _text("PLACEHOLDER") in payload
    payload = payload.replace(_text("PLACEHOLDER"), nested_list)
    path = tmp_path / "deep.npy"
    path.write_bytes(npy_file(payload))
    with refused(path, match=r"expected text, got list \[\[\[\[\[\[") as exc:
        load_brainteaser(path)
    assert exc.value.field == "question"
    record.update(question="Q?", label=10**5000)
    with refused(save_records(tmp_path / "huge.npy", [record]), match="bad label <unprintable int>: there are 2"):
        load_brainteaser(tmp_path / "huge.npy")


def test_brainteaser_values_where_text_belongs(tmp_path: Path) -> None:
    good = {"id": "SP-3", "question": "Q?", "label": 0, "choice_list": ["a", "b", "c", "None of above."]}
    for change, field in (
        ({"question": ["Q?"]}, "question"),
        ({"question": 3.5}, "question"),
        ({"choice_list": ["a", ["b"], "c", "d"]}, "choice_list[1]"),
        ({"choice_list": ["a", True, "c", "d"]}, "choice_list[1]"),
        ({"id": {"SP": 3}}, "id"),
    ):
        path = save_records(tmp_path / "bad.npy", [{**good, **change}])
        with refused(path, match="expected text") as exc:
            load_brainteaser(path)
        assert exc.value.field == field


def test_splat_flag_and_date_cells_are_not_text(tmp_path: Path) -> None:
    good = ("T", "A story.", "The answer.", "3/10 EASY", datetime.datetime(2024, 1, 1))  # unused 5th column
    path = write_splat(tmp_path / "puzzles.xlsx", [good])
    assert load_items(path)[0].story == "A story."
    for row, field in (
        (("T", True, "The answer.", "3/10"), "story"),
        (("T", "A story.", datetime.datetime(2024, 1, 1), "3/10"), "answer"),
        (("T", "A story.", "The answer.", False), "level of difficulty"),
    ):
        path = write_splat(tmp_path / "puzzles.xlsx", [row])
        with refused(path, match="expected text") as exc:
            load_items(path)
        assert (exc.value.record, exc.value.field) == ("row 2", field)


# ---------------------------------------------------------------- files that break the parser


def nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("depth", [MAX_NESTING + 1, 5_000, 200_000])
def test_deeply_nested_json_is_a_dataset_error(tmp_path: Path, depth: int) -> None:
    record = '{"id": 0, "question": "Q", "answer": "A", "clue": ' + nested(depth) + "}"
    files = {
        "english.json": "[" + record + "]",
        "items.jsonl": json.dumps({**STORY}) + "\n" + record + "\n",
        "first.jsonl": record + "\n",
    }
    for name, content in files.items():
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        readers: list[Callable[[Path], object]] = [load_items, detect_format]
        readers += [load_lateval, load_creativitybench] if name.endswith(".json") else [load_jsonl]
        for read in readers:
            if read is detect_format and name == "items.jsonl":
                continue  # its first record is fine
            with refused(path, match="nests lists and objects") as exc:
                read(path)
            # Past what the parser can descend, only the line of a JSONL record is known.
            assert exc.value.record in ("index 0", "line 1", "line 2", None), exc.value.record
            assert exc.value.record is not None or name == "english.json"


def test_nesting_within_the_limit_is_left_to_the_record_checks(tmp_path: Path) -> None:
    path = write_json(tmp_path / "english.json", lateval(clue=json.loads(nested(MAX_NESTING - 2))))
    with refused(path, match="expected text, got list") as exc:
        load_lateval(path)
    assert exc.value.field == "clue"


def test_an_integer_literal_python_refuses_is_a_dataset_error(tmp_path: Path) -> None:
    path = tmp_path / "english.json"
    path.write_text('[{"id": ' + "9" * 5000 + ', "question": "Q", "answer": "A"}]', encoding="utf-8")
    for read in (load_lateval, load_items):
        with refused(path, match="not valid JSON"):
            read(path)
    path = tmp_path / "items.jsonl"
    path.write_text('{"id": "s", "story": "s", "answer": "a", "difficulty": ' + "9" * 5000 + "}\n", encoding="utf-8")
    with refused(path, match="not valid JSON") as exc:
        load_items(path)
    assert exc.value.record == "line 1"


@pytest.mark.parametrize("name", ["english.json", "items.jsonl", "rs_dev.jsonl", "tasks.json"])
def test_a_file_that_is_not_utf8_is_a_dataset_error(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(json.dumps(STORY, ensure_ascii=False).replace("smiled", "sonrió").encode("latin-1"))
    readers: dict[str, Callable[[Path], object]] = {
        "english.json": load_lateval,
        "items.jsonl": load_jsonl,
        "rs_dev.jsonl": load_riddlesense,
        "tasks.json": load_creativitybench,
    }
    for read in (readers[name], load_items, detect_format):
        with refused(path, match=r"is not UTF-8 text \(byte 0xf3 at offset \d+\)"):
            read(path)


# ---------------------------------------------------------------- hostile records, generated

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(alphabet=st.characters(exclude_categories=()), max_size=12),  # lone surrogates included
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
"""Any JSON value: nulls, flags, numbers (NaN too), text, and lists and objects of them."""

texty = st.one_of(st.sampled_from(["", "  ", "Why?", "He had won.", "```1.a\n2.b```", "0"]), json_values)
"""A value where text belongs: usually text (blank too), often not."""


def loaded_are_valid(items: object) -> None:
    """Whatever a loader returns re-validates as its own model, and ids are unique."""
    assert isinstance(items, list)
    for item in items:
        again = type(item).model_validate(item.model_dump())
        assert again == item
    ids = [item.id for item in items]
    assert len(set(ids)) == len(ids)


def outcome(load: Callable[[Path], Any], path: Path) -> None:
    """The only outcomes: valid records, or a one-line DatasetError. ``load_items`` refuses an empty file."""
    try:
        items = load(path)
    except DatasetError as exc:
        assert_one_line(exc, path)
    else:
        loaded_are_valid(items)
        assert items or load is not load_items


@HYPOTHESIS
@given(
    records=st.one_of(
        st.lists(
            st.fixed_dictionaries(
                {},
                optional={
                    "id": st.one_of(st.integers(0, 3), st.sampled_from(["0", "1", "", " a "]), json_values),
                    "question": texty,
                    "answer": texty,
                    "clue": texty,
                },
            ),
            min_size=1,
            max_size=4,
        ),
        json_values,
    )
)
@example(records=[{"id": None, "question": "Q", "answer": "A"}, {"id": None, "question": "Q", "answer": "A"}])
@example(records=[{"id": 0, "question": ["a", "b"], "answer": "A"}])
def test_hostile_lateval_records_load_valid_or_fail_cleanly(records: Any) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = write_json(Path(tmp) / "english.json", records)
        outcome(load_lateval, path)
        outcome(load_items, path)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Every place in a JSON value: object keys and list indices, nested."""
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield (*prefix, key)
        yield from _paths(child, (*prefix, key))


def _mutated(record: dict[str, Any], draw: st.DrawFn) -> dict[str, Any]:
    """``record`` with a few places replaced by hostile values, deleted, or given an extra key."""
    record = json.loads(json.dumps(record))
    for _ in range(draw(st.integers(1, 3))):
        places = list(_paths(record))
        if not places:
            break
        *parent_path, key = draw(st.sampled_from(places))
        parent: Any = record
        for step in parent_path:
            parent = parent[step]
        how = draw(st.sampled_from(["replace", "replace", "delete", "extra"]))
        if how == "delete" and isinstance(parent, dict):
            del parent[key]
        elif how == "extra" and isinstance(parent, dict):
            parent[draw(st.text(max_size=6))] = draw(json_values)
        else:
            parent[key] = draw(texty)
    return record


def _our_records() -> dict[str, dict[str, Any]]:
    from _items import PAINT_TASK, PUZZLES, SPOON
    from _items import STORY as STORY_ITEM

    return {
        kind: item.model_dump(mode="json")
        for kind, item in (("story", STORY_ITEM), ("mcq", PUZZLES[0]), ("task", PAINT_TASK), ("entity", SPOON))
    }


OUR_RECORDS = _our_records()


@HYPOTHESIS
@given(kind=st.sampled_from(sorted(OUR_RECORDS)), data=st.data())
def test_hostile_jsonl_records_load_valid_or_fail_cleanly(kind: str, data: st.DataObject) -> None:
    base = OUR_RECORDS[kind]
    records = [base] + [data.draw(st.composite(lambda draw: _mutated(base, draw))()) for _ in range(2)]
    lines = [json.dumps(r) for r in data.draw(st.permutations(records))]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "items.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        outcome(load_items, path)
        outcome(load_jsonl, path)


@HYPOTHESIS
@given(data=st.data())
def test_hostile_creativitybench_and_riddlesense_records_load_valid_or_fail_cleanly(data: st.DataObject) -> None:
    task = creativitybench_tasks()[0]
    riddle = riddlesense_record("What has keys but no locks?", "keys", ["piano", "door", "map", "car", "tree"], "A")
    with tempfile.TemporaryDirectory() as tmp:
        path = write_json(Path(tmp) / "tasks.json", [data.draw(st.composite(lambda draw: _mutated(task, draw))())])
        outcome(load_creativitybench, path)
        outcome(load_items, path)
        path = Path(tmp) / "rs_dev.jsonl"
        path.write_text(json.dumps(data.draw(st.composite(lambda draw: _mutated(riddle, draw))())) + "\n")
        outcome(load_riddlesense, path)
        outcome(load_items, path)


@HYPOTHESIS
@given(data=st.data())
def test_hostile_brainteaser_records_load_valid_or_fail_cleanly(data: st.DataObject) -> None:
    good = {"id": "SP-3", "question": "Q?", "label": 0, "choice_list": ["a", "b", "c", "None of above."]}
    records = [data.draw(st.composite(lambda draw: _mutated(good, draw))()) for _ in range(2)]
    with tempfile.TemporaryDirectory() as tmp:
        path = save_records(Path(tmp) / "puzzles.npy", records)
        outcome(load_brainteaser, path)


def test_loaded_records_are_the_schema_models(data: Path) -> None:
    """The property tests' ``loaded_are_valid`` accepts what the release fixtures load to."""
    for items in (
        load_items(data / "lateval" / "english.json"),
        load_items(data / "brainteaser" / "sentence_puzzle.npy"),
        load_items(data / "creativitybench" / "sample_tasks.json"),
    ):
        loaded_are_valid(list(items))
        assert all(isinstance(i, SituationPuzzle | MCQPuzzle | CreativityTask | Entity) for i in items)
