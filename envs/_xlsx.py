"""The rows of a workbook's first sheet, for every spreadsheet dataset reader, with the guards they need.

A small ``.xlsx`` can cost far more than its size to read: a zip part can expand a thousandfold;
openpyxl reads the whole shared-string table when it opens a workbook (a table of a few million
empty strings ran past 120 s); a sheet's stated ``<dimension>`` (up to ``A1:XFD1048576``) pads every
row to its width, and so does one cell in a far-right column (a 336 KB workbook took 2.66 GB).
``sheet_rows`` refuses such a workbook in one ``DatasetTooLarge`` line before openpyxl holds it:

* its parts' stated expanded sizes, summed, past ``MAX_XLSX_EXPANDED`` (the zip reader stops at a
  part's stated size, so no part expands past what it says);
* a byte scan of every part (no XML parser) counting shared strings, rows and cells past
  ``MAX_SHARED_STRINGS``, ``MAX_ROWS`` or ``MAX_CELLS``, and the elements of one row or one string
  past ``MAX_ITEM_ELEMENTS``;
* while rows stream, a row reaching past column ``MAX_COLUMNS``, or rows (padded to their last cell)
  holding more than ``MAX_CELLS`` cells in all. The stated dimensions are ignored, so no row is padded
  to them.

Cells are read as values (``data_only``): a formula cell gives the value its workbook cached. A workbook
openpyxl still cannot read is one ``DatasetError`` line naming the file.
"""

from __future__ import annotations

import re
import zipfile
from collections.abc import Generator
from pathlib import Path

from lateralgym.envs._errors import DatasetError, DatasetTooLarge
from lateralgym.envs._samples import brief

__all__ = [
    "MAX_CELLS",
    "MAX_COLUMNS",
    "MAX_ITEM_ELEMENTS",
    "MAX_ROWS",
    "MAX_SHARED_STRINGS",
    "MAX_XLSX_EXPANDED",
    "check_workbook",
    "sheet_rows",
]

MAX_XLSX_EXPANDED = 32 << 20
"""The most bytes a workbook's parts may expand to (32 MiB; the releases read are each under 1 MiB)."""
MAX_SHARED_STRINGS = 1_000_000
"""The most shared strings (``<si>`` items) a workbook may hold: openpyxl reads them all when it opens it."""
MAX_ROWS = 250_000
"""The most rows a workbook's sheets may write out (a release has a few thousand)."""
MAX_CELLS = 4_000_000
"""The most cells a workbook's sheets may write out, and the most a sheet's rows may hold once padded."""
MAX_COLUMNS = 1_024
"""The rightmost column a dataset row may use (Excel's last is 16,384, ``XFD``)."""

MAX_ITEM_ELEMENTS = 100_000
"""The most XML elements in one row, one shared string, or between them: the XML readers hold a row or a
string whole (a single string of 2,000,000 rich-text runs, 60 KB zipped, took 1 GB)."""

_CHUNK = 1 << 20
_TAIL = 64
_TAG = re.compile(rb"<(/?)(?:[A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)(?=[\s/>])")
_ITEMS = (b"si", b"row")
_LIMITS = {b"si": ("shared strings", MAX_SHARED_STRINGS), b"row": ("rows", MAX_ROWS), b"c": ("cells", MAX_CELLS)}


def _too_large(path: Path, what: str, advice: str) -> DatasetTooLarge:
    return DatasetTooLarge(path, f"{what}, so it is refused; {advice}")


def _unreadable(path: Path, exc: BaseException, what: str = "cannot read as an .xlsx workbook") -> DatasetError:
    return DatasetError(path, f"{what} ({type(exc).__name__}: {brief(str(exc))})")


def check_workbook(path: Path, advice: str) -> None:
    """Refuse a workbook whose parts expand past ``MAX_XLSX_EXPANDED`` or write out more shared strings,
    rows or cells than the caps allow, before openpyxl opens it. ``advice`` ends the message (which file
    was expected)."""
    try:
        with zipfile.ZipFile(path) as archive:
            parts = archive.infolist()
            expanded = sum(info.file_size for info in parts)
            if expanded > MAX_XLSX_EXPANDED:
                raise _too_large(path, f"expands to {expanded >> 20} MiB, past {MAX_XLSX_EXPANDED >> 20} MiB", advice)
            counts = dict.fromkeys(_LIMITS, 0)
            for info in parts:
                _count_tags(archive, info, counts, path, advice)
    except (zipfile.BadZipFile, OSError, ValueError, RuntimeError, EOFError) as exc:
        if isinstance(exc, DatasetError):
            raise
        raise _unreadable(path, exc) from exc  # RuntimeError: an encrypted part; ValueError: a bad header


def _count_tags(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, counts: dict[bytes, int], path: Path, advice: str
) -> None:
    """Add one part's ``<si>``, ``<row>`` and ``<c>`` start tags to ``counts``, and refuse a row or string
    of more than ``MAX_ITEM_ELEMENTS`` elements (read in chunks; a tag split between two chunks is counted
    once, in the window where its next byte is read)."""
    tail = b""
    inside = 0  # elements since the last row or shared string began or ended
    with archive.open(info) as handle:
        while chunk := handle.read(_CHUNK):
            window = tail + chunk
            for match in _TAG.finditer(window):
                if match.end() < len(tail):  # a tag at the last window's very end was not yet whole
                    continue
                closing, name = match.groups()
                if name in _ITEMS:
                    inside = 0
                elif not closing:
                    inside += 1
                    if inside > MAX_ITEM_ELEMENTS:
                        what = f"holds a row or shared string of more than {MAX_ITEM_ELEMENTS:,} XML elements"
                        raise _too_large(path, what, advice)
                if not closing and name in counts:
                    counts[name] += 1
            for tag, (what, limit) in _LIMITS.items():
                if counts[tag] > limit:
                    raise _too_large(path, f"writes out more than {limit:,} {what}", advice)
            tail = window[-_TAIL:]


def sheet_rows(path: Path, advice: str) -> Generator[tuple[object, ...], None, None]:
    """The first worksheet's rows as tuples of values (formula cells: their cached value), each as wide
    as its last cell, after ``check_workbook``; rows the sheet skips come as ``()``.

    Raises:
        DatasetTooLarge: past a cap (see the module docstring); ``advice`` ends the message.
        DatasetError: a file openpyxl cannot read, in one line naming the file.
    """
    import openpyxl  # deferred: only spreadsheet formats need it
    from openpyxl.utils import get_column_letter

    check_workbook(path, advice)
    try:
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises zip, key and XML errors for broken files
        raise _unreadable(path, exc) from exc
    try:
        sheet = workbook.worksheets[0]
        sheet.reset_dimensions()  # read-only: stated dimensions would pad every row to their width
        cells = 0
        for number, row in enumerate(sheet.iter_rows(values_only=True), start=1):
            if len(row) > MAX_COLUMNS:
                what = f"row {number} reaches column {get_column_letter(len(row))}, past column {MAX_COLUMNS:,}"
                raise _too_large(path, what, advice)
            cells += max(len(row), 1)
            if cells > MAX_CELLS:
                raise _too_large(path, f"its rows hold more than {MAX_CELLS:,} cells", advice)
            yield row
    except DatasetError:
        raise
    except Exception as exc:  # a cell openpyxl cannot convert (text where a number is stated, ...)
        raise _unreadable(path, exc, "cannot read the first sheet") from exc
    finally:
        workbook.close()
