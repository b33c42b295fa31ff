"""One table or mapping: prepare (steps 1 to 4), send (steps 6 to 8), write, restore.

The steps are listed in :mod:`mddframes.writing`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.api_bodies import json_object
from mddframes.codec import check_payload, diff_payloads, overlay, to_payload
from mddframes.codec.fastjson import gc_paused
from mddframes.codec.stream import KeptJson, keep_chunks, same_document
from mddframes.codec.values import canonical_json
from mddframes.context import ATTRS_KEY, ReadContext, context_of, registry_for
from mddframes.errors import (
    ConcurrentModificationError,
    IncompletePayloadError,
    InvalidArgumentError,
    WriteRefusedError,
    WriteVerificationError,
)
from mddframes.frames._shape import snake_case
from mddframes.http.decoding import decode_json_content
from mddframes.ids import require_id
from mddframes.writing.backups import load_backup, save_backup, save_backup_document
from mddframes.writing.result import Kind, WriteResult, _not_sent, _Prepared
from mddframes.writing.streamed import write_table_streamed

if TYPE_CHECKING:
    from mddframes.api import Api

logger = logging.getLogger(__name__)

_OPERATION = {"table": "tableUpdate", "mapping": "mappingUpdate"}


# the raw calls of each kind, named (not looked up by name) so that readers and type
# checkers follow them to the Api
def _get(api: Api, kind: Kind, object_id: str) -> dict[str, Any]:
    return api.get_table(object_id) if kind == "table" else api.get_mapping(object_id)


@dataclass(frozen=True)
class _Fetched:
    """A table's document as received (compressed, not parsed) and where it came from."""

    kept: KeptJson
    entry: Any
    url: str
    status: int
    content_type: str | None

    def parse(self) -> dict[str, Any]:
        """The document parsed (whole), with the errors any read of it would raise."""
        decoded = decode_json_content(self.entry, self.url, self.kept.content(),
                                      status=self.status, content_type=self.content_type)  # fmt: skip
        return json_object(decoded, self.entry.operation, self.url)


def _get_kept(api: Api, kind: Kind, object_id: str) -> _Fetched | None:
    """The object's document as received, compressed, with its SHA-256; not parsed.

    Tables only (the large ones): None for a mapping, which is read parsed.
    """
    if kind != "table":
        return None
    with api.get_table_stream(object_id) as body:
        kept = keep_chunks(body.chunks())
        return _Fetched(kept, body.entry, body.url, body.status, body.content_type)


def _put(api: Api, kind: Kind, object_id: str, payload: dict[str, Any]) -> None:
    if kind == "table":
        # the answer (the whole table again) is dropped unparsed: the read-back that
        # follows is what the write is checked against
        api.put_table(object_id, payload, answer=False)
    else:
        api.put_mapping(object_id, payload)


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
    return _prepare_kept(api, kind, object_id, frame, columns=columns,
                         allow_deletes=allow_deletes, force=force)[0]  # fmt: skip


def _prepare_kept(
    api: Api,
    kind: Kind,
    object_id: str,
    frame: pd.DataFrame,
    *,
    columns: Any = None,
    allow_deletes: bool = False,
    force: bool = False,
) -> tuple[_Prepared, _Fetched | None]:
    """:func:`_prepare`, and what the service holds now as received (a table's bytes,
    compressed), from which :func:`_write` streams the backup.

    A table is fetched as bytes and parsed only when needed: when its SHA-256 is that
    of the bytes the frame was read from (a streamed read), it is that same content,
    and the original parsed once serves as both.
    """
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
    current_kept = _get_kept(api, kind, object_id)
    # once: a streamed read's context parses its kept document on each access
    original = context.payload if context is not None else None
    if (
        original is not None
        and current_kept is not None
        and context is not None
        and context.kept is not None
        and context.kept.sha256 == current_kept.kept.sha256
    ):
        # the very bytes that were read: the same content, no second parse to compare
        current = original
    elif current_kept is not None:
        current = current_kept.parse()
    else:
        current = _get(api, kind, object_id)
    conflict = original is not None and current is not original and not _same(original, current)
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
    prepared = _Prepared(kind, object_id, current, result.payload, diff, report,
                         keeps_positions, frame)  # fmt: skip
    return prepared, current_kept


