"""The hidden sheet ``_mddframes``: what a workbook needs to be read back exactly.

For each object sheet it holds the object's kind and id, the original payload (the
write-back context, split over rows since a cell holds at most 32,767 characters), the
read time, the payload's hash, the index name and the dtype snapshot (column name,
dtype, cell encoding). One row per item, readable by a curious reviewer::

    sheet   | field   | part | value
    (empty) | format  | 0    | mddframes-workbook/1
    (empty) | layout  | 0    | single
    T0001   | id      | 0    | T0001
    T0001   | payload | 0    | {"id":"T0001","data":[...
    T0001   | payload | 1    | ...]}
"""

from __future__ import annotations

import datetime as _dt
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mddframes.codec import depth
from mddframes.errors import DataShapeError
from mddframes.spreadsheet.cells import (
    ENCODINGS,
    MAX_CELL_CHARS,
    CellError,
    Encoding,
    escape_text,
    openpyxl_cell,
    raw_value,
    text_cell,
)

#: The title of the hidden sheet.
META_SHEET = "_mddframes"

#: The format tag of workbooks written by this version.
FORMAT = "mddframes-workbook/1"

_HEADER = ("sheet", "field", "part", "value")
_JSON_FIELDS = ("index", "columns", "payload")
_TEXT_FIELDS = ("id", "kind", "read_at", "hash")


@dataclass(frozen=True)
class ColumnSpec:
    """The snapshot of one frame column: its name, dtype and how its cells are written."""

    name: str
    dtype: str
    encoding: Encoding


@dataclass
class SheetRecord:
    """What the hidden sheet says about one object sheet."""

    sheet: str
    columns: list[ColumnSpec]
    index_name: Any = "row"
    object_id: str | None = None
    kind: str | None = None
    read_at: _dt.datetime | None = None
    digest: str | None = None
    payload: dict[str, Any] | None = None


def chunks(text: str) -> list[str]:
    """``text`` cut into pieces whose escaped form fits a cell (un-escaped per cell)."""
    if not text:
        return [""]
    pieces = []
    size = MAX_CELL_CHARS // 2
    start = 0
    while start < len(text):
        piece = text[start : start + size]
        escaped = escape_text(piece)
        if len(escaped.encode("utf-16-le", "surrogatepass")) // 2 > MAX_CELL_CHARS:
            size //= 2  # many escaped or astral characters: cut smaller
            continue
        pieces.append(piece)
        start += len(piece)
    return pieces


def _rows(layout: str, records: Iterable[SheetRecord]) -> Iterable[tuple[str | None, str, str]]:
    yield None, "format", FORMAT
    yield None, "layout", layout
    for record in records:
        texts = {
            "id": record.object_id,
            "kind": record.kind,
            "read_at": record.read_at.isoformat() if record.read_at else None,
            "hash": record.digest,
        }
        for field, value in texts.items():
            if value is not None:
                yield record.sheet, field, value
        yield record.sheet, "index", json.dumps({"name": record.index_name})
        columns = [[c.name, c.dtype, c.encoding] for c in record.columns]
        yield record.sheet, "columns", json.dumps(columns, ensure_ascii=False)
        if record.payload is not None:
            # key order and number types as read: json.loads gives the same payload back
            yield (
                record.sheet,
                "payload",
                depth.dumps(record.payload, what=f"sheet {record.sheet!r}", ensure_ascii=False),
            )


def write_metadata(sheet: Any, layout: str, records: Iterable[SheetRecord]) -> None:
    """Fill the write-only openpyxl ``sheet`` (already hidden) with the records."""
    sheet.append(list(_HEADER))
    for title, field, value in _rows(layout, records):
        for part, piece in enumerate(chunks(value)):
            sheet.append(
                [
                    None if title is None else openpyxl_cell(sheet, text_cell(title)),
                    field,
                    part,
                    openpyxl_cell(sheet, text_cell(piece)),
                ]
            )


