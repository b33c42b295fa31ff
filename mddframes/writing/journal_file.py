"""The write journal: one append-only JSON Lines file per batch of writes.

A multi-object write (``write_tables``, ``write_mappings``, ``restore_backups``) first
backs up every object it will change, then writes the batch's *plan* as the journal's
first line, and only then sends anything. Each later step appends one line. Every line
is flushed and fsynced before the next step, so after a crash at any moment the journal
says, for each object, what it held before (digest and backup file), what was to be
sent (digest and the payload itself), and how far the write got. The file lives at
``<backup root>/<tenant>/journal/<batch>.jsonl`` and is never rewritten.

The lines (``"v": 1`` on the plan)::

    {"type": "plan", "v": 1, "batch": ..., "operation": "write_tables", "tenant": ...,
     "createdAt": ..., "objects": [{"kind", "id", "backup", "before", "after",
     "payload"}, ...]}
    {"type": "event", "n": <object index>, "event": "sending|sent|verified|failed",
     "target": "after|before", "by": "write|resume|roll-back", "at": ..., "error": ...}
    {"type": "end", "outcome": "written|rolled-back", "by": ..., "at": ...}
    {"type": "reopened", "at": ..., "tornBytes": <n>}

``before``/``after`` are SHA-256 digests of the canonical JSON of what the service held
and of the payload. ``target`` says which of the two an event moves the object to
(``before`` for a roll back). A crash while a line is written leaves a *torn* last
line (no newline): readers ignore it. Whoever appends next first ends it with a
newline and a ``reopened`` line, so the torn fragment stays recognisable.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Self

from mddframes.codec import depth
from mddframes.disk_modes import open_private, private_dir, sync_folder
from mddframes.disk_names import id_file_name
from mddframes.errors import InvalidArgumentError, JournalError
from mddframes.writing.backups import backup_root, legacy_backup_root, path_segment

if TYPE_CHECKING:
    from mddframes.api import Api

VERSION = 1
Target = Literal["after", "before"]
EVENTS = ("sending", "sent", "verified", "failed")


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat().replace("+00:00", "Z")


def journal_folder(api: Api | None, backup_dir: str | os.PathLike[str] | None = None) -> Path:
    """The folder of one tenant's journals: ``<backup root>/<tenant>/journal``."""
    tenant = getattr(api, "tenant", None) or "default"
    return backup_root(api, backup_dir) / path_segment(str(tenant)) / "journal"


def journal_folders(
    api: Api | None, backup_dir: str | os.PathLike[str] | None = None
) -> list[Path]:
    """Where a tenant's journals are looked for: :func:`journal_folder`, and with no
    ``backup_dir`` argument also the one under an older version's
    ``./.mddframes/backups`` when the current folder has it (named once in a warning)."""
    folders = [journal_folder(api, backup_dir)]
    legacy = legacy_backup_root() if backup_dir is None else None
    if legacy is not None:
        tenant = getattr(api, "tenant", None) or "default"
        old = legacy / path_segment(str(tenant)) / "journal"
        if old.is_dir() and old.resolve() != folders[0].resolve():
            folders.append(old)
    return folders


def new_batch_id() -> str:
    """A new batch id: UTC time (sorts in time order) and 6 random hex digits."""
    return _dt.datetime.now(_dt.UTC).strftime("%Y%m%dT%H%M%SZ-") + secrets.token_hex(3)


@dataclass
class PlannedObject:
    """One object of a batch, as the plan line names it."""

    kind: str
    id: str
    backup: str
    before: str
    after: str
    payload: dict[str, Any] = field(repr=False)


