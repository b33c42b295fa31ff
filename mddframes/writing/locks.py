"""One writer per object per machine, one actor per batch: the write engine's locks.

A write holds the lock of its object (tenant and service, kind, id) from its last check
of what the service holds until its verification ends, so that writers on one machine
(threads of one kernel, other kernels, parallel pipeline jobs) queue instead of
overwriting each other between one's check and its PUT. Each lock is two locks:

- a :class:`threading.Lock` per key inside the process (threads of one client or of
  several), and
- an OS file lock (:mod:`filelock`: ``flock`` on POSIX, ``msvcrt`` on Windows) in one
  lock folder per machine and user (the ``lock_dir`` setting; default the user's cache
  folder), whatever backup folder each writer uses.

The OS releases a file lock when its process dies, so the lock of a dead process is
taken over at once. Beside each lock file, ``<name>.holder`` says who holds it (pid,
host, thread, since when, what for), so a writer that waits longer than the time-out
(the ``lock_timeout`` setting) fails with a :class:`~mddframes.errors.LockTimeoutError`
naming the holder instead of waiting forever. A batch's journal has a lock of its own
(:func:`batch_lock`): one actor at a time writes, resumes or rolls back a batch.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import functools
import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import filelock
import platformdirs

from mddframes.disk_modes import PRIVATE_FILE_MODE, open_private, private_dir
from mddframes.disk_names import id_file_name
from mddframes.errors import LockTimeoutError
from mddframes.writing.backups import EMULATOR_FOLDER

if TYPE_CHECKING:
    from mddframes.api import Api

_THREAD_LOCKS: dict[Path, threading.Lock] = {}
_THREAD_LOCKS_GUARD = threading.Lock()


def default_lock_dir() -> Path:
    """The lock folder when no ``lock_dir`` is set: ``<user cache>/mddframes/locks``."""
    return Path(platformdirs.user_cache_dir("mddframes", appauthor=False)) / "locks"


def emulator_lock_dir() -> Path:
    """The lock folder of a client of an emulator: ``<default lock folder>/.emulator``."""
    return default_lock_dir() / EMULATOR_FOLDER


def lock_folder(api: Api) -> Path:
    """The folder of one service and tenant's locks, under the machine's lock folder.

    The service's address is part of the name (hashed): two emulators, or two tenants of
    one name on different services, never share locks.
    """
    root = api.settings.lock_dir
    name = _service_folder_name(api.settings.base_url, api.tenant or "default")
    return (Path(root) if root else default_lock_dir()) / name


@functools.lru_cache(maxsize=64)
def _service_folder_name(base_url: str, tenant: str) -> str:
    service = hashlib.sha256(f"{base_url}|{tenant}".encode()).hexdigest()[:12]
    return f"{id_file_name(tenant)[:80]}-{service}"


@contextlib.contextmanager
def object_locks(api: Api, keys: Iterable[tuple[str, str]], *, purpose: str) -> Iterator[None]:
    """Hold the locks of several objects (``(kind, id)`` pairs) for the block.

    Taken in one order (sorted), so two batches that share objects cannot deadlock.

    Raises
    ------
    LockTimeoutError
        Another writer held one of the locks longer than the time-out (it names the
        holder); nothing was sent, and the locks taken are released.
    """
    folder = lock_folder(api)
    names = sorted({f"{kind}-{id_file_name(object_id)}" for kind, object_id in keys})
    with contextlib.ExitStack() as stack:
        for name in names:
            stack.enter_context(
                _locked(folder / f"{name}.lock", api.settings.lock_timeout, purpose)
            )
        yield


def object_lock(api: Api, kind: str, object_id: str, *, purpose: str) -> Any:
    """Hold the lock of one object for the block (see :func:`object_locks`)."""
    return object_locks(api, [(kind, object_id)], purpose=purpose)


def batch_lock(api: Api, batch: str, *, purpose: str) -> Any:
    """Hold the lock of one batch of writes (its journal) for the block."""
    return _locked(
        lock_folder(api) / f"batch-{id_file_name(batch)}.lock", api.settings.lock_timeout, purpose
    )


def folder_lock(folder: Path, timeout: float, *, purpose: str) -> Any:
    """Hold the lock of a folder mddframes keeps (``<folder>/.lock``) for the block.

    One writer of the folder at a time, across threads and processes (a history store's
    versions); another waits up to ``timeout`` seconds, then a
    :class:`~mddframes.errors.LockTimeoutError` names the holder.
    """
    return _locked(Path(folder) / ".lock", timeout, purpose, root=Path(folder))


@contextlib.contextmanager
def _locked(
    path: Path, timeout: float, purpose: str, *, root: Path | None = None
) -> Iterator[None]:
    """The thread lock and the file lock of ``path``, within ``timeout`` seconds in all."""
    deadline = time.monotonic() + timeout
    thread_lock = _thread_lock(path)
    if not thread_lock.acquire(timeout=max(timeout, 0)):
        raise _timed_out(path, timeout, purpose)
    try:
        try:
            private_dir(path.parent, root=root or _lock_root(path))
            file_lock = filelock.FileLock(
                path, mode=PRIVATE_FILE_MODE, is_singleton=False, thread_local=False
            )
            file_lock.acquire(timeout=max(deadline - time.monotonic(), 0))
        except filelock.Timeout:
            raise _timed_out(path, timeout, purpose) from None
        except OSError as exc:
            raise LockTimeoutError(
                f"cannot take the lock {path} ({exc}); nothing was sent. Set lock_dir "
                "(MDD_LOCK_DIR) to a folder this user can write",
                path=str(path),
            ) from exc
        try:
            _write_holder(path, purpose)
            yield
        finally:
            file_lock.release()
    finally:
        thread_lock.release()


def _lock_root(path: Path) -> Path:
    """The machine's lock folder above a lock file (``<lock folder>/<service>/x.lock``)."""
    return path.parent.parent


def _thread_lock(path: Path) -> threading.Lock:
    with _THREAD_LOCKS_GUARD:
        lock = _THREAD_LOCKS.get(path)
        if lock is None:
            lock = _THREAD_LOCKS[path] = threading.Lock()
        return lock


def _holder_path(path: Path) -> Path:
    return path.with_name(path.name + ".holder")


def _write_holder(path: Path, purpose: str) -> None:
    """Say who holds the lock now (written in place: only the holder writes it, and a
    reader that caught it half-written would say "an unknown holder")."""
    holder = {
        "pid": os.getpid(), "host": socket.gethostname(),
        "thread": threading.current_thread().name, "purpose": purpose,
        "since": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
    }  # fmt: skip
    try:
        with open_private(_holder_path(path), "wb") as handle:
            handle.write(json.dumps(holder).encode("utf-8"))
    except OSError:
        pass  # who holds it is a courtesy to the next writer's error message, not the lock


def describe_holder(path: Path) -> str:
    """Who holds (or last held) the lock at ``path``, in words."""
    try:
        holder = json.loads(_holder_path(path).read_text(encoding="utf-8"))
        return (
            f"pid {holder['pid']} on {holder['host']} ({holder['purpose']}, thread "
            f"{holder['thread']}) since {holder['since']}"
        )
    except (OSError, ValueError, KeyError, TypeError):
        return "an unknown holder"


def _timed_out(path: Path, timeout: float, purpose: str) -> LockTimeoutError:
    return LockTimeoutError(
        f"{purpose}: waited {timeout:g} s for {path.stem}, held by {describe_holder(path)}; "
        "nothing was sent. Try again when that write has finished, or raise lock_timeout "
        "(MDD_LOCK_TIMEOUT)",
        path=str(path),
    )
