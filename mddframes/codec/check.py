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

The check is a list of stages (:data:`STAGES`), small functions of one
:class:`CheckContext` that each return their problem records. A record carries its
stage's rank and its place in the payload, and the report is sorted by those
(:func:`~mddframes.codec.report.report_order`), so whoever runs the stages gets the
same report: :func:`check_payload` on a whole document, or
:mod:`mddframes.codec.streamed_overlay` batch by batch and then the stages that need the
whole table (:attr:`Stage.whole_table`) once at the end.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import chain
from typing import Any

from mddframes.codec.align import align_rows, key_of, primary_key_columns
from mddframes.codec.frame import ROWS_KEYS, declared_columns
from mddframes.codec.kinds import Kind
from mddframes.codec.report import REPORT_COLUMNS, CheckReport, report_order
from mddframes.codec.values import ABSENT, has_non_finite, json_type

__all__ = [
    "REPORT_COLUMNS",
    "STAGES",
    "CheckContext",
    "CheckReport",
    "Stage",
    "check_payload",
    "report_order",
    "run_stages",
]

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
NOT_AN_OBJECT = "payload is not a JSON object"
UNDECLARED_COLUMN = "column not declared in the metadata"
NULL_IN_NON_NULLABLE = "null in non-nullable column"

#: A problem record: the keys of ``REPORT_COLUMNS``, ``rank`` and ``at``.
Record = dict[str, Any]


def _rows_of(payload: Any, kind: Kind) -> tuple[str | None, list[Any] | None]:
    if not isinstance(payload, dict):
        return None, None
    for key in ROWS_KEYS[kind]:
        if key in payload and isinstance(payload[key], list):
            return key, payload[key]
    return None, None


