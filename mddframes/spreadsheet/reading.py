"""``read_excel``: a workbook written by ``to_excel`` back to frames, ready to write.

Reads every sheet cell by cell (:mod:`mddframes.spreadsheet.cells`) against the dtype
snapshot of the hidden sheet (:mod:`mddframes.spreadsheet.metadata`), so that a
reviewer's edit that does not fit its column is refused naming the sheet, cell,
column and row, and attaches the export's write-back context to each frame.

Workbooks come back from real spreadsheet programs (LibreOffice Calc, Excel), which
save an unchanged value their own way; each form reads as the value that was
exported (see :mod:`mddframes.spreadsheet.cells` for cells and
:mod:`mddframes.spreadsheet.opening` for text). One loss is undone here: LibreOffice
saves the line breaks CR LF of a cell as LF, so a text cell that differs from the
exported value only in that way reads as the exported value.
"""

from __future__ import annotations

import logging
import re
from typing import Any, overload

import pandas as pd
from openpyxl.utils import get_column_letter

from mddframes.codec.dtypes import infer_array
from mddframes.codec.frame import frame_of_arrays, payload_rows
from mddframes.codec.kinds import KINDS, Kind
from mddframes.codec.values import digest
from mddframes.context import ATTRS_KEY, ReadContext, registry_for
from mddframes.errors import DataShapeError, InvalidArgumentError
from mddframes.frames.backends import DtypeBackend, check_dtype_backend, to_backend
from mddframes.spreadsheet.cells import (
    CellError,
    build_array,
    decode,
    dtype_from_name,
    holds_missing,
    plain_value,
    raw_value,
)
from mddframes.spreadsheet.metadata import META_SHEET, ColumnSpec, SheetRecord, read_metadata
from mddframes.spreadsheet.opening import open_workbook
from mddframes.spreadsheet.workbook import INDEX_HEADER, PathOrFile

logger = logging.getLogger(__name__)


class _Located:
    """Builds errors that name the sheet, the cell, the column and the row."""

    def __init__(self, record: SheetRecord) -> None:
        what = (
            f"{record.kind or 'object'} {record.object_id!r}" if record.object_id else "the frame"
        )
        self.prefix = f"sheet {record.sheet!r} ({what})"

    def error(
        self, column: int, row: int, message: str, name: Any = None, label: Any = None
    ) -> DataShapeError:
        where = f"cell {get_column_letter(column)}{row}"
        details = []
        if name is not None:
            details.append(f"column {name!r}")
        if label is not None:
            details.append(f"row {label}" if label != "new" else "a new row")
        if details:
            where += f" ({', '.join(details)})"
        return DataShapeError(f"{self.prefix}, {where}: {message}")


def _raw(cell: Any, where: _Located, column: int, row: int, name: Any, label: Any) -> Any:
    try:
        return raw_value(cell.value, cell.data_type)
    except CellError as exc:
        raise where.error(column, row, str(exc), name, label) from exc


def _header(cells: tuple[Any, ...], record: SheetRecord, where: _Located) -> list[Any]:
    """For each sheet column after A: its ColumnSpec, a new column's name, or None."""
    first = _raw(cells[0], where, 1, 1, None, None) if cells else None
    if first != INDEX_HEADER:
        raise where.error(
            1, 1,
            f"expected the header {INDEX_HEADER!r} (each row's original position), found "
            f"{first!r}; column A must stay the row column",
        )  # fmt: skip
    specs = {spec.name: spec for spec in record.columns}
    seen: dict[str, int] = {}
    out: list[Any] = []
    for position, cell in enumerate(cells[1:], start=2):
        name = _raw(cell, where, position, 1, None, None)
        if name is None:
            out.append(None)
            continue
        if not isinstance(name, str):
            name = str(name)
        if name in seen:
            raise where.error(
                position, 1,
                f"the header {name!r} is also in column {get_column_letter(seen[name])}: "
                "column names must be unique",
            )  # fmt: skip
        seen[name] = position
        out.append(specs.get(name, name))
    return out


def _label(raw: Any, where: _Located, row: int) -> int | None:
    if raw is None or (isinstance(raw, str) and not raw.strip()):
        return None
    if isinstance(raw, str) and re.fullmatch(r"\s*[+-]?\d+\s*", raw):
        return int(raw)
    if isinstance(raw, int) and not isinstance(raw, bool):
        return raw
    if isinstance(raw, float) and raw.is_integer():
        return int(raw)
    raise where.error(
        1, row,
        f"the row cell holds {raw!r}; it must be the row's original position (an integer) "
        "or empty for a new row",
    )  # fmt: skip


