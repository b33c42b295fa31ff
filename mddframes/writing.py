"""The safe write: a full-replacement PUT that never loses data (DESIGN.md sections 4, 5).

:func:`write_table` / :func:`write_mapping` go through these steps, in this order:

1. read what the service holds now;
2. if it changed since the frame was read, raise
   :class:`~mddframes.errors.ConcurrentModificationError` naming what changed (unless
   ``force``);
3. build the full payload by overlaying the frame's real changes onto the rows it was
   read from (:func:`mddframes.codec.overlay`);
4. check it against what the service holds (:func:`mddframes.codec.check_payload`)
   and raise :class:`~mddframes.errors.IncompletePayloadError` carrying the report if
   it has errors (nothing is sent). A frame with no change sends nothing;
5. with ``dry_run``, return the diff and the report without sending;
6. save what the service held as a timestamped JSON backup;
7. PUT the payload;
8. read it back and compare with what was sent (``verified``, or
   :class:`~mddframes.errors.WriteVerificationError`).

:func:`restore` puts a backup back (backing up first). :func:`write_tables` /
:func:`write_mappings` write the objects of a long frame: every object is read and
checked before any is sent.
"""

from __future__ import annotations

import datetime as _dt
import json
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import quote

import pandas as pd

from mddframes.bulk import run_bulk
from mddframes.codec import CheckReport, Diff, check_payload, diff_payloads, overlay, to_payload
from mddframes.codec.values import canonical_json
from mddframes.context import ATTRS_KEY, ReadContext, context_of, registry_for
from mddframes.errors import (
    BackupError,
    ConcurrentModificationError,
    DataShapeError,
    IncompletePayloadError,
    InvalidArgumentError,
    MddError,
    WriteRefusedError,
    WriteVerificationError,
)
from mddframes.frames._shape import snake_case
from mddframes.frames.bulk_tables import iter_groups
from mddframes.ids import require_id

if TYPE_CHECKING:
    from mddframes.api import Api

logger = logging.getLogger(__name__)

Kind = Literal["table", "mapping"]
Status = Literal["written", "unchanged", "dry-run"]

#: Where backups go when no ``backup_dir`` is given (relative to the working directory).
DEFAULT_BACKUP_ROOT = Path(".mddframes") / "backups"

#: The columns of the result frame of :func:`write_tables` / :func:`write_mappings`
#: (after the id column).
RESULT_COLUMNS = (
    "status", "changed_cells", "added_rows", "deleted_rows", "backup", "verified", "error",
)  # fmt: skip

_GET = {"table": "get_table", "mapping": "get_mapping"}
_PUT = {"table": "put_table", "mapping": "put_mapping"}
_OPERATION = {"table": "tableUpdate", "mapping": "mappingUpdate"}


@dataclass(frozen=True, eq=False)
class WriteResult:
    """What a write did.

    Attributes
    ----------
    kind : {"table", "mapping"}
    object_id : str
    status : {"written", "unchanged", "dry-run"}
        ``"unchanged"``: the frame held no change, nothing was sent. ``"dry-run"``:
        the payload passed the check but was not sent.
    diff : Diff
        What the write changes compared with what the service held.
    report : CheckReport
        The completeness check of the payload (warnings only, else it would have
        been refused).
    backup : pathlib.Path or None
        The backup of what the service held before the write (None when nothing
        was sent).
    verified : bool or None
        True when the object read back after the write equals what was sent; None
        when nothing was sent.
    payload : dict
        The full payload that was (or, for a dry run, would have been) sent.
    """

    kind: Kind
    object_id: str
    status: Status
    diff: Diff
    report: CheckReport
    backup: Path | None = None
    verified: bool | None = None
    payload: dict[str, Any] = field(default_factory=dict, repr=False)

    def __deepcopy__(self, memo: dict[int, Any]) -> WriteResult:
        return self  # immutable; kept in frame attrs, which pandas deep-copies

    def __repr__(self) -> str:
        extra = f", backup={str(self.backup)!r}" if self.backup else ""
        verified = f", verified={self.verified}" if self.verified is not None else ""
        return (
            f"WriteResult({self.kind} {self.object_id!r}: {self.status}; "
            f"{self.diff.summary()}{verified}{extra})"
        )

    def _repr_html_(self) -> str:
        import html

        head = (
            f"<p><b>{html.escape(self.kind)} {html.escape(repr(self.object_id))}: "
            f"{html.escape(self.status)}</b>"
        )
        if self.verified is not None:
            head += f", verified: {self.verified}"
        if self.backup is not None:
            head += f", backup: <code>{html.escape(str(self.backup))}</code>"
        return head + "</p>" + self.diff._repr_html_() + self.report._repr_html_()


