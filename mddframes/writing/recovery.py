"""Finish or undo a batch of writes from its journal: list, resume, roll back.

Both directions decide from what the service holds *now*, compared with the journal's
digests, never from the journal's events alone (a crash between a PUT and its journal
line leaves the journal behind the service):

- the object holds the target content: nothing to send (``already``);
- it holds the other side's content: send the target (a PUT, read back, compare);
- it holds anything else: someone changed it since, and the whole call is refused
  before anything is sent, naming every such object.

So either call can run twice, or again after a crash of its own, and gets to the same
place. Each step is appended to the batch's journal.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pandas as pd

from mddframes.bulk import resolve_workers, run_bulk
from mddframes.codec.kinds import KINDS, Kind
from mddframes.codec.values import digest
from mddframes.doc_sections import documented
from mddframes.errors import ConcurrentModificationError, JournalError
from mddframes.writing.backups import load_backup
from mddframes.writing.batch import describe
from mddframes.writing.changes import prepare_replacement
from mddframes.writing.documents import fetch
from mddframes.writing.engine import send
from mddframes.writing.journal_file import (
    JournalState,
    JournalWriter,
    PlannedObject,
    Target,
    ends_finished,
    find_journal,
    journal_folders,
    read_journal,
)
from mddframes.writing.locks import batch_lock, object_locks

if TYPE_CHECKING:
    from mddframes.api import Api

Actor = Literal["resume", "roll-back"]

#: The columns of :func:`pending_writes`.
PENDING_COLUMNS = (
    "batch", "operation", "created_at", "objects", "verified", "failed", "unfinished",
    "rolled_back", "state", "journal",
)  # fmt: skip
#: The columns of the frames :func:`resume` and :func:`roll_back` return.
RECOVERY_COLUMNS = ("kind", "id", "action", "error")


def _state_of(journal: JournalState) -> dict[str, Any]:
    verified = failed = rolled_back = 0
    for index in range(len(journal.objects)):
        last = journal.last_event(index)
        events = [e for e in journal.events if e["n"] == index]
        target = events[-1]["target"] if events else "after"
        if last == "verified" and target == "after":
            verified += 1
        elif last == "verified":
            rolled_back += 1
        elif last == "failed":
            failed += 1
    total = len(journal.objects)
    unfinished = total - verified - failed - rolled_back
    if journal.outcome is not None:
        state = journal.outcome
    elif any(e["by"] == "roll-back" for e in journal.events):
        state = "rolling back"
    elif failed:
        state = "failed"
    else:
        state = "interrupted"
    return {
        "batch": journal.batch, "operation": journal.operation,
        "created_at": pd.Timestamp(journal.created_at), "objects": total,
        "verified": verified, "failed": failed, "unfinished": unfinished,
        "rolled_back": rolled_back, "state": state, "journal": str(journal.path),
    }  # fmt: skip


def pending_writes(
    api: Api,
    *,
    backup_dir: str | os.PathLike[str] | None = None,
    include_finished: bool = False,
) -> pd.DataFrame:
    """The batches of writes that did not finish (a crash, a failure), oldest first.

    Parameters
    ----------
    api : Api
        A client of the tenant the batches were written to.
    backup_dir : path, optional
        The root folder of the backups given to the writes; default the ``backup_dir``
        setting, else the user's data folder
        (:func:`~mddframes.writing.backups.backup_root`), and then also an older
        version's ``./.mddframes/backups`` if the current folder has one. The journals
        are in ``<root>/<tenant>/journal``.
    include_finished : bool, default False
        Also list batches that were written completely or rolled back.

    Returns
    -------
    pandas.DataFrame
        One row per batch: ``batch`` (the id to pass to :func:`resume` or
        :func:`roll_back`), ``operation``, ``created_at``, ``objects``, ``verified``
        (written and read back), ``failed`` (last attempt failed), ``unfinished``
        (not known to be written: maybe sent, maybe not), ``rolled_back``,
        ``state`` (interrupted, failed, rolling back, written, rolled-back) and
        ``journal`` (the file).

    Raises
    ------
    JournalError
        A journal is damaged in the middle (not a torn last line).
    """
    paths: dict[str, Path] = {}
    for folder in journal_folders(api, backup_dir):
        for path in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
            paths.setdefault(path.name, path)
    rows = []
    # batch ids begin with their UTC time: sorted by name is oldest first across folders
    for _name, path in sorted(paths.items()):
        if not include_finished and ends_finished(path):
            continue  # finished: known from the tail, without parsing the payloads
        journal = read_journal(path)
        if journal is None:
            continue  # the plan was cut off while written: nothing was sent
        if journal.outcome is None or include_finished:
            rows.append(_state_of(journal))
    frame = pd.DataFrame(rows, columns=list(PENDING_COLUMNS))
    return frame.astype(
        {"batch": "string", "operation": "string", "created_at": "datetime64[ns, UTC]",
         "objects": "Int64", "verified": "Int64", "failed": "Int64", "unfinished": "Int64",
         "rolled_back": "Int64", "state": "string", "journal": "string"}
    )  # fmt: skip


@documented
def resume(
    api: Api,
    batch: str | os.PathLike[str],
    *,
    backup_dir: str | os.PathLike[str] | None = None,
    max_workers: int | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Finish an interrupted batch: send what the service does not hold yet.

    Every object is read first. One that still holds what the journal says it held
    before is sent (and read back); one that already holds the new content is left
    alone; if any holds something else, someone changed it since, and nothing is
    sent. Safe to run again, also after a crash of its own.

    Parameters
    ----------
    api : Api
        A client of the tenant the batch was written to.
    batch : str or path
        The batch id (``pending_writes()["batch"]``) or its journal file.
    backup_dir : path, optional
        The root folder of the backups given to the write.
    {max_workers}
    {progress}

    Returns
    -------
    pandas.DataFrame
        One row per object: ``kind``, ``id``, ``action`` ("sent", "already" when it
        held the new content, or "failed") and ``error``. ``attrs["batch"]`` is the
        batch id and ``attrs["finished"]`` True when every object holds the new content.

    Raises
    ------
    ConcurrentModificationError
        Objects changed by someone else since the batch (all named); nothing was sent.
    JournalError
        The batch was rolled back, or its journal is damaged.
    """
    return _recover(api, batch, "after", backup_dir=backup_dir, max_workers=max_workers,
                    progress=progress)  # fmt: skip


