"""``to_excel``: table and mapping frames out to xlsx for review (``read_excel`` reads them back).

One sheet per object: column A holds each row's original position (``row``, the frame
index), then one column per frame column, cells written per the column's encoding
(:mod:`mddframes.spreadsheet.cells`). The hidden sheet ``_mddframes``
(:mod:`mddframes.spreadsheet.metadata`) keeps the write-back context and the dtype
snapshot, so the frame read back carries the context the writer needs and the
original dtypes.
"""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import IO, Any

import numpy as np
import pandas as pd
from openpyxl import Workbook
from openpyxl.utils import get_column_letter

from mddframes.codec.frame import INDEX_NAME, payload_rows
from mddframes.codec.kinds import KINDS, Kind
from mddframes.codec.values import ABSENT, is_missing_json
from mddframes.context import ATTRS_KEY, ReadContext, registry_for
from mddframes.errors import DataShapeError, InvalidArgumentError
from mddframes.frames.backends import from_user_frame
from mddframes.spreadsheet.cells import (
    Cell,
    CellError,
    dtype_name,
    encode,
    encoding_of,
    openpyxl_cell,
    text_cell,
)
from mddframes.spreadsheet.metadata import (
    META_SHEET,
    ColumnSpec,
    SheetRecord,
    write_metadata,
)

logger = logging.getLogger(__name__)

PathOrFile = str | os.PathLike[str] | IO[bytes]

#: The header of column A, which holds each row's original position.
INDEX_HEADER = INDEX_NAME

