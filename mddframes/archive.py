"""Export zip archives: the entry-name layout, inspection and safe extraction.

The service's batch export answers a zip with one file per element. The layout of its
entries (:func:`archive_entry_name`) is shared by the batch path and the legacy fallback
of :mod:`mddframes.exports`, so both produce the same zip. :class:`ExportArchive` lists a
zip's files and extracts it, refusing entries that escape the folder and archives that
expand beyond a limit.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

import pandas as pd

from mddframes.disk_names import cap_name, served_file_name
from mddframes.errors import DataShapeError, InvalidArgumentError, UnsafeArchiveError, renamed

__all__ = [
    "DEFAULT_MAX_FILES",
    "DEFAULT_MAX_TOTAL_BYTES",
    "ExportArchive",
    "archive_entry_name",
    "safe_file_name",
    "safe_id",
    "structure_id_from_entry",
]

#: Extraction refuses archives whose files add up to more than this (bytes).
DEFAULT_MAX_TOTAL_BYTES = 1 << 30
#: Extraction refuses archives with more entries than this.
DEFAULT_MAX_FILES = 100_000


def safe_file_name(name: str, *, fallback: str) -> str:
    """Reduce a server-supplied file name to a bare, harmless file name.

    The name comes from a ``Content-Disposition`` header, so it must never choose the
    folder it lands in: only its last path component is kept (``/`` and ``\\`` both
    count as separators), and an empty or dot-only name becomes ``fallback``; the rest
    of :func:`mddframes.disk_names.served_file_name` applies (reserved names, length).

    Parameters
    ----------
    name : str
        The name the server sent.
    fallback : str
        The name to use when nothing usable is left.

    Returns
    -------
    str
    """
    return served_file_name(name, fallback=fallback)


# --------------------------------------------------------------------------- zip layout


_UNSAFE_IN_NAME = re.compile(r"[^A-Za-z0-9._-]")
_ENTRY_SEPARATOR = "__"


def safe_id(structure_id: Any) -> str:
    """The file-name-safe form of an element id used in export zip entry names.

    ASCII letters, digits, ``.``, ``-`` and ``_`` are kept, every other character
    becomes ``_``, and leading dots become ``_`` (no hidden or dot-only names); when
    that changed the id (or the id is empty), the first 8 hex digits of the SHA-1 of
    the id are appended so names stay unique.
    """
    text = str(structure_id)
    safe = _UNSAFE_IN_NAME.sub("_", text)
    undotted = safe.lstrip(".")
    safe = "_" * (len(safe) - len(undotted)) + undotted
    if safe != text or not safe:
        safe = f"{safe}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:8]}"
    return safe


def archive_entry_name(structure_id: Any, file_name: str) -> str:
    """The name of an element's file inside an export zip: ``<safe id>__<file name>``.

    This is the rule of the service's batch export (docs/wire-format.md; the emulator
    is its reference). The legacy fallback builds its zip from single exports with
    this same function, so both produce the same layout.

    Parameters
    ----------
    structure_id : str
        The element (made safe by :func:`safe_id`).
    file_name : str
        The file name of its script, as the service named it; a name holding a path
        separator, or empty, ``.`` or ``..``, has its unsafe characters replaced.

    Returns
    -------
    str
    """
    name = str(file_name or "")
    if "/" in name or "\\" in name or name in ("", ".", ".."):
        name = _UNSAFE_IN_NAME.sub("_", name) or "script"
    return f"{safe_id(structure_id)}{_ENTRY_SEPARATOR}{name}"


def structure_id_from_entry(name: str, known_ids: Iterable[Any] | None = None) -> str | None:
    """The element id an export zip entry was made for, where the name tells it.

    Parameters
    ----------
    name : str
        The entry name.
    known_ids : iterable, optional
        The ids the export was started with. With them the answer is exact, even for
        ids that :func:`safe_id` had to change; without them it is the part before the
        first ``__`` (which is the id itself whenever the id was already file-name-safe
        and holds no ``__``).

    Returns
    -------
    str or None
        None when the name does not have the ``<id>__<file>`` form (or matches no
        known id).
    """
    if known_ids is not None:
        best = None
        for structure_id in known_ids:
            prefix = safe_id(structure_id) + _ENTRY_SEPARATOR
            if name.startswith(prefix) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), str(structure_id))
        return best[1] if best else None
    head, sep, tail = name.partition(_ENTRY_SEPARATOR)
    return head if sep and head and tail and "/" not in head else None


# --------------------------------------------------------------------------- archives


def _is_symlink(info: zipfile.ZipInfo) -> bool:
    return stat.S_ISLNK(info.external_attr >> 16)


def _unsafe_reason(name: str) -> str | None:
    """Why a zip entry name would escape the extraction folder, or None if it is safe."""
    if not name or "\x00" in name:
        return "has an empty or NUL-containing name"
    normalised = name.replace("\\", "/")
    if normalised.startswith("/") or PureWindowsPath(name).drive or re.match(r"^[A-Za-z]:", name):
        return "is an absolute path"
    if ".." in PurePosixPath(normalised).parts:
        return "contains '..' and would escape the folder"
    return None


@dataclass
class ExportArchive:
    """A downloaded export zip: list its files and extract it safely.

    Attributes
    ----------
    path : pathlib.Path
        The zip file on disk.
    task_id : str or None
        The export task that produced it (None for the legacy fallback).
    structure_ids : list of str or None
        The elements exported, when known; they make ``list_files()``'s ``structure_id``
        exact.
    """

    path: Path
    task_id: str | None = None
    structure_ids: list[str] | None = None

    def __post_init__(self) -> None:
        self.path = Path(self.path)

    def __fspath__(self) -> str:
        return str(self.path)

    def _infolist(self) -> list[zipfile.ZipInfo]:
        try:
            with zipfile.ZipFile(self.path) as zf:
                return zf.infolist()
        except zipfile.BadZipFile as exc:
            raise DataShapeError(f"{self.path} is not a readable zip archive ({exc})") from None

    def list_files(self) -> pd.DataFrame:
        """The files in the archive (read from the zip on disk).

        Returns
        -------
        pandas.DataFrame
            ``name`` (string), ``size`` and ``compressed_size`` (Int64, bytes) and
            ``structure_id`` (string; NA when the name does not tell it).
        """
        infos = [i for i in self._infolist() if not i.is_dir()]
        frame = pd.DataFrame(
            {
                "name": pd.array([i.filename for i in infos], dtype="string"),
                "size": pd.array([i.file_size for i in infos], dtype="Int64"),
                "compressed_size": pd.array([i.compress_size for i in infos], dtype="Int64"),
                "structure_id": pd.array(
                    [structure_id_from_entry(i.filename, self.structure_ids) for i in infos],
                    dtype="string",
                ),
            }
        )
        return frame

    files = renamed(list_files, "files")

    def read_text(self, name: str, *, max_chars: int = 1_000_000) -> str:
        """The text of one file of the archive (UTF-8), for a look without extracting.

        Parameters
        ----------
        name : str
            The entry's name, as ``list_files()`` lists it.
        max_chars : int, default 1,000,000
            Read at most this many characters (a preview need not hold a huge script).

        Returns
        -------
        str

        Raises
        ------
        InvalidArgumentError
            The archive has no entry of that name.
        """
        try:
            with zipfile.ZipFile(self.path) as zf, zf.open(name) as raw:
                data = raw.read(max_chars * 4)
        except KeyError:
            raise InvalidArgumentError(f"{self.path} has no file named {name!r}") from None
        except zipfile.BadZipFile as exc:
            raise DataShapeError(f"{self.path} is not a readable zip archive ({exc})") from None
        return data.decode("utf-8", errors="replace")[:max_chars]

    def check(
        self,
        *,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        max_files: int = DEFAULT_MAX_FILES,
    ) -> list[zipfile.ZipInfo]:
        """Refuse an archive that is unsafe to extract, before anything is written.

        Parameters
        ----------
        max_total_bytes : int
            The most the files may add up to once expanded.
        max_files : int
            The most entries the archive may hold.

        Returns
        -------
        list of zipfile.ZipInfo
            The entries, all checked.

        Raises
        ------
        UnsafeArchiveError
            Naming the first offending entry (absolute path, ``..``, symlink) or the
            limit that was exceeded.
        """
        infos = self._infolist()
        if len(infos) > max_files:
            raise UnsafeArchiveError(
                f"archive {self.path} has {len(infos)} entries, more than max_files={max_files}"
            )
        total = 0
        for info in infos:
            reason = _unsafe_reason(info.filename)
            if reason is None and _is_symlink(info):
                reason = "is a symbolic link"
            if reason is not None:
                raise UnsafeArchiveError(
                    f"archive {self.path}: entry {info.filename!r} {reason}; nothing was extracted"
                )
            total += info.file_size
            if total > max_total_bytes:
                raise UnsafeArchiveError(
                    f"archive {self.path} expands beyond max_total_bytes={max_total_bytes} "
                    f"(reached at entry {info.filename!r}); nothing was extracted"
                )
        return infos

    def extract(
        self,
        dest: str | os.PathLike[str],
        *,
        max_total_bytes: int = DEFAULT_MAX_TOTAL_BYTES,
        max_files: int = DEFAULT_MAX_FILES,
    ) -> list[Path]:
        """Extract the archive into ``dest``, refusing anything unsafe.

        Every entry is checked before the first file is written (see :meth:`check`).
        While writing, the bytes really expanded are counted too, because the sizes
        a zip declares can lie.

        Parameters
        ----------
        dest : path
            The folder (created if missing).
        max_total_bytes, max_files : int
            Limits, see :meth:`check`.

        Returns
        -------
        list of pathlib.Path
            The files written.

        Raises
        ------
        UnsafeArchiveError
        """
        infos = self.check(max_total_bytes=max_total_bytes, max_files=max_files)
        root = Path(dest)
        root.mkdir(parents=True, exist_ok=True)
        root = root.resolve()
        written: list[Path] = []
        budget = max_total_bytes
        with zipfile.ZipFile(self.path) as zf:
            for info in infos:
                target = (root / _capped(info.filename)).resolve()
                if target != root and root not in target.parents:
                    raise UnsafeArchiveError(
                        f"archive {self.path}: entry {info.filename!r} resolves outside {root}"
                    )
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                try:
                    budget = _copy_within_budget(zf, info, target, budget)
                except UnsafeArchiveError as exc:
                    target.unlink(missing_ok=True)
                    raise UnsafeArchiveError(
                        f"archive {self.path}: entry {info.filename!r} {exc.message} "
                        f"(max_total_bytes={max_total_bytes}, declared size {info.file_size})"
                    ) from None
                except zipfile.BadZipFile as exc:
                    # zipfile stops at the declared size and then fails the CRC: a header
                    # that lies about a size ends here
                    target.unlink(missing_ok=True)
                    raise UnsafeArchiveError(
                        f"archive {self.path}: entry {info.filename!r} is corrupt ({exc})"
                    ) from None
                written.append(target)
        return written


def _capped(entry: str) -> str:
    """An entry's path with each component capped in length (:func:`cap_name`): a long
    element id in an entry name must not make the extraction fail."""
    return "/".join(cap_name(part) for part in entry.replace("\\", "/").split("/"))


def _copy_within_budget(
    zf: zipfile.ZipFile, info: zipfile.ZipInfo, target: Path, budget: int
) -> int:
    """Stream one entry to ``target``; stop once more than ``budget`` bytes came out."""
    with zf.open(info) as src, open(target, "wb") as out:
        while chunk := src.read(1 << 16):
            budget -= len(chunk)
            if budget < 0:
                raise UnsafeArchiveError("expands beyond the size limit")
            out.write(chunk)
    return budget
