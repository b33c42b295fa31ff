"""The child process of tests/writing/test_journal_crash.py: a bulk write that gets killed.

:func:`run` reads tables, edits one value of each, and writes them all with
``write_tables``; :func:`recover` resumes or rolls back a batch. With a *kill point* it sends itself SIGKILL at an exact step (the
test process also kills it at random moments from outside). The kill points wrap
library functions in this process only; the library has no test hooks.
"""

from __future__ import annotations

import os
import signal
import threading
from types import SimpleNamespace
from typing import Any

import pandas as pd

#: Where a child may kill itself, and which call of that step (1-based) dies.
KILL_POINTS = (
    "backup-start",  # entering a batch's backup: some backups taken, others not
    "backup-unnamed",  # a backup written to its temporary file, not yet given its name
    "plan-torn",  # half of the journal's plan line written
    "event-torn",  # half of a sending/sent/verified line written
    "after-put",  # a PUT answered, before its "sent" line and its verification
    "recovery-put",  # a resume's or roll back's PUT answered, before its "sent" line
)


def edit(long: pd.DataFrame) -> pd.DataFrame:
    """One deterministic change per table: the first text cell of its first row."""
    long = long.copy()
    for table_id in long["table_id"].unique():
        rows = (long["table_id"] == table_id).to_numpy()
        first = long["row"][rows].iloc[0]
        mask = rows & (long["row"] == first).to_numpy()
        for column in long.columns:
            if column in ("table_id", "row", "_meta"):
                continue
            value = long.loc[mask, column].iloc[0]
            if isinstance(value, str) and value:
                long[column] = long[column].astype(object)
                long.loc[mask, column] = value + " (bulk)"
                break
    return long


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _install(point: str, nth: int) -> None:
    from mddframes.writing import backups, batch, landed
    from mddframes.writing.journal_file import JournalWriter

    lock = threading.Lock()
    calls = [0]

    def hit() -> bool:
        with lock:
            calls[0] += 1
            return calls[0] == nth

    if point == "backup-start":
        real_save = batch.take_backup

        def take_backup(*args: Any, **kwargs: Any) -> Any:
            if hit():
                _die()
            return real_save(*args, **kwargs)

        batch.take_backup = take_backup
    elif point == "backup-unnamed":
        real_claim = backups._claim

        def claim(temp: Any, path: Any) -> bool:
            if hit():
                _die()
            return real_claim(temp, path)

        backups._claim = claim
    elif point in ("plan-torn", "event-torn"):
        real_append = JournalWriter._append_line

        def append(self: JournalWriter, line: str) -> None:
            if hit():
                data = (line + "\n").encode("utf-8")
                # under the writer's lock, as a real line is written: no other thread's
                # line can follow the torn half before the process dies
                with self._lock:
                    self._handle.write(data[: len(data) // 2])
                    self._handle.flush()
                    os.fsync(self._handle.fileno())
                    _die()
            real_append(self, line)

        JournalWriter._append_line = append  # type: ignore[method-assign]
    elif point in ("after-put", "recovery-put"):
        # every PUT of a write, a resume or a roll back is the engine's, through
        # writing/landed.py (which reads and compares after a lost answer)
        real_put = landed.put

        def put(*args: Any, **kwargs: Any) -> None:
            real_put(*args, **kwargs)
            if hit():
                _die()

        landed.put = put
    else:
        raise ValueError(f"unknown kill point {point!r}")


def run(emulator: dict[str, str], ids: list[str], backup_dir: str, kill: Any = None) -> None:
    """Read ``ids``, edit them, write them all; die at ``kill`` = (point, nth) if given."""
    from mddframes import Client

    if kill is not None:
        _install(*kill)
    with Client.from_emulator(SimpleNamespace(**emulator), max_workers=4) as client:
        long = client.read_tables(ids, progress=False)
        client.write_tables(edit(long), backup_dir=backup_dir, progress=False)


def recover(
    emulator: dict[str, str], batch: str, backup_dir: str, which: str, kill: Any = None
) -> None:
    """Run ``resume`` or ``roll_back`` (``which``) of ``batch``; die at ``kill`` if given."""
    from mddframes import Client

    if kill is not None:
        _install(*kill)
    with Client.from_emulator(SimpleNamespace(**emulator), max_workers=4) as client:
        getattr(client, which)(batch, backup_dir=backup_dir, progress=False)
