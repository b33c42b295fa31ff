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

A large table (one read by a streamed read) whose frame was edited in its cells only
takes the same steps on bytes and on one batch of rows at a time
(:mod:`~mddframes.writing.streamed`): the table is never held parsed, and the new
document is sent as the bytes it was read as except for the batches that changed.

:func:`restore` puts a backup back (backing up first). :func:`write_tables` /
:func:`write_mappings` write the objects of a long frame, and :func:`restore_backups`
puts several backups back: every object is read and checked before any is sent, and
the batch keeps a journal (:mod:`~mddframes.writing.journal`) so that a crash half-way
can be resumed or rolled back (:mod:`mddframes.journal`).

The package, by job: :mod:`~mddframes.writing.result` (:class:`WriteResult`),
:mod:`~mddframes.writing.single` (one object, and :func:`restore`),
:mod:`~mddframes.writing.streamed` (one large table, streamed),
:mod:`~mddframes.writing.backups` (backup files), :mod:`~mddframes.writing.many`
(a long frame of objects), :mod:`~mddframes.writing.restores` (several backups),
:mod:`~mddframes.writing.journal` (the batch journal file).
"""

from mddframes.writing.backups import (
    DEFAULT_BACKUP_ROOT,
    backup_folder,
    load_backup,
    save_backup,
)
from mddframes.writing.many import RESULT_COLUMNS, write_mappings, write_tables
from mddframes.writing.restores import RESTORE_COLUMNS, restore_backups
from mddframes.writing.result import Kind, Status, WriteResult
from mddframes.writing.single import restore, write_mapping, write_table

__all__ = [
    "DEFAULT_BACKUP_ROOT",
    "RESTORE_COLUMNS",
    "RESULT_COLUMNS",
    "Kind",
    "Status",
    "WriteResult",
    "backup_folder",
    "load_backup",
    "restore",
    "restore_backups",
    "save_backup",
    "write_mapping",
    "write_table",
    "write_mappings",
    "write_tables",
]
