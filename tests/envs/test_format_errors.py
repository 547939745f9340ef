"""A dataset file no format reads says why: bad JSON names the file, line and column (whether or not a
benchmark is named), and a record of no format names the closest one and the keys it lacks or has too
many, instead of "cannot tell the dataset format"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lateralgym.cli import main
from lateralgym.envs import DatasetError, UnknownDatasetFormat, detect_format, load_items
from lateralgym.envs._format_match import Shape, closest_shape, no_match_message

RIDDLE = {"id": "r1", "question": "What has keys but no locks?", "choices": ["a piano", "a map"], "label": 0}


def _lines(path: Path, *records: object) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.mark.parametrize("benchmark", [None, "riddlesense"])
def test_bad_json_on_the_first_line_names_the_line_and_column(tmp_path: Path, benchmark: str | None) -> None:
    path = tmp_path / "riddles.jsonl"
    path.write_text('{"id": "r1", "question": "x" "choices": []}\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"not valid JSON \(Expecting ',' delimiter at column 30\)") as exc:
        load_items(path, benchmark=benchmark)
    assert not isinstance(exc.value, UnknownDatasetFormat)
    assert exc.value.record == "line 1" and str(path) in str(exc.value)


@pytest.mark.parametrize("benchmark", [None, "riddlesense"])
def test_bad_json_inside_a_json_file_names_its_line(tmp_path: Path, benchmark: str | None) -> None:
    path = tmp_path / "riddles.json"
    path.write_text('[{"id": "r1",\n  "question": "x"\n  "choices": []}]\n', encoding="utf-8")
    with pytest.raises(DatasetError, match="at column 3") as exc:
        load_items(path, benchmark=benchmark)
    assert exc.value.record == "line 3"


def test_a_record_missing_a_key_names_the_closest_format_and_the_key(tmp_path: Path) -> None:
    path = _lines(tmp_path / "riddles.jsonl", {k: v for k, v in RIDDLE.items() if k != "choices"})
    with pytest.raises(UnknownDatasetFormat) as exc:
        load_items(path, benchmark="riddlesense")
    message = str(exc.value)
    assert exc.value.record == "line 1" and str(path) in message
    assert "matches none of riddlesense's formats; closest: jsonl (Riddle), missing 'choices'" in message
    assert "--format NAME reads it as one of jsonl, riddlesense" in message


def test_missing_and_unexpected_keys_are_both_named(tmp_path: Path) -> None:
    record = {k: v for k, v in RIDDLE.items() if k != "choices"} | {"colour": "red"}
    path = _lines(tmp_path / "riddles.jsonl", record)
    with pytest.raises(UnknownDatasetFormat) as exc:
        detect_format(path, benchmark="riddlesense")
    assert "closest: jsonl (Riddle), missing 'choices' and unexpected 'colour'" in str(exc.value)


def test_an_official_format_can_be_the_closest(tmp_path: Path) -> None:
    """A LatEval-like record without its answer is closest to the LatEval format, not to our JSONL."""
    path = _lines(tmp_path / "english.json", {"id": 1, "question": "A man walks into a bar..."})
    with pytest.raises(UnknownDatasetFormat, match="closest: lateval, missing 'answer'"):
        load_items(path, benchmark="splat")


def test_a_record_sharing_no_key_lists_what_the_formats_need(tmp_path: Path) -> None:
    path = _lines(tmp_path / "odd.jsonl", {"colour": "red"})
    with pytest.raises(UnknownDatasetFormat) as exc:
        load_items(path, benchmark="riddlesense")
    message = str(exc.value)
    assert "has none of the keys of riddlesense's formats (its keys: 'colour')" in message
    assert "jsonl (Riddle) needs 'choices', 'id', 'label', 'question'" in message
    assert "riddlesense needs 'answerKey', 'id', 'question'" in message


def test_a_record_that_is_no_object_says_what_it_is(tmp_path: Path) -> None:
    path = tmp_path / "lists.json"
    path.write_text("[[1, 2], [3, 4]]\n", encoding="utf-8")
    with pytest.raises(UnknownDatasetFormat, match="record index 0: is a list, not an object"):
        load_items(path, benchmark="riddlesense")


def test_our_jsonl_named_explicitly_names_the_closest_record_kind(tmp_path: Path) -> None:
    path = _lines(tmp_path / "riddles.jsonl", {"id": "r1", "question": "x"})
    with pytest.raises(DatasetError, match="cannot tell the record kind: it matches none of .*closest: Riddle"):
        load_items(path, format="jsonl", benchmark="riddlesense")


def test_the_command_line_prints_one_line_naming_the_key(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = _lines(tmp_path / "riddles.jsonl", {k: v for k, v in RIDDLE.items() if k != "choices"})
    assert main(["run", "riddlesense", "--data", str(path), "--no-progress", "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "record line 1" in err and "closest: jsonl (Riddle), missing 'choices'" in err


def test_closest_shape_prefers_shared_keys_and_fewer_missing() -> None:
    loose = Shape("official", frozenset({"id", "question", "answerKey"}))
    strict = Shape("ours", frozenset({"id", "question", "choices"}), frozenset({"id", "question", "choices", "label"}))
    assert closest_shape({"id", "question", "choices"}, [loose, strict]) is strict
    assert closest_shape({"id", "question", "answerKey", "extra"}, [strict, loose]) is loose
    assert closest_shape({"nothing"}, [loose, strict]) is None
    assert "closest: official, whose keys it has" in no_match_message(
        {"id": 1, "question": "q", "answerKey": "A"}, [loose], "its formats"
    )