class CheckContext:
    """What every stage reads: the new payload, what the service holds, the options.

    Parameters
    ----------
    new, current : dict
        The payload about to be sent, and the one it replaces.
    kind : {"table", "mapping"}
    allow_deletes : bool
        Allow rows (and undeclared columns) to disappear.
    object_id : optional
        The id the report names; default ``current["id"]``.
    origin, labels : sequence, optional
        As for :func:`check_payload`.
    offset : int, default 0
        The position of the first row in the whole table, when the payloads hold one
        batch of its rows: the place (``at``) of every record counts from it, so that
        the records of all batches sort as those of the whole table would.
    touched : list of int, optional
        The rows that are not the very objects of the current payload, when the
        caller knows them; default: found from ``origin``.
    """

    def __init__(
        self,
        new: Any,
        current: Any,
        *,
        kind: Kind = "table",
        allow_deletes: bool = False,
        object_id: Any = None,
        origin: Sequence[int | None] | None = None,
        labels: Sequence[Any] | None = None,
        offset: int = 0,
        touched: list[int] | None = None,
    ) -> None:
        self.new = new
        self.current = current or {}
        self.kind: Kind = kind
        self.allow_deletes = allow_deletes
        self.table = object_id if object_id is not None else self.current.get("id")
        self.current_key, current_rows = _rows_of(current, kind)
        self.current_rows: list[Any] = current_rows or []
        self.new_key, self.found_rows = _rows_of(new, kind)
        self.labels = labels
        self.offset = offset
        self._origin = origin
        self._touched = touched

    def problem(self, level: str, problem: str, at: tuple[int, ...], *, row: Any = None,
                column: Any = None, old: Any = None, new: Any = None) -> Record:  # fmt: skip
        """One problem record of this payload (the runner adds the stage's rank)."""
        return {"level": level, "table": self.table, "row": row, "column": column,
                "problem": problem, "old": old, "new": new, "at": at}  # fmt: skip

    @property
    def rows(self) -> list[Any]:
        """The new payload's rows (empty when it has none: the rows stage stops then)."""
        return self.found_rows if self.found_rows is not None else []

    @cached_property
    def columns(self) -> list[dict[str, Any]]:
        """The declared columns: the new payload's, else the current one's."""
        return declared_columns(self.new if declared_columns(self.new, self.kind)
                                else self.current, self.kind)  # fmt: skip

    @cached_property
    def declared(self) -> dict[str, dict[str, Any]]:
        """The declared columns by name."""
        return {c["name"]: c for c in self.columns}

    @cached_property
    def primary_key(self) -> list[str]:
        """The primary-key column names (empty: no key)."""
        return primary_key_columns(self.columns)

    @cached_property
    def origin(self) -> Sequence[int | None]:
        """For each new row, the position of the current row it comes from (or None)."""
        origin = self._origin
        if origin is None:
            origin = align_rows(self.current_rows, self.rows, primary_key=self.primary_key)
        if len(origin) != len(self.rows):
            raise ValueError(f"origin has {len(origin)} entries for {len(self.rows)} rows")
        return origin

    @cached_property
    def touched(self) -> list[int]:
        """The new rows that are not the very objects of the current payload (edited,
        new, or from a payload built elsewhere): only they can bring a new problem."""
        if self._touched is not None:
            return self._touched
        rows, current = self.rows, self.current_rows
        return [i for i, p in enumerate(self.origin) if p is None or rows[i] is not current[p]]

    def row_keys(self) -> Iterable[str]:
        """Every key of the new rows, in first-seen order."""
        return self._new_keys

    @cached_property
    def _new_keys(self) -> dict[str, None]:
        return dict.fromkeys(chain.from_iterable(self.rows))

    @cached_property
    def gone_columns(self) -> dict[str, None]:
        """The keys a kept row had and no new row has, in the current rows' order (a
        column lost; deleted rows are reported as such)."""
        kept_rows = (self.current_rows[p] for p in self.origin if p is not None)
        new_keys = set(self.row_keys())
        return {n: None for n in dict.fromkeys(chain.from_iterable(kept_rows)) if n not in new_keys}

    @cached_property
    def column_types(self) -> dict[str, set[str]]:
        """The JSON types each column of the current rows holds (nulls aside)."""
        types: dict[str, set[str]] = {}
        for row in self.current_rows:
            for name, value in row.items():
                if value is not None:
                    types.setdefault(name, set()).add(json_type(value))
        return types

    def label(self, i: int) -> Any:
        """What the report calls new row ``i``."""
        if self.labels is not None:
            return self.labels[i]
        p = self.origin[i]
        return p if p is not None else f"new[{i}]"

    def key_groups(self) -> Iterable[list[int]]:
        """The new rows sharing a primary key, each group in row order (groups of one
        included), the groups in the order of their first row."""
        groups: dict[Any, list[int]] = {}
        for i, row in enumerate(self.rows):
            key = key_of(row, self.primary_key)
            if key is not None:
                groups.setdefault(key, []).append(i)
        return groups.values()

    def key_values(self, i: int) -> list[Any]:
        """The primary-key values of new row ``i``."""
        return [self.rows[i].get(k) for k in self.primary_key]


#: What a stage is: a function of the context returning its problem records.
StageFunction = Callable[[CheckContext], list[Record]]


@dataclass(frozen=True)
class Stage:
    """One check of the completeness check.

    Attributes
    ----------
    rank : int
        Where its lines go in the report (after the lines of lower ranks).
    run : callable
        The check: context -> problem records.
    whole_table : bool
        It needs every row at once (a check of a table batch by batch makes it once,
        at the end, from what the batches left behind).
    gate : bool
        When it finds anything, the later stages cannot read the payload: the check
        stops there.
    """

    rank: int
    run: StageFunction
    whole_table: bool = False
    gate: bool = False


def check_is_object(c: CheckContext) -> list[Record]:
    """The payload is a JSON object."""
    if isinstance(c.new, dict):
        return []
    return [c.problem("error", NOT_AN_OBJECT, (), new=type(c.new).__name__)]


def check_envelope(c: CheckContext) -> list[Record]:
    """Everything outside the rows is still there (one level into nested objects)."""
    found = []
    for j, (key, value) in enumerate(c.current.items()):
        if key == c.current_key:
            continue
        if key not in c.new:
            found.append(c.problem("error", ENVELOPE_KEY_MISSING, (j,), column=key, old=value))
        elif isinstance(value, dict) and isinstance(c.new[key], dict):
            for k, (inner, inner_value) in enumerate(value.items()):
                if inner not in c.new[key]:
                    found.append(c.problem("error", ENVELOPE_KEY_MISSING, (j, k),
                                           column=f"{key}.{inner}", old=inner_value))  # fmt: skip
    return found