@dataclass
class _Prepared:
    """A write that passed steps 1 to 4 and waits to be sent."""

    kind: Kind
    object_id: str
    current: dict[str, Any]
    payload: dict[str, Any]
    diff: Diff
    report: CheckReport
    keeps_positions: bool
    frame: pd.DataFrame | None = None


def _columns_payload(columns: Any, base: dict[str, Any]) -> list[dict[str, Any]]:
    """New ``metadata.columns`` from a list of dicts or a ``read_table_columns`` frame."""
    if isinstance(columns, pd.DataFrame):
        metadata = base.get("metadata") if isinstance(base.get("metadata"), dict) else {}
        original = metadata.get("columns") if isinstance(metadata.get("columns"), list) else []
        # back to the service's own field names (data_type -> dataType)
        names = {snake_case(k): k for c in original if isinstance(c, dict) for k in c}
        frame = columns.rename(columns=lambda c: names.get(c, _camel_case(c)))
        return to_payload(frame, {"data": list(original)}, kind="table")["data"]
    if not isinstance(columns, Sequence) or isinstance(columns, str | bytes):
        raise InvalidArgumentError(
            "columns= must be a list of column objects or the frame of read_table_columns, "
            f"not {type(columns).__name__}"
        )
    for position, column in enumerate(columns):
        if not isinstance(column, dict) or not isinstance(column.get("name"), str):
            raise InvalidArgumentError(
                f"columns= entry {position} must be an object with a string 'name', got {column!r}"
            )
    return list(columns)


def _camel_case(name: Any) -> Any:
    if not isinstance(name, str):
        return name
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _same(a: Any, b: Any) -> bool:
    return a is b or canonical_json(a) == canonical_json(b)


def _prepare(
    api: Api,
    kind: Kind,
    object_id: str,
    frame: pd.DataFrame,
    *,
    columns: Any = None,
    allow_deletes: bool = False,
    force: bool = False,
) -> _Prepared:
    """Steps 1 to 4: read, conflict check, overlay, completeness check."""
    if not isinstance(frame, pd.DataFrame):
        raise InvalidArgumentError(
            f"write_{kind} needs a DataFrame (from read_{kind}), got {type(frame).__name__}"
        )
    context = context_of(api, frame, kind, object_id)
    if context is None and not force:
        raise WriteRefusedError(
            f"{kind} {object_id!r} was not read through this client, so there is no original "
            f"to overlay the frame on: read it with read_{kind}({object_id!r}) and edit that "
            "frame (keep its index), or pass force=True to take what the service holds now "
            "as the original"
        )
    current = getattr(api, _GET[kind])(object_id)
    # once: a streamed read's context parses its kept document on each access
    original = context.payload if context is not None else None
    conflict = original is not None and not _same(original, current)
    if conflict and not force:
        changes = diff_payloads(original, current, kind=kind)
        raise ConcurrentModificationError(
            f"{kind} {object_id!r} changed on the service since it was read at "
            f"{context.read_at:%Y-%m-%d %H:%M:%S} UTC: {changes.summary()}. Nothing was "
            f"sent. Read it again and redo the edit, or pass force=True to overwrite "
            "(a backup is kept)",
            changes=changes.to_frame(),
        )
    base = original if original is not None else current
    new_columns = _columns_payload(columns, base) if columns is not None else None
    result = overlay(frame, base, kind=kind, columns=new_columns)
    if conflict:
        # rows of the base are not rows of what the service holds: match them afresh
        report = check_payload(
            result.payload, current, allow_deletes=allow_deletes, kind=kind, object_id=object_id
        )
        diff = diff_payloads(current, result.payload, kind=kind)
    else:
        # same content as the base, and the base's row objects make unchanged rows free
        report = check_payload(
            result.payload, base, allow_deletes=allow_deletes, kind=kind,
            object_id=object_id, origin=result.origin, labels=result.labels,
        )  # fmt: skip
        diff = diff_payloads(
            base, result.payload, kind=kind, origin=result.origin, labels=result.labels
        )
    keeps_positions = not result.deleted and all(p is not None for p in result.origin)
    return _Prepared(kind, object_id, current, result.payload, diff, report, keeps_positions,
                     frame)  # fmt: skip


