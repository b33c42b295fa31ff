"""The safe write: a full-replacement PUT that never loses data.

Every write goes through one engine (:mod:`~mddframes.writing.engine`), in this order:

1. read what the service holds now (one GET);
2. if it changed since the frame was read, raise
   :class:`~mddframes.errors.ConcurrentModificationError` naming what changed (unless
   ``force``);
3. build the full payload by overlaying the frame's real changes onto the document it
   was read from, in one of two strategies (:mod:`~mddframes.writing.documents`): the
   parsed document, or, for a large table edited in its cells only, the bytes it was
   read as, batch by batch;
4. check it against what the service holds (:func:`mddframes.codec.check_payload`)
   and raise :class:`~mddframes.errors.IncompletePayloadError` carrying the report if
   it has errors (nothing is sent). A frame with no change sends nothing;
5. with ``dry_run``, return the diff and the report without sending;
6. save what the service held as a timestamped JSON backup;
7. PUT the payload;
8. read it back and compare with what was sent (``verified``, or
   :class:`~mddframes.errors.WriteVerificationError`), and record the read-back as the
   context of the frame's next write.

:func:`write_tables` / :func:`write_mappings` (a long frame of objects), :func:`restore`
and :func:`restore_backups` (backups put back) are batches: every object is read and
checked before any is sent, and the batch keeps a journal
(:mod:`~mddframes.writing.journal_file`) so that a crash half-way can be finished or
undone (:mod:`~mddframes.writing.recovery`: :func:`pending_writes`, :func:`resume`,
:func:`roll_back`).

The package, by job: :mod:`~mddframes.writing.engine` (the steps, once),
:mod:`~mddframes.writing.changes` (a frame edit or a replacement made a checked change,
the strategy chosen), :mod:`~mddframes.writing.documents` (what the service holds, the
two document strategies), :mod:`~mddframes.writing.single` (one object from a frame),
:mod:`~mddframes.writing.batch` (a long frame of objects),
:mod:`~mddframes.writing.restores` (backups put back),
:mod:`~mddframes.writing.recovery` (resume, roll back), :mod:`~mddframes.writing.backups`
(backup files), :mod:`~mddframes.writing.pruning` (old backups removed), :mod:`~mddframes.writing.journal_file` (the batch journal's format),
:mod:`~mddframes.writing.result` (:class:`WriteResult`).
"""

from mddframes.codec.kinds import Kind
from mddframes.writing.backups import (
    backup_folder,
    backup_root,
    default_backup_root,
    load_backup,
    save_backup,
)
from mddframes.writing.batch import RESULT_COLUMNS, write_mappings, write_tables
from mddframes.writing.pruning import PRUNE_COLUMNS, prune_backups
from mddframes.writing.recovery import (
    PENDING_COLUMNS,
    RECOVERY_COLUMNS,
    pending_writes,
    resume,
    roll_back,
)
from mddframes.writing.restores import RESTORE_COLUMNS, restore, restore_backups
from mddframes.writing.result import Status, WriteResult
from mddframes.writing.single import write_mapping, write_table

__all__ = [
    "PENDING_COLUMNS",
    "PRUNE_COLUMNS",
    "RECOVERY_COLUMNS",
    "RESTORE_COLUMNS",
    "RESULT_COLUMNS",
    "Kind",
    "Status",
    "WriteResult",
    "backup_folder",
    "backup_root",
    "default_backup_root",
    "load_backup",
    "pending_writes",
    "prune_backups",
    "restore",
    "restore_backups",
    "resume",
    "roll_back",
    "save_backup",
    "write_mapping",
    "write_table",
    "write_mappings",
    "write_tables",
]
