"""Any id, any served file name -> a file name every file system takes.

:func:`id_file_name` is the one rule by which an id becomes a file or folder name, for
every on-disk use: backups (``<root>/<tenant>/<kind>/<id>/``), journals' tenant folder,
locks, snapshots, tables as code. :func:`served_file_name` makes a name the service sent
(``Content-Disposition``, an export zip's entry) safe the same way, keeping its extension.

The id rule: every character outside ``A-Z a-z 0-9 _ -`` is percent-encoded (UTF-8, upper
case hex): ``/``, ``\\``, ``.``, ``%``, ``~``, NUL, spaces and non-ASCII letters included.
So no name is ``.`` or ``..`` or hidden, none holds a separator, every name is plain
ASCII (macOS would otherwise re-normalise accented names) and the first ``.`` of a name
always starts its extension. A Windows device name (``CON``, ``nul``, ``COM1``...) gets
its first letter encoded (``%43ON``); the empty id is ``~`` and a digest. A name whose
encoding is longer than :data:`MAX_STEM` characters is cut (never inside an escape) and
ends with ``~`` and 16 hex digits of the SHA-256 of the id (``~`` never appears in an
encoded id, so the two forms cannot meet). Ids that were file-name-safe stay as they are.

A capped name cannot be decoded; nothing needs it to be. The id is always kept inside
the files themselves (a backup's ``id``, a journal's plan, a lock's holder file, a
snapshot's manifest, a tables-as-code file's sidecar), and that is what maps a name back.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import PurePosixPath, PureWindowsPath

__all__ = [
    "MAX_NAME_BYTES",
    "MAX_STEM",
    "bare_name",
    "cap_name",
    "id_file_name",
    "served_file_name",
]

#: The longest encoded id kept whole; the rest of a name's 255 bytes are left for an
#: extension and the suffixes of temporary and holder files.
MAX_STEM = 180
#: The longest served file name kept whole, in UTF-8 bytes (file systems allow 255).
MAX_NAME_BYTES = 200
_DIGEST_CHARS = 16

_UNSAFE = re.compile(r"[^A-Za-z0-9_\-]")
_RESERVED = re.compile(r"(?i)(CON|PRN|AUX|NUL|CLOCK\$|COM[0-9¹²³]|LPT[0-9¹²³])")
_UNSAFE_SERVED = re.compile(r'[\x00-\x1f\x7f<>:"/\\|?*]')


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST_CHARS]


def id_file_name(object_id: str, suffix: str = "") -> str:
    """The file name of an id (see the module docstring), with ``suffix`` appended.

    Parameters
    ----------
    object_id : str
        Any id: long, non-ASCII, a reserved name, dots, slashes, NUL, percent escapes.
    suffix : str, optional
        Appended as given (``".lock"``, ``".csv"``).

    Returns
    -------
    str
        At most :data:`MAX_STEM` ASCII characters before ``suffix``.

    Examples
    --------
    >>> id_file_name("tbl-0109", ".json")
    'tbl-0109.json'
    >>> id_file_name("../etc/passwd")
    '%2E%2E%2Fetc%2Fpasswd'
    >>> id_file_name("con")
    '%63on'
    >>> len(id_file_name("é" * 100)) <= MAX_STEM
    True
    """
    text = str(object_id)
    if not text:
        return f"~{_digest(text)}{suffix}"
    stem = _UNSAFE.sub(
        lambda m: "".join(f"%{byte:02X}" for byte in m.group().encode("utf-8", "surrogatepass")),
        text,
    )
    if _RESERVED.fullmatch(stem):
        stem = f"%{ord(stem[0]):02X}{stem[1:]}"
    if len(stem) > MAX_STEM:
        cut = stem[: MAX_STEM - _DIGEST_CHARS - 1]
        cut = re.sub(r"%[0-9A-F]?$", "", cut)  # never end inside an escape
        stem = f"{cut}~{_digest(text)}"
    return stem + suffix


def bare_name(name: str | None) -> str | None:
    """The usable base name of a name the service sent, or None when nothing is usable.

    Only the last path component is kept (``/`` and ``\\`` both separate); control
    characters and ``<>:"|?*`` become ``_``; trailing dots and spaces go; an empty or
    dot-only name gives None. A Windows device name gets a ``_`` in front; the length is
    capped by :func:`cap_name`.

    Parameters
    ----------
    name : str or None
        The name as the service sent it.

    Returns
    -------
    str or None
    """
    base = PureWindowsPath(PurePosixPath(str(name or "").replace("\x00", "")).name).name
    base = _UNSAFE_SERVED.sub("_", base).strip().rstrip(". ")
    if not base.strip("."):
        return None
    if _RESERVED.fullmatch(base.split(".")[0]):
        base = "_" + base
    return cap_name(base)


def cap_name(name: str) -> str:
    """``name`` cut to :data:`MAX_NAME_BYTES` UTF-8 bytes: its start, ``~``, a digest of
    the whole name, and its extension (when it has a short one). Shorter names are kept.

    Parameters
    ----------
    name : str
        A file name (one path component).

    Returns
    -------
    str

    Examples
    --------
    >>> name = cap_name("x" * 300 + ".sql")
    >>> len(name), name[-4:]
    (200, '.sql')
    """
    if len(name.encode("utf-8", "surrogatepass")) <= MAX_NAME_BYTES:
        return name
    stem, dot, extension = name.rpartition(".")
    if not dot or not stem or len(extension.encode("utf-8", "surrogatepass")) > 16:
        stem, dot, extension = name, "", ""
    room = MAX_NAME_BYTES - len((dot + extension).encode("utf-8", "surrogatepass"))
    room -= _DIGEST_CHARS + 1
    cut = stem.encode("utf-8", "surrogatepass")[:room].decode("utf-8", "ignore")
    return f"{cut}~{_digest(name)}{dot}{extension}"


def served_file_name(name: str | None, *, fallback: str) -> str:
    """A file name the service sent, as a bare file name safe on every file system.

    :func:`bare_name` of ``name``, else of ``fallback`` (else ``"file"``).

    Parameters
    ----------
    name : str or None
        The name as the service sent it.
    fallback : str
        The name when nothing usable is left (it goes through the same rule).

    Returns
    -------
    str

    Examples
    --------
    >>> served_file_name("../../etc/dwh.sql", fallback="x.txt")
    'dwh.sql'
    >>> served_file_name("..", fallback="dwh-0064.sql")
    'dwh-0064.sql'
    """
    return bare_name(name) or bare_name(fallback) or "file"
