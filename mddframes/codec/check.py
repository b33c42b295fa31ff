"""The completeness check: would sending this payload lose or corrupt anything?

:func:`check_payload` compares a full-replacement payload with what the service holds
now and returns a :class:`CheckReport`, one line per problem, each naming the object,
the row and the column. The writer refuses to send a payload whose report has errors.

Errors
    an envelope key missing; a declared column missing; a column dropped; a cell
    removed (its key gone from a kept row); rows deleted without ``allow_deletes``;
    duplicate primary keys; type drift (a string id turned number, an int turned
    float, a boolean turned number, a nested value turned scalar, any other change of
    JSON type except float -> integer); NaN or infinity anywhere.
Warnings
    columns not declared in the metadata; nulls in non-nullable columns.

Problems the current payload already had are not blamed on the new one: duplicate
keys and nulls are reported only where a row was edited or added.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import Any

import pandas as pd

from mddframes.codec.align import align_rows, key_of, primary_key_columns
from mddframes.codec.frame import ROWS_KEYS, Kind, declared_columns
from mddframes.codec.values import ABSENT, has_non_finite, json_class

#: The columns of every report frame, in this order.
REPORT_COLUMNS = ("level", "table", "row", "column", "problem", "old", "new")

# Problem names (the ``problem`` column starts with one of these).
ENVELOPE_KEY_MISSING = "envelope key missing"
DECLARED_COLUMN_MISSING = "declared column missing"
COLUMN_DROPPED = "column dropped"
CELL_REMOVED = "cell removed"
ROW_DELETED = "row deleted"
DUPLICATE_PRIMARY_KEY = "duplicate primary key"
TYPE_DRIFT = "type drift"
NOT_FINITE = "NaN or infinity"
ROW_NOT_OBJECT = "row is not an object"
NOT_JSON = "not a JSON value"
UNDECLARED_COLUMN = "column not declared in the metadata"
NULL_IN_NON_NULLABLE = "null in non-nullable column"

_HTML_LIMIT = 200


@dataclass(frozen=True)
class CheckReport:
    """The problems of a payload, one per line.

    Attributes
    ----------
    frame : pandas.DataFrame
        Columns ``level`` ("error" or "warning"), ``table`` (object id), ``row`` (the
        row's frame index label: its original position, or the label of a new row),
        ``column``, ``problem``, ``old``, ``new``. Errors come first.
    """

    frame: pd.DataFrame

    @classmethod
    def from_records(cls, records: Iterable[dict[str, Any]]) -> CheckReport:
        """A report from problem records (dicts with the keys of ``REPORT_COLUMNS``)."""
        records = sorted(records, key=lambda r: r["level"] != "error")  # stable: errors first
        frame = pd.DataFrame(
            [[r[c] for c in REPORT_COLUMNS] for r in records],
            columns=list(REPORT_COLUMNS),
            dtype=object,
        )
        frame["level"] = frame["level"].astype("string")
        frame["problem"] = frame["problem"].astype("string")
        return cls(frame)

    @classmethod
    def concat(cls, reports: Iterable[CheckReport]) -> CheckReport:
        """One report of several objects' reports (errors still first)."""
        records = chain.from_iterable(r.frame.to_dict("records") for r in reports)
        return cls.from_records(records)

    @property
    def errors(self) -> pd.DataFrame:
        """The error lines."""
        return self.frame[self.frame["level"] == "error"]

    @property
    def warnings(self) -> pd.DataFrame:
        """The warning lines."""
        return self.frame[self.frame["level"] == "warning"]

    @property
    def ok(self) -> bool:
        """True when the report has no errors (warnings allowed)."""
        return not bool((self.frame["level"] == "error").any())

    def __len__(self) -> int:
        return len(self.frame)

    def summary(self, limit: int = 5) -> str:
        """One paragraph: counts, then the first ``limit`` errors in words."""
        errors, warnings = self.errors, self.warnings
        text = f"{len(errors)} error(s), {len(warnings)} warning(s)"
        lines = [_describe_line(r) for r in errors.head(limit).to_dict("records")]
        if lines:
            text += ": " + "; ".join(lines)
            if len(errors) > limit:
                text += f"; and {len(errors) - limit} more"
        return text

    def __repr__(self) -> str:
        return f"<CheckReport {'ok' if self.ok else 'NOT ok'}: {self.summary()}>"

    def _repr_html_(self) -> str:
        status = "ok" if self.ok else "errors: nothing may be sent"
        head = (
            f"<p><b>Completeness check: {html.escape(status)}</b> "
            f"({len(self.errors)} error(s), {len(self.warnings)} warning(s))</p>"
        )
        if not len(self.frame):
            return head
        rows = []
        for record in self.frame.head(_HTML_LIMIT).to_dict("records"):
            colour = "#fdd" if record["level"] == "error" else "#ffd"
            cells = "".join(f"<td>{html.escape(_short(record[c]))}</td>" for c in REPORT_COLUMNS)
            rows.append(f'<tr style="background:{colour}">{cells}</tr>')
        header = "".join(f"<th>{c}</th>" for c in REPORT_COLUMNS)
        more = len(self.frame) - _HTML_LIMIT
        tail = f"<p>... and {more} more line(s)</p>" if more > 0 else ""
        return f"{head}<table><tr>{header}</tr>{''.join(rows)}</table>{tail}"


def _short(value: Any, limit: int = 80) -> str:
    if value is None or value is pd.NA:
        return ""
    if isinstance(value, dict | list):
        text = json.dumps(value, ensure_ascii=False, default=str)
    else:
        text = repr(value) if isinstance(value, str) or value is ABSENT else str(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _describe_line(record: dict[str, Any]) -> str:
    where = [f"{record['problem']}"]
    if record["table"] is not None:
        where.append(f"table {record['table']!r}")
    if record["row"] is not None:
        where.append(f"row {record['row']!r}")
    if record["column"] is not None:
        where.append(f"column {record['column']!r}")
    text = " at ".join([where[0], ", ".join(where[1:])]) if len(where) > 1 else where[0]
    if record["old"] is not None or record["new"] is not None:
        text += f" (old {_short(record['old'], 40)}, new {_short(record['new'], 40)})"
    return text


def _drift(old: Any, new: Any) -> str | None:
    """The drift between two non-null values, e.g. ``"string turned integer"``."""
    old_class, new_class = json_class(old), json_class(new)
    if old_class == new_class or old_class == "null" or new_class == "null":
        return None
    if old_class == "float" and new_class == "integer":
        return None  # a whole number written without its fraction loses nothing
    return f"{old_class} turned {new_class}"


def _rows_of(payload: Any, kind: Kind) -> tuple[str | None, list[Any] | None]:
    if not isinstance(payload, dict):
        return None, None
    for key in ROWS_KEYS[kind]:
        if key in payload and isinstance(payload[key], list):
            return key, payload[key]
    return None, None


def check_payload(
    new: dict[str, Any],
    current: dict[str, Any],
    *,
    allow_deletes: bool = False,
    kind: Kind = "table",
    object_id: Any = None,
    origin: Sequence[int | None] | None = None,
    labels: Sequence[Any] | None = None,
) -> CheckReport:
    """Check a full-replacement payload against what the service holds now.

    Parameters
    ----------
    new : dict
        The payload about to be sent.
    current : dict
        What the service holds now (the payload it would replace).
    allow_deletes : bool, default False
        Allow rows (and undeclared columns) to disappear.
    kind : {"table", "mapping"}
        Which kind of payload it is.
    object_id : optional
        The table or mapping id named in the report; default ``current["id"]``.
    origin : sequence of int or None, optional
        For each row of ``new``, the position in ``current`` of the row it comes from
        (None for new rows), as :func:`mddframes.codec.overlay` returns it. Without
        it, rows are matched by primary key, else by content
        (:func:`mddframes.codec.align.align_rows`).
    labels : sequence, optional
        For each row of ``new``, the label the report uses for it (the frame index
        label); default: the matched position in ``current``, or ``"new[i]"``.

    Returns
    -------
    CheckReport
        ``.ok`` is False when any error was found.
    """
    table = object_id if object_id is not None else (current or {}).get("id")
    records: list[dict[str, Any]] = []

    def add(level: str, problem: str, row: Any = None, column: Any = None, old: Any = None,
            value: Any = None) -> None:  # fmt: skip
        records.append(
            {"level": level, "table": table, "row": row, "column": column,
             "problem": problem, "old": old, "new": value}
        )  # fmt: skip

    current_key, current_rows = _rows_of(current, kind)
    new_key, new_rows = _rows_of(new, kind)
    if not isinstance(new, dict):
        add("error", "payload is not a JSON object", value=type(new).__name__)
        return CheckReport.from_records(records)

    # the envelope: everything outside the rows must still be there
    for key, value in (current or {}).items():
        if key == current_key:
            continue
        if key not in new:
            add("error", ENVELOPE_KEY_MISSING, column=key, old=value)
        elif isinstance(value, dict) and isinstance(new[key], dict):
            for inner, inner_value in value.items():
                if inner not in new[key]:
                    add("error", ENVELOPE_KEY_MISSING, column=f"{key}.{inner}", old=inner_value)
    if new_rows is None:
        add("error", ENVELOPE_KEY_MISSING, column=current_key or ROWS_KEYS[kind][0])
        return CheckReport.from_records(records)
    current_rows = current_rows or []

    for key, value in new.items():
        if key != new_key and has_non_finite(value):
            add("error", NOT_FINITE, column=key, value=value)

    bad_rows = [i for i, row in enumerate(new_rows) if type(row) is not dict]
    for i in bad_rows:
        add("error", ROW_NOT_OBJECT, row=labels[i] if labels else i, value=new_rows[i])
    if bad_rows:
        return CheckReport.from_records(records)

    columns = declared_columns(new if declared_columns(new, kind) else current, kind)
    declared = {c["name"]: c for c in columns}
    primary_key = primary_key_columns(columns)
    if origin is None:
        origin = align_rows(current_rows, new_rows, primary_key=primary_key)
    if len(origin) != len(new_rows):
        raise ValueError(f"origin has {len(origin)} entries for {len(new_rows)} rows")

    # a column is lost only if a row that is kept had it (deleted rows are reported as such)
    kept_rows = (current_rows[p] for p in origin if p is not None)
    current_keys = dict.fromkeys(chain.from_iterable(kept_rows))
    new_keys = dict.fromkeys(chain.from_iterable(new_rows))
    gone_columns = set()
    for name in current_keys:
        if name in new_keys:
            continue
        gone_columns.add(name)
        if name in declared:
            add("error", DECLARED_COLUMN_MISSING, column=name)
        elif not allow_deletes:
            add("error", COLUMN_DROPPED, column=name)
    if kind == "table" and columns:
        for name in new_keys:
            if name not in declared:
                add("warning", UNDECLARED_COLUMN, column=name)

    def label(i: int) -> Any:
        if labels is not None:
            return labels[i]
        return origin[i] if origin[i] is not None else f"new[{i}]"

    if not allow_deletes:
        matched = {p for p in origin if p is not None}
        for position, row in enumerate(current_rows):
            if position not in matched:
                shown = {k: row.get(k) for k in primary_key} if primary_key else row
                add("error", ROW_DELETED, row=position, old=shown)

    # rows that are not the very objects of the current payload (edited, new, or from a
    # payload built elsewhere): only they can bring a new problem
    touched = [
        i for i, p in enumerate(origin) if p is None or new_rows[i] is not current_rows[p]
    ]  # fmt: skip
    if primary_key and touched:
        groups: dict[Any, list[int]] = {}
        for i, row in enumerate(new_rows):
            key = key_of(row, primary_key)
            if key is not None:
                groups.setdefault(key, []).append(i)
        touched_set = set(touched)
        for positions in groups.values():
            if len(positions) < 2:
                continue
            # name the edited or added rows: they brought the duplicate
            for i in (p for p in positions if p in touched_set):
                other = next(p for p in positions if p != i)
                add("error", DUPLICATE_PRIMARY_KEY, row=label(i),
                    column=",".join(primary_key), old=f"same key as row {label(other)!r}",
                    value=[new_rows[i].get(k) for k in primary_key])  # fmt: skip

    column_classes: dict[str, set[str]] | None = None
    for i in touched:
        row, p = new_rows[i], origin[i]
        if p is not None:
            before = current_rows[p]
            for name, old in before.items():
                value = row.get(name, ABSENT)
                if value is ABSENT:
                    if name not in gone_columns:
                        add("error", CELL_REMOVED, row=label(i), column=name, old=old,
                            value=ABSENT)  # fmt: skip
                    continue
                drift = _drift(old, value)
                if drift:
                    add("error", f"{TYPE_DRIFT}: {drift}", row=label(i), column=name, old=old,
                        value=value)  # fmt: skip
        else:
            if column_classes is None:
                column_classes = _column_classes(current_rows)
            for name, value in row.items():
                classes = column_classes.get(name)
                if not classes or value is None:
                    continue
                value_class = json_class(value)
                if value_class in classes or (value_class == "integer" and "float" in classes):
                    continue
                add("error", f"{TYPE_DRIFT}: column holds {'/'.join(sorted(classes))}, "
                    f"got {value_class}", row=label(i), column=name, value=value)  # fmt: skip

    # untouched rows are the very objects parsed from the service's JSON: only the
    # touched ones can hold a NaN or a non-JSON object (a whole-payload dump cost more
    # than the rest of the check on a large table)
    if not _serialisable([new_rows[i] for i in touched]):
        for i in touched:
            row = new_rows[i]
            for name, value in row.items():
                if has_non_finite(value):
                    add("error", NOT_FINITE, row=label(i), column=name, value=value)
                elif not _serialisable(value):
                    add("error", NOT_JSON, row=label(i), column=name, value=value)

    for name, column in declared.items():
        if column.get("nullable") is not False:
            continue
        for i in touched:  # nulls the service already held are not this write's doing
            value = new_rows[i].get(name, ABSENT)
            if value is None or (value is ABSENT and origin[i] is None):
                add("warning", NULL_IN_NON_NULLABLE, row=label(i), column=name,
                    value=None if value is None else ABSENT)  # fmt: skip

    return CheckReport.from_records(records)


def _column_classes(rows: list[dict[str, Any]]) -> dict[str, set[str]]:
    classes: dict[str, set[str]] = {}
    for row in rows:
        for name, value in row.items():
            if value is not None:
                classes.setdefault(name, set()).add(json_class(value))
    return classes


def _serialisable(value: Any) -> bool:
    # the C encoder finds a NaN, an infinity or a non-JSON object far faster than a
    # Python walk; the walk runs only to locate what it found
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError):
        return False
    return True
