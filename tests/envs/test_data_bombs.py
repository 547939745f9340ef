"""Compressed and oversized datasets are refused in one line while they are read, never held in memory.

A 2 MB ``.jsonl.gz`` can expand to gigabytes: of spaces with no line break, of one endless line, of
line breaks. A spreadsheet can hold millions of rows under a header that is not SPLAT's, or zip
parts that expand past any release. Each is refused with one ``DatasetError`` naming the file,
and the Python memory it takes to refuse it (``tracemalloc``'s peak: every bytes and str object
counts) stays far below the file's expanded size. Files exported by Windows tools start with a
byte-order mark: they load.
"""

from __future__ import annotations

import gzip
import json
import tracemalloc
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from official_data import write_splat

from lateralgym.envs import load_items
from lateralgym.envs._errors import DatasetError, DatasetTooLarge
from lateralgym.envs._samples import MAX_BLANK_RUN, MAX_LINE_BYTES, MAX_WHOLE_TEXT, read_text
from lateralgym.envs.benchmarks.splat import load_splat

MB = 1 << 20


def _gzip(path: Path, chunk: bytes, total: int, *, head: bytes = b"") -> Path:
    """``head`` then ``chunk`` repeated up to ``total`` bytes, gzipped (fast level: the tests make many)."""
    with gzip.open(path, "wb", compresslevel=1) as handle:
        handle.write(head)
        written = len(head)
        while written < total:
            handle.write(chunk)
            written += len(chunk)
    return path


def _peak(load: Callable[[], Any]) -> tuple[DatasetError, int]:
    """The error ``load`` raised and the peak of Python memory while it ran, in bytes."""
    tracemalloc.start()
    try:
        with pytest.raises(DatasetError) as caught:
            load()
        return caught.value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.fixture(scope="module")
def bombs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("bombs")
    _gzip(folder / "spaces.jsonl.gz", b" " * MB, 512 * MB)  # 512 MiB of spaces, no line break
    _gzip(folder / "one-line.jsonl.gz", b"a" * MB, 512 * MB, head=b'{"id": "')  # one endless record
    _gzip(folder / "line-breaks.jsonl.gz", b"\n" * MB, MAX_BLANK_RUN + 2 * MB)
    return folder


@pytest.mark.parametrize("benchmark", [None, "riddlesense"])
@pytest.mark.parametrize("name", ["spaces.jsonl.gz", "one-line.jsonl.gz"])
def test_a_gzip_without_line_breaks_is_refused_at_the_line_cap(bombs: Path, name: str, benchmark: str | None) -> None:
    """Refused as too large whether or not a benchmark is named (format detection once said
    "cannot tell the dataset format; pass --format" for a benchmark's file)."""
    path = bombs / name
    assert path.stat().st_size < 4 * MB  # small on disk, 512 MiB expanded
    error, peak = _peak(lambda: load_items(path, benchmark=benchmark))
    assert isinstance(error, DatasetTooLarge)
    message = str(error)
    assert "\n" not in message and str(path) in message and "past 32 MiB" in message
    assert peak < 3 * MAX_LINE_BYTES, f"{peak / MB:.0f} MiB held to refuse it"


def test_a_gzip_of_line_breaks_is_refused_after_a_million_blank_lines(bombs: Path) -> None:
    error, peak = _peak(lambda: load_items(bombs / "line-breaks.jsonl.gz"))
    assert "blank lines in a row" in str(error) and "\n" not in str(error)
    assert peak < 16 * MB


def test_a_json_file_read_whole_is_refused_past_its_cap(tmp_path: Path) -> None:
    # line breaks keep every line short, so the whole-file read is the one that must stop
    path = _gzip(tmp_path / "puzzles.json.gz", b'"padding",\n' * 4096, MAX_WHOLE_TEXT + MB, head=b"[\n")
    error, peak = _peak(lambda: read_text(path))
    assert "expands past 64 MiB" in str(error) and "JSONL" in str(error)
    assert peak < 2 * MAX_WHOLE_TEXT
    plain = tmp_path / "puzzles.json"
    with plain.open("wb") as handle:  # a sparse file: large, yet nothing to write
        handle.truncate(MAX_WHOLE_TEXT + 1)
    error, peak = _peak(lambda: read_text(plain))
    assert "is past 64 MiB" in str(error) and peak < MB


