"""EditModel: the edits of one table or mapping, headless, behind the editing grid.

The grid (:mod:`mddframes.widgets.edit_grid`) is a thin view: every keystroke it
commits arrives here as text for a cell named by the frame's index label and column
name, so sorting or paging in the grid never changes what is written. The model

- parses the text by the column's dtype, with the spreadsheet's rules
  (:func:`mddframes.spreadsheet.cells.decode`: one home for "text -> frame value"),
  and refuses a value the column cannot hold, naming the row, the column and why;
- keeps the frame as read (``original``) apart from the edited one (``frame``), the
  set of cells that differ (``changed``), and a history for :meth:`undo`;
- previews and writes through the writer itself (``write_table``/``write_mapping``,
  with ``dry_run=True`` for the preview): lock, conflict check, completeness check,
  backup, verification. There is no other write path.

Text of a cell (what the grid shows and takes back): strings as they are, numbers as
Python spells them (``repr`` of a float: exact), booleans ``true``/``false``, dates and
times in ISO 8601 (a zone where the column has one), JSON cells as JSON text. A missing
value shows as an empty cell; typing nothing into a missing text cell keeps it missing.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from typing import Any, NamedTuple

import pandas as pd

from mddframes.codec.kinds import KINDS, Kind
from mddframes.codec.values import is_missing_cell, json_text, strict_equal
from mddframes.errors import InvalidArgumentError
from mddframes.spreadsheet.cells import CellError, Encoding, decode, encoding_of
from mddframes.widgets.review import kind_of

#: The columns of :meth:`EditModel.changes`.
CHANGE_COLUMNS = ["row", "column", "before", "after"]

#: The id column of a long frame of many objects (``read_tables``/``read_mappings``), by kind.
LONG_ID_COLUMNS: dict[str, Kind] = {"table_id": "table", "mapping_id": "mapping"}


def long_kind(frame: pd.DataFrame) -> Kind | None:
    """The kind of the objects of a long frame (None: not a long frame).

    Parameters
    ----------
    frame : pandas.DataFrame

    Returns
    -------
    {"table", "mapping"} or None
    """
    row_column = frame.attrs.get("row_column")
    for name, kind in LONG_ID_COLUMNS.items():
        if name in frame.columns and row_column in frame.columns:
            return kind
    return None


class CellEdit(NamedTuple):
    """One cell's value before an edit step (what :meth:`EditModel.undo` puts back)."""

    row: Hashable
    column: str
    before: Any


def cell_text(value: Any, encoding: Encoding) -> str:
    """The text the grid shows for a frame value (``decode`` reads it back exactly).

    Parameters
    ----------
    value : object
        A cell of a frame column.
    encoding : str
        The column's encoding (:func:`mddframes.spreadsheet.cells.encoding_of`).

    Returns
    -------
    str
    """
    if is_missing_cell(value) and encoding != "json":
        return ""
    if encoding == "json":
        return "" if value is pd.NA else json_text(value)
    if encoding == "boolean":
        return "true" if bool(value) else "false"
    if encoding == "number":
        return repr(float(value))
    if encoding == "integer":
        return str(int(value))
    if encoding == "datetime":
        return pd.Timestamp(value).isoformat()
    return str(value)


def same_cell(a: Any, b: Any, *, json: bool = False) -> bool:
    """Whether two values of one column are the same content (missing equals missing).

    Parameters
    ----------
    a, b : object
        The two values.
    json : bool, default False
        The column holds JSON values, compared with their types (``1`` is not ``1.0``,
        ``true`` is not ``1``), as the writer sends them.

    Returns
    -------
    bool
    """
    a_missing, b_missing = is_missing_cell(a), is_missing_cell(b)
    if a_missing or b_missing:
        return a_missing and b_missing
    if json:
        return strict_equal(a, b)
    try:
        return bool(a == b)
    except (TypeError, ValueError):
        return False


