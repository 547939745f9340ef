"""Hostile workbooks, for every spreadsheet reader (``envs/_xlsx.py``, used by SPLAT's and MacGyver's).

A small ``.xlsx`` once cost MacGyver's reader gigabytes (a stated ``<dimension>`` of ``A1:XFD1048576``
padded every row to 16,384 cells) or minutes (a table of a million shared strings), and a formula cell
raised a traceback. The workbooks are written by hand here, part by part, as a crafted file would be:
each is read in little memory (the peak RSS of a child process), or refused in one ``DatasetError``
line naming the file; a formula cell gives the text its workbook cached.
"""

from __future__ import annotations

import json
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import openpyxl
import pytest

from lateralgym.envs._errors import DatasetError, DatasetTooLarge
from lateralgym.envs._xlsx import MAX_COLUMNS, MAX_ITEM_ELEMENTS, MAX_SHARED_STRINGS
from lateralgym.envs.benchmarks.macgyver import load_macgyver
from lateralgym.envs.benchmarks.splat import load_splat

MB = 1 << 20
MACGYVER_HEADER = ("ID", "Problem", "Solvable?", "Unconventional?", "Solution", "Label")
SPLAT_HEADER = ("Title", "Story", "Answer", "Level of difficulty")

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PACKAGE_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_TYPES = "application/vnd.openxmlformats-officedocument.spreadsheetml"


def _cell(reference: str, value: object) -> str:
    if isinstance(value, (int, float)):
        return f'<c r="{reference}"><v>{value}</v></c>'
    return f'<c r="{reference}" t="inlineStr"><is><t>{escape(str(value))}</t></is></c>'


def _row(number: int, values: tuple[object, ...], extra: str = "") -> str:
    cells = "".join(_cell(f"{chr(ord('A') + i)}{number}", v) for i, v in enumerate(values))
    return f'<row r="{number}">{cells}{extra}</row>'


def _workbook(path: Path, rows: list[str], *, dimension: str | None = None, shared: bytes | None = None) -> Path:
    """A workbook of one sheet whose ``<sheetData>`` holds ``rows`` as given (and ``shared`` as its
    shared-string part), written part by part as a crafted file would be."""
    dim = f'<dimension ref="{dimension}"/>' if dimension else ""
    sheet = f'<?xml version="1.0"?><worksheet xmlns="{_MAIN}">{dim}<sheetData>{"".join(rows)}</sheetData></worksheet>'
    overrides = f'<Override PartName="/xl/workbook.xml" ContentType="{_TYPES}.sheet.main+xml"/>'
    overrides += f'<Override PartName="/xl/worksheets/sheet1.xml" ContentType="{_TYPES}.worksheet+xml"/>'
    relations = f'<Relationship Id="rId1" Type="{_REL}/worksheet" Target="worksheets/sheet1.xml"/>'
    if shared is not None:
        overrides += f'<Override PartName="/xl/sharedStrings.xml" ContentType="{_TYPES}.sharedStrings+xml"/>'
        relations += f'<Relationship Id="rId2" Type="{_REL}/sharedStrings" Target="sharedStrings.xml"/>'
    parts = {
        "[Content_Types].xml": '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/'
        'content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        f'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>{overrides}</Types>',
        "_rels/.rels": f'<?xml version="1.0"?><Relationships xmlns="{_PACKAGE_REL}"><Relationship Id="rId1" '
        f'Type="{_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>',
        "xl/workbook.xml": f'<?xml version="1.0"?><workbook xmlns="{_MAIN}" xmlns:r="{_REL}"><sheets>'
        '<sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>',
        "xl/_rels/workbook.xml.rels": f'<?xml version="1.0"?><Relationships xmlns="{_PACKAGE_REL}">{relations}'
        "</Relationships>",
        "xl/worksheets/sheet1.xml": sheet,
    }
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts.items():
            archive.writestr(name, text)
        if shared is not None:
            archive.writestr("xl/sharedStrings.xml", shared)
    return path


def _problem(number: int) -> tuple[object, ...]:
    return (f"p{number}", f"Problem {number}: open a jar with a spoon.", "Yes", "conventional", "Step1: Lever.", "x")


def _peak_rss(call: str, path: Path) -> dict[str, Any]:
    """Run ``call(path)`` (a dotted loader) in a fresh interpreter: its answer and its peak RSS in bytes."""
    module, name = call.rsplit(".", 1)
    script = (
        "import json, resource, sys\n"
        f"from {module} import {name}\n"
        "from lateralgym.envs._errors import DatasetError\n"
        "try:\n"
        f"    answer = {{'items': len({name}(sys.argv[1]))}}\n"
        "except DatasetError as error:\n"
        "    answer = {'error': str(error)}\n"
        "answer['peak'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024\n"
        "print(json.dumps(answer))\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    answer: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return answer


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="ru_maxrss is in KiB on Linux only")
def test_a_sheet_stating_the_largest_dimensions_is_read_without_padding_its_rows(tmp_path: Path) -> None:
    """``A1:XFD1048576`` stated over 8,000 rows: openpyxl padded each to 16,384 cells (8,000 x 128 KiB,
    a gigabyte); the rows are read as wide as their cells, in about what a plain load takes."""
    rows = [_row(1, MACGYVER_HEADER)] + [_row(n, _problem(n)) for n in range(2, 8_002)]
    bomb = _workbook(tmp_path / "problem_solution_pair.xlsx", rows, dimension="A1:XFD1048576")
    plain_folder = tmp_path / "plain"
    plain_folder.mkdir()
    plain = _workbook(plain_folder / "problem_solution_pair.xlsx", rows, dimension="A1:F8001")
    assert bomb.stat().st_size < MB
    loader = "lateralgym.envs.benchmarks.macgyver.load_macgyver"
    read, baseline = _peak_rss(loader, bomb), _peak_rss(loader, plain)
    assert read.get("items") == 8_000 and baseline.get("items") == 8_000, (read, baseline)
    assert read["peak"] < baseline["peak"] + 64 * MB, f"{read['peak'] / MB:.0f} MiB vs {baseline['peak'] / MB:.0f}"


