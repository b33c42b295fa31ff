"""The streamed write: a large table's cell edits written without the table in memory.

:func:`write_table_streamed` is the path :func:`~mddframes.writing.single.write_table`
tries first for a table read by a streamed read (its context keeps the document
compressed, with the frame's fingerprint). The steps of :mod:`mddframes.writing`, each
on bytes or on one batch of rows at a time:

1. read what the service holds now as bytes and compare its SHA-256 with that of the
   document the frame was read from (equal: no conflict, and the kept document *is*
   the current one; different: the whole-document path takes over, which reports the
   conflict);
2. build, check and diff the new document batch by batch
   (:func:`~mddframes.codec.streamed_overlay.overlay_document`);
3. refuse, or stop at a dry run, exactly as the whole-document path does;
4. stream the backup to disk from the kept bytes (they are what the service holds);
5. send the new document's bytes;
6. read it back as bytes: the same SHA-256 as what was sent verifies it at once;
   otherwise the two are compared by content, batch by batch.

Peak memory is about the new document's bytes twice (its pieces and the joined body)
plus one batch of parsed rows, instead of the parsed original, the new payload and
its encoding (measured in ``benchmarks/bench_write.py``). Anything the streamed path
does not cover returns None before a byte is sent, and the caller takes the
whole-document path.
"""

from __future__ import annotations

import hashlib
import logging
import os
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.codec.diff import diff_payloads
from mddframes.codec.fingerprint import fingerprint
from mddframes.codec.stream import KeptJson, byte_chunks, content_digest, keep_chunks, load_document
from mddframes.codec.streamed_overlay import StreamUnsupported, overlay_document
from mddframes.codec.values import canonical_json
from mddframes.context import ATTRS_KEY, ReadContext, context_of, registry_for
from mddframes.errors import IncompletePayloadError, WriteVerificationError
from mddframes.http.session import EncodedJson
from mddframes.writing.backups import save_backup_document
from mddframes.writing.result import WriteResult

if TYPE_CHECKING:
    from mddframes.api import Api

logger = logging.getLogger(__name__)


def write_table_streamed(
    api: Api,
    table_id: str,
    frame: Any,
    *,
    dry_run: bool = False,
    allow_deletes: bool = False,
    backup_dir: str | os.PathLike[str] | None = None,
) -> WriteResult | None:
    """:func:`~mddframes.writing.single.write_table` of a streamed read's frame, streamed.

    Returns
    -------
    WriteResult or None
        None when this write is not for the streamed path (nothing was sent): the
        frame was not read by a streamed read, its rows or columns changed, the table
        changed on the service since, or the document is one the splitter cannot
        cut. The raised errors are :func:`write_table`'s.
    """
    if not isinstance(frame, pd.DataFrame):
        return None
    context = context_of(api, frame, "table", table_id)
    if context is None or context.kept is None or context.fingerprint is None:
        return None
    if not context.fingerprint.fits(frame):
        return None
    original = context.kept
    if _current_sha256(api, table_id) != original.sha256:
        return None  # changed on the service (or served otherwise): the conflict path
    try:
        new = overlay_document(original, frame, context.fingerprint,
                               allow_deletes=allow_deletes, object_id=table_id)  # fmt: skip
    except StreamUnsupported as exc:
        logger.debug("table %r: whole-document write (%s)", table_id, exc)
        return None
    if new.diff.empty:
        return WriteResult("table", table_id, "unchanged", new.diff, new.report, _payload=original)
    if not new.report.ok:
        raise IncompletePayloadError(
            f"table {table_id!r} was not written: the payload would lose or corrupt data "
            f"({new.report.summary()}). Nothing was sent; see .report",
            report=new.report,
        )
    if dry_run:
        return WriteResult("table", table_id, "dry-run", new.diff, new.report,
                           _payload=keep_chunks([new.body]))  # fmt: skip
    # the kept bytes are what the service holds now (same SHA-256): they are the backup
    backup = save_backup_document(api, "table", table_id, original, backup_dir=backup_dir)
    body, diff, report = new.body, new.diff, new.report
    del new
    sent = hashlib.sha256(body).hexdigest()
    api.put_table(table_id, EncodedJson(body), answer=False)
    with api.get_table_stream(table_id) as answer:
        readback = keep_chunks(answer.chunks())
    if readback.sha256 != sent:
        _verify_content(table_id, readback, body, backup)
    del body
    logger.info("table %r written and verified (%s); backup %s", table_id, diff.summary(),
                backup)  # fmt: skip
    # the frame lines up row for row with what the service now holds: it can be
    # edited and written again, and its fingerprint is taken anew
    context = ReadContext("table", table_id, kept=readback, fingerprint=fingerprint(frame))
    registry_for(api).record(context)
    frame.attrs[ATTRS_KEY] = context
    return WriteResult("table", table_id, "written", diff, report, backup, True,
                       _payload=readback)  # fmt: skip


def _current_sha256(api: Api, table_id: str) -> str:
    digest = hashlib.sha256()
    with api.get_table_stream(table_id) as body:
        for chunk in body.chunks():
            digest.update(chunk)
    return digest.hexdigest()


def _verify_content(table_id: str, readback: KeptJson, sent: bytes, backup: Any) -> None:
    """Raise unless the table read back holds what was sent (other bytes, same content)."""
    read = content_digest(readback.chunks())
    if read is not None and read == content_digest(byte_chunks(sent)):
        return
    # unsure, or different: the documents whole, to tell and to show what differs
    expected, actual = load_document(keep_chunks([sent])), load_document(readback)
    if canonical_json(expected) == canonical_json(actual):
        return
    mismatch = diff_payloads(expected, actual, kind="table")
    raise WriteVerificationError(
        f"table {table_id!r} was written but reads back different from what was sent "
        f"({mismatch.summary()}); what it held before is in {backup}",
        operation="tableUpdate",
    )