@documented
def roll_back(
    api: Api,
    batch: str | os.PathLike[str],
    *,
    backup_dir: str | os.PathLike[str] | None = None,
    max_workers: int | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Undo a batch: put back what each object held before it, from its backup.

    Every object is read first. One that holds what the batch sent is restored from
    its backup (and read back); one that still holds its old content is left alone;
    if any holds something else, someone changed it since, and nothing is sent. Safe
    to run again, also after a crash of its own; a finished batch can be rolled back
    too.

    Parameters
    ----------
    api : Api
        A client of the tenant the batch was written to.
    batch : str or path
        The batch id (``pending_writes()["batch"]``) or its journal file.
    backup_dir : path, optional
        The root folder of the backups given to the write.
    {max_workers}
    {progress}

    Returns
    -------
    pandas.DataFrame
        One row per object: ``kind``, ``id``, ``action`` ("sent", "already" when it
        held its old content, or "failed") and ``error``; ``attrs["batch"]`` and
        ``attrs["finished"]`` as for :func:`resume`.

    Raises
    ------
    ConcurrentModificationError
        Objects changed by someone else since the batch (all named); nothing was sent.
    JournalError
        A backup is missing or does not hold what the journal says, or the journal is
        damaged.
    """
    return _recover(api, batch, "before", backup_dir=backup_dir, max_workers=max_workers,
                    progress=progress)  # fmt: skip


def _recover(
    api: Api,
    batch: str | os.PathLike[str],
    target: Target,
    *,
    backup_dir: Any,
    max_workers: int | None,
    progress: bool | None,
) -> pd.DataFrame:
    """One actor at a time: the batch's lock, then its objects' locks, then the work."""
    path = find_journal(api, batch, backup_dir)
    by: Actor = "resume" if target == "after" else "roll-back"
    seen = _recoverable(api, path, target)
    with batch_lock(api, seen.batch, purpose=f"{by} of batch {seen.batch}"):
        journal = _recoverable(api, path, target)  # as it is now, after any wait
        if journal.outcome != seen.outcome:
            raise JournalError(
                f"batch {journal.batch} was {journal.outcome} by another caller while this "
                f"{by.replace('-', ' ')} waited for it; nothing was sent. Look at "
                "pending_writes(include_finished=True) and decide again",
                path=str(path),
            )
        keys = [(item.kind, item.id) for item in journal.objects]
        with object_locks(api, keys, purpose=f"{by} of batch {journal.batch}"):
            workers = resolve_workers(max_workers, api.max_workers)
            return _recover_locked(api, journal, target, by, workers=workers,
                                   progress=progress)  # fmt: skip


def _recoverable(api: Api, path: Path, target: Target) -> JournalState:
    """The journal, if this tenant's batch can be recovered in this direction."""
    journal = read_journal(path)
    if journal is None:
        raise JournalError(
            f"batch {path.stem} was cut off while its plan was written: nothing was sent, "
            "so there is nothing to resume or roll back",
            path=str(path),
        )
    tenant = getattr(api, "tenant", None)
    if journal.tenant and tenant and journal.tenant != tenant:
        raise JournalError(f"batch {journal.batch} is of tenant {journal.tenant!r}, this "
                           f"client is connected to {tenant!r}", path=str(path))  # fmt: skip
    if target == "after" and journal.outcome == "rolled-back":
        raise JournalError(
            f"batch {journal.batch} was rolled back; resuming it would redo the writes. "
            "Write the frame again instead",
            path=str(path),
        )
    return journal


def _recover_locked(
    api: Api,
    journal: JournalState,
    target: Target,
    by: Actor,
    *,
    workers: int,
    progress: bool | None,
) -> pd.DataFrame:
    """Read every object, refuse if any was changed by someone else, send the rest."""
    payloads = _payloads(journal, target)
    objects, path = journal.objects, journal.path
    kinds = _kinds(journal)
    reading = run_bulk(lambda index: fetch(api, kinds[index], objects[index].id),
                       range(len(objects)), max_workers=workers, progress=False,
                       desc=f"{by}: read", label=lambda index: objects[index].id)  # fmt: skip
    held = [now for _index, now in reading.succeeded]  # all: errors="raise"
    current = [digest(now.document()) for now in held]
    want = [item.after if target == "after" else item.before for item in objects]
    other = [item.before if target == "after" else item.after for item in objects]
    _refuse_changed(journal, by, [item for item, now, a, b in zip(objects, current, want, other,
                                                                  strict=True) if now not in (a, b)])  # fmt: skip
    to_send = [index for index, (now, a) in enumerate(zip(current, want, strict=True)) if now != a]
    errors: dict[int, Exception] = {}
    with JournalWriter.reopen(path) as writer:
        for index, (now, a) in enumerate(zip(current, want, strict=True)):
            if now == a and journal.last_event(index, target) != "verified":
                writer.event(index, "verified", target, by)  # found there already

        def send_one(index: int) -> None:
            item = objects[index]
            # what it held before this step: the batch's backup (resume), or the
            # journal's payload (roll back)
            before = Path(item.backup) if target == "after" else Path(path)
            change = prepare_replacement(api, kinds[index], item.id, payloads[index],
                                         held=held[index], records_context=False)  # fmt: skip
            try:
                send(api, change, backup=before,
                     record=lambda event: writer.event(index, event, target, by))  # fmt: skip
            except Exception as exc:
                writer.event(index, "failed", target, by, error=describe(exc))
                raise

        if to_send:
            outcome = run_bulk(send_one, to_send, max_workers=workers, progress=progress,
                               errors="skip", desc=by,
                               label=lambda index: objects[index].id)  # fmt: skip
            errors = {to_send[p]: exc for p, exc in outcome.exceptions.items()}
        if not errors:
            writer.end("written" if target == "after" else "rolled-back", by)
    return _recovery_frame(journal, to_send, errors)


def _kinds(journal: JournalState) -> list[Kind]:
    """The kind of each planned object (a journal naming another kind is damaged)."""
    kinds: list[Kind] = []
    for item in journal.objects:
        kind = next((known for known in KINDS if known == item.kind), None)
        if kind is None:
            raise JournalError(
                f"journal {journal.path} is damaged: object {item.id!r} has kind "
                f"{item.kind!r}, not 'table' or 'mapping'; nothing was sent",
                path=str(journal.path),
            )
        kinds.append(kind)
    return kinds


def _refuse_changed(journal: JournalState, by: Actor, changed: list[PlannedObject]) -> None:
    if not changed:
        return
    names = ", ".join(f"{item.kind} {item.id!r}" for item in changed[:10])
    more = f" and {len(changed) - 10} more" if len(changed) > 10 else ""
    raise ConcurrentModificationError(
        f"cannot {by.replace('-', ' ')} batch {journal.batch}: {len(changed)} object(s) "
        f"changed by someone else since the batch ({names}{more}); they hold neither "
        "what the batch sent nor what they held before. Nothing was sent. Their "
        f"backups are named in the journal {journal.path}",
    )


def _recovery_frame(
    journal: JournalState, to_send: list[int], errors: dict[int, Exception]
) -> pd.DataFrame:
    rows = []
    for index, item in enumerate(journal.objects):
        error = errors.get(index)
        action = "failed" if error else ("sent" if index in to_send else "already")
        rows.append({"kind": item.kind, "id": item.id, "action": action,
                     "error": None if error is None else describe(error)})  # fmt: skip
    frame = pd.DataFrame(rows, columns=list(RECOVERY_COLUMNS)).astype("string")
    frame.attrs["batch"] = journal.batch
    frame.attrs["finished"] = not errors
    return frame


def _payloads(journal: JournalState, target: Target) -> list[dict[str, Any]]:
    """What to send for each object: the planned payload, or the backup's content."""
    if target == "after":
        for item in journal.objects:
            _check(item, item.payload, item.after, "the journal's payload")
        return [item.payload for item in journal.objects]
    payloads = []
    for item in journal.objects:
        try:
            document = load_backup(item.backup)
        except Exception as exc:
            raise JournalError(f"cannot roll back batch {journal.batch}: the backup of "
                               f"{item.kind} {item.id!r} cannot be read ({exc})",
                               path=str(journal.path)) from None  # fmt: skip
        _check(item, document["payload"], item.before, f"its backup {item.backup}")
        payloads.append(document["payload"])
    return payloads


def _check(item: PlannedObject, payload: Any, expected: str, what: str) -> None:
    if digest(payload) != expected:
        raise JournalError(
            f"{item.kind} {item.id!r}: {what} does not match the digest in the journal "
            "(the file was changed); nothing was sent"
        )