def _read_sheet(workbook: Any, record: SheetRecord) -> pd.DataFrame:
    where = _Located(record)
    if record.sheet not in workbook.sheetnames:
        raise DataShapeError(
            f"{where.prefix} is missing from the workbook (renamed or deleted?); its "
            f"sheets are {[s for s in workbook.sheetnames if s != META_SHEET]!r}"
        )
    sheet = workbook[record.sheet]
    sheet.reset_dimensions()
    rows = sheet.iter_rows()
    header = _header(tuple(next(rows, ())), record, where)
    for position, entry in enumerate(header, start=2):
        if entry is None:
            header[position - 2] = ("", position)  # an empty header: data below it is an error
    dtypes = [
        dtype_from_name(entry.dtype) if isinstance(entry, ColumnSpec) else None for entry in header
    ]
    originals = payload_rows(record.payload, _payload_kind(record, where)) if record.payload else []
    labels: list[int | None] = []
    sheet_rows: list[int] = []
    values: list[list[Any]] = [[] for _ in header]
    for number, row in enumerate(rows, start=2):
        if all(cell.value is None for cell in row):
            continue  # a blank line
        label = _label(_raw(row[0], where, 1, number, None, None), where, number)
        for extra in row[len(header) + 1 :]:
            if extra.value is not None:
                raise where.error(extra.column, number, _NO_HEADER)
        for position, entry in enumerate(header):
            cell = row[position + 1] if position + 1 < len(row) else None
            if cell is None or cell.value is None:
                values[position].append(None)
                continue
            value = _cell_value(where, entry, dtypes[position], cell, (position + 2, number),
                                label, originals)  # fmt: skip
            values[position].append(value)
        labels.append(label)
        sheet_rows.append(number)
    return _frame(record, header, values, labels, sheet_rows, where)


#: A cell's error where its column has no header.
_NO_HEADER = "holds a value but its column has no header: name the column or clear the cell"


def _cell_value(
    where: _Located,
    entry: Any,
    dtype: Any,
    cell: Any,
    place: tuple[int, int],
    label: int | None,
    originals: list[dict[str, Any]],
) -> Any:
    """The value of a cell that holds one, under its column's header ``entry``."""
    column, number = place
    if isinstance(entry, tuple):
        raise where.error(column, number, _NO_HEADER)
    shown = "new" if label is None else label
    name = entry.name if isinstance(entry, ColumnSpec) else entry
    raw = _raw(cell, where, column, number, name, shown)
    if not isinstance(entry, ColumnSpec):
        return plain_value(raw)
    try:
        value = decode(entry.encoding, raw, dtype)
    except CellError as exc:
        raise where.error(column, number, str(exc), name, shown) from exc
    if entry.encoding == "text" and label is not None and 0 <= label < len(originals):
        value = _undo_line_break_loss(value, originals[label].get(entry.name))
    if value is None and not holds_missing(dtype):
        raise where.error(
            column, number,
            f"is empty, but the column's dtype {dtype} cannot hold a missing value",
            name, shown,
        )  # fmt: skip
    return value


def _undo_line_break_loss(value: Any, original: Any) -> Any:
    """The exported text ``original`` when ``value`` is it with CR LF saved as LF.

    LibreOffice Calc keeps a line break as LF only, so an untouched cell whose text
    had CR LF comes back changed; no reviewer can make that change on purpose there.
    """
    if (
        isinstance(value, str)
        and isinstance(original, str)
        and "\r\n" in original
        and original.replace("\r\n", "\n") == value
    ):
        return original
    return value


def _index(
    record: SheetRecord, labels: list[int | None], sheet_rows: list[int], where: _Located
) -> pd.Index:
    first: dict[int, int] = {}
    for label, number in zip(labels, sheet_rows, strict=True):
        if label is None:
            continue
        if label in first:
            raise where.error(
                1, number,
                f"row {label} is also in sheet row {first[label]}: each original row may "
                "appear once; clear the row cell of a copied row to make it a new row",
            )  # fmt: skip
        first[label] = number
    original = (
        len(payload_rows(record.payload, _payload_kind(record, where))) if record.payload else 0
    )
    following = max([original - 1, *first]) + 1 if first or original else 0
    complete = []
    for label in labels:
        if label is None:
            label, following = following, following + 1
        complete.append(label)
    if complete == list(range(len(complete))):
        return pd.RangeIndex(len(complete), name=record.index_name)
    return pd.Index(complete, dtype="int64", name=record.index_name)


def _frame(
    record: SheetRecord,
    header: list[Any],
    values: list[list[Any]],
    labels: list[int | None],
    sheet_rows: list[int],
    where: _Located,
) -> pd.DataFrame:
    index = _index(record, labels, sheet_rows, where)
    present = {entry.name: i for i, entry in enumerate(header) if isinstance(entry, ColumnSpec)}
    arrays: dict[str, Any] = {}
    for spec in record.columns:
        if spec.name not in present:
            logger.info("%s: column %r is no longer in the sheet", where.prefix, spec.name)
            continue
        try:
            arrays[spec.name] = build_array(values[present[spec.name]], dtype_from_name(spec.dtype))
        except CellError as exc:
            raise DataShapeError(f"{where.prefix}, column {spec.name!r}: {exc}") from exc
    for position, entry in enumerate(header):
        if isinstance(entry, str):
            arrays[entry] = infer_array(values[position])
    # object columns stay object (pandas 3 would make one holding only strings ``str``)
    return frame_of_arrays(arrays, index)