def _refuse(prepared: _Prepared) -> None:
    if not prepared.report.ok:
        raise IncompletePayloadError(
            f"{prepared.kind} {prepared.object_id!r} was not written: the payload would lose "
            f"or corrupt data ({prepared.report.summary()}). Nothing was sent; see .report",
            report=prepared.report,
        )


def _not_sent(prepared: _Prepared, status: Status) -> WriteResult:
    return WriteResult(prepared.kind, prepared.object_id, status, prepared.diff,
                       prepared.report, payload=prepared.payload)  # fmt: skip


def _send(api: Api, prepared: _Prepared, backup_dir: Any) -> WriteResult:
    """Steps 6 to 8: backup, PUT, read back and compare; record the new context."""
    kind, object_id = prepared.kind, prepared.object_id
    backup = save_backup(api, kind, object_id, prepared.current, backup_dir=backup_dir)
    getattr(api, _PUT[kind])(object_id, prepared.payload)
    readback = getattr(api, _GET[kind])(object_id)
    if not _same(readback, prepared.payload):
        mismatch = diff_payloads(prepared.payload, readback, kind=kind)
        raise WriteVerificationError(
            f"{kind} {object_id!r} was written but reads back different from what was sent "
            f"({mismatch.summary()}); what it held before is in {backup}",
            operation=_OPERATION[kind],
        )
    logger.info("%s %r written and verified (%s); backup %s", kind, object_id,
                prepared.diff.summary(), backup)  # fmt: skip
    if prepared.keeps_positions:
        # the frame still lines up row for row with what the service now holds, so it
        # can be edited and written again; after added or deleted rows it cannot, and
        # the stale context makes a second write of it stop with a conflict
        context = ReadContext(kind, object_id, readback)
        registry_for(api).record(context)
        if prepared.frame is not None:
            prepared.frame.attrs[ATTRS_KEY] = context
    return WriteResult(kind, object_id, "written", prepared.diff, prepared.report, backup, True,
                       prepared.payload)  # fmt: skip


def _write(
    api: Api,
    kind: Kind,
    object_id: str,
    frame: pd.DataFrame,
    *,
    columns: Any = None,
    dry_run: bool = False,
    allow_deletes: bool = False,
    force: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
) -> WriteResult:
    object_id = require_id(object_id, what=f"{kind}_id")
    prepared = _prepare(api, kind, object_id, frame, columns=columns,
                        allow_deletes=allow_deletes, force=force)  # fmt: skip
    if prepared.diff.empty:
        return _not_sent(prepared, "unchanged")
    _refuse(prepared)
    if dry_run:
        return _not_sent(prepared, "dry-run")
    return _send(api, prepared, backup_dir)


def write_table(
    api: Api,
    table_id: str,
    frame: pd.DataFrame,
    *,
    columns: Any = None,
    dry_run: bool = False,
    allow_deletes: bool = False,
    force: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
) -> WriteResult:
    """Write an edited table frame back to the service, safely (see the module steps).

    Parameters
    ----------
    api : Api
        The client the table was read through.
    table_id : str
        The table id.
    frame : pandas.DataFrame
        The frame from :func:`~mddframes.frames.table.read_table`, edited; its index
        must still be each row's original position (new rows: labels no other row
        uses; deleted rows: labels gone).
    columns : list of dict or pandas.DataFrame, optional
        New column metadata (``metadata.columns``): a list of column objects, or the
        frame of ``read_table_columns`` edited. Default: kept as read.
    dry_run : bool, default False
        Build and check the payload, return the diff and the report, send nothing.
    allow_deletes : bool, default False
        Allow rows (and undeclared columns) to be deleted.
    force : bool, default False
        Write even if the table changed on the service since it was read (the frame
        wins; the backup keeps what is overwritten), or when it was never read through
        this client (the index then addresses what the service holds now).
    backup_dir : path, optional
        Root folder of the backups; default ``.mddframes/backups``. The backup goes to
        ``<root>/<tenant>/table/<id>/<UTC timestamp>.json``.

    Returns
    -------
    WriteResult

    Raises
    ------
    ConcurrentModificationError
        The table changed since it was read (``changes`` holds what changed).
    IncompletePayloadError
        The completeness check found errors (``report`` names table, row, column).
    WriteVerificationError
        The table read back after the write differs from what was sent.
    WriteRefusedError
        The table was never read through this client and ``force`` is False.
    MddError
        The service refused a call.
    """
    return _write(api, "table", table_id, frame, columns=columns, dry_run=dry_run,
                  allow_deletes=allow_deletes, force=force, backup_dir=backup_dir)  # fmt: skip