class EditModel:
    """The edits of a table or mapping frame, checked as typed, written by the writer.

    Parameters
    ----------
    client : Client
        The client the frame was read through.
    object_id : str or None
        The table or mapping id; None for a long frame of many (``frame`` from
        ``read_tables``/``read_mappings``, written by ``write_tables``/``write_mappings``).
    frame : pandas.DataFrame, optional
        The frame as read (``read_table``/``read_mapping``); default: read now.
    kind : {"table", "mapping"}, optional
        Default: what the frame was read as (a table when it is read here).
    backup_dir : path, optional
        Passed to the writer.

    Attributes
    ----------
    original : pandas.DataFrame
        The frame as read (or as last written); never edited.
    frame : pandas.DataFrame
        The edited frame: what :meth:`preview` and :meth:`write` hand to the writer.
    encodings : dict
        Each editable column's encoding (a column whose dtype no encoding keeps
        exactly is shown but refuses edits).
    last_preview : WriteResult or None
        The last dry run, while no edit came after it.
    last_written : WriteResult or None
        The last write's result.

    Examples
    --------
    >>> model = EditModel(client, "tbl-0109")
    >>> model.set_cell(56, "name", "Deutschland")  # what the grid does for a keystroke
    True
    >>> model.preview().diff.summary
    "1 cell(s) changed in 1 row(s) (row 56 column 'name')"
    >>> model.write().verified
    True
    """

    def __init__(
        self,
        client: Any,
        object_id: str | None,
        frame: pd.DataFrame | None = None,
        *,
        kind: Kind | None = None,
        backup_dir: str | os.PathLike[str] | None = None,
    ) -> None:
        if kind is not None and kind not in KINDS:
            raise InvalidArgumentError(
                f"EditModel: kind must be 'table' or 'mapping', not {kind!r}"
            )
        self.client = client
        self.long = object_id is None
        self.object_id = "" if object_id is None else str(object_id)
        if self.long:
            kind = long_kind(frame) if isinstance(frame, pd.DataFrame) else None
            if kind is None:
                raise InvalidArgumentError(
                    "EditModel: without an object id, frame must be a long frame of "
                    "read_tables or read_mappings (a table_id or mapping_id column and "
                    "a row column)"
                )
        elif frame is None:
            kind = kind or "table"
            frame = self._read(kind)
        if not isinstance(frame, pd.DataFrame):
            raise InvalidArgumentError(
                f"EditModel: frame must be a pandas DataFrame, not {type(frame).__name__}"
            )
        if not frame.index.is_unique:
            raise InvalidArgumentError(
                "EditModel: the frame's index labels are not unique; they name the rows"
            )
        self.kind: Kind = kind or kind_of(client, self.object_id, frame)  # type: ignore[assignment]
        self.backup_dir = backup_dir
        self._start(frame)

    @property
    def what(self) -> str:
        """The object (or objects) edited, in words: ``table 'tbl-0109'``."""
        if self.long:
            return f"the long frame of {self.original[f'{self.kind}_id'].nunique()} {self.kind}s"
        return f"{self.kind} {self.object_id!r}"

    def _read(self, kind: Kind) -> pd.DataFrame:
        frame: pd.DataFrame
        if self.long:
            ids = list(dict.fromkeys(self.original[f"{kind}_id"].tolist()))
            reader = self.client.read_tables if kind == "table" else self.client.read_mappings
            frame = reader(ids, progress=False)
            return frame
        reader = self.client.read_table if kind == "table" else self.client.read_mapping
        frame = reader(self.object_id)
        return frame

    def _start(self, frame: pd.DataFrame) -> None:
        self.original = frame
        # a copy, not a view: edits land in it alone (cells are replaced, never mutated)
        self.frame = frame.copy()
        self.encodings: dict[str, Encoding | None] = {
            str(name): encoding_of(dtype) for name, dtype in frame.dtypes.items()
        }
        self._changed: dict[tuple[Hashable, str], None] = {}
        self._history: list[list[CellEdit]] = []
        self.last_preview: Any = None
        self.last_written: Any = None
        self.version = 0  # counts every change of the edit state (a preview names one)
        self._previewed_version = -1

    # -- reading the state --

    @property
    def changed(self) -> list[tuple[Hashable, str]]:
        """The (row label, column) of every cell that differs from the original, in
        the order they were first edited."""
        return list(self._changed)

    @property
    def dirty(self) -> bool:
        """True while some cell differs from the frame as read (unsaved edits)."""
        return bool(self._changed)

    @property
    def can_undo(self) -> bool:
        """True when there is an edit step to undo."""
        return bool(self._history)

    @property
    def previewed(self) -> bool:
        """True when :meth:`preview` passed for the edits as they are now."""
        return self.last_preview is not None and self._previewed_version == self.version

    def is_changed(self, row: Hashable, column: str) -> bool:
        """Whether the cell differs from the original.

        Parameters
        ----------
        row : hashable
            The row's index label.
        column : str
            The column's name.

        Returns
        -------
        bool
        """
        return (row, column) in self._changed

    def value(self, row: Hashable, column: str) -> Any:
        """The cell's current value.

        Parameters
        ----------
        row : hashable
            The row's index label.
        column : str
            The column's name.

        Returns
        -------
        object
        """
        self._locate(row, column)
        return self.frame.at[row, column]

    def text(self, row: Hashable, column: str) -> str:
        """The cell's current value as the grid shows it.

        Parameters
        ----------
        row : hashable
            The row's index label.
        column : str
            The column's name.

        Returns
        -------
        str
        """
        encoding = self.encodings.get(column)
        value = self.value(row, column)
        return cell_text(value, encoding) if encoding else str(value)

    def texts(self, rows: pd.Index) -> pd.DataFrame:
        """The rows labelled ``rows`` as text, one column per frame column (a page).

        Parameters
        ----------
        rows : pandas.Index
            Index labels of the frame.

        Returns
        -------
        pandas.DataFrame
        """
        part = self.frame.loc[rows]
        out = {}
        for name in part.columns:
            encoding = self.encodings.get(str(name))
            values = part[name].tolist()
            out[str(name)] = [cell_text(v, encoding) if encoding else str(v) for v in values]
        return pd.DataFrame(out, index=part.index, columns=[str(c) for c in part.columns])

    def changes(self) -> pd.DataFrame:
        """The running diff of the edits: one line per changed cell.

        Returns
        -------
        pandas.DataFrame
            Columns ``row``, ``column``, ``before``, ``after`` (values of the frame).
        """
        lines = [
            (row, column, self.original.at[row, column], self.frame.at[row, column])
            for row, column in self._changed
        ]
        return pd.DataFrame(lines, columns=CHANGE_COLUMNS, dtype=object)

    # -- editing --

    def _locate(self, row: Hashable, column: str) -> None:
        if column not in self.encodings:
            raise InvalidArgumentError(f"{self.what} has no column {column!r}")
        if row not in self.frame.index:
            raise InvalidArgumentError(f"{self.what} has no row {row!r}")

    def parse(self, row: Hashable, column: str, value: Any) -> Any:
        """The frame value ``value`` (grid text, or a Python value) stands for in the cell.

        Parameters
        ----------
        row : hashable
            The row's index label.
        column : str
            The column's name.
        value : object
            Text as typed in the grid, a Python value, or None for a missing value.

        Returns
        -------
        object
            The value (None for missing).

        Raises
        ------
        InvalidArgumentError
            The column cannot hold it (the message names row, column and why).
        """
        self._locate(row, column)
        encoding = self.encodings[column]
        where = f"{self.what}, row {row!r}, column {column!r}"
        self._refuse_in_long_frame(row, column, where)
        if encoding is None:
            raise InvalidArgumentError(
                f"{where}: the column's dtype {self.frame[column].dtype} cannot be edited "
                "in the grid (no exact text for it); edit it in the frame"
            )
        if value is None or value is pd.NA:
            return None
        if encoding == "text" and value == "" and is_missing_cell(self.frame.at[row, column]):
            return None  # the editor opened and closed on a missing cell: still missing
        try:
            return decode(encoding, value, self.frame[column].dtype)
        except CellError as exc:
            raise InvalidArgumentError(f"{where} refused: the cell {exc}") from None

    def set_cell(self, row: Hashable, column: str, value: Any) -> bool:
        """Set one cell from grid text or a Python value.

        Parameters
        ----------
        row : hashable
            The row's index label.
        column : str
            The column's name.
        value : object
            Text as typed in the grid, a Python value, or None for a missing value.

        Returns
        -------
        bool
            True when the cell changed.

        Raises
        ------
        InvalidArgumentError
            The column cannot hold the value; nothing changed.
        """
        parsed = self.parse(row, column, value)
        current = self.frame.at[row, column]
        if same_cell(current, parsed, json=self.encodings[column] == "json"):
            return False
        self._history.append([CellEdit(row, column, current)])
        self._put(row, column, parsed)
        return True

    def _put(self, row: Hashable, column: str, value: Any) -> None:
        # iat takes None as the column's missing value (NA, NaT, or JSON null in object
        # columns) and sets a list as one cell (loc/at would spread it over cells)
        position = (self.frame.index.get_loc(row), self.frame.columns.get_loc(column))
        self.frame.iat[position] = value  # type: ignore[index]  # unique labels: ints
        key = (row, column)
        json = self.encodings[column] == "json"
        if same_cell(self.original.at[row, column], self.frame.at[row, column], json=json):
            self._changed.pop(key, None)
        else:
            self._changed.setdefault(key, None)
        self.version += 1

    def undo(self) -> list[CellEdit]:
        """Undo the last edit step (a cell, a revert of a cell, or Revert all).

        Returns
        -------
        list of CellEdit
            The cells the step touched (empty when there was nothing to undo).
        """
        if not self._history:
            return []
        step = self._history.pop()
        for edit in step:  # a step touches each cell once: its order is the cells' order
            self._put(edit.row, edit.column, edit.before)
        return step

    def revert_cell(self, row: Hashable, column: str) -> bool:
        """Put the cell back as read (an undoable step).

        Parameters
        ----------
        row : hashable
            The row's index label.
        column : str
            The column's name.

        Returns
        -------
        bool
            True when the cell had changed.
        """
        self._locate(row, column)
        if (row, column) not in self._changed:
            return False
        self._history.append([CellEdit(row, column, self.frame.at[row, column])])
        self._put(row, column, self.original.at[row, column])
        return True

    def revert_all(self) -> list[tuple[Hashable, str]]:
        """Put every changed cell back as read (one undoable step).

        Returns
        -------
        list of tuple
            The (row label, column) of the cells put back.
        """
        cells = self.changed
        if cells:
            self._history.append([CellEdit(r, c, self.frame.at[r, c]) for r, c in cells])
            for row, column in cells:
                self._put(row, column, self.original.at[row, column])
        return cells

    # -- the writer --

    def _writer(self) -> Any:
        if self.long:
            many = self.client.write_tables if self.kind == "table" else self.client.write_mappings
            return lambda _, frame, **options: many(frame, progress=False, **options)
        return self.client.write_table if self.kind == "table" else self.client.write_mapping

    def _refuse_in_long_frame(self, row: Hashable, column: str, where: str) -> None:
        """In a long frame, a row's identity and the columns its object lacks are not
        editable (an edit there would move the row or add a column to that object)."""
        if not self.long:
            return
        id_column, row_column = f"{self.kind}_id", self.original.attrs.get("row_column")
        if column in (id_column, row_column):
            raise InvalidArgumentError(
                f"{where} refused: {column!r} says which {self.kind} and row this is; "
                "it cannot be edited"
            )
        object_id = self.original.at[row, id_column]
        declared = self.original.attrs.get("columns", {}).get(object_id)
        if declared is not None and column not in declared:
            raise InvalidArgumentError(
                f"{where} refused: {self.kind} {object_id!r} has no column {column!r}"
            )

    def preview(self) -> Any:
        """The write's own dry run of the edits: its diff and completeness check.

        Returns
        -------
        WriteResult or pandas.DataFrame
            ``status`` ``"dry-run"`` (or ``"unchanged"``), ``diff`` and ``report``; for a
            long frame, the frame of ``write_tables``/``write_mappings`` (one row per
            object; ``attrs["results"]`` holds each object's WriteResult).

        Raises
        ------
        IncompletePayloadError
            The check found errors (``report`` names them); nothing would be sent.
        ConcurrentModificationError
            The object changed on the service since it was read.
        """
        self.last_preview = None
        version = self.version
        result = self._writer()(
            self.object_id, self.frame, dry_run=True, backup_dir=self.backup_dir
        )
        self.last_preview, self._previewed_version = result, version
        return result

    def write(self) -> Any:
        """Write the edits through the writer (lock, conflict check, completeness check,
        backup, verification); afterwards the written frame is the new original.

        Returns
        -------
        WriteResult or pandas.DataFrame
            For a long frame, the frame of ``write_tables``/``write_mappings``.

        Raises
        ------
        InvalidArgumentError
            There is no edit to write.
        ConcurrentModificationError
            The object changed on the service since it was read; the edits stay.
        IncompletePayloadError
            The completeness check found errors; nothing was sent, the edits stay.
        """
        if not self.dirty:
            raise InvalidArgumentError(
                f"{self.what}: no cell differs from the frame as read; nothing to write"
            )
        result = self._writer()(self.object_id, self.frame, backup_dir=self.backup_dir)
        written = self.frame
        self._start(written)  # the writer recorded its read-back as this frame's context
        self.last_written = result
        return result

    def reload(self, *, discard: bool = False) -> pd.DataFrame:
        """Read the object again and start afresh from it.

        Parameters
        ----------
        discard : bool, default False
            Drop unsaved edits. Without it, a reload with unsaved edits is refused.

        Returns
        -------
        pandas.DataFrame
            The frame read.

        Raises
        ------
        InvalidArgumentError
            There are unsaved edits and ``discard`` is False; nothing changed.
        """
        if self.dirty and not discard:
            raise InvalidArgumentError(
                f"{self.what}: {len(self._changed)} unsaved edited "
                "cell(s) would be lost; write them, revert them, or reload with discard=True"
            )
        frame = self._read(self.kind)
        self._start(frame)
        return frame
