"""Writers that meet: the helpers of tests/writing/test_concurrent_writers.py, also run as children.

:func:`write_cell` is one writer (a notebook kernel, a pipeline job): it reads a table,
edits one cell of its own row, waits for the others at a barrier and writes, and says
how it ended (verified, or refused with which error). The test runs it in threads, and
in processes started by a forkserver (these functions are importable top-level names).
:func:`recover` resumes or rolls back a batch; :func:`hold_lock` takes an object's lock
and sleeps, as a writer stuck in a slow PUT does.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

TABLE = "tbl-0001"
#: The text cell each writer edits, in its own row.
COLUMN = "notes"


def connection(emu: Any) -> dict[str, str]:
    """What a child needs to connect to the emulator (the handle itself is not picklable)."""
    names = ("tenant", "base_url", "client_id", "client_secret", "realm", "api_prefix")
    return {name: getattr(emu, name) for name in names}


def mark(writer: int, seed: int) -> str:
    """The value writer ``writer`` puts in its cell: unique per writer and seed."""
    return f"writer {writer} of seed {seed}"


def client_for(emulator: Any, lock_dir: str | None, lock_timeout: float | None = None) -> Any:
    """A fresh Client (its own session, token and read contexts) with these lock settings."""
    from mddframes import Client

    handle = SimpleNamespace(**emulator) if isinstance(emulator, dict) else emulator
    overrides: dict[str, Any] = {}
    if lock_dir is not None:
        overrides["lock_dir"] = lock_dir
    if lock_timeout is not None:
        overrides["lock_timeout"] = lock_timeout
    return Client.from_emulator(handle, **overrides)


def outcome(result: Any = None, error: BaseException | None = None) -> dict[str, Any]:
    """How a write ended, as plain data (it crosses process boundaries)."""
    if error is not None:
        return {"verified": False, "error": type(error).__name__, "message": str(error),
                "mdd": _is_mdd(error)}  # fmt: skip
    return {"verified": bool(result.verified), "status": result.status, "error": None}


def _is_mdd(error: BaseException) -> bool:
    from mddframes.errors import MddError

    return isinstance(error, MddError)


def write_cell(
    emulator: Any,
    writer: int,
    row: Any,
    seed: int,
    *,
    lock_dir: str | None,
    backup_dir: str,
    barrier: Any,
    delay: float = 0.0,
    result_file: str | None = None,
) -> dict[str, Any]:
    """Read :data:`TABLE`, set ``row``'s :data:`COLUMN` to :func:`mark`, meet the others at
    ``barrier``, wait ``delay`` seconds (the start order), write; return how it ended."""
    with client_for(emulator, lock_dir) as client:
        frame = client.read_table(TABLE)
        frame.loc[row, COLUMN] = mark(writer, seed)
        barrier.wait(timeout=60)
        time.sleep(delay)
        try:
            ended = outcome(client.write_table(TABLE, frame, backup_dir=backup_dir))
        except Exception as exc:  # every way a write can end is reported, none hidden
            ended = outcome(error=exc)
    if result_file is not None:
        Path(result_file).write_text(json.dumps(ended), encoding="utf-8")
    return ended


def recover(
    emulator: Any,
    which: str,
    batch: str,
    *,
    lock_dir: str,
    backup_dir: str,
    barrier: Any,
    delay: float = 0.0,
    result_file: str | None = None,
) -> dict[str, Any]:
    """Meet the other caller at ``barrier``, wait ``delay`` seconds, then ``resume`` or
    ``roll_back`` (``which``)."""
    with client_for(emulator, lock_dir) as client:
        barrier.wait(timeout=60)
        time.sleep(delay)
        try:
            frame = getattr(client, which)(batch, backup_dir=backup_dir, progress=False)
            ended = {"error": None, "finished": bool(frame.attrs["finished"]),
                     "actions": frame["action"].tolist()}  # fmt: skip
        except Exception as exc:
            ended = {"error": type(exc).__name__, "message": str(exc), "mdd": _is_mdd(exc)}
    if result_file is not None:
        Path(result_file).write_text(json.dumps(ended), encoding="utf-8")
    return ended


def hold_lock(emulator: Any, lock_dir: str, ready_file: str, seconds: float) -> None:
    """Take :data:`TABLE`'s write lock, say so in ``ready_file`` (this pid), then sleep."""
    from mddframes.writing.locks import object_lock

    with (
        client_for(emulator, lock_dir) as client,
        object_lock(client.api, "table", TABLE, purpose="a slow write (test)"),
    ):
        temp = ready_file + ".tmp"
        Path(temp).write_text(str(os.getpid()), encoding="utf-8")
        os.replace(temp, ready_file)
        time.sleep(seconds)


def write_batch(
    emulator: Any,
    ids: list[str],
    *,
    lock_dir: str | None,
    backup_dir: str,
    barrier: Any,
    delay: float = 0.0,
) -> dict[str, Any]:
    """Read ``ids`` (:data:`TABLE` among them), edit one cell of each as
    ``crash_writer.edit`` does, meet the others at ``barrier``, wait ``delay``, write
    them with ``write_tables``; how it ended, with ``cells``: (table, column, value)."""
    from crash_writer import edit

    with client_for(emulator, lock_dir) as client:
        edited = edit(client.read_tables(ids, progress=False))
        cells = [
            [table_id, column, value]
            for column in edited.columns
            if column not in ("table_id", "_meta")
            for table_id, value in zip(edited["table_id"], edited[column], strict=True)
            if isinstance(value, str) and value.endswith(" (bulk)")
        ]
        barrier.wait(timeout=60)
        time.sleep(delay)
        try:
            frame = client.write_tables(edited, backup_dir=backup_dir, progress=False)
            verified = bool((frame["status"] == "written").all() and frame["verified"].all())
            ended = {"verified": verified, "error": None, "statuses": frame["status"].tolist()}
        except Exception as exc:
            ended = outcome(error=exc)
    return {**ended, "cells": cells}
