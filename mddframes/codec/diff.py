"""What differs between two payloads of the same table or mapping.

:func:`diff_payloads` lists the changed cells (row, column, old, new), the added rows,
the deleted rows and the changes outside the rows (the envelope). A :class:`Diff`
renders as HTML in notebooks with the changes highlighted.
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from mddframes.codec.align import align_rows, primary_key_columns
from mddframes.codec.frame import INDEX_NAME, declared_columns, payload_rows, rows_key
from mddframes.codec.kinds import Kind
from mddframes.codec.values import ABSENT, JsonObject, strict_equal

_HTML_LIMIT = 100
_CHANGED_COLUMNS = ["row", "column", "old", "new"]
_ENVELOPE_COLUMNS = ["key", "old", "new"]


#: A changed cell: (row label, column, old value, new value).
CellChange = tuple[Any, str, Any, Any]
#: An added or deleted row: (its label, the row).
RowLine = tuple[Any, dict[str, Any]]


@dataclass(frozen=True)
class Diff:
    """The differences between an old and a new payload.

    Built from lines; each frame is made the first time it is asked for (a write whose
    diff nobody looks at never pays for four DataFrames).

    Attributes
    ----------
    changed_cells : list of tuple
        One ``(row label, column, old, new)`` per changed cell of a kept row.
    added_rows : list of tuple
        One ``(label, row)`` per added row.
    deleted_rows : list of tuple
        One ``(old position, row)`` per deleted row.
    envelope_changes : list of tuple
        One ``(key, old, new)`` per change outside the rows.
    changed : pandas.DataFrame
        ``changed_cells`` as a frame: ``row`` (the row's label: its position in the old
        payload), ``column``, ``old``, ``new``; a key that one side does not have shows
        as ``<absent>``.
    added : pandas.DataFrame
        The added rows, one column per key, indexed by their label.
    deleted : pandas.DataFrame
        The deleted rows, one column per key, indexed by their old position.
    envelope : pandas.DataFrame
        Changes outside the rows: ``key``, ``old``, ``new``.
    """

    changed_cells: list[CellChange] = field(default_factory=list)
    added_rows: list[RowLine] = field(default_factory=list)
    deleted_rows: list[RowLine] = field(default_factory=list)
    envelope_changes: list[tuple[str, Any, Any]] = field(default_factory=list)

    @functools.cached_property
    def changed(self) -> pd.DataFrame:
        """The changed cells: ``row``, ``column``, ``old``, ``new``."""
        return _lines_frame(self.changed_cells, _CHANGED_COLUMNS)

    @functools.cached_property
    def added(self) -> pd.DataFrame:
        """The added rows, one column per key, indexed by their label."""
        return _rows_frame(self.added_rows)

    @functools.cached_property
    def deleted(self) -> pd.DataFrame:
        """The deleted rows, one column per key, indexed by their old position."""
        return _rows_frame(self.deleted_rows)

    @functools.cached_property
    def envelope(self) -> pd.DataFrame:
        """Changes outside the rows: ``key``, ``old``, ``new``."""
        return _lines_frame(self.envelope_changes, _ENVELOPE_COLUMNS)

    @property
    def empty(self) -> bool:
        """True when the two payloads hold the same thing."""
        return not (self.changed_cells or self.added_rows or self.deleted_rows
                    or self.envelope_changes)  # fmt: skip

    @property
    def summary(self) -> str:
        """The differences in one line, e.g. ``"2 cell(s) changed in 1 row(s), 1 row(s) added"``."""
        if self.empty:
            return "no changes"
        parts = []
        cells = self.changed_cells
        if cells:
            rows = len({label for label, _, _, _ in cells})
            named = ", ".join(f"row {r!r} column {c!r}" for r, c, _, _ in cells[:3])
            more = " ..." if len(cells) > 3 else ""
            parts.append(f"{len(cells)} cell(s) changed in {rows} row(s) ({named}{more})")
        if self.added_rows:
            parts.append(f"{len(self.added_rows)} row(s) added")
        if self.deleted_rows:
            listed = ", ".join(repr(label) for label, _ in self.deleted_rows[:5])
            parts.append(f"{len(self.deleted_rows)} row(s) deleted ({listed})")
        if self.envelope_changes:
            keys = ", ".join(repr(key) for key, _, _ in self.envelope_changes)
            parts.append(f"changed outside the rows: {keys}")
        return "; ".join(parts)

    def to_frame(self) -> pd.DataFrame:
        """Every difference in one long frame: ``change``, ``row``, ``column``, ``old``, ``new``.

        ``change`` is "changed", "added", "deleted" or "envelope"; added and deleted
        rows take one line each with the whole row in ``new`` / ``old``.

        Returns
        -------
        pandas.DataFrame
            One row per difference.
        """
        lines: list[tuple[Any, ...]] = [("changed", *cell) for cell in self.changed_cells]
        lines += [("added", label, None, None, dict(row)) for label, row in self.added_rows]
        lines += [("deleted", label, None, dict(row), None) for label, row in self.deleted_rows]
        lines += [("envelope", None, key, old, new) for key, old, new in self.envelope_changes]
        frame = pd.DataFrame(lines, columns=["change", *_CHANGED_COLUMNS], dtype=object)
        frame["change"] = frame["change"].astype("string")
        return frame

    def __repr__(self) -> str:
        return f"<Diff: {self.summary}>"

    def _repr_html_(self) -> str:
        parts = [f"<p><b>Diff:</b> {html.escape(self.summary)}</p>"]
        if self.empty:
            return "".join(parts)
        labels: list[Any] = list(dict.fromkeys(label for label, _, _, _ in self.changed_cells))
        columns: list[Any] = list(dict.fromkeys(column for _, column, _, _ in self.changed_cells))
        for _, row in [*self.added_rows, *self.deleted_rows]:
            columns.extend(c for c in row if c not in columns)
        cells = {(r, c): (o, n) for r, c, o, n in self.changed_cells}
        body = []
        for label in labels[:_HTML_LIMIT]:
            tds = []
            for column in columns:
                if (label, column) in cells:
                    old, new = cells[(label, column)]
                    tds.append(
                        '<td style="background:#ffec99"><s>'
                        f"{html.escape(_text(old))}</s> &rarr; <b>{html.escape(_text(new))}</b></td>"
                    )
                else:
                    tds.append("<td></td>")
            body.append(f"<tr><th>{html.escape(str(label))}</th>{''.join(tds)}</tr>")
        for lines, colour, mark in ((self.added_rows, "#d3f9d8", "+"),
                                    (self.deleted_rows, "#ffc9c9", "-")):  # fmt: skip
            for label, row in lines[:_HTML_LIMIT]:
                row_html = "".join(
                    f"<td>{html.escape(_text(row.get(c, ABSENT)))}</td>" for c in columns
                )
                body.append(
                    f'<tr style="background:{colour}"><th>{mark} {html.escape(str(label))}</th>'
                    f"{row_html}</tr>"
                )
        header = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
        parts.append(f"<table><tr><th>{INDEX_NAME}</th>{header}</tr>{''.join(body)}</table>")
        hidden = max(0, len(labels) - _HTML_LIMIT)
        hidden += max(0, len(self.added_rows) - _HTML_LIMIT)
        hidden += max(0, len(self.deleted_rows) - _HTML_LIMIT)
        if hidden:
            parts.append(f"<p>... and {hidden} more row(s) not shown</p>")
        if self.envelope_changes:
            items = "".join(
                f"<li>{html.escape(str(k))}: {html.escape(_text(o))} &rarr; "
                f"{html.escape(_text(n))}</li>"
                for k, o, n in self.envelope_changes
            )
            parts.append(f"<p>Outside the rows:</p><ul>{items}</ul>")
        return "".join(parts)


def _text(value: Any, limit: int = 60) -> str:
    if value is ABSENT:
        return "<absent>"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _rows_frame(lines: list[RowLine]) -> pd.DataFrame:
    """Rows as a frame, one column per key (``<absent>`` where a row has none)."""
    if not lines:
        return _EMPTY_ROWS.copy()  # (most diffs add and delete nothing: a copy costs less)
    return _build_rows_frame(lines)


def _build_rows_frame(lines: list[RowLine]) -> pd.DataFrame:
    rows = [row for _, row in lines]
    columns = list(dict.fromkeys(k for row in rows for k in row))
    data = {c: pd.Series([row.get(c, ABSENT) for row in rows], dtype=object) for c in columns}
    frame = pd.DataFrame(data, columns=columns)
    frame.index = pd.Index([label for label, _ in lines], name=INDEX_NAME, dtype=object)
    return frame


def _lines_frame(lines: list[tuple[Any, ...]], columns: list[str]) -> pd.DataFrame:
    if not lines:
        return _EMPTY_LINES[tuple(columns)].copy()
    return pd.DataFrame(lines, columns=columns, dtype=object)


_EMPTY_ROWS = _build_rows_frame([])
_EMPTY_LINES = {
    tuple(names): pd.DataFrame([], columns=names, dtype=object)
    for names in (_CHANGED_COLUMNS, _ENVELOPE_COLUMNS)
}


def diff_payloads(
    old: JsonObject,
    new: JsonObject,
    *,
    kind: Kind = "table",
    origin: Sequence[int | None] | None = None,
    labels: Sequence[Hashable] | None = None,
) -> Diff:
    """The differences between two payloads of one table or mapping.

    Parameters
    ----------
    old, new : dict
        The two payloads (e.g. what the service holds and what would be sent).
    kind : {"table", "mapping"}
        Which kind of payload they are.
    origin : sequence of int or None, optional
        For each row of ``new``, its position in ``old`` (None for added rows), as
        :func:`mddframes.codec.overlay` returns it. Without it, rows are matched by
        primary key, else by content.
    labels : sequence, optional
        The label of each row of ``new`` (its frame index label); default: its
        position in ``old`` when matched, else ``"new[i]"``.

    Returns
    -------
    Diff
        Cells are compared with their Python types (``1`` vs ``1.0`` is a change);
        object key order does not count.
    """
    old_rows, new_rows = payload_rows(old, kind), payload_rows(new, kind)
    old_key, new_key = rows_key(old, kind), rows_key(new, kind)
    if origin is None:
        columns = declared_columns(new, kind) or declared_columns(old, kind)
        origin = align_rows(old_rows, new_rows, primary_key=primary_key_columns(columns))

    changed: list[CellChange] = []
    added: list[RowLine] = []
    matched = set()
    for i, (row, position) in enumerate(zip(new_rows, origin, strict=True)):
        label = (
            labels[i] if labels is not None else (position if position is not None else f"new[{i}]")
        )
        if position is None:
            added.append((label, row))
            continue
        matched.add(position)
        before = old_rows[position]
        if row is before:
            continue
        for name in dict.fromkeys([*before, *row]):
            a, b = before.get(name, ABSENT), row.get(name, ABSENT)
            if not strict_equal(a, b):
                changed.append((label, name, a, b))
    deleted = [(p, old_rows[p]) for p in range(len(old_rows)) if p not in matched]

    envelope = []
    for key in dict.fromkeys([*old, *new]):
        if key in (old_key, new_key):
            continue
        a, b = old.get(key, ABSENT), new.get(key, ABSENT)
        if not strict_equal(a, b):
            envelope.append((key, a, b))
    return Diff(changed, added, deleted, envelope)


def concat_changes(diffs: Sequence[Diff]) -> Diff:
    """One :class:`Diff` of the changed cells of several diffs of batches of one table's
    rows (a streamed write's): their ``changed`` lines in order, nothing added,
    deleted or changed outside the rows."""
    return Diff([cell for diff in diffs for cell in diff.changed_cells])