@dataclass
class JournalState:
    """What a journal file says: the plan, each object's events, the end (if any)."""

    path: Path
    batch: str
    operation: str
    tenant: str | None
    created_at: str
    objects: list[PlannedObject]
    events: list[dict[str, Any]]
    outcome: str | None
    torn: bool

    def last_event(self, index: int, target: Target | None = None) -> str | None:
        """The last event of object ``index`` (towards ``target`` when given)."""
        last = None
        for event in self.events:
            if event["n"] == index and (target is None or event.get("target") == target):
                last = event["event"]
        return last

    def last_error(self, index: int) -> str | None:
        """The error of the object's last ``failed`` event, if its last event failed."""
        last = [e for e in self.events if e["n"] == index]
        if last and last[-1]["event"] == "failed":
            return last[-1].get("error")
        return None


def read_journal(path: str | os.PathLike[str]) -> JournalState | None:
    """Read a journal; ``None`` when its plan line was cut off (nothing was sent then).

    A torn last line is ignored, and so is a torn line followed by a ``reopened`` line.

    Raises
    ------
    JournalError
        The file cannot be read, or a complete line is not a journal line.
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise JournalError(f"cannot read journal {path}: {exc}", path=str(path)) from None
    chunks = data.split(b"\n")
    torn = chunks[-1] != b""  # the last line never got its newline: a crash mid-write
    lines = chunks[:-1]
    records: list[dict[str, Any]] = []
    for number, raw in enumerate(lines, start=1):
        try:
            record = depth.loads(raw, what=f"journal {path}")
            if not isinstance(record, dict) or "type" not in record:
                raise ValueError("not a journal record")
        except ValueError as exc:
            if number < len(lines) and _is_reopened(lines[number]):
                continue  # a torn line, ended later by whoever appended next
            raise JournalError(
                f"journal {path} line {number} is damaged ({exc}); it was written "
                "completely, so this is not a crash mid-write: keep the file and the "
                "backups next to it, and check them by hand",
                path=str(path),
            ) from None
        records.append(record)
    if not records or records[0].get("type") != "plan":
        return None
    plan = records[0]
    objects = [PlannedObject(**item) for item in plan["objects"]]
    events = [r for r in records[1:] if r["type"] == "event"]
    outcome = None
    for record in records[1:]:
        if record["type"] == "end":
            outcome = record["outcome"]
        elif record["type"] == "event":
            # a roll back of a finished batch appends after its end: until it ends too,
            # the batch is unfinished again (it may have crashed half-way)
            outcome = None
    return JournalState(
        path=path, batch=plan["batch"], operation=plan["operation"], tenant=plan.get("tenant"),
        created_at=plan["createdAt"], objects=objects, events=events, outcome=outcome,
        torn=torn,
    )  # fmt: skip


def ends_finished(path: str | os.PathLike[str]) -> bool:
    """True when the journal's last line is a complete ``end`` line.

    Reads only the file's tail: the plan line holds every payload, so a folder of
    finished batches is listed without parsing them. False when unsure (the caller
    then reads the whole journal).
    """
    try:
        with open(path, "rb") as handle:
            size = handle.seek(0, os.SEEK_END)
            handle.seek(max(0, size - 4096))
            tail = handle.read()
    except OSError:
        return False
    lines = tail.split(b"\n")
    if lines[-1] != b"" or len(lines) < 3:  # torn last line, or the plan is all there is
        return False
    try:
        record = json.loads(lines[-2])
    except ValueError:
        return False
    return isinstance(record, dict) and record.get("type") == "end"


def _is_reopened(raw: bytes) -> bool:
    try:
        record = json.loads(raw)
    except ValueError:
        return False
    return isinstance(record, dict) and record.get("type") == "reopened"


class JournalWriter:
    """Appends lines to one journal, each flushed and fsynced; safe across threads."""

    def __init__(self, path: Path, handle: Any) -> None:
        self.path = path
        self._handle = handle
        self._lock = threading.Lock()

    @classmethod
    def create(
        cls, api: Api, operation: str, objects: list[PlannedObject],
        backup_dir: str | os.PathLike[str] | None, *, batch: str | None = None,
    ) -> JournalWriter:  # fmt: skip
        """Create a new batch's journal (``batch``: its id, default a new one) and write
        its plan line (durably)."""
        folder = journal_folder(api, backup_dir)
        batch = batch if batch is not None else new_batch_id()
        plan = {
            "type": "plan", "v": VERSION, "batch": batch, "operation": operation,
            "tenant": getattr(api, "tenant", None), "createdAt": _now(),
            "objects": [vars(item) for item in objects],
        }  # fmt: skip
        try:
            line = depth.dumps(plan, ensure_ascii=False, allow_nan=False)
        except ValueError as exc:
            raise JournalError(f"cannot journal the batch: a payload is not strict JSON ({exc})",
                               path=str(folder)) from None  # fmt: skip
        try:
            private_dir(folder, root=backup_root(api, backup_dir))
            path = folder / id_file_name(batch, ".jsonl")
            handle = open_private(path, "xb")  # kept open for the batch's appends
            sync_folder(folder)  # the new name is durable too, not only the bytes
        except OSError as exc:
            raise JournalError(f"cannot create a journal in {folder}: {exc}; nothing was sent",
                               path=str(folder)) from exc  # fmt: skip
        writer = cls(path, handle)
        writer._append_line(line)
        return writer

    @classmethod
    def reopen(cls, path: str | os.PathLike[str]) -> JournalWriter:
        """Open an existing journal for appending; a torn last line is ended first."""
        path = Path(path)
        try:
            handle = open_private(path, "ab")
            size = path.stat().st_size
            writer = cls(path, handle)
            if size:
                with open(path, "rb") as existing:
                    existing.seek(size - 1)
                    last = existing.read(1)
                if last != b"\n":
                    torn = size - path.read_bytes().rfind(b"\n") - 1
                    handle.write(b"\n")
                    writer._append_line(json.dumps({"type": "reopened", "at": _now(),
                                                    "tornBytes": torn}))  # fmt: skip
        except OSError as exc:
            raise JournalError(f"cannot append to journal {path}: {exc}", path=str(path)) from exc
        return writer

    @property
    def batch(self) -> str:
        """The batch id (the file's name without ``.jsonl``)."""
        return self.path.stem

    def _append_line(self, line: str) -> None:
        with self._lock:
            try:
                self._handle.write(line.encode("utf-8") + b"\n")
                self._handle.flush()
                os.fsync(self._handle.fileno())  # durable before the next step starts
            except OSError as exc:
                raise JournalError(f"cannot append to journal {self.path}: {exc}",
                                   path=str(self.path)) from exc  # fmt: skip

    def event(
        self, index: int, event: str, target: Target, by: str, error: str | None = None
    ) -> None:
        """Append one object's state change."""
        record: dict[str, Any] = {"type": "event", "n": index, "event": event,
                                  "target": target, "by": by, "at": _now()}  # fmt: skip
        if error is not None:
            record["error"] = error
        self._append_line(json.dumps(record, ensure_ascii=False))

    def end(self, outcome: str, by: str) -> None:
        """Append the batch's end: every object holds the ``outcome``'s content."""
        self._append_line(json.dumps({"type": "end", "outcome": outcome, "by": by, "at": _now()}))

    def close(self) -> None:
        """Close the file."""
        self._handle.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def find_journal(
    api: Api | None, batch: str | os.PathLike[str], backup_dir: str | os.PathLike[str] | None
) -> Path:
    """The journal file of ``batch`` (a batch id, or a journal's path).

    Raises
    ------
    InvalidArgumentError
        No journal of that batch in the folder (names the folder).
    """
    candidate = Path(batch)
    if candidate.suffix == ".jsonl" and candidate.is_file():
        return candidate
    name = str(batch)
    if not name or "/" in name or "\\" in name or name.startswith("."):
        raise InvalidArgumentError(f"{name!r} is not a batch id (see pending_writes())")
    folders = journal_folders(api, backup_dir)
    for folder in folders:
        path = folder / id_file_name(name, ".jsonl")
        if path.is_file():
            return path
    raise InvalidArgumentError(
        f"no journal of batch {name!r} in {' or '.join(map(str, folders))} (see "
        "pending_writes(); pass the same backup_dir as the write)"
    )