@pytest.mark.parametrize(
    ("load", "header"), [(load_macgyver, MACGYVER_HEADER), (load_splat, SPLAT_HEADER)], ids=["macgyver", "splat"]
)
def test_a_cell_in_a_far_right_column_is_refused(
    tmp_path: Path, load: Callable[[Path], Any], header: tuple[object, ...]
) -> None:
    """Every row reaching column XFD (a 16,384-wide row each once read) is refused at the first."""
    far = '<c r="XFD{n}"><v>1</v></c>'
    rows = [_row(1, header)] + [_row(n, header, far.format(n=n)) for n in range(2, 20_000)]
    path = _workbook(tmp_path / "wide.xlsx", rows, dimension="A1:XFD19999")
    with pytest.raises(DatasetTooLarge) as caught:
        load(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    assert f"row 2 reaches column XFD, past column {MAX_COLUMNS:,}" in message


def test_a_shared_string_bomb_is_refused_before_openpyxl_opens_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A million and one empty shared strings (12 MB expanded, under the byte cap; openpyxl reads every
    one when it opens the workbook) are refused by counting them in the part's bytes."""
    items = b"<si><t/></si>" * (MAX_SHARED_STRINGS + 1)
    shared = f'<?xml version="1.0"?><sst xmlns="{_MAIN}">'.encode() + items + b"</sst>"
    rows = [_row(1, MACGYVER_HEADER), _row(2, _problem(2))]
    path = _workbook(tmp_path / "problem_solution_pair.xlsx", rows, shared=shared)
    assert path.stat().st_size < MB

    def never(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("openpyxl opened a workbook the byte scan should have refused")

    monkeypatch.setattr(openpyxl, "load_workbook", never)
    with pytest.raises(DatasetTooLarge) as caught:
        load_macgyver(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message
    assert f"more than {MAX_SHARED_STRINGS:,} shared strings" in message


@pytest.mark.parametrize("inline", [False, True], ids=["shared string", "inline string"])
def test_one_string_of_endless_rich_text_runs_is_refused(tmp_path: Path, inline: bool) -> None:
    """One string of 2,000,000 rich-text runs (60 KB zipped, 28 MiB expanded) took openpyxl 1 GB: the
    byte scan refuses a row or a string of more than ``MAX_ITEM_ELEMENTS`` elements."""
    runs = "<r><t>a</t></r>" * 2_000_000
    if inline:
        rows = [_row(1, MACGYVER_HEADER), _row(2, _problem(2)[:5], f'<c r="F2" t="inlineStr"><is>{runs}</is></c>')]
        path = _workbook(tmp_path / "problem_solution_pair.xlsx", rows)
    else:
        shared = f'<?xml version="1.0"?><sst xmlns="{_MAIN}"><si>{runs}</si></sst>'.encode()
        path = _workbook(tmp_path / "problem_solution_pair.xlsx", [_row(1, MACGYVER_HEADER)], shared=shared)
    assert path.stat().st_size < MB
    with pytest.raises(DatasetTooLarge) as caught:
        load_macgyver(path)
    message = str(caught.value)
    assert "\n" not in message and str(path) in message and f"more than {MAX_ITEM_ELEMENTS:,} XML elements" in message


def test_a_formula_cell_reads_as_the_text_its_workbook_cached(tmp_path: Path) -> None:
    formula = '<c r="F2" t="str"><f>CONCAT("effi","cient")</f><v>efficient</v></c>'
    problem = _row(2, _problem(2)[:5], formula)
    path = _workbook(tmp_path / "problem_solution_pair.xlsx", [_row(1, MACGYVER_HEADER), problem])
    [item] = load_macgyver(path)
    assert item.label == "efficient"


def test_a_cell_openpyxl_cannot_convert_is_one_line_naming_the_file(tmp_path: Path) -> None:
    """A formula cell whose cached text is stated as a number made openpyxl raise a traceback."""
    formula = '<c r="F2"><f>CONCAT("effi","cient")</f><v>efficient</v></c>'
    problem = _row(2, _problem(2)[:5], formula)
    path = _workbook(tmp_path / "problem_solution_pair.xlsx", [_row(1, MACGYVER_HEADER), problem])
    with pytest.raises(DatasetError) as caught:
        load_macgyver(path)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{path}: cannot read the first sheet (ValueError")