def _payload_kind(record: SheetRecord, where: _Located) -> Kind:
    """The kind of the sheet's payload, as the hidden sheet names it."""
    for kind in KINDS:
        if record.kind == kind:
            return kind
    raise DataShapeError(f"{where.prefix}: the hidden sheet has no kind or id for its payload")


def _attach(frame: pd.DataFrame, record: SheetRecord, where: _Located) -> ReadContext | None:
    if record.payload is None:
        return None
    kind = _payload_kind(record, where)
    if not record.object_id:
        raise DataShapeError(f"{where.prefix}: the hidden sheet has no kind or id for its payload")
    if record.digest and digest(record.payload) != record.digest:
        raise DataShapeError(
            f"{where.prefix}: the original payload kept in the hidden sheet {META_SHEET!r} "
            "does not match its hash: the hidden sheet was edited; export the object again"
        )
    context = ReadContext(kind, record.object_id, record.payload)
    if record.read_at is not None:
        context = ReadContext(kind, record.object_id, record.payload, record.read_at)
    frame.attrs[ATTRS_KEY] = context
    return context


@overload
def read_excel(
    path: PathOrFile,
    *,
    object_id: str,
    client: object | None = None,
    dtype_backend: DtypeBackend = "numpy_nullable",
) -> pd.DataFrame: ...


@overload
def read_excel(
    path: PathOrFile,
    *,
    object_id: None = None,
    client: object | None = None,
    dtype_backend: DtypeBackend = "numpy_nullable",
) -> pd.DataFrame | dict[str, pd.DataFrame]: ...


def read_excel(
    path: PathOrFile,
    *,
    object_id: str | None = None,
    client: object | None = None,
    dtype_backend: DtypeBackend = "numpy_nullable",
) -> pd.DataFrame | dict[str, pd.DataFrame]:
    """Read a workbook written by :func:`to_excel` back into frames, ready to write.

    Parameters
    ----------
    path : str, path or binary file
        The workbook (edited by a reviewer, typically).
    object_id : str, optional
        Read only the sheet of this object and return its frame.
    client : Client, optional
        Also record each frame's context in this client's registry, as a read would
        (so the writer still finds it after a concat or merge drops ``attrs``).
    dtype_backend : {"numpy_nullable", "pyarrow"}, default "numpy_nullable"
        The frames' dtypes, as in pandas' readers: ``"pyarrow"`` gives ``pd.ArrowDtype``
        columns (see :func:`~mddframes.frames.backends.to_backend`).

    Returns
    -------
    pandas.DataFrame or dict of {str: pandas.DataFrame}
        What was written: one frame when :func:`to_excel` was given one frame (or
        ``object_id`` is given), else ``{object id: frame}`` in sheet order. Each
        frame has its original dtypes (from the snapshot), the row positions of
        column A as index (rows with an empty ``row`` cell are new rows, labelled
        after the last position), columns a reviewer added (inferred dtypes), and in
        ``attrs["mddframes"]`` the :class:`~mddframes.context.ReadContext` of the
        export: the payload as it was when exported, so that the writer's conflict
        check tells whether the object changed on the service since.

    Raises
    ------
    DataShapeError
        A cell does not fit its column (``"abc"`` in an integer column, invalid
        JSON, a number in a text column, a formula...), a row position is repeated,
        a sheet is missing, or the hidden sheet was edited; the error names the
        sheet, the cell (e.g. ``C7``), the column and the row.
    InvalidArgumentError
        ``object_id`` is not in the workbook.

    Examples
    --------
    >>> mddframes.to_excel(client.read_table("tbl-0109"), "countries.xlsx")
    >>> reviewed = mddframes.read_excel("countries.xlsx")  # after a reviewer's edits
    >>> reviewed.loc[56, "name"] = "Deutschland"
    >>> client.write_table("tbl-0109", reviewed, dry_run=True).diff.summary
    "1 cell(s) changed in 1 row(s) (row 56 column 'name')"
    """
    check_dtype_backend(dtype_backend)
    workbook = open_workbook(path)
    try:
        if META_SHEET not in workbook.sheetnames:
            raise DataShapeError(
                f"{path} has no sheet {META_SHEET!r}: it was not written by "
                "mddframes.to_excel (use pandas.read_excel for other workbooks)"
            )
        layout, records = read_metadata(workbook[META_SHEET])
        if object_id is not None:
            chosen = [r for r in records if r.object_id == object_id]
            if not chosen:
                raise InvalidArgumentError(
                    f"{path} holds no object {object_id!r}; it holds "
                    f"{[r.object_id for r in records]!r}"
                )
            records = chosen[:1]
        frames: dict[Any, pd.DataFrame] = {}
        for record in records:
            frame = _read_sheet(workbook, record)
            context = _attach(frame, record, _Located(record))
            frame = to_backend(frame, dtype_backend, consume=True)
            if context is not None and client is not None:
                registry_for(client).record(context)
            frames[record.object_id if layout == "dict" or object_id else record.sheet] = frame
    finally:
        workbook.close()
    logger.info("read %d sheet(s) from %s", len(frames), path)
    if object_id is not None or layout == "single":
        return next(iter(frames.values()))
    return frames
