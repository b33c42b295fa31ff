"""Backups of what the service held before a write: where they go, saving and loading them.

A backup is one JSON file per write, ``<root>/<tenant>/<kind>/<id>/<UTC timestamp>.json``,
written atomically: to a temporary file in the same folder, flushed to disk, then
given its final name, so a crash or a full disk never leaves a half-written backup.
Backup files are ``0600`` and their folders ``0700`` whatever the umask
(:mod:`mddframes.disk_modes`); ``<tenant>`` and ``<id>`` are
:func:`~mddframes.disk_names.id_file_name` of them (the file's ``id`` maps back).

The root (:func:`backup_root`) is the ``backup_dir`` argument of the write, else the
client's ``backup_dir`` setting (``MDD_BACKUP_DIR``, a profile's ``backup_dir``, or
``connect(backup_dir=...)``), else ``MDD_BACKUP_DIR`` as the process has it now (for
clients made without :func:`~mddframes.connect`, such as ``Client.from_emulator``), else
``<user data folder>/mddframes/backups`` (:func:`default_backup_root`): never a folder
that depends on where the process was started. Up to 0.x the default was
``./.mddframes/backups``; such a folder in the current folder is still read for
unfinished batches (:func:`legacy_backup_root`).

A client of an emulator (``Client.from_emulator``, :func:`mddframes.testing.replayed`)
backs up under ``<root>/.emulator`` (:func:`emulator_backup_root`): a replay serves a
real tenant's name, and the sample tenant's name may be a real one, but no tenant's
folder is ever called ``.emulator`` (:func:`~mddframes.disk_names.id_file_name` escapes
a leading dot), so an emulator's backups and journals never mix with a tenant's.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import tempfile
from collections.abc import Iterable
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

import platformdirs

from mddframes.codec import depth
from mddframes.codec.kept import KeptJson
from mddframes.codec.kinds import Kind
from mddframes.disk_modes import private_dir
from mddframes.disk_names import id_file_name
from mddframes.doc_sections import documented_with
from mddframes.errors import BackupError, DataShapeError, MddWarning, issue_warning

if TYPE_CHECKING:
    from mddframes.api import Api

#: The environment variable naming the backup root (also a setting of ``connect``).
BACKUP_DIR_VARIABLE = "MDD_BACKUP_DIR"
#: The default root of older versions, relative to the current folder: still read.
LEGACY_BACKUP_ROOT = Path(".mddframes") / "backups"
_legacy_noticed: set[Path] = set()


def default_backup_root() -> Path:
    """The backup root when nothing sets one: ``<user data folder>/mddframes/backups``.

    Returns
    -------
    pathlib.Path
        ``platformdirs.user_data_dir("mddframes")`` + ``backups`` (for example
        ``~/.local/share/mddframes/backups`` on Linux).
    """
    return Path(platformdirs.user_data_dir("mddframes", appauthor=False)) / "backups"


def backup_root(api: Api | None, backup_dir: str | os.PathLike[str] | None = None) -> Path:
    """The root folder of the backups and journals of a write (see the module docstring).

    Parameters
    ----------
    api : Api or None
        The raw layer; its settings' ``backup_dir`` is used when ``backup_dir`` is None.
    backup_dir : path, optional
        The write's own ``backup_dir`` argument, which wins.

    Returns
    -------
    pathlib.Path
    """
    if backup_dir is not None:
        return Path(backup_dir)
    configured = getattr(getattr(api, "settings", None), "backup_dir", None)
    if configured:
        return Path(configured).expanduser()
    from_environment = os.environ.get(BACKUP_DIR_VARIABLE, "").strip()
    if from_environment:
        return Path(from_environment).expanduser()
    return default_backup_root()


#: The folder under a backup or lock root that holds what emulators' clients keep: no
#: tenant's folder has this name (a leading dot is escaped in file names of ids).
EMULATOR_FOLDER = ".emulator"

#: The parameters naming one backed-up object, written once for the functions taking them.
_documented = documented_with(
    {
        "backed_up": "api : Api\n    The connection (its tenant names a level of the folder).\n"
        "kind : {'table', 'mapping'}\n    Which kind of object.\n"
        "object_id : str\n    The object's id."
    },
    "backed_up",
)


def emulator_backup_root() -> Path:
    """The backup root of a client of an emulator: ``<backup root>/.emulator``.

    ``<backup root>`` is ``MDD_BACKUP_DIR`` as the process has it now, else
    :func:`default_backup_root`.

    Returns
    -------
    pathlib.Path
    """
    return backup_root(None) / EMULATOR_FOLDER


def legacy_backup_root() -> Path | None:
    """``./.mddframes/backups`` when it exists in the current folder, else None.

    The first time a process finds one, an :class:`~mddframes.errors.MddWarning` names
    it: its journals are still listed and resumed, but new backups go to
    :func:`backup_root`.
    """
    legacy = LEGACY_BACKUP_ROOT.absolute()
    if not legacy.is_dir():
        return None
    if legacy not in _legacy_noticed:
        _legacy_noticed.add(legacy)
        issue_warning(
            f"{legacy} holds backups and journals of an older mddframes (whose default was "
            "./.mddframes/backups); its unfinished batches are still listed and resumed, "
            "new backups go to the backup_dir setting (MDD_BACKUP_DIR; default: the user's "
            f"data folder, {default_backup_root()}). Move the folder there when no batch "
            "in it is unfinished.",
            MddWarning,
        )
    return legacy


def path_segment(value: str) -> str:
    """``value`` as one safe folder or file name: :func:`mddframes.disk_names.id_file_name`."""
    return id_file_name(value)


@_documented
def backup_folder(
    api: Api, kind: Kind, object_id: str, backup_dir: str | os.PathLike[str] | None = None
) -> Path:
    """The folder holding the backups of one object: ``<root>/<tenant>/<kind>/<id>``.

    Parameters
    ----------
    {backed_up}
    backup_dir : str or os.PathLike, optional
        The backup root (the ``backup_dir`` setting when None).

    Returns
    -------
    pathlib.Path
        The folder (not created here).
    """
    tenant = getattr(api, "tenant", None) or "default"
    return backup_root(api, backup_dir) / path_segment(str(tenant)) / kind / path_segment(object_id)


@_documented
def save_backup(
    api: Api,
    kind: Kind,
    object_id: str,
    payload: dict[str, Any],
    *,
    backup_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """Save ``payload`` as a timestamped JSON backup of one object and return its path.

    The file holds ``{"kind", "id", "tenant", "savedAt", "payload"}``. It is written
    to a temporary file in the same folder, flushed to disk, then given its final
    name, so a backup file is never half-written; an existing backup is never
    overwritten.

    Parameters
    ----------
    {backed_up}
    payload : dict
        What the service holds, to back up.
    backup_dir : str or os.PathLike, optional
        The backup root (the ``backup_dir`` setting when None).

    Returns
    -------
    pathlib.Path
        The backup file.

    Raises
    ------
    BackupError
        The payload is not strict JSON, or the file could not be written (the error
        names the folder and the cause; no partial file is left).
    """
    folder = backup_folder(api, kind, object_id, backup_dir)
    root = backup_root(api, backup_dir)
    now = _dt.datetime.now(_dt.UTC)
    document = {**_header(api, kind, object_id, now), "payload": payload}
    try:
        text = depth.dumps(document, ensure_ascii=False, allow_nan=False)
    except ValueError as exc:
        raise BackupError(
            f"cannot back up {kind} {object_id!r}: what the service holds is not strict JSON "
            f"({exc}); nothing was sent"
        ) from None
    return _store(folder, root, now, kind, object_id, text)


def save_backup_document(
    api: Api,
    kind: Kind,
    object_id: str,
    document: KeptJson,
    *,
    backup_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """:func:`save_backup` of a document kept as received (bytes, compressed).

    The same file as :func:`save_backup` writes (``load_backup`` reads it alike), with
    the service's own bytes as ``payload``, streamed to disk piece by piece: a large
    table is never serialised again nor held whole in memory for its backup.

    Raises
    ------
    BackupError
        The file could not be written (nothing was sent).
    """
    folder = backup_folder(api, kind, object_id, backup_dir)
    root = backup_root(api, backup_dir)
    now = _dt.datetime.now(_dt.UTC)
    head = json.dumps(_header(api, kind, object_id, now), ensure_ascii=False)
    pieces = chain([head[:-1].encode("utf-8"), b', "payload": '], document.chunks(), [b"}"])
    return _store(folder, root, now, kind, object_id, pieces)


def _header(api: Api, kind: Kind, object_id: str, now: _dt.datetime) -> dict[str, Any]:
    """The fields of a backup file before its ``payload``."""
    return {
        "kind": kind,
        "id": object_id,
        "tenant": getattr(api, "tenant", None),
        "savedAt": now.isoformat().replace("+00:00", "Z"),
    }


def _store(
    folder: Path,
    root: Path,
    now: _dt.datetime,
    kind: Kind,
    object_id: str,
    content: str | Iterable[bytes],
) -> Path:
    """Write a backup file named by ``now`` (owner-only, in owner-only folders under
    ``root``); an ``OSError`` becomes a ``BackupError``."""
    try:
        private_dir(folder, root=root)
        return _write_new(folder, now.strftime("%Y%m%dT%H%M%S.%fZ"), content)
    except OSError as exc:
        raise BackupError(
            f"cannot save the backup of {kind} {object_id!r} in {folder}: "
            f"{exc.strerror or exc} ({exc.filename or folder}); nothing was sent"
        ) from exc


def _write_new(folder: Path, stem: str, text: str | Iterable[bytes]) -> Path:
    """Write ``text`` (or the byte pieces) to a new file ``<stem>[-n].json`` in ``folder``,
    atomically."""
    handle = tempfile.NamedTemporaryFile(  # closed below, before it is given its name
        "wb", dir=folder, prefix=f".{stem}.", suffix=".tmp", delete=False
    )
    temp = Path(handle.name)
    try:
        with handle:
            for piece in [text.encode("utf-8")] if isinstance(text, str) else text:
                handle.write(piece)
            handle.flush()
            os.fsync(handle.fileno())  # on disk before it has its name: never half-written
        for attempt in range(1000):
            path = folder / (f"{stem}.json" if attempt == 0 else f"{stem}-{attempt}.json")
            if _claim(temp, path):
                return path
        raise BackupError(f"could not find a free backup file name in {folder}")
    finally:
        temp.unlink(missing_ok=True)  # after a link: the name stays; after a failure: no trace


def _claim(temp: Path, path: Path) -> bool:
    """Give the written ``temp`` the name ``path`` unless that name is taken."""
    try:
        # a hard link is the atomic rename that never replaces an existing file
        os.link(temp, path)
    except FileExistsError:
        return False
    except OSError:
        # a file system without hard links: check, then rename (replaces atomically)
        if path.exists():
            return False
        os.replace(temp, path)
    return True


def load_backup(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read and validate a backup file written by :func:`save_backup`.

    Parameters
    ----------
    path : str or os.PathLike
        The backup file.

    Returns
    -------
    dict
        The file's document: ``kind``, ``id``, ``tenant``, ``savedAt`` and ``payload``.

    Raises
    ------
    DataShapeError
        If the file is not such a backup (names the file and what is wrong).
    """
    path = Path(path)
    try:
        document = depth.loads(path.read_text(encoding="utf-8"), what=str(path))
    except (OSError, ValueError) as exc:
        raise DataShapeError(f"cannot read backup {path}: {exc}") from None
    if not isinstance(document, dict):
        raise DataShapeError(f"{path} is not an mddframes backup: it is not a JSON object")
    problems = []
    if document.get("kind") not in ("table", "mapping"):
        problems.append(f"'kind' is {document.get('kind')!r}, not 'table' or 'mapping'")
    if not isinstance(document.get("id"), str) or not document.get("id"):
        problems.append("'id' is missing")
    if not isinstance(document.get("payload"), dict):
        problems.append("'payload' is not a JSON object")
    if problems:
        raise DataShapeError(f"{path} is not an mddframes backup: {'; '.join(problems)}")
    return document