def write_mapping(
    api: Api,
    mapping_id: str,
    frame: pd.DataFrame,
    *,
    dry_run: bool = False,
    allow_deletes: bool = False,
    force: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
) -> WriteResult:
    """Write an edited mapping frame back to the service, safely.

    Same steps, parameters and errors as :func:`write_table` (without ``columns``);
    the frame comes from :func:`~mddframes.frames.table.read_mapping`.
    """
    return _write(api, "mapping", mapping_id, frame, dry_run=dry_run,
                  allow_deletes=allow_deletes, force=force, backup_dir=backup_dir)  # fmt: skip


# -- backups ----------------------------------------------------------------------


def _segment(value: str) -> str:
    """``value`` as one safe folder name: percent-encoded, dots included (``..`` too)."""
    return quote(value, safe="").replace(".", "%2E") or "%00"


def backup_folder(
    api: Api, kind: Kind, object_id: str, backup_dir: str | os.PathLike[str] | None = None
) -> Path:
    """The folder holding the backups of one object: ``<root>/<tenant>/<kind>/<id>``."""
    root = Path(backup_dir) if backup_dir is not None else DEFAULT_BACKUP_ROOT
    tenant = getattr(api, "tenant", None) or "default"
    return root / _segment(str(tenant)) / kind / _segment(object_id)