def _refuse(prepared: _Prepared) -> None:
    if not prepared.report.ok:
        raise IncompletePayloadError(
            f"{prepared.kind} {prepared.object_id!r} was not written: the payload would lose "
            f"or corrupt data ({prepared.report.summary()}). Nothing was sent; see .report",
            report=prepared.report,
        )


def _send(
    api: Api,
    prepared: _Prepared,
    backup_dir: Any,
    *,
    backup: Path | None = None,
    record: Callable[[str], None] | None = None,
) -> WriteResult:
    """Steps 6 to 8: backup, PUT, read back and compare; record the new context.

    A batch passes the ``backup`` it already took, and ``record``, called with
    "sending", "sent" and "verified" as the write gets there (its journal).
    """
    kind, object_id = prepared.kind, prepared.object_id
    if backup is None:
        backup = save_backup(api, kind, object_id, prepared.current, backup_dir=backup_dir)
    note = record or (lambda event: None)
    note("sending")
    _put(api, kind, object_id, prepared.payload)
    note("sent")
    readback_kept = _get_kept(api, kind, object_id)
    if readback_kept is not None and same_document(readback_kept.kept, prepared.payload, kind):
        readback: Any = None  # verified batch by batch, never parsed whole
    else:
        readback = (
            readback_kept.parse() if readback_kept is not None else _get(api, kind, object_id)
        )
    if readback is not None and not _same(readback, prepared.payload):
        mismatch = diff_payloads(prepared.payload, readback, kind=kind)
        raise WriteVerificationError(
            f"{kind} {object_id!r} was written but reads back different from what was sent "
            f"({mismatch.summary()}); what it held before is in {backup}",
            operation=_OPERATION[kind],
        )
    note("verified")
    logger.info("%s %r written and verified (%s); backup %s", kind, object_id,
                prepared.diff.summary(), backup)  # fmt: skip
    if prepared.keeps_positions:
        # the frame still lines up row for row with what the service now holds, so it
        # can be edited and written again; after added or deleted rows it cannot, and
        # the stale context makes a second write of it stop with a conflict
        # a table's context keeps the read-back bytes compressed, as a streamed read does
        context = (
            ReadContext(kind, object_id, kept=readback_kept.kept)
            if readback_kept is not None
            else ReadContext(kind, object_id, readback)
        )
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
    with gc_paused():  # no cyclic GC passes over the rows of the documents held here
        if kind == "table" and columns is None:
            streamed = write_table_streamed(api, object_id, frame, dry_run=dry_run,
                                            allow_deletes=allow_deletes, backup_dir=backup_dir)  # fmt: skip
            if streamed is not None:
                return streamed
        prepared, current_kept = _prepare_kept(api, kind, object_id, frame, columns=columns,
                                               allow_deletes=allow_deletes, force=force)  # fmt: skip
        if prepared.diff.empty:
            return _not_sent(prepared, "unchanged")
        _refuse(prepared)
        if dry_run:
            return _not_sent(prepared, "dry-run")
        backup = None
        if current_kept is not None:
            # the bytes as received, streamed to disk: no second serialisation in memory
            backup = save_backup_document(api, kind, object_id, current_kept.kept,
                                          backup_dir=backup_dir)  # fmt: skip
        return _send(api, prepared, backup_dir, backup=backup)


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

    The same steps and errors as :func:`write_table`, for a mapping (no ``columns``).

    Parameters
    ----------
    api : Api
        The client the mapping was read through.
    mapping_id : str
        The mapping id.
    frame : pandas.DataFrame
        The frame from :func:`~mddframes.frames.table.read_mapping`, edited; its index
        must still be each row's original position.
    dry_run : bool, default False
        Build and check the payload, return the diff and the report, send nothing.
    allow_deletes : bool, default False
        Allow rows to be deleted.
    force : bool, default False
        Write even if the mapping changed on the service since it was read, or when it
        was never read through this client.
    backup_dir : path, optional
        Root folder of the backups; default ``.mddframes/backups``. The backup goes to
        ``<root>/<tenant>/mapping/<id>/<UTC timestamp>.json``.

    Returns
    -------
    WriteResult

    Raises
    ------
    ConcurrentModificationError, IncompletePayloadError, WriteVerificationError,
    WriteRefusedError, MddError
        As for :func:`write_table`.
    """
    return _write(api, "mapping", mapping_id, frame, dry_run=dry_run,
                  allow_deletes=allow_deletes, force=force, backup_dir=backup_dir)  # fmt: skip


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
    current = _get(api, kind, object_id)
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
