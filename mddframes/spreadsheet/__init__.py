"""Tables and mappings out to xlsx for review, and back in for writing, losslessly.

- :func:`to_excel` -- one frame, or ``{object id: frame}``, to a workbook: one sheet
  per object (column A = each row's original position), plus a hidden sheet
  ``_mddframes`` holding the write-back context (original payload, read time, hash)
  and the dtype snapshot.
- :func:`read_excel` -- the workbook back to frames with their original dtypes and
  the context attached, ready for ``Client.write_table`` / ``write_mapping``.

openpyxl only (no pandas ExcelWriter), so every cell's type is under control; see
:mod:`mddframes.spreadsheet.cells` for how each dtype is written and read. This layer
uses the codec, never HTTP (the layers: docs/internals.md).
"""

from mddframes.spreadsheet.reading import read_excel
from mddframes.spreadsheet.workbook import sheet_titles, to_excel

__all__ = ["read_excel", "sheet_titles", "to_excel"]
