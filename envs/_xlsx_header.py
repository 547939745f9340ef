"""The header row of a workbook's first sheet, read as a stream, so a wrong header is refused at once.

openpyxl's read-only loader reads a whole sheet before its first row when the sheet states no
dimensions (``ReadOnlyWorksheet._get_size`` parses it to the end), and reads the whole shared-string
table when it opens the workbook: a crafted sheet of 2,000,000 rows took 30 s to open, and one of
2,000,000 shared strings 50 s and 431 MB, before any header was checked. ``header_texts`` reads
only the package's relationships, the first worksheet up to the end of its first row, and the
shared strings up to the last one that row names, holding one element at a time.

It answers only when it is sure: a workbook it cannot read this way (another layout, a first row
that is not row 1, flags or dates in the header) gets ``None``, and openpyxl reads it as before.
"""

from __future__ import annotations

import posixpath
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO
from xml.etree.ElementTree import Element, ParseError, iterparse

__all__ = ["header_texts"]

_MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
_RELATIONSHIP = "{http://schemas.openxmlformats.org/package/2006/relationships}Relationship"
_RELATIONSHIP_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
_MAX_ELEMENTS = 100_000
"""The most elements read before the first row ends (a sheet's settings are a few dozen)."""
_MAX_CELLS = 16_384
"""The most cells of a header row (Excel's column limit)."""


class _Unsure(Exception):
    """The workbook is not laid out as this reader expects: openpyxl decides."""


def header_texts(path: str | Path) -> list[str] | None:
    """The first row of the workbook's first worksheet, each cell's text stripped and lower-cased
    (numbers as their digits), or None when the workbook cannot be read this way."""
    try:
        with zipfile.ZipFile(path) as archive:
            return _header(archive)
    except (_Unsure, zipfile.BadZipFile, KeyError, OSError, ValueError, ParseError, RuntimeError):
        return None  # RuntimeError: an encrypted part


def _header(archive: zipfile.ZipFile) -> list[str]:
    workbook = _target(_relationships(archive, ""), "/officeDocument")
    relationships = _relationships(archive, workbook)
    sheet = None
    for element in _elements(archive, workbook):
        if element.tag == _MAIN + "sheet":
            kind, target = relationships.get(element.get(_RELATIONSHIP_ID, ""), ("", ""))
            if kind.endswith("/worksheet"):  # openpyxl's worksheets[0] skips chart sheets too
                sheet = target
                break
    if sheet is None:
        raise _Unsure
    cells = _first_row(archive, sheet)
    wanted = {int(value) for kind, value in cells if kind == "s"}
    shared = _shared_strings(archive, _target(relationships, "/sharedStrings"), wanted) if wanted else {}
    return [(shared[int(value)] if kind == "s" else value).strip().lower() for kind, value in cells]


def _elements(archive: zipfile.ZipFile, part: str) -> Iterator[Element]:
    """The elements of an XML part as each ends, every one cleared from the tree once it is read."""
    with archive.open(part) as handle:
        yield from _streamed(handle)


def _streamed(handle: IO[bytes]) -> Iterator[Element]:
    root: Element | None = None
    for count, (event, element) in enumerate(iterparse(handle, events=("start", "end"))):
        if count > 2 * _MAX_ELEMENTS:
            raise _Unsure
        if root is None:
            root = element
        if event == "end":
            yield element
            if len(root) > 64:  # read children no longer held by the tree
                del root[:-1]


def _relationships(archive: zipfile.ZipFile, part: str) -> dict[str, tuple[str, str]]:
    """A part's relationships: id -> (type, the target's path in the archive)."""
    folder, name = posixpath.split(part)
    found: dict[str, tuple[str, str]] = {}
    for element in _elements(archive, posixpath.join(folder, "_rels", f"{name}.rels")):
        if element.tag == _RELATIONSHIP and element.get("TargetMode") != "External":
            target = element.get("Target", "")
            path = target[1:] if target.startswith("/") else posixpath.normpath(posixpath.join(folder, target))
            found[element.get("Id", "")] = (element.get("Type", ""), path)
    return found


def _target(relationships: dict[str, tuple[str, str]], kind: str) -> str:
    for relationship, target in relationships.values():
        if relationship.endswith(kind):
            return target
    raise _Unsure


def _first_row(archive: zipfile.ZipFile, sheet: str) -> list[tuple[str, str]]:
    """The first row's cells as (``s`` and a shared-string index | ``t`` and text); stops at its end."""
    cells: list[tuple[str, str]] = []
    for element in _elements(archive, sheet):
        if element.tag == _MAIN + "c":
            kind = element.get("t", "n")
            if kind == "s":
                cells.append(("s", str(int(element.findtext(_MAIN + "v") or ""))))
            elif kind == "inlineStr":
                inline = element.find(_MAIN + "is")
                cells.append(("t", "" if inline is None else _string_text(inline)))
            elif kind in ("n", "str"):
                cells.append(("t", element.findtext(_MAIN + "v") or ""))
            else:  # a flag, an error or a date: openpyxl's reader says what it is
                raise _Unsure
            if len(cells) > _MAX_CELLS:
                raise _Unsure
            element.clear()
        elif element.tag == _MAIN + "row":
            if element.get("r", "1") != "1":
                raise _Unsure  # openpyxl pads the rows above it
            return cells
    raise _Unsure  # no row: openpyxl says the sheet is empty


def _shared_strings(archive: zipfile.ZipFile, part: str, wanted: set[int]) -> dict[int, str]:
    """The shared strings at the ``wanted`` indexes, read up to the last of them."""
    found: dict[int, str] = {}
    last = max(wanted)
    index = -1
    with archive.open(part) as handle:
        root: Element | None = None
        for event, element in iterparse(handle, events=("start", "end")):
            if root is None:
                root = element
            if event != "end" or element.tag != _MAIN + "si":
                continue
            index += 1
            if index in wanted:
                found[index] = _string_text(element)
            root.clear()  # the strings read so far are not kept
            if index == last:
                return found
    raise _Unsure  # an index past the table: openpyxl says so


def _string_text(element: Element) -> str:
    """A string item's text: its ``t``, or its rich-text runs' ``t`` joined (phonetic runs left out)."""
    own = element.findtext(_MAIN + "t")
    if own is not None:
        return own
    return "".join(run.findtext(_MAIN + "t") or "" for run in element.findall(_MAIN + "r"))