def check_rows_present(c: CheckContext) -> list[Record]:
    """The payload has its list of rows."""
    if c.found_rows is not None:
        return []
    column = c.current_key or ROWS_KEYS[c.kind][0]
    return [c.problem("error", ENVELOPE_KEY_MISSING, (), column=column)]


def check_envelope_finite(c: CheckContext) -> list[Record]:
    """No NaN or infinity outside the rows."""
    return [
        c.problem("error", NOT_FINITE, (j,), column=key, new=value)
        for j, (key, value) in enumerate(c.new.items())
        if key != c.new_key and has_non_finite(value)
    ]


def check_row_objects(c: CheckContext) -> list[Record]:
    """Every row is a JSON object."""
    # (no label through the origin: rows are matched only once all are objects)
    labels = c.labels if c.labels else range(c.offset, c.offset + len(c.rows))
    return [
        c.problem("error", ROW_NOT_OBJECT, (c.offset + i,), row=labels[i], new=row)
        for i, row in enumerate(c.rows)
        if type(row) is not dict
    ]


def check_columns_kept(c: CheckContext) -> list[Record]:
    """No column a kept row had is gone (an undeclared one may go with ``allow_deletes``)."""
    found = []
    for j, name in enumerate(c.gone_columns):
        if name in c.declared:
            found.append(c.problem("error", DECLARED_COLUMN_MISSING, (j,), column=name))
        elif not c.allow_deletes:
            found.append(c.problem("error", COLUMN_DROPPED, (j,), column=name))
    return found


def check_undeclared_columns(c: CheckContext) -> list[Record]:
    """Warn of the row keys a table's metadata does not declare."""
    if c.kind != "table" or not c.columns:
        return []
    return [
        c.problem("warning", UNDECLARED_COLUMN, (j,), column=name)
        for j, name in enumerate(n for n in c.row_keys() if n not in c.declared)
    ]


def check_rows_kept(c: CheckContext) -> list[Record]:
    """No current row is missing from the new payload, unless ``allow_deletes``."""
    if c.allow_deletes:
        return []
    matched = {p for p in c.origin if p is not None}

    def shown(row: dict[str, Any]) -> Any:
        return {k: row.get(k) for k in c.primary_key} if c.primary_key else row

    return [
        c.problem("error", ROW_DELETED, (c.offset + p,), row=c.offset + p, old=shown(row))
        for p, row in enumerate(c.current_rows)
        if p not in matched
    ]


def check_duplicate_keys(c: CheckContext) -> list[Record]:
    """No edited or added row has the primary key of another row (it brought the
    duplicate; a duplicate the service already held is not this write's doing)."""
    if not c.primary_key or not c.touched:
        return []
    touched = set(c.touched)
    found = []
    for group in c.key_groups():
        if len(group) < 2:
            continue
        for i in (p for p in group if p in touched):
            other = next(p for p in group if p != i)
            found.append(c.problem(
                "error", DUPLICATE_PRIMARY_KEY, (c.offset + group[0], c.offset + i),
                row=c.label(i), column=",".join(c.primary_key),
                old=f"same key as row {c.label(other)!r}", new=c.key_values(i),
            ))  # fmt: skip
    return found


def _word(json_type_name: str) -> str:
    # the report says "float" where JSON Schema says "number": "integer turned number"
    # would not tell a user that a whole number became a fraction
    return "float" if json_type_name == "number" else json_type_name


def _drift(old: Any, new: Any) -> str | None:
    """The drift between two non-null values, e.g. ``"string turned integer"``."""
    old_type, new_type = json_type(old), json_type(new)
    if old_type == new_type or old_type == "null" or new_type == "null":
        return None
    if old_type == "number" and new_type == "integer":
        return None  # a whole number written without its fraction loses nothing
    return f"{_word(old_type)} turned {_word(new_type)}"


