"""The modes of what mddframes writes to disk: owner-only where it keeps things, the
user's umask where the user names the folder.

Two rules, one helper each (docs/guide/security.md says them to users):

- **What mddframes keeps** (backups, write journals, locks and their holder files, any
  cache): owner-only, whatever the umask: files ``0600``, folders ``0700``
  (:func:`private_dir`, :func:`open_private`, :func:`write_private`). A folder of these
  that already exists with wider permissions (an older version made backup folders
  ``0755``) is left as it is and named in one :class:`~mddframes.errors.MddWarning`
  per process (a shared sticky folder such as ``/tmp`` is not: what mddframes makes in
  it is ``0700``).
- **Outputs to a folder the user names** (pulled tables as code, export zips, snapshots,
  extracted and exported scripts, workbooks, plans): the user's umask, like every other
  tool that writes where it is told (``0644``/``0755`` under umask ``022``, ``0600``/``0700``
  under ``077``). A file first written privately (to a temporary file, renamed when
  complete) is given that mode by :func:`as_output` before it gets its name.

On Windows the modes are not enforced (the ACLs of the user's profile folders apply).
:func:`sync_folder` makes a new name in a folder durable (after a rename into it).
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path
from typing import IO, Literal

from mddframes.errors import MddWarning, issue_warning

__all__ = [
    "PRIVATE_DIR_MODE",
    "PRIVATE_FILE_MODE",
    "as_output",
    "current_umask",
    "open_private",
    "output_dir",
    "output_file_mode",
    "private_dir",
    "sync_folder",
    "write_private",
]

#: The mode of every file mddframes keeps (backups, journals, locks, caches).
PRIVATE_FILE_MODE = 0o600
#: The mode of every folder mddframes keeps.
PRIVATE_DIR_MODE = 0o700
_WIDE_BITS = 0o077

_warned: set[Path] = set()
#: The (folder, root) pairs whose modes this process has looked at (set.add is atomic).
_checked: set[tuple[Path, Path]] = set()
_warned_guard = threading.Lock()
_umask_guard = threading.Lock()


def current_umask() -> int:
    """The process's umask, read without changing it where the platform allows.

    Returns
    -------
    int
        The umask (for example ``0o022``).
    """
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    with _umask_guard:  # os.umask can only be read by setting it: set it back at once
        mask = os.umask(0o077)
        os.umask(mask)
    return mask


def output_file_mode() -> int:
    """The mode of a file written to a folder the user names: ``0o666`` less the umask."""
    return 0o666 & ~current_umask()


def _chmod(path: str | os.PathLike[str], mode: int) -> None:
    if os.name == "posix":
        os.chmod(path, mode)


def private_dir(
    path: str | os.PathLike[str], *, root: str | os.PathLike[str] | None = None
) -> Path:
    """Create ``path`` (and its missing parents) owner-only (``0700``), whatever the umask.

    Folders that already exist are not changed; the first time a process uses ``path``
    and finds a folder between ``root`` and ``path`` (both included; only ``path`` when
    ``root`` is None) whose mode lets the group or others in, an
    :class:`~mddframes.errors.MddWarning` names it and says how to restrict it.

    Parameters
    ----------
    path : path
        The folder.
    root : path, optional
        The top of the folders mddframes keeps (the backup root, the lock folder).

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    missing: list[Path] = []
    probe = path
    while not probe.is_dir():
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for folder in reversed(missing):
        try:
            os.mkdir(folder, PRIVATE_DIR_MODE)
        except FileExistsError:
            if not folder.is_dir():
                raise
            continue
        _chmod(folder, PRIVATE_DIR_MODE)  # the umask may have taken bits off, never added
    top = Path(root) if root is not None else path
    if missing or (path, top) not in _checked:  # (a write takes locks and backups often)
        _warn_if_wide(path, top, set(missing))
        _checked.add((path, top))
    return path


def _warn_if_wide(path: Path, root: Path, created: set[Path]) -> None:
    if os.name != "posix":
        return
    chain = [path, *path.parents]
    if root in chain:
        chain = chain[: chain.index(root) + 1]
    else:
        chain = [path]
    for folder in chain:
        if folder in created:
            continue
        try:
            mode = folder.stat().st_mode & 0o1777
        except OSError:
            continue
        if not mode & _WIDE_BITS or mode & stat.S_ISVTX:
            continue  # owner-only, or a shared sticky folder (/tmp) that is meant to be
        with _warned_guard:
            if folder in _warned:
                continue
            _warned.add(folder)
        issue_warning(
            f"{folder} holds what mddframes keeps (backups, journals or locks) and is "
            f"readable by others (mode {mode:o}); new files in it are owner-only, but "
            f"older ones may not be: restrict the folder with chmod 700 {folder}",
            MddWarning,
        )


def open_private(
    path: str | os.PathLike[str], mode: Literal["xb", "wb", "ab"] = "xb", *, buffering: int = -1
) -> IO[bytes]:
    """Open a file mddframes keeps for writing in binary, owner-only (``0600``).

    A new file is created ``0600`` whatever the umask; an existing one (``"ab"``,
    ``"wb"``) is restricted to ``0600`` as well.

    Parameters
    ----------
    path : path
        The file.
    mode : {'xb', 'wb', 'ab'}
        Create (refuse an existing file), truncate or append.
    buffering : int
        As :func:`open`'s (a file written in many small pieces wants a large buffer).

    Returns
    -------
    binary file object
    """
    flags = os.O_WRONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
    flags |= {
        "xb": os.O_CREAT | os.O_EXCL,
        "wb": os.O_CREAT | os.O_TRUNC,
        "ab": os.O_CREAT | os.O_APPEND,
    }[mode]
    descriptor = os.open(path, flags, PRIVATE_FILE_MODE)
    try:
        if os.name == "posix":
            os.fchmod(descriptor, PRIVATE_FILE_MODE)
        return os.fdopen(descriptor, mode, buffering)
    except BaseException:
        os.close(descriptor)
        raise


def write_private(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to a file mddframes keeps, owner-only, atomically (temporary + rename).

    Parameters
    ----------
    path : path
        The file (its folder must exist).
    data : bytes
        The content.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    temp = path.with_name(f".{path.name[:40]}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with open_private(temp, "wb") as handle:
            handle.write(data)
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    return path


def output_dir(path: str | os.PathLike[str]) -> Path:
    """Create a folder the user named (and its missing parents) under the user's umask.

    Parameters
    ----------
    path : path
        The folder.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    return path


def as_output(path: str | os.PathLike[str]) -> Path:
    """Give a file written to a folder the user named the mode of the user's umask.

    For files first written privately (``tempfile`` makes them ``0600``) and renamed when
    complete: call it before the rename (or at once after it).

    Parameters
    ----------
    path : path
        The file.

    Returns
    -------
    pathlib.Path
        ``path``.
    """
    _chmod(path, output_file_mode())
    return Path(path)


def sync_folder(path: Path) -> None:
    """Flush a folder's entries (renames into it) to disk, where the OS allows it.

    Parameters
    ----------
    path : pathlib.Path
        The folder.

    Examples
    --------
    >>> sync_folder(Path("."))
    """
    try:
        descriptor = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - Windows cannot open a folder: the file's fsync must do
        return
    try:
        os.fsync(descriptor)
    except OSError:  # pragma: no cover - some file systems refuse
        pass
    finally:
        os.close(descriptor)