def save_backup(
    api: Api,
    kind: Kind,
    object_id: str,
    payload: dict[str, Any],
    *,
    backup_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """Save ``payload`` as a timestamped JSON backup of one object and return its path.

    The file holds ``{"kind", "id", "tenant", "savedAt", "payload"}``; it is written
    to a temporary name first and renamed, so a backup file is never half-written.
    """
    folder = backup_folder(api, kind, object_id, backup_dir)
    folder.mkdir(parents=True, exist_ok=True)
    now = _dt.datetime.now(_dt.UTC)
    document = {
        "kind": kind,
        "id": object_id,
        "tenant": getattr(api, "tenant", None),
        "savedAt": now.isoformat().replace("+00:00", "Z"),
        "payload": payload,
    }
    try:
        text = json.dumps(document, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise BackupError(
            f"cannot back up {kind} {object_id!r}: what the service holds is not strict JSON "
            f"({exc}); nothing was sent"
        ) from None
    stem = now.strftime("%Y%m%dT%H%M%S.%fZ")
    for attempt in range(1000):
        path = folder / (f"{stem}.json" if attempt == 0 else f"{stem}-{attempt}.json")
        try:
            with open(path, "x", encoding="utf-8") as handle:  # "x": never overwrite a backup
                handle.write(text)
        except FileExistsError:
            continue
        return path
    raise BackupError(f"could not find a free backup file name in {folder}")


def load_backup(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a backup file written by :func:`save_backup`.

    Raises
    ------
    DataShapeError
        If the file is not such a backup (names the file and what is wrong).
    """
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataShapeError(f"cannot read backup {path}: {exc}") from None
    problems = []
    if not isinstance(document, dict):
        problems.append("it is not a JSON object")
    else:
        if document.get("kind") not in ("table", "mapping"):
            problems.append(f"'kind' is {document.get('kind')!r}, not 'table' or 'mapping'")
        if not isinstance(document.get("id"), str) or not document.get("id"):
            problems.append("'id' is missing")
        if not isinstance(document.get("payload"), dict):
            problems.append("'payload' is not a JSON object")
    if problems:
        raise DataShapeError(f"{path} is not an mddframes backup: {'; '.join(problems)}")
    return document


def restore(
    api: Api,
    backup: str | os.PathLike[str],
    *,
    dry_run: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
) -> WriteResult:
    """Put a backup back on the service, after backing up what it holds now.

    Parameters
    ----------
    api : Api
        A client of the tenant the backup was taken from.
    backup : path
        A backup file (``WriteResult.backup``).
    dry_run : bool, default False
        Return the diff without sending.
    backup_dir : path, optional
        Root folder for the backup taken before restoring.

    Returns
    -------
    WriteResult
        ``status`` "unchanged" when the service already holds the backup's content.
        The report is informational: a restore may delete rows added since.

    Raises
    ------
    InvalidArgumentError
        The backup is of another tenant.
    WriteVerificationError
        The object read back differs from the backup.
    """
    document = load_backup(backup)
    kind, object_id, payload = document["kind"], document["id"], document["payload"]
    tenant = getattr(api, "tenant", None)
    if document.get("tenant") and tenant and document["tenant"] != tenant:
        raise InvalidArgumentError(
            f"backup {backup} is of tenant {document['tenant']!r}, this client is connected "
            f"to {tenant!r}; nothing was sent"
        )
    current = getattr(api, _GET[kind])(object_id)
    prepared = _Prepared(
        kind, object_id, current, payload,
        diff_payloads(current, payload, kind=kind),
        check_payload(payload, current, allow_deletes=True, kind=kind, object_id=object_id),
        keeps_positions=True,
    )  # fmt: skip
    if prepared.diff.empty:
        return _not_sent(prepared, "unchanged")
    if dry_run:
        return _not_sent(prepared, "dry-run")
    return _send(api, prepared, backup_dir)


# -- many objects -----------------------------------------------------------------


def _write_many(
    api: Api,
    kind: Kind,
    frame: pd.DataFrame,
    *,
    dry_run: bool,
    allow_deletes: bool,
    force: bool,
    backup_dir: Any,
    max_workers: int | None,
    progress: bool,
) -> pd.DataFrame:
    key = f"{kind}_id"
    if not isinstance(frame, pd.DataFrame) or key not in frame.columns:
        raise InvalidArgumentError(
            f"write_{kind}s needs a long frame with a {key!r} column (from read_{kind}s)"
        )
    groups = list(iter_groups(frame, key))
    workers = max_workers or api.max_workers

    def prepare(group: tuple[str, pd.DataFrame]) -> _Prepared | MddError:
        object_id, rows = group
        try:
            return _prepare(api, kind, object_id, rows, allow_deletes=allow_deletes,
                            force=force)  # fmt: skip
        except MddError as exc:  # collected: every object is checked before any is sent
            return exc

    checked = run_bulk(prepare, groups, max_workers=workers, progress=progress,
                       desc=f"check {kind}s", label=lambda g: g[0])  # fmt: skip
    prepared: list[_Prepared] = []
    failures: list[tuple[str, MddError]] = []
    for (object_id, _rows), outcome in zip(groups, checked.results, strict=True):
        if isinstance(outcome, MddError):
            failures.append((object_id, outcome))
        elif not outcome.diff.empty and not outcome.report.ok:
            failures.append((object_id, _refusal(outcome)))
        else:
            prepared.append(outcome)
    if failures:
        _raise_combined(kind, failures)

    results: dict[str, WriteResult] = {}
    to_send = []
    for item in prepared:
        if item.diff.empty:
            results[item.object_id] = _not_sent(item, "unchanged")
        elif dry_run:
            results[item.object_id] = _not_sent(item, "dry-run")
        else:
            to_send.append(item)
    errors: dict[str, Exception] = {}
    if to_send:
        sent = run_bulk(lambda item: _send(api, item, backup_dir), to_send,
                        max_workers=workers, progress=progress, errors="skip",
                        desc=f"write {kind}s", label=lambda item: item.object_id)  # fmt: skip
        for position, item in enumerate(to_send):
            if position in sent.exceptions:
                errors[item.object_id] = sent.exceptions[position]
            else:
                results[item.object_id] = sent.results[position]
    return _results_frame(key, [g[0] for g in groups], results, errors)


def _refusal(prepared: _Prepared) -> IncompletePayloadError:
    try:
        _refuse(prepared)
    except IncompletePayloadError as exc:
        return exc
    raise AssertionError("unreachable: the report had errors")


def _raise_combined(kind: Kind, failures: list[tuple[str, MddError]]) -> None:
    """Nothing was sent: raise one error that names every object that failed its check."""
    names = ", ".join(repr(object_id) for object_id, _ in failures[:10])
    more = f" and {len(failures) - 10} more" if len(failures) > 10 else ""
    reports = [e.report for _, e in failures if isinstance(e, IncompletePayloadError)]
    if len(reports) == len(failures):
        report = CheckReport.concat(reports)
        raise IncompletePayloadError(
            f"no {kind} was written: {len(failures)} {kind}(s) failed the completeness check "
            f"({names}{more}): {report.summary()}",
            report=report,
        )
    first_id, first = failures[0]
    others = "; ".join(f"{object_id!r}: {exc.message}" for object_id, exc in failures[1:5])
    first.add_note(
        f"no {kind} was written; {len(failures)} {kind}(s) failed before sending ({names}{more})"
        + (f"; others: {others}" if others else "")
    )
    raise first


def _results_frame(
    key: str, ids: list[str], results: dict[str, WriteResult], errors: dict[str, Exception]
) -> pd.DataFrame:
    rows = []
    for object_id in ids:
        result = results.get(object_id)
        error = errors.get(object_id)
        rows.append(
            {
                key: object_id,
                "status": "failed" if error is not None else result.status,
                "changed_cells": None if result is None else len(result.diff.changed),
                "added_rows": None if result is None else len(result.diff.added),
                "deleted_rows": None if result is None else len(result.diff.deleted),
                "backup": None if result is None or result.backup is None else str(result.backup),
                "verified": None if result is None else result.verified,
                "error": None if error is None else f"{type(error).__name__}: {error}",
            }
        )
    frame = pd.DataFrame(rows, columns=[key, *RESULT_COLUMNS])
    frame = frame.astype(
        {key: "string", "status": "string", "changed_cells": "Int64", "added_rows": "Int64",
         "deleted_rows": "Int64", "backup": "string", "verified": "boolean", "error": "string"}
    )  # fmt: skip
    frame.attrs["results"] = results
    return frame


def write_tables(
    api: Api,
    frame: pd.DataFrame,
    *,
    dry_run: bool = False,
    allow_deletes: bool = False,
    force: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
    max_workers: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Write every table of a long frame (from ``read_tables``), safely.

    Each table is read and checked first (concurrently); if any table changed since
    it was read or fails its completeness check, nothing is sent and one error names
    them all. Then the changed tables are backed up, written and verified
    concurrently with a progress bar.

    Parameters
    ----------
    api : Api
    frame : pandas.DataFrame
        A long frame with a ``table_id`` column and each row's original position as
        index (split with :func:`mddframes.frames.iter_groups`).
    dry_run, allow_deletes, force, backup_dir
        As for :func:`write_table`, applied to every table.
    max_workers : int, optional
        Concurrent calls; default ``api.max_workers``.
    progress : bool, default True
        Show ``tqdm.auto`` progress bars.

    Returns
    -------
    pandas.DataFrame
        One row per table: ``table_id``, ``status`` (written, unchanged, dry-run, or
        failed when its PUT or verification failed), ``changed_cells``, ``added_rows``,
        ``deleted_rows``, ``backup``, ``verified``, ``error``;
        ``attrs["results"]`` maps each id to its :class:`WriteResult`.

    Raises
    ------
    ConcurrentModificationError, IncompletePayloadError, MddError
        Before anything is sent, as described above.
    """
    return _write_many(api, "table", frame, dry_run=dry_run, allow_deletes=allow_deletes,
                       force=force, backup_dir=backup_dir, max_workers=max_workers,
                       progress=progress)  # fmt: skip


def write_mappings(
    api: Api,
    frame: pd.DataFrame,
    *,
    dry_run: bool = False,
    allow_deletes: bool = False,
    force: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
    max_workers: int | None = None,
    progress: bool = True,
) -> pd.DataFrame:
    """Write every mapping of a long frame (from ``read_mappings``), safely.

    Same as :func:`write_tables`, with a ``mapping_id`` column.
    """
    return _write_many(api, "mapping", frame, dry_run=dry_run, allow_deletes=allow_deletes,
                       force=force, backup_dir=backup_dir, max_workers=max_workers,
                       progress=progress)  # fmt: skip