_TITLE_LENGTH = 31
_MAX_ROWS, _MAX_COLUMNS = 1_048_576, 16_384  # what one Excel sheet holds
_BAD_TITLE = re.compile("[\\\\*?:/\\[\\]\x00-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
_RESERVED_TITLES = {META_SHEET.lower(), "history"}


# -- sheet titles -----------------------------------------------------------------------


def _clip(text: str, length: int) -> str:
    """The longest prefix of ``text`` of at most ``length`` UTF-16 code units."""
    units = 0
    for position, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > length:
            return text[:position]
    return text


def sheet_titles(names: list[str]) -> list[str]:
    """Valid, distinct sheet titles for object ids (the true ids go to the hidden sheet).

    Characters a title cannot hold (``\\ / * ? : [ ]`` and control characters) become
    ``_``; titles are cut to 31 characters, may not start or end with ``'``, and a
    title already taken (case-insensitively) gets a ``~2``, ``~3``... suffix.
    """
    used: set[str] = set(_RESERVED_TITLES)
    titles = []
    for name in names:
        base = _BAD_TITLE.sub("_", name).strip("'") or "sheet"
        title = _clip(base, _TITLE_LENGTH).strip("'") or "sheet"
        counter = 1
        while title.lower() in used:
            counter += 1
            suffix = f"~{counter}"
            title = _clip(base, _TITLE_LENGTH - len(suffix)).rstrip("'") + suffix
        used.add(title.lower())
        titles.append(title)
    return titles


# -- writing ----------------------------------------------------------------------------


@dataclass
class _Export:
    """One frame on its way into a sheet."""

    label: str
    frame: pd.DataFrame
    context: ReadContext | None
    columns: list[ColumnSpec]


def _context(
    frame: pd.DataFrame, object_id: str | None, kind: Kind | None, client: Any
) -> ReadContext | None:
    attached = frame.attrs.get(ATTRS_KEY)
    context = attached if isinstance(attached, ReadContext) else None
    foreign = None
    if context is not None and object_id is not None and context.object_id != object_id:
        # the frame was read as another object: look the key up instead
        foreign, context = context, None
    if context is None and client is not None and object_id is not None:
        for candidate in (kind,) if kind else KINDS:
            context = registry_for(client).get(candidate, object_id)
            if context is not None:
                break
    if context is None and foreign is not None:
        raise InvalidArgumentError(
            f"the frame under key {object_id!r} carries the read context of "
            f"{foreign.kind} {foreign.object_id!r}; use the object id as key, or pass "
            "client= (a client that read the object) so the key's context is used"
        )
    if context is not None and kind is not None and context.kind != kind:
        raise InvalidArgumentError(
            f"kind={kind!r}, but the frame of {object_id or context.object_id!r} was read "
            f"as a {context.kind}"
        )
    if context is None:
        logger.warning(
            "%s has no write-back context (read it with read_table/read_mapping, or pass "
            "client=): the frame read back from the workbook cannot be written without force",
            f"the frame of {object_id!r}" if object_id else "the frame",
        )
    return context


def _snapshot(frame: pd.DataFrame, label: str) -> list[ColumnSpec]:
    if not isinstance(frame, pd.DataFrame):
        raise InvalidArgumentError(
            f"{label}: expected a pandas DataFrame, not {type(frame).__name__}"
        )
    if isinstance(frame.index, pd.MultiIndex) or not (
        pd.api.types.is_integer_dtype(frame.index.dtype)
        or all(isinstance(x, int | np.integer) and not isinstance(x, bool) for x in frame.index)
    ):
        raise DataShapeError(
            f"{label}: the index must be each row's original position (integers), as "
            f"read_table and read_mapping give it; found {frame.index[:3].tolist()!r}"
        )
    if not frame.index.is_unique:
        raise DataShapeError(
            f"{label}: duplicate index labels "
            f"{frame.index[frame.index.duplicated()].unique().tolist()[:5]!r}"
        )
    bad = [c for c in frame.columns if not isinstance(c, str)]
    if bad:
        raise DataShapeError(f"{label}: column names must be strings, got {bad[:5]!r}")
    if frame.columns.has_duplicates:
        raise DataShapeError(
            f"{label}: duplicate column names "
            f"{frame.columns[frame.columns.duplicated()].unique().tolist()[:5]!r}"
        )
    specs = []
    for name in frame.columns:
        dtype = frame[name].dtype
        encoding = encoding_of(dtype)
        if encoding is None:
            raise DataShapeError(
                f"{label}, column {name!r}: dtype {dtype} has no exact spreadsheet form; "
                "convert it first, e.g. with astype('string') or astype(object)"
            )
        specs.append(ColumnSpec(name, dtype_name(dtype), encoding))
    return specs


def _exports(
    frames: pd.DataFrame | Mapping[str, pd.DataFrame], kind: Kind | None, client: Any
) -> tuple[str, list[_Export]]:
    if kind not in (None, "table", "mapping"):
        raise InvalidArgumentError(f"kind must be 'table', 'mapping' or None, not {kind!r}")
    if not isinstance(frames, Mapping):
        # Arrow-backed and polars frames: the numpy-nullable frame of the same content
        frames = from_user_frame(frames, what="to_excel")
    if isinstance(frames, pd.DataFrame):
        context = _context(frames, None, kind, client)
        label = f"{context.kind} {context.object_id!r}" if context else "the frame"
        name = context.object_id if context else "data"
        return "single", [_Export(name, frames, context, _snapshot(frames, label))]
    if not isinstance(frames, Mapping):
        raise InvalidArgumentError(
            "frames must be a DataFrame or a dict {object id: DataFrame}, "
            f"not {type(frames).__name__}"
        )
    if not frames:
        raise InvalidArgumentError("frames is an empty dict: there is nothing to write")
    exports = []
    for object_id, frame in frames.items():
        if not isinstance(object_id, str) or not object_id:
            raise InvalidArgumentError(
                f"the keys of frames must be object ids (non-empty strings), got {object_id!r}"
            )
        frame = from_user_frame(frame, what=f"to_excel: frames[{object_id!r}]")
        if not isinstance(frame, pd.DataFrame):
            raise InvalidArgumentError(
                f"frames[{object_id!r}] must be a DataFrame, not {type(frame).__name__}"
            )
        context = _context(frame, object_id, kind, client)
        label = f"{context.kind if context else kind or 'object'} {object_id!r}"
        exports.append(_Export(object_id, frame, context, _snapshot(frame, label)))
    return "dict", exports


def _templates(rows: list[dict[str, Any]], names: list[str]) -> dict[str, Any]:
    """The first non-missing original value of each column (the format of new dates)."""
    templates: dict[str, Any] = {}
    for name in names:
        templates[name] = next(
            (row[name] for row in rows if not is_missing_json(row.get(name, ABSENT))), None
        )
    return templates


def _encode(export: _Export) -> list[list[Cell]]:
    """Every cell of the sheet of ``export``, header first (all checked before writing)."""
    frame, specs = export.frame, export.columns
    rows = (
        payload_rows(export.context.load_document(), export.context.kind) if export.context else []
    )
    templates = _templates(rows, [s.name for s in specs if s.encoding == "datetime"])
    label = f"{export.context.kind} {export.label!r}" if export.context else repr(export.label)
    if len(frame) + 1 > _MAX_ROWS or len(specs) + 1 > _MAX_COLUMNS:
        raise DataShapeError(
            f"{label}: {len(frame):,} rows and {len(specs):,} columns do not fit one sheet "
            f"(at most {_MAX_ROWS - 1:,} rows and {_MAX_COLUMNS - 1:,} columns besides the "
            "header and the row column); export a part of the frame"
        )
    try:
        out = [[text_cell(INDEX_HEADER), *(text_cell(s.name) for s in specs)]]
    except CellError as exc:
        raise DataShapeError(f"{label}: a column name is too long: {exc}") from exc
    columns = [list(frame[s.name].array) for s in specs]
    for position, row_label in enumerate(frame.index.tolist()):
        original = rows[row_label] if 0 <= row_label < len(rows) else {}
        cells = [Cell(int(row_label), "integer")]
        for spec, values in zip(specs, columns, strict=True):
            value = values[position]
            try:
                if spec.encoding == "datetime":
                    cell = encode("datetime", value, original.get(spec.name), templates[spec.name])
                else:
                    cell = encode(spec.encoding, value)
            except (CellError, TypeError, ValueError) as exc:
                raise DataShapeError(
                    f"{label}, row {row_label}, column {spec.name!r}: {exc}"
                ) from exc
            cells.append(cell)
        out.append(cells)
    return out


def _write_sheet(sheet: Any, specs: list[ColumnSpec], rows: list[list[Cell]]) -> None:
    sheet.freeze_panes = "B2"
    for position, spec in enumerate(specs, start=2):
        if spec.encoding in ("text", "datetime", "json"):
            # new cells a reviewer types in this column are text too
            sheet.column_dimensions[get_column_letter(position)].number_format = "@"
    for row in rows:
        sheet.append([openpyxl_cell(sheet, cell) for cell in row])


def to_excel(
    frames: pd.DataFrame | Mapping[str, pd.DataFrame],
    path: PathOrFile,
    *,
    kind: Kind | None = None,
    client: object | None = None,
) -> None:
    """Write table or mapping frames to an xlsx workbook for review, losslessly.

    Parameters
    ----------
    frames : pandas.DataFrame or dict of {str: pandas.DataFrame}
        One frame (as ``read_table`` / ``read_mapping`` return it, with its write-back
        context in ``attrs``), or ``{object id: frame}`` for one sheet per object.
    path : str, path or binary file
        Where to write the workbook.
    kind : {"table", "mapping"}, optional
        Check that every frame was read as this kind; with ``client``, the kind under
        which a frame without context is looked up.
    client : Client, optional
        Where to find the context of a frame whose ``attrs`` lost it (after a concat,
        merge or astype): the client's latest read of the object (needs dict keys).

    Raises
    ------
    InvalidArgumentError
        ``frames`` is not a frame or a dict of frames, or a context does not match.
    DataShapeError
        A frame has no row positions as index, duplicate or non-string column names,
        a dtype with no exact cell form, or a text longer than a cell holds (each
        error names the object, row and column).

    Notes
    -----
    - Each sheet is titled after its object id (characters a title cannot hold
      become ``_``, cut to 31 characters, ``~2``... when taken); the true id is kept
      in the hidden sheet ``_mddframes``, with the original payload, the read time,
      its hash and the dtype snapshot.
    - Column A (``row``) holds each row's original position: keep it. A row added
      by a reviewer has an empty ``row`` cell; a row deleted from the sheet is a
      deletion (the writer then needs ``allow_deletes=True``).
    - Cells: text as text cells (leading zeros and ``=``/``+``/``-``/``@`` kept,
      never formulas), an empty cell for NA and the formula ``=""`` for an empty
      string; integers and floats as numbers while Excel holds them exactly, else as
      text; booleans as booleans; date-times as ISO text in the service's format;
      nested values, lists and mixed columns as JSON text per cell. See
      :mod:`mddframes.spreadsheet.cells`.
    - A frame without a context is written too (with its dtype snapshot), but the
      frame read back then has no context either.

    Examples
    --------
    >>> countries = client.read_table("tbl-0109")
    >>> mddframes.to_excel(countries, "countries.xlsx")  # text cells stay text: "004"
    >>> mddframes.read_excel("countries.xlsx").equals(countries)
    True
    """
    layout, exports = _exports(frames, kind, client)
    titles = sheet_titles([e.label for e in exports])
    # encode everything first: a refusal must not leave a half-written workbook behind
    encoded = [_encode(export) for export in exports]
    workbook = Workbook(write_only=True)
    records = []
    for title, export, rows in zip(titles, exports, encoded, strict=True):
        _write_sheet(workbook.create_sheet(title), export.columns, rows)
        context = export.context
        records.append(
            SheetRecord(
                sheet=title,
                columns=export.columns,
                index_name=export.frame.index.name,
                object_id=context.object_id
                if context
                else (export.label if layout == "dict" else None),
                kind=context.kind if context else kind,
                read_at=context.read_at if context else None,
                digest=context.digest if context else None,
                payload=context.load_document() if context else None,
            )
        )
    meta = workbook.create_sheet(META_SHEET)
    meta.sheet_state = "hidden"
    write_metadata(meta, layout, records)
    workbook.save(path)
    logger.info("wrote %d sheet(s) to %s", len(exports), path)
