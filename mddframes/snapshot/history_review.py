"""A change-review workbook of a history, and its decisions back as a plan for the service.

:func:`write_review` writes one sheet per changed table or mapping: a line per change
(version, time, row, column, old and new side by side, the new value highlighted) and a
``decision`` column (``keep`` or ``revert``, a drop-down). The exact values travel in
hidden columns as JSON, so a spreadsheet program that re-saves the file changes
nothing a revert depends on.

:func:`read_review` turns the lines marked ``revert`` into a tables-as-code folder (each
reverted object as the service holds it now with those cells set back) and plans it
with :func:`~mddframes.tables_as_code.plan.plan_folder`: ``apply_plan`` then writes it
through the journal, with its checks, backups and read-back. An object whose reverted
cell no longer holds the value the review showed (someone changed it since) is refused
in the plan, and a refused plan is not applied at all.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mddframes.codec.align import primary_key_columns
from mddframes.codec.frame import declared_columns, payload_rows
from mddframes.codec.kinds import Kind
from mddframes.codec.values import ABSENT, canonical_json
from mddframes.errors import DataShapeError, InvalidArgumentError
from mddframes.snapshot.diff import SnapshotSide

if TYPE_CHECKING:
    from mddframes.api import Api
    from mddframes.tables_as_code.plan import Plan

#: The format tag of the hidden sheet.
REVIEW_FORMAT = "mddframes-review/1"
#: The hidden sheet that says what the workbook reviews.
INFO_SHEET = "_review"
#: The columns of a review sheet; those from ``kind`` on are hidden.
REVIEW_COLUMNS = (
    "decision", "version", "taken_at", "change", "row", "key", "column", "old", "new",
    "kind", "id", "key_json", "old_json", "new_json",
)  # fmt: skip
DECISIONS = ("keep", "revert")
_HIDDEN_FROM = REVIEW_COLUMNS.index("kind")


def _cell_json(value: Any) -> str:
    """A diff value as JSON text: ``[value]``, or ``[]`` for a cell that is absent."""
    return "[]" if value is ABSENT else canonical_json([value])


def _shown(value: Any) -> Any:
    """A value as a reviewer reads it: text and numbers as they are, the rest as JSON."""
    if value is ABSENT:
        return "(absent)"
    if value is None or isinstance(value, str | int | float) and not isinstance(value, bool):
        return value
    return canonical_json(value)


def _sheet_title(kind: str, object_id: str, taken: set[str]) -> str:
    base = "".join("_" if c in "[]:*?/\\" else c for c in f"{kind[0]} {object_id}")[:28]
    title, number = base, 1
    while title.lower() in taken or title == INFO_SHEET:
        number += 1
        title = f"{base[:25]}~{number}"
    taken.add(title.lower())
    return title


def write_review(history: Any, since: Any, until: Any, path: Path) -> Path:
    """The work of :meth:`History.to_review_excel`, documented there (``history`` is that
    History; typed loosely: history.py imports this module when called)."""
    import openpyxl
    from openpyxl.styles import Font, PatternFill
    from openpyxl.worksheet.datavalidation import DataValidation

    changes = history.read_changes(since, until)
    objects = changes.objects[changes.objects["kind"] != "element"]
    workbook = openpyxl.Workbook()
    info = workbook.active
    assert info is not None  # a new workbook has its first sheet
    info.title = INFO_SHEET
    versions = history.list_versions()
    span = changes.objects["version"].dropna()
    for key, value in (("format", REVIEW_FORMAT), ("history", str(Path(history.path).resolve())),
                       ("system", str(versions["system"].iloc[-1]) if len(versions) else ""),
                       ("from_version", int(span.min()) - 1 if len(span) else None),
                       ("to_version", int(span.max()) if len(span) else None)):  # fmt: skip
        info.append([key, value])
    info.sheet_state = "hidden"
    changed_fill = PatternFill("solid", fgColor="FFF2A8")
    old_fill = PatternFill("solid", fgColor="F4CCCC")
    taken: set[str] = set()
    keys = _KeyFinder(history)
    for kind, object_id in dict.fromkeys(zip(objects["kind"], objects["id"], strict=True)):
        lines = changes.cells[(changes.cells["kind"] == kind) & (changes.cells["id"] == object_id)]
        sheet = workbook.create_sheet(_sheet_title(str(kind), str(object_id), taken))
        sheet.append(list(REVIEW_COLUMNS))
        for cell in sheet[1]:
            cell.font = Font(bold=True)
        for line in lines.to_dict("records"):
            row_key = keys.key(str(kind), str(object_id), int(line["version"]) - 1, line["row"])
            revertable = line["change"] == "cell"
            sheet.append([
                "keep" if revertable else "", int(line["version"]),
                line["taken_at"].isoformat(), line["change"],
                _row_shown(line["row"]),
                None if row_key is None else _shown(row_key[1] if len(row_key[1]) > 1 else row_key[1][0]),
                line["column"], _shown(line["old"]), _shown(line["new"]),
                kind, object_id, None if row_key is None else canonical_json(row_key),
                _cell_json(line["old"]), _cell_json(line["new"]),
            ])  # fmt: skip
            number = sheet.max_row
            sheet.cell(number, REVIEW_COLUMNS.index("old") + 1).fill = old_fill
            sheet.cell(number, REVIEW_COLUMNS.index("new") + 1).fill = changed_fill
        choice = DataValidation(type="list", formula1='"keep,revert"', allow_blank=True)
        sheet.add_data_validation(choice)
        choice.add(f"A2:A{max(sheet.max_row, 2)}")
        for index in range(_HIDDEN_FROM, len(REVIEW_COLUMNS)):
            sheet.column_dimensions[openpyxl.utils.get_column_letter(index + 1)].hidden = True
        sheet.freeze_panes = "B2"
    if len(workbook.worksheets) > 1:
        workbook.active = 1  # it opens on the first object's sheet, not the hidden one
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    workbook.save(path)
    return path


class _KeyFinder:
    """A changed row's identity in the version before the change: its key, else position."""

    def __init__(self, history: Any) -> None:
        self.history = history
        self._payloads: dict[tuple[str, str, int], dict[str, Any]] = {}

    def key(
        self, kind: str, object_id: str, version: int, row: Any
    ) -> tuple[list[str], list[Any]] | None:
        if row is None or version < 1:
            return None
        where = (kind, object_id, version)
        if where not in self._payloads:
            side = SnapshotSide(self.history.as_of(version))
            self._payloads = {where: side.payload(_kind(kind), object_id)}  # one held at a time
        payload = self._payloads[where]
        names = primary_key_columns(declared_columns(payload, _kind(kind)))
        rows = payload_rows(payload, _kind(kind))
        position = _row_shown(row)
        # an added row's label (``new[0]``) is no position in the version before
        if not names or not isinstance(position, int) or not 0 <= position < len(rows):
            return None
        return names, [rows[position].get(n) for n in names]