def _text(cell: Any, where: str) -> str | None:
    try:
        value = raw_value(cell.value, cell.data_type)
    except CellError as exc:
        raise DataShapeError(f"sheet {META_SHEET!r}, {where} {exc}") from exc
    if value is None or isinstance(value, str):
        return value
    return str(value)


def read_metadata(sheet: Any) -> tuple[str, list[SheetRecord]]:
    """The layout (``single`` or ``dict``) and the records of a read-only hidden sheet.

    Raises
    ------
    DataShapeError
        If the sheet is not one :func:`write_metadata` wrote, or was edited so that it
        no longer parses.
    """
    sheet.reset_dimensions()
    parts: dict[tuple[str | None, str], dict[int, str]] = {}
    order: list[str] = []
    for number, row in enumerate(sheet.iter_rows(min_row=2), start=2):
        cells = list(row) + [None] * (4 - len(row))
        if all(c is None or c.value is None for c in cells[:4]):
            continue
        title = _text(cells[0], f"cell A{number}") if cells[0] is not None else None
        field = _text(cells[1], f"cell B{number}") if cells[1] is not None else None
        part = cells[2].value if cells[2] is not None else None
        value = (_text(cells[3], f"cell D{number}") if cells[3] is not None else None) or ""
        if not field or not isinstance(part, int) or isinstance(part, bool):
            raise DataShapeError(
                f"sheet {META_SHEET!r}, row {number}: expected a field name and a part "
                f"number, found {field!r} and {part!r}; the hidden sheet was edited"
            )
        parts.setdefault((title, field), {})[part] = value
        if title is not None and title not in order:
            order.append(title)
    texts = {key: "".join(p[i] for i in sorted(p)) for key, p in parts.items()}
    if texts.get((None, "format")) != FORMAT:
        raise DataShapeError(
            f"sheet {META_SHEET!r} does not say format {FORMAT!r} (found "
            f"{texts.get((None, 'format'))!r}): the workbook was not written by this "
            "version of mddframes.to_excel"
        )
    layout = texts.get((None, "layout"))
    if layout not in ("single", "dict"):
        raise DataShapeError(f"sheet {META_SHEET!r}: unknown layout {layout!r}")
    return layout, [_record(title, texts) for title in order]


def _encoding(name: str) -> Encoding:
    for encoding in ENCODINGS:
        if encoding == name:
            return encoding
    raise ValueError(f"unknown encoding {name!r}")  # the caller names the sheet


def _record(title: str, texts: dict[tuple[str | None, str], str]) -> SheetRecord:
    values: dict[str, Any] = {}
    for field in _JSON_FIELDS:
        text = texts.get((title, field))
        if text is None:
            continue
        try:
            values[field] = depth.loads(text, what=f"sheet {title!r}")
        except json.JSONDecodeError as exc:
            raise DataShapeError(
                f"sheet {META_SHEET!r}: the {field} of sheet {title!r} is not valid JSON "
                f"({exc.msg}); the hidden sheet was edited"
            ) from exc
    if "columns" not in values or "index" not in values:
        raise DataShapeError(f"sheet {META_SHEET!r} has no column snapshot of sheet {title!r}")
    read_at = texts.get((title, "read_at"))
    try:
        columns = [ColumnSpec(str(n), str(d), _encoding(str(e))) for n, d, e in values["columns"]]
        return SheetRecord(
            sheet=title,
            columns=columns,
            index_name=values["index"]["name"],
            object_id=texts.get((title, "id")),
            kind=texts.get((title, "kind")),
            read_at=_dt.datetime.fromisoformat(read_at) if read_at else None,
            digest=texts.get((title, "hash")),
            payload=values.get("payload"),
        )
    except (TypeError, ValueError, KeyError) as exc:
        raise DataShapeError(
            f"sheet {META_SHEET!r}: the record of sheet {title!r} does not parse ({exc}); "
            "the hidden sheet was edited"
        ) from exc
