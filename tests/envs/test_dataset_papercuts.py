"""Files people pass by mistake get an error that says what they are and what to do instead: an
archive, another dataset's spreadsheet (MacGyver), BrainTeaser's few-shot demonstration file."""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pytest

from lateralgym.cli import main
from lateralgym.envs import DatasetError, load_items


def test_a_zip_archive_is_called_one_and_its_data_files_are_listed(tmp_path: Path) -> None:
    archive = tmp_path / "BrainTeaser.zip"
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("BrainTeaser/sentence_puzzle.npy", b"not really")
        z.writestr("BrainTeaser/word_puzzle.npy", b"not really")
        z.writestr("README.md", "notes")
    with pytest.raises(DatasetError, match="is a .zip archive, not a dataset file: unpack it") as caught:
        load_items(archive)
    assert "BrainTeaser/sentence_puzzle.npy, BrainTeaser/word_puzzle.npy" in str(caught.value)
    assert "README" not in str(caught.value) and "xlsx" not in str(caught.value)
    renamed = archive.rename(tmp_path / "download.bin")  # a zip under another name is one too
    with pytest.raises(DatasetError, match="is a .zip archive"):
        load_items(renamed)


def test_another_datasets_spreadsheet_is_an_unsupported_format(tmp_path: Path) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.append(["ID", "Problem", "Solution", "Label"])
    sheet.append([1, "You need to open a tin", "Use a spoon as a lever", "solvable"])
    path = tmp_path / "macgyver.xlsx"
    book.save(path)
    with pytest.raises(DatasetError, match="unsupported format: a spreadsheet, but not SPLAT's puzzles.xlsx") as caught:
        load_items(path)
    assert "missing column" not in str(caught.value) and "LateralGym JSONL" in str(caught.value)


def test_the_demonstration_file_is_named_with_how_to_use_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    options = ["Your age", "A ball", "Smoke", "None of above."]
    record = {"Question": "What goes up and never comes down?", "Answer": "Your age", "label": 0}
    record |= {"choice_list": options, "choice_order": [0, 1, 2, 3]}
    path = tmp_path / "demonstration.npy"
    np.save(path, np.array([record], dtype=object), allow_pickle=True)
    assert main(["data", "stats", str(path)]) == 2
    err = capsys.readouterr().err
    assert "few-shot demonstration file" in err and "demos=demonstration.npy" in err and "SemEval" not in err
