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

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mddframes.codec import depth
from mddframes.codec.check_context import CheckContext, Record
from mddframes.codec.frame import ROWS_KEYS
from mddframes.codec.kinds import Kind
from mddframes.codec.report import REPORT_COLUMNS, CheckReport, report_order
from mddframes.codec.values import ABSENT, JsonObject, has_non_finite, json_type

__all__ = [
    "REPORT_COLUMNS",
    "STAGES",
    "CheckContext",
    "CheckReport",
    "Record",
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
    new: JsonObject,
    current: JsonObject,
    *,
    allow_deletes: bool = False,
    kind: Kind = "table",
    object_id: str | None = None,
    origin: Sequence[int | None] | None = None,
    labels: Sequence[Hashable] | None = None,
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
        depth.dumps(value, allow_nan=False)
    except (ValueError, TypeError):
        return False
    return True
