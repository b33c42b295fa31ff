"""One table or mapping as a file: CSV (+ sidecar), JSON or xlsx, written and read back.

The formats (``mddframes-object/1``; README "Tables as code" shows examples):

- **CSV** ``<id>.csv``: a header, then one line per row. The first column (``row``)
  is the row's position in the object as pulled; a row with an empty ``row`` is a
  new row; a row left out is a deleted row. An empty unquoted field is missing
  (null), ``""`` is the empty string (:mod:`.csvtext`); in a text column of a pulled
  row an empty unquoted field is the empty string where the service holds one there
  (CSV editors drop the quotes: :mod:`.csvedits`). Each column's cells are
  either *text* (the string itself) or *json* (the JSON text of the value: ``42``,
  ``1.5``, ``true``, ``{"a": 1}``): a column of strings only is text, any other
  column json; a column that is all null takes its declared type (text for strings
  and undeclared columns). The sidecar ``<id>.meta.json`` keeps the kind, the id,
  the envelope (the payload without its rows: name, metadata, declared columns...)
  and each column's cell encoding. A column added to the CSV by hand is text.
- **JSON** ``<id>.json``: one document with the same fields as the sidecar and
  ``rows``: ``[position or null, {key: value}]`` per row, one row per line, values
  as the service holds them (absent keys stay absent).
- **xlsx** ``<id>.xlsx``: :func:`mddframes.to_excel`'s workbook: the sheet holds
  the rows (column A the position), its hidden sheet the payload and the dtypes.

Pulling writes the same bytes for the same payload (CSV and JSON; a workbook holds
the time it was written), so a second pull of an unchanged system changes nothing
in git. Reading builds the frame with :func:`mddframes.codec.frame.frame_of_columns`,
the function ``read_table`` itself uses, so unchanged cells compare equal to what
the service holds.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from mddframes.codec import depth
from mddframes.codec.align import align_rows, primary_key_columns
from mddframes.codec.dtypes import type_family
from mddframes.codec.frame import (
    INDEX_NAME,
    column_order,
    declared_columns,
    declared_type,
    frame_of_columns,
    from_payload,
    payload_rows,
    rows_key,
)
from mddframes.codec.frame_overlay import overlay
from mddframes.codec.kinds import Kind
from mddframes.codec.values import digest
from mddframes.context import ATTRS_KEY, ReadContext
from mddframes.disk_modes import as_output
from mddframes.doc_sections import documented_with
from mddframes.errors import DataShapeError, DeclaredTypeWarning, InvalidArgumentError
from mddframes.tables_as_code.csvbooleans import settle_spellings, spelled
from mddframes.tables_as_code.csvedits import resolve_bare_empties
from mddframes.tables_as_code.csvtext import CsvSyntaxError, format_csv, parse_csv
from mddframes.tables_as_code.names import KIND_FOLDERS, sidecar_path, split_name

#: The format tag of sidecars and JSON object files.
OBJECT_FORMAT = "mddframes-object/1"

_TEXT, _JSON = "text", "json"

#: The ``current`` entry of the docstrings of ``labels_for`` and ``frame_for``.
_documented = documented_with(
    {"current": "current : dict\n    The object as the service holds it now."}, "current"
)
_TEXT_FAMILIES = {None, "string", "date", "datetime", "decimal"}


@dataclass
class ObjectFile:
    """A table or mapping as read from its file, before it meets the service.

    Attributes
    ----------
    kind, object_id
        What the file says it holds.
    path : pathlib.Path
        The object file (``.csv``, ``.json`` or ``.xlsx``).
    paths : list of pathlib.Path
        Every file of the object (the CSV's sidecar too): what :attr:`digest` covers.
    frame : pandas.DataFrame
        The rows, with a RangeIndex; ``positions`` says which row each one is.
    positions : list of int or None
        For each frame row, its position in the object when pulled, or None for a
        new row.
    envelope : dict
        The payload without its rows, as pulled.
    digest : str
        SHA-256 over the bytes of ``paths`` (a plan checks the files did not
        change before it is applied).
    rows_key : str
        Where the payload keeps its rows (``data`` or ``columnMappings``).
    rows_digest : str or None
        The digest of the rows as pulled (:func:`mddframes.codec.values.digest`):
        while the service still holds exactly them, the ``row`` positions address its
        rows; once it holds anything else (after an apply that added or deleted rows,
        or a change by someone else) the rows are matched afresh (:meth:`frame_for`).
    bare_empty : dict
        CSV only: column -> the frame rows whose field in that text column was an empty
        unquoted field; :meth:`frame_for` makes them empty strings where the service
        holds one (:func:`.csvedits.resolve_bare_empties`).
    """

    kind: Kind
    object_id: str
    path: Path
    paths: list[Path]
    frame: pd.DataFrame
    positions: list[int | None]
    envelope: dict[str, Any]
    digest: str
    rows_key: str = field(default="data")
    rows_digest: str | None = None
    bare_empty: dict[str, list[int]] = field(default_factory=dict)

    @_documented
    def labels_for(self, current: dict[str, Any]) -> list[int | None]:
        """Which row of ``current`` each file row is (None: a new row).

        The pulled positions while the service holds the pulled rows; else the
        codec's row alignment (:func:`mddframes.codec.align.align_rows`): by the
        declared primary key when it identifies every row, else in order when the
        counts agree, else by content.

        Parameters
        ----------
        {current}

        Returns
        -------
        list of int or None
            One entry per file row.
        """
        rows = payload_rows(current, self.kind)
        if self.rows_digest is not None and digest(rows) == self.rows_digest:
            return list(self.positions)
        mine = overlay(self.frame, {**self.envelope, self.rows_key: []}, kind=self.kind)
        wanted = payload_rows(mine.payload, self.kind)
        keys = primary_key_columns(declared_columns(current, self.kind))
        # nulls, absent keys and empty strings are one thing to a file saved by a CSV
        # editor: compare rows without them
        return align_rows(_without_nulls(rows), _without_nulls(wanted), primary_key=keys)

    @_documented
    def frame_for(self, current: dict[str, Any]) -> pd.DataFrame:
        """The frame to overlay on ``current`` (what the service holds now).

        Rows that are rows of ``current`` (:meth:`labels_for`) are labelled by their
        position there; new rows get labels after the last row, so they never address
        a row the service holds. The frame carries ``current`` as its write-back
        context: the writer then compares against exactly this content and refuses if
        the service moves on before the PUT.

        Parameters
        ----------
        {current}

        Returns
        -------
        pandas.DataFrame
            The file's rows, labelled, with ``current`` as their context.
        """
        count = len(payload_rows(current, self.kind))
        matched = self.labels_for(current)
        known = [p for p in matched if p is not None]
        following = max([count - 1, *known]) + 1
        frame = resolve_bare_empties(
            self.frame, self.bare_empty, matched, payload_rows(current, self.kind)
        )
        labels = []
        for position in matched:
            if position is None:
                position, following = following, following + 1
            labels.append(position)
        frame = frame.copy(deep=False)
        frame.index = pd.Index(labels, dtype="int64", name=INDEX_NAME)
        frame.attrs[ATTRS_KEY] = ReadContext(self.kind, self.object_id, current)
        return frame


def _without_nulls(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # empty strings too: a CSV editor may have turned them into bare (null) fields
    return [{k: v for k, v in row.items() if v is not None and v != ""} for row in rows]


# -- writing ---------------------------------------------------------------------------


def _envelope(payload: dict[str, Any], kind: Kind) -> tuple[str, dict[str, Any]]:
    key = rows_key(payload, kind)
    return key, {k: v for k, v in payload.items() if k != key}


def _dumps(value: Any) -> str:
    return depth.dumps(value, ensure_ascii=False, allow_nan=False)


def _encodings(payload: dict[str, Any], kind: Kind, names: list[str]) -> dict[str, str]:
    rows = payload_rows(payload, kind)
    declared = {c["name"]: declared_type(c) for c in declared_columns(payload, kind)}
    out = {}
    for name in names:
        values = [row[name] for row in rows if row.get(name) is not None]
        if values:
            out[name] = _TEXT if all(type(v) is str for v in values) else _JSON
        else:
            out[name] = _TEXT if type_family(declared.get(name)) in _TEXT_FAMILIES else _JSON
    return out


def _header(fields: dict[str, Any]) -> str:
    """The fields of a sidecar or JSON object file, one per line, in a fixed order."""
    lines = [f" {_dumps(key)}: {_dumps(value)}" for key, value in fields.items()]
    return "{\n" + ",\n".join(lines)


def csv_texts(payload: dict[str, Any], kind: Kind, object_id: str, name: str) -> tuple[str, str]:
    """The CSV text and the sidecar text of an object (``name``: the CSV's file name)."""
    key, envelope = _envelope(payload, kind)
    names = column_order(payload, kind)  # the frame's columns, without building it
    encodings = _encodings(payload, kind, names)
    lines: list[list[str | None]] = [[INDEX_NAME, *names]]
    for position, row in enumerate(payload_rows(payload, kind)):
        cells: list[str | None] = [str(position)]
        for column in names:
            value = row.get(column)
            if value is None:
                cells.append(None)
            elif encodings[column] == _TEXT:
                cells.append(value)
            else:
                cells.append(_dumps(value))
        lines.append(cells)
    sidecar = _header(
        {"format": OBJECT_FORMAT, "kind": kind, "id": object_id, "file": name,
         "rowsKey": key, "rowsDigest": digest(payload[key]), "cells": encodings,
         "envelope": envelope}
    ) + "\n}\n"  # fmt: skip
    return format_csv(lines), sidecar


def json_text(payload: dict[str, Any], kind: Kind, object_id: str) -> str:
    """The JSON object file of an object: the sidecar's fields and one row per line."""
    key, envelope = _envelope(payload, kind)
    head = _header(
        {"format": OBJECT_FORMAT, "kind": kind, "id": object_id, "rowsKey": key,
         "rowsDigest": digest(payload[key]), "envelope": envelope}
    )  # fmt: skip
    rows = [
        f"  [{position}, {_dumps(row)}]" for position, row in enumerate(payload_rows(payload, kind))
    ]
    body = "[\n" + ",\n".join(rows) + "\n ]" if rows else "[]"
    return f'{head},\n "rows": {body}\n}}\n'


def _write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        as_output(temp)  # mkstemp made it 0600: an output follows the user's umask
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def write_object(
    path: Path, kind: Kind, object_id: str, payload: dict[str, Any]
) -> list[tuple[Path, bool]]:
    """Write an object's file (and sidecar) at ``path``; the format is its extension.

    Parameters
    ----------
    path : pathlib.Path
        The file to write; its extension picks the format.
    kind : {'table', 'mapping'}
        Which kind of object.
    object_id : str
        The object's id.
    payload : dict
        The object as the service holds it.

    Returns
    -------
    list of (pathlib.Path, bool)
        Each file and whether its bytes changed (a file rewritten with the same bytes
        is left alone).
    """
    fmt = split_name(path.name)[1]
    outputs: list[tuple[Path, bytes]]
    if fmt == "csv":
        text, sidecar = csv_texts(payload, kind, object_id, path.name)
        outputs = [(path, text.encode("utf-8")), (sidecar_path(path), sidecar.encode("utf-8"))]
    elif fmt == "json":
        outputs = [(path, json_text(payload, kind, object_id).encode("utf-8"))]
    elif fmt == "xlsx":
        from mddframes.spreadsheet import to_excel

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeclaredTypeWarning)
            frame = from_payload(payload, kind)
        frame.attrs[ATTRS_KEY] = ReadContext(kind, object_id, payload)
        temp = path.with_name(f".tmp-{path.name}")
        path.parent.mkdir(parents=True, exist_ok=True)
        try:
            to_excel(frame, temp, kind=kind)
            data = temp.read_bytes()
        finally:
            temp.unlink(missing_ok=True)
        outputs = [(path, data)]
    else:
        raise InvalidArgumentError(f"unknown object file format {fmt!r}: csv, json or xlsx")
    written = []
    for target, data in outputs:
        same = target.is_file() and target.read_bytes() == data
        if not same:
            _write_atomically(target, data)
        written.append((target, not same))
    return written


# -- reading ---------------------------------------------------------------------------


def _digest(paths: list[Path]) -> str:
    hasher = hashlib.sha256()
    for path in paths:
        data = path.read_bytes()
        hasher.update(f"{path.name}\0{len(data)}\0".encode())
        hasher.update(data)
    return hasher.hexdigest()


def _load_json(path: Path) -> dict[str, Any]:
    try:
        document = depth.loads(path.read_text("utf-8"), what=str(path), parse_constant=_no_constant)
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataShapeError(f"{path}: not readable as JSON ({exc})") from exc
    if not isinstance(document, dict) or document.get("format") != OBJECT_FORMAT:
        raise DataShapeError(f"{path}: not a {OBJECT_FORMAT} document (pull the object again)")
    for name, kind in (("kind", str), ("id", str), ("rowsKey", str), ("envelope", dict)):
        if not isinstance(document.get(name), kind):
            raise DataShapeError(f"{path}: the field {name!r} is missing or of the wrong type")
    if document["kind"] not in KIND_FOLDERS:
        raise DataShapeError(f"{path}: unknown kind {document['kind']!r}")
    return document


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


def _position(raw: Any, where: str) -> int | None:
    if raw is None:
        return None
    try:
        position = int(raw) if isinstance(raw, str) else raw
    except ValueError:
        position = None
    if type(position) is not int or position < 0:
        raise DataShapeError(
            f"{where}: the row position must be a whole number >= 0 or empty (a new row), "
            f"not {raw!r}"
        )
    return position


def _check_positions(positions: list[int | None], where: list[str]) -> None:
    seen: dict[int, str] = {}
    for position, place in zip(positions, where, strict=True):
        if position is None:
            continue
        if position in seen:
            raise DataShapeError(
                f"{place}: row {position} is also at {seen[position]}; each pulled row may "
                "appear once (empty the row cell of a copied row to make it a new row)"
            )
        seen[position] = place


def _frame(
    kind: Kind, envelope: dict[str, Any], columns: dict[str, list[Any]], n_rows: int
) -> pd.DataFrame:
    declared = [c for c in declared_columns(envelope, kind) if c["name"] in columns]
    with warnings.catch_warnings():  # files hold text: a dtype misfit is no news here
        warnings.simplefilter("ignore", DeclaredTypeWarning)
        return frame_of_columns(columns, n_rows, declared, kind=kind)


def _read_csv(path: Path) -> ObjectFile:
    meta_path = sidecar_path(path)
    if not meta_path.is_file():
        raise DataShapeError(f"{path}: its sidecar {meta_path.name} is missing (pull it again)")
    meta = _load_json(meta_path)
    encodings = meta.get("cells")
    if not isinstance(encodings, dict):
        encodings = {}
    try:
        # bytes, not read_text: universal newlines would turn a CR LF inside a quoted
        # field into LF, a change nobody made
        records = parse_csv(path.read_bytes().decode("utf-8"))
    except CsvSyntaxError as exc:
        raise DataShapeError(f"{path}: {exc}") from exc
    except UnicodeDecodeError as exc:
        raise DataShapeError(
            f"{path}: not UTF-8 text ({exc}); save it as UTF-8 (Excel: 'CSV UTF-8')"
        ) from exc
    if not records:
        raise DataShapeError(f"{path}: no header line")
    _, header = records[0]
    names = header[1:]
    bad = [n for n in names if not n]
    if bad or len(set(names)) != len(names):
        raise DataShapeError(f"{path}, line 1: column names must be non-empty and distinct")
    columns: dict[str, list[Any]] = {str(n): [] for n in names}
    positions: list[int | None] = []
    places = []
    bare: dict[str, list[int]] = {}
    for number, (line, fields) in enumerate(records[1:]):
        place = f"{path.name}, line {line}"
        if len(fields) != len(header):
            raise DataShapeError(f"{place}: {len(fields)} fields, the header has {len(header)}")
        positions.append(_position(fields[0], place))
        places.append(place)
        for name, raw in zip(names, fields[1:], strict=True):
            encoding = encodings.get(name, _TEXT)
            if raw is None and encoding == _TEXT:
                bare.setdefault(str(name), []).append(number)
            columns[str(name)].append(_cell(raw, encoding, place, name))
    _check_positions(positions, places)
    kind, envelope = meta["kind"], meta["envelope"]
    declared = {c["name"]: c.get("dataType") for c in declared_columns(envelope, kind)}
    for name, cells in columns.items():
        boolean = type_family(declared.get(name)) == "boolean"
        ambiguous = settle_spellings(cells, declared_boolean=boolean)
        if ambiguous is not None:
            raise _not_json(ambiguous.raw, ambiguous.place, name, ambiguous=True)
    return ObjectFile(kind, meta["id"], path, [path, meta_path],
                      _frame(kind, envelope, columns, len(positions)), positions, envelope,
                      _digest([path, meta_path]), meta["rowsKey"],
                      _text_or_none(meta.get("rowsDigest")), bare)  # fmt: skip


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _cell(raw: str | None, encoding: str, place: str, column: Any) -> Any:
    if raw is None or encoding == _TEXT:
        return raw
    try:
        return depth.loads(raw, what=place, parse_constant=_no_constant)
    except ValueError as exc:
        spelling = spelled(raw, place)  # TRUE as a spreadsheet program saves true
        if spelling is not None:
            return spelling
        raise _not_json(raw, place, column) from exc


def _not_json(raw: str, place: str, column: Any, *, ambiguous: bool = False) -> DataShapeError:
    hint = ""
    if ambiguous:
        hint = (
            f"; {raw!r} is how a spreadsheet program saves true or false, but this column "
            "holds other values than booleans too, so it cannot tell: write true or false"
        )
    elif raw.strip().lower() in ("true", "false"):
        hint = (
            "; the file looks re-saved by a spreadsheet program: edit it as a workbook "
            "(pull it with --file-format xlsx)"
        )
    return DataShapeError(
        f"{place}, column {column!r}: {raw[:40]!r} is not a JSON value (this column's "
        'cells are JSON: numbers, true/false, null, "quoted text", [lists], {objects})' + hint
    )


def _read_json(path: Path) -> ObjectFile:
    document = _load_json(path)
    rows = document.get("rows")
    if not isinstance(rows, list):
        raise DataShapeError(f"{path}: 'rows' must be a list of [position, {{cells}}]")
    positions: list[int | None] = []
    places = []
    cells = []
    for number, entry in enumerate(rows):
        place = f"{path.name}, rows[{number}]"
        if not (isinstance(entry, list) and len(entry) == 2 and isinstance(entry[1], dict)):
            raise DataShapeError(f"{place}: expected [position or null, {{cells}}]")
        positions.append(_position(entry[0], place))
        places.append(place)
        cells.append(entry[1])
    _check_positions(positions, places)
    names = dict.fromkeys(k for row in cells for k in row)
    columns = {name: [row.get(name) for row in cells] for name in names}
    kind, envelope = document["kind"], document["envelope"]
    return ObjectFile(kind, document["id"], path, [path],
                      _frame(kind, envelope, columns, len(cells)), positions, envelope,
                      _digest([path]), document["rowsKey"],
                      _text_or_none(document.get("rowsDigest")))  # fmt: skip


def _read_xlsx(path: Path) -> ObjectFile:
    from mddframes.spreadsheet import read_excel

    frame = read_excel(path)
    if not isinstance(frame, pd.DataFrame):
        raise DataShapeError(f"{path}: holds {len(frame)} objects; an object file holds one")
    context = frame.attrs.get(ATTRS_KEY)
    if not isinstance(context, ReadContext):
        raise DataShapeError(f"{path}: the workbook keeps no payload of its object (pull it again)")
    pulled = context.load_document()
    key, envelope = _envelope(pulled, context.kind)
    count = len(payload_rows(pulled, context.kind))
    # read_excel labels new rows after the pulled rows: they are new rows here too
    positions = [int(p) if p < count else None for p in frame.index]
    frame = frame.reset_index(drop=True)
    frame.attrs.pop(ATTRS_KEY, None)
    return ObjectFile(context.kind, context.object_id, path, [path], frame, positions,
                      envelope, _digest([path]), key, digest(pulled[key]))  # fmt: skip


def read_object(path: Path) -> ObjectFile:
    """Read one object file (the format from its extension).

    Parameters
    ----------
    path : pathlib.Path
        The object file (``.csv``, ``.json`` or ``.xlsx``).

    Returns
    -------
    ObjectFile
        The file's object: its kind, id, envelope and rows.

    Raises
    ------
    DataShapeError
        The file (or its sidecar) does not parse; the message names the file, the
        line and the column.
    """
    fmt = split_name(path.name)[1]
    readers = {"csv": _read_csv, "json": _read_json, "xlsx": _read_xlsx}
    if fmt not in readers:
        raise DataShapeError(f"{path}: not an object file (.csv, .json or .xlsx)")
    return readers[fmt](path)