def _without_dimensions(path: Path) -> Path:
    """``path`` with its sheet's ``<dimension>`` taken out, as a crafted file may leave it: openpyxl's
    read-only loader then parses the whole sheet before it yields a row."""
    with zipfile.ZipFile(path) as archive:
        parts = {info.filename: archive.read(info) for info in archive.infolist()}
    sheet = parts["xl/worksheets/sheet1.xml"]
    assert b"<dimension" in sheet
    start = sheet.index(b"<dimension")
    parts["xl/worksheets/sheet1.xml"] = sheet[:start] + sheet[sheet.index(b"/>", start) + 2 :]
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in parts.items():
            archive.writestr(name, data)
    return path


@pytest.mark.parametrize("write_only", [False, True], ids=["shared strings", "write-only"])
def test_a_spreadsheet_with_another_header_is_refused_before_openpyxl_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, write_only: bool
) -> None:
    """Only the header row is read, streamed: a sheet of 2,000,000 rows under it costs nothing more,
    even with no dimensions stated (openpyxl took 30 s to open such a sheet, before its first row)."""
    book = openpyxl.Workbook(write_only=write_only)
    sheet = book.create_sheet() if write_only else book.active
    assert sheet is not None
    sheet.append(["name", "text", "other"])
    for n in range(2_000):
        sheet.append([f"row {n}", "some text", n])
    path = tmp_path / "rows.xlsx"
    book.save(path)
    if not write_only:
        _without_dimensions(path)

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("openpyxl opened a workbook whose header was enough to refuse it")

    monkeypatch.setattr(openpyxl, "load_workbook", never)
    with pytest.raises(DatasetError, match="not SPLAT's puzzles.xlsx") as caught:
        load_splat(path)
    assert "['name', 'text', 'other']" in str(caught.value) and "\n" not in str(caught.value)


def test_a_spreadsheet_with_splats_header_is_still_read_whole(tmp_path: Path) -> None:
    """The streamed header check refuses only what is not SPLAT's: the release's layout, its header
    in shared strings and no dimensions stated, loads as before."""
    path = _without_dimensions(write_splat(tmp_path / "puzzles.xlsx"))
    assert [puzzle.id for puzzle in load_splat(path)][:1] == ["splat-row-2"]


def test_a_spreadsheet_whose_parts_expand_past_the_cap_is_refused_before_it_is_opened(tmp_path: Path) -> None:
    path = write_splat(tmp_path / "puzzles.xlsx")
    with zipfile.ZipFile(path, "a", compression=zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        with archive.open("xl/media/padding.bin", "w", force_zip64=True) as part:
            for _ in range(40):
                part.write(bytes(MB))
    assert path.stat().st_size < 4 * MB
    error, peak = _peak(lambda: load_splat(path))
    assert "past 32 MiB" in str(error) and "\n" not in str(error)
    assert peak < 16 * MB


def test_files_with_a_byte_order_mark_load(tmp_path: Path) -> None:
    """Windows tools start UTF-8 files with U+FEFF: JSONL, JSON and their gzipped forms load all the same."""
    record = {"id": "r1", "question": "What has keys but opens no locks?", "choices": ["a piano", "a door"]}
    record |= {"label": 0}
    bom = "\ufeff"
    jsonl = tmp_path / "riddles.jsonl"
    jsonl.write_text(bom + json.dumps(record) + "\n", encoding="utf-8")
    items = load_items(jsonl, benchmark="riddlesense")
    assert [item.id for item in items] == ["r1"]
    zipped = tmp_path / "riddles.jsonl.gz"
    zipped.write_bytes(gzip.compress((bom + json.dumps(record) + "\n").encode("utf-8")))
    assert [item.id for item in load_items(zipped, benchmark="riddlesense")] == ["r1"]
    whole = tmp_path / "list.json"
    whole.write_text(bom + json.dumps([record]), encoding="utf-8")
    assert read_text(whole) == json.dumps([record])