def _row_shown(row: Any) -> int | str | None:
    """A diff line's row: its position, or the label of a row added (``new[0]``)."""
    if row is None:
        return None
    return int(row) if isinstance(row, int) or str(row).isdigit() else str(row)


def _kind(kind: str) -> Kind:
    return "table" if kind == "table" else "mapping"


def _decisions(path: Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The hidden sheet's facts and every line marked ``revert``, with its sheet and row."""
    import openpyxl

    try:
        workbook = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except (OSError, ValueError, KeyError) as exc:
        raise InvalidArgumentError(f"{path}: not a readable review workbook ({exc})") from exc
    try:
        if INFO_SHEET not in workbook.sheetnames:
            raise InvalidArgumentError(f"{path}: not a review workbook (no {INFO_SHEET} sheet)")
        info = {str(r[0]): r[1] for r in workbook[INFO_SHEET].iter_rows(values_only=True) if r[0]}
        if info.get("format") != REVIEW_FORMAT:
            raise InvalidArgumentError(f"{path}: not a {REVIEW_FORMAT} workbook")
        reverts = []
        for sheet in workbook.worksheets:
            if sheet.title == INFO_SHEET:
                continue
            rows = sheet.iter_rows(values_only=True)
            header = [str(c) if c is not None else "" for c in next(rows, ())]
            if header[: len(REVIEW_COLUMNS)] != list(REVIEW_COLUMNS):
                raise DataShapeError(f"{path}, sheet {sheet.title!r}: the header row was changed")
            for number, values in enumerate(rows, start=2):
                line = dict(zip(REVIEW_COLUMNS, values, strict=False))
                decision = str(line["decision"] or "").strip().lower()
                if decision in ("", "keep"):
                    continue
                where = f"{path}, sheet {sheet.title!r}, row {number}"
                if decision != "revert":
                    raise DataShapeError(f"{where}: decision {line['decision']!r} is neither "
                                         "keep nor revert")  # fmt: skip
                if line["change"] != "cell":
                    raise DataShapeError(
                        f"{where}: a {line['change']!r} line cannot be reverted from a review "
                        "(only changed cells can); edit the object through tables as code"
                    )
                reverts.append({**line, "where": where})
        return info, reverts
    finally:
        workbook.close()


def read_review(
    api: Api, path: str | os.PathLike[str], folder: str | os.PathLike[str] | None
) -> Plan:
    """The work of :func:`mddframes.snapshot.read_review_excel`, documented there."""
    from mddframes.tables_as_code.files import write_object
    from mddframes.tables_as_code.names import object_path
    from mddframes.tables_as_code.plan import PlannedObject, plan_folder, read_current

    path = Path(path)
    _info, reverts = _decisions(path)
    target = Path(folder) if folder is not None else path.with_name(f"{path.stem}-reverts")
    if target.exists() and any(target.iterdir()):
        raise InvalidArgumentError(f"{target} is not empty: the reverts go to a new folder")
    by_object: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for line in reverts:
        by_object.setdefault((str(line["kind"]), str(line["id"])), []).append(line)
    refused: list[PlannedObject] = []
    target.mkdir(parents=True, exist_ok=True)
    for (kind, object_id), lines in by_object.items():
        current = read_current(api, kind, object_id)
        try:
            _revert(current, _kind(kind), lines)
        except _Conflict as exc:
            refused.append(PlannedObject(kind, object_id, "", "refused", detail=str(exc)))
            continue
        write_object(object_path(target, _kind(kind), object_id, "json"), _kind(kind),
                     object_id, current)  # fmt: skip
    plan = plan_folder(api, target, progress=False)
    plan.objects += refused
    return plan


class _Conflict(Exception):
    pass


def _revert(payload: dict[str, Any], kind: Kind, lines: list[dict[str, Any]]) -> None:
    """Set each line's cell back to its old value in ``payload`` (in place), checking the
    service still holds the line's new value there."""
    rows = payload_rows(payload, kind)
    declared = {column["name"] for column in declared_columns(payload, kind)}
    # the latest change first: a cell changed twice is reverted from its last state back
    for line in sorted(lines, key=lambda item: -int(item["version"])):
        column = str(line["column"])
        index = _row_index(rows, line)
        held = rows[index].get(column, ABSENT) if index is not None else ABSENT
        if index is None or not _still_holds(held, line["new_json"]):
            shown = "no such row" if index is None else f"it holds {_shown(held)!r}"
            raise _Conflict(
                f"{line['where']}: {kind} {line['id']!r} changed on the service since the "
                f"review: row {line['key'] or line['row']}, column {column!r} was "
                f"{_shown(json.loads(line['new_json'])[0]) if line['new_json'] != '[]' else '(absent)'!r}"
                f" in the review, now {shown}; review again"
            )
        old = json.loads(line["old_json"])
        if old:
            rows[index][column] = old[0]
        elif column in declared:
            rows[index][column] = None  # a declared column's blank: the rows hold it as null
        else:
            rows[index].pop(column, None)


def _still_holds(held: Any, review_json: str) -> bool:
    """Whether the service's cell ``held`` is the value the review showed as new.

    A snapshot stores rows in Parquet, where a null and a missing key are one missing
    value: the history's "absent" is either, and either still holds it.
    """
    if review_json == "[]":
        return held is ABSENT or held is None
    return _cell_json(held) == review_json


def _row_index(rows: list[dict[str, Any]], line: dict[str, Any]) -> int | None:
    if line["key_json"]:
        names, values = json.loads(line["key_json"])
        wanted = canonical_json(values)
        hits = [
            i for i, r in enumerate(rows) if canonical_json([r.get(n) for n in names]) == wanted
        ]
        return hits[0] if len(hits) == 1 else None
    position = line["row"]
    return int(position) if position is not None and 0 <= int(position) < len(rows) else None