def check_cells(c: CheckContext) -> list[Record]:
    """Edited rows keep every cell and its JSON type; new rows hold their columns' types."""
    found = []
    for i in c.touched:
        row, p, at = c.rows[i], c.origin[i], c.offset + i
        if p is not None:
            for j, (name, old) in enumerate(c.current_rows[p].items()):
                value = row.get(name, ABSENT)
                if value is ABSENT:
                    if name not in c.gone_columns:
                        found.append(c.problem("error", CELL_REMOVED, (at, j), row=c.label(i),
                                               column=name, old=old, new=ABSENT))  # fmt: skip
                    continue
                drift = _drift(old, value)
                if drift:
                    found.append(c.problem("error", f"{TYPE_DRIFT}: {drift}", (at, j),
                                           row=c.label(i), column=name, old=old,
                                           new=value))  # fmt: skip
            continue
        for j, (name, value) in enumerate(row.items()):
            types = c.column_types.get(name) if value is not None else None
            if not types:
                continue
            value_type = json_type(value)
            if value_type in types or (value_type == "integer" and "number" in types):
                continue
            held = "/".join(sorted(map(_word, types)))
            found.append(c.problem("error", f"{TYPE_DRIFT}: column holds {held}, got "
                                   f"{_word(value_type)}", (at, j), row=c.label(i), column=name,
                                   new=value))  # fmt: skip
    return found


def check_json_values(c: CheckContext) -> list[Record]:
    """No NaN, infinity or non-JSON object in an edited or added row."""
    # untouched rows are the very objects parsed from the service's JSON: only the
    # touched ones can hold a NaN or a non-JSON object (a whole-payload dump cost more
    # than the rest of the check on a large table)
    if _serialisable([c.rows[i] for i in c.touched]):
        return []
    found = []
    for i in c.touched:
        for j, (name, value) in enumerate(c.rows[i].items()):
            if has_non_finite(value):
                problem = NOT_FINITE
            elif not _serialisable(value):
                problem = NOT_JSON
            else:
                continue
            found.append(c.problem("error", problem, (c.offset + i, j), row=c.label(i),
                                   column=name, new=value))  # fmt: skip
    return found


def check_nulls(c: CheckContext) -> list[Record]:
    """Warn of nulls an edited or added row puts in a non-nullable column (nulls the
    service already held are not this write's doing)."""
    found = []
    for j, (name, column) in enumerate(c.declared.items()):
        if column.get("nullable") is not False:
            continue
        for i in c.touched:
            value = c.rows[i].get(name, ABSENT)
            if value is None or (value is ABSENT and c.origin[i] is None):
                found.append(c.problem("warning", NULL_IN_NON_NULLABLE, (j, c.offset + i),
                                       row=c.label(i), column=name,
                                       new=None if value is None else ABSENT))  # fmt: skip
    return found


#: The stages, in the order they run; their ranks order the report.
STAGES: tuple[Stage, ...] = (
    Stage(10, check_is_object, gate=True),
    Stage(20, check_envelope),
    Stage(30, check_rows_present, gate=True),
    Stage(40, check_envelope_finite),
    Stage(50, check_row_objects, gate=True),
    Stage(60, check_columns_kept),
    Stage(70, check_undeclared_columns, whole_table=True),
    Stage(80, check_rows_kept),
    Stage(90, check_duplicate_keys, whole_table=True),
    Stage(100, check_cells),
    Stage(110, check_json_values),
    Stage(120, check_nulls),
)


def run_stages(context: CheckContext, stages: Iterable[Stage]) -> list[Record]:
    """The records of ``stages`` run on ``context`` in turn, each stamped with its
    stage's rank; a gate stage that finds anything stops the run."""
    records: list[Record] = []
    for stage in stages:
        found = stage.run(context)
        for record in found:
            record["rank"] = stage.rank
        records.extend(found)
        if stage.gate and found:
            break
    return records


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
    context = CheckContext(new, current, kind=kind, allow_deletes=allow_deletes,
                           object_id=object_id, origin=origin, labels=labels)  # fmt: skip
    return CheckReport.from_records(run_stages(context, STAGES))


def _serialisable(value: Any) -> bool:
    # the C encoder finds a NaN, an infinity or a non-JSON object far faster than a
    # Python walk; the walk runs only to locate what it found
    try:
        json.dumps(value, allow_nan=False)
    except (ValueError, TypeError):
        return False
    return True
