"""What differs between two payloads of the same table or mapping.

:func:`diff_payloads` lists the changed cells (row, column, old, new), the added rows,
the deleted rows and the changes outside the rows (the envelope). A :class:`Diff`
renders as HTML in notebooks with the changes highlighted.
"""

from __future__ import annotations

import html
import json
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from mddframes.codec.align import align_rows, primary_key_columns
from mddframes.codec.frame import INDEX_NAME, declared_columns, payload_rows, rows_key
from mddframes.codec.kinds import Kind
from mddframes.codec.values import ABSENT, JsonObject, strict_equal

_HTML_LIMIT = 100
_CHANGED_COLUMNS = ["row", "column", "old", "new"]


@dataclass(frozen=True)
class Diff:
    """The differences between an old and a new payload.

    Attributes
    ----------
    changed : pandas.DataFrame
        One line per changed cell of a kept row: ``row`` (the row's label: its
        position in the old payload), ``column``, ``old``, ``new``; a key that one
        side does not have shows as ``<absent>``.
    added : pandas.DataFrame
        The added rows, one column per key, indexed by their label.
    deleted : pandas.DataFrame
        The deleted rows, one column per key, indexed by their old position.
    envelope : pandas.DataFrame
        Changes outside the rows: ``key``, ``old``, ``new``.
    """

    changed: pd.DataFrame
    added: pd.DataFrame
    deleted: pd.DataFrame
    envelope: pd.DataFrame

    @property
    def empty(self) -> bool:
        """True when the two payloads hold the same thing."""
        return not (len(self.changed) or len(self.added) or len(self.deleted) or len(self.envelope))

    def summary(self) -> str:
        """The differences in one line, e.g. ``"2 cell(s) changed in 1 row(s), 1 row(s) added"``.

        Returns
        -------
        str
            The line.
        """
        if self.empty:
            return "no changes"
        parts = []
        if len(self.changed):
            rows = self.changed["row"].nunique()
            cells = ", ".join(
                f"row {r!r} column {c!r}"
                for r, c in self.changed[["row", "column"]].head(3).itertuples(index=False)
            )
            more = " ..." if len(self.changed) > 3 else ""
            parts.append(f"{len(self.changed)} cell(s) changed in {rows} row(s) ({cells}{more})")
        if len(self.added):
            parts.append(f"{len(self.added)} row(s) added")
        if len(self.deleted):
            listed = ", ".join(map(repr, self.deleted.index[:5].tolist()))
            parts.append(f"{len(self.deleted)} row(s) deleted ({listed})")
        if len(self.envelope):
            keys = ", ".join(map(repr, self.envelope["key"].tolist()))
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
        # keyed by column label, which pandas-stubs types Hashable (to_dict's records)
        lines: list[dict[Hashable, Any]] = []
        for record in self.changed.to_dict("records"):
            lines.append({"change": "changed", **record})
        for label, row in _row_dicts(self.added):
            lines.append({"change": "added", "row": label, "column": None, "old": None, "new": row})
        for label, row in _row_dicts(self.deleted):
            lines.append(
                {"change": "deleted", "row": label, "column": None, "old": row, "new": None}
            )
        for record in self.envelope.to_dict("records"):
            lines.append(
                {"change": "envelope", "row": None, "column": record["key"],
                 "old": record["old"], "new": record["new"]}
            )  # fmt: skip
        frame = pd.DataFrame(lines, columns=["change", *_CHANGED_COLUMNS], dtype=object)
        frame["change"] = frame["change"].astype("string")
        return frame

    def __repr__(self) -> str:
        return f"<Diff: {self.summary()}>"

    def _repr_html_(self) -> str:
        parts = [f"<p><b>Diff:</b> {html.escape(self.summary())}</p>"]
        if self.empty:
            return "".join(parts)
        labels: list[Any] = list(dict.fromkeys(self.changed["row"].tolist()))
        columns: list[Any] = list(dict.fromkeys(self.changed["column"].tolist()))
        for frame in (self.added, self.deleted):
            columns.extend(c for c in frame.columns if c not in columns)
        cells = {(r, c): (o, n) for r, c, o, n in self.changed.itertuples(index=False)}
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
        for frame, colour, mark in ((self.added, "#d3f9d8", "+"), (self.deleted, "#ffc9c9", "-")):
            for label, row in _row_dicts(frame.head(_HTML_LIMIT)):
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
        hidden += max(0, len(self.added) - _HTML_LIMIT) + max(0, len(self.deleted) - _HTML_LIMIT)
        if hidden:
            parts.append(f"<p>... and {hidden} more row(s) not shown</p>")
        if len(self.envelope):
            items = "".join(
                f"<li>{html.escape(str(k))}: {html.escape(_text(o))} &rarr; "
                f"{html.escape(_text(n))}</li>"
                for k, o, n in self.envelope.itertuples(index=False)
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


def _row_dicts(frame: pd.DataFrame) -> list[tuple[Any, dict[Hashable, Any]]]:
    # the added/deleted frames keep ABSENT for keys a row does not have
    return [
        (label, {k: v for k, v in row.items() if v is not ABSENT})
        for label, row in zip(frame.index, frame.to_dict("records"), strict=True)
    ]


def _rows_frame(rows: list[dict[str, Any]], labels: list[Any]) -> pd.DataFrame:
    columns = list(dict.fromkeys(k for row in rows for k in row))
    data = {c: pd.Series([row.get(c, ABSENT) for row in rows], dtype=object) for c in columns}
    frame = pd.DataFrame(data, columns=columns)
    frame.index = pd.Index(labels, name=INDEX_NAME, dtype=object)
    return frame


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

    changed: list[tuple[Any, str, Any, Any]] = []
    added_rows, added_labels = [], []
    matched = set()
    for i, (row, position) in enumerate(zip(new_rows, origin, strict=True)):
        label = (
            labels[i] if labels is not None else (position if position is not None else f"new[{i}]")
        )
        if position is None:
            added_rows.append(row)
            added_labels.append(label)
            continue
        matched.add(position)
        before = old_rows[position]
        if row is before:
            continue
        for name in dict.fromkeys([*before, *row]):
            a, b = before.get(name, ABSENT), row.get(name, ABSENT)
            if not strict_equal(a, b):
                changed.append((label, name, a, b))
    deleted_positions = [p for p in range(len(old_rows)) if p not in matched]

    envelope = []
    for key in dict.fromkeys([*old, *new]):
        if key in (old_key, new_key):
            continue
        a, b = old.get(key, ABSENT), new.get(key, ABSENT)
        if not strict_equal(a, b):
            envelope.append((key, a, b))

    changed_frame = pd.DataFrame(changed, columns=_CHANGED_COLUMNS, dtype=object)
    return Diff(
        changed=changed_frame,
        added=_rows_frame(added_rows, added_labels),
        deleted=_rows_frame([old_rows[p] for p in deleted_positions], deleted_positions),
        envelope=pd.DataFrame(envelope, columns=["key", "old", "new"], dtype=object),
    )


def concat_changes(diffs: Sequence[Diff]) -> Diff:
    """One :class:`Diff` of the changed cells of several diffs of batches of one table's
    rows (a streamed write's): their ``changed`` lines in order, nothing added,
    deleted or changed outside the rows."""
    frames = [d.changed for d in diffs if len(d.changed)]
    changed = (
        pd.concat(frames, ignore_index=True)
        if frames
        else pd.DataFrame([], columns=_CHANGED_COLUMNS, dtype=object)
    )
    return Diff(
        changed=changed,
        added=_rows_frame([], []),
        deleted=_rows_frame([], []),
        envelope=pd.DataFrame([], columns=["key", "old", "new"], dtype=object),
    )
