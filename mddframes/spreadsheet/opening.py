"""Open a workbook for reading with every cell's text exactly as the file holds it.

openpyxl reads the shared-string table (where Excel and LibreOffice Calc put every
text cell) with ``text.replace("x005F_", "")``: its shortcut for Excel's escaped
underscore ``_x005F_``. That shortcut also deletes ``x005F_`` where it is no escape
(the text ``"ax005F_b"`` reads as ``"ab"``), and un-escapes ``_x005F_x0001_`` half-way,
so the literal text ``"_x0001_"`` can no longer be told from the control character
U+0001. Inline strings (what openpyxl itself writes) are read untouched.

:func:`open_workbook` reads the shared strings the same way openpyxl reads inline
strings -- the text of every plain and rich-text run, concatenated, still escaped --
so that all text, shared or inline, reaches
:func:`mddframes.spreadsheet.cells.unescape_text` in one form and is un-escaped once,
by the OOXML rule.
"""

from __future__ import annotations

import os
import zipfile
from typing import IO, Any

from openpyxl.cell.text import Text
from openpyxl.reader.excel import ExcelReader
from openpyxl.utils.exceptions import InvalidFileException
from openpyxl.xml.constants import SHARED_STRINGS, SHEET_MAIN_NS
from openpyxl.xml.functions import iterparse

from mddframes.errors import DataShapeError

_STRING_ITEM = f"{{{SHEET_MAIN_NS}}}si"


def read_shared_strings(source: IO[bytes]) -> list[str]:
    """The shared-string table of ``source`` (``xl/sharedStrings.xml``), still escaped.

    Each item is the text of its plain part and of its rich-text runs, concatenated
    (formatting dropped, phonetic hints ignored), as a spreadsheet program shows it.
    """
    strings: list[str] = []
    for _, node in iterparse(source):
        if node.tag == _STRING_ITEM:
            item = Text.from_tree(node)
            if item is None:  # openpyxl's signature allows it; its code never returns None
                raise DataShapeError(f"shared string {len(strings)} of the workbook is unreadable")
            strings.append(item.content)
            node.clear()  # the table can be large: keep memory flat
    return strings


class _ExactTextReader(ExcelReader):
    """openpyxl's reader, with the shared strings read by :func:`read_shared_strings`."""

    def read_strings(self) -> None:
        # what Manifest.find does (next of findall), by the method the stubs annotate
        part = next(self.package.findall(SHARED_STRINGS), None)
        if part is not None:
            with self.archive.open(part.PartName[1:]) as source:
                self.shared_strings = read_shared_strings(source)


def open_workbook(path: Any) -> Any:
    """Open an xlsx workbook read-only, by cell formula rather than cached value.

    Parameters
    ----------
    path : str, path or binary file
        The workbook.

    Returns
    -------
    openpyxl.Workbook
        A read-only workbook (close it when done) whose text cells, shared or inline,
        hold the file's text still ``_xHHHH_``-escaped.
    """
    try:
        reader = _ExactTextReader(path, read_only=True, data_only=False)
        reader.read()
    except (zipfile.BadZipFile, InvalidFileException, KeyError) as exc:
        # openpyxl's own words name neither the file nor what it expected
        name = (
            os.fspath(path) if isinstance(path, str | os.PathLike) else getattr(path, "name", path)
        )
        raise DataShapeError(
            f"{str(name)!r} is not an Excel workbook (.xlsx) that mddframes can read ({exc}): "
            "give the path of an .xlsx file saved by Excel, LibreOffice or to_excel"
        ) from None
    return reader.wb
