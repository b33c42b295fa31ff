"""Batches of writes that survive a crash: list them, resume them, roll them back.

Every multi-object write keeps a journal (:mod:`mddframes.writing.journal` describes the
file). :func:`pending_writes` lists the batches that did not finish; :func:`resume`
sends what was not yet written; :func:`roll_back` puts back what each object held
before. Both refuse objects that someone else changed since the batch, and both are
safe to run twice. The command line: ``mddframes writes``, ``mddframes resume BATCH``,
``mddframes roll-back BATCH``.
"""

from mddframes.journal.recovery import (
    PENDING_COLUMNS,
    RECOVERY_COLUMNS,
    pending_writes,
    resume,
    roll_back,
)

__all__ = ["PENDING_COLUMNS", "RECOVERY_COLUMNS", "pending_writes", "resume", "roll_back"]
