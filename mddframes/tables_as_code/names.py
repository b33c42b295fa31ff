"""File names of objects in a tables-as-code folder: ``<kind folder>/<encoded id>.<ext>``.

An id becomes a file name by percent-encoding (UTF-8) every character outside
``A-Z a-z 0-9 _ -``: ``/``, ``%``, ``.``, spaces and non-ASCII letters included. So
no name is ``.`` or ``..``, none holds a path separator, every name is plain ASCII
(macOS would otherwise re-normalise accented names), and the first ``.`` of a
file name always starts its extension. A name longer than :data:`MAX_STEM` bytes is
cut and given a ``~`` and a hash of the id (``~`` never appears in an encoded id).
The id itself is kept inside each file (sidecar, JSON or hidden sheet), so the name
only has to be unique and readable, and is never decoded to find the id.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Literal

from mddframes.codec.kinds import Kind

#: The file formats of an object in a tables-as-code folder.
FileFormat = Literal["csv", "json", "xlsx"]

#: The sub-folder of each kind.
KIND_FOLDERS: dict[Kind, str] = {"table": "tables", "mapping": "mappings"}

#: The object file formats, by extension.
FORMATS = ("csv", "json", "xlsx")

#: The extension of the sidecar that keeps a CSV file's envelope and cell encodings.
SIDECAR_SUFFIX = ".meta.json"

#: The longest encoded id kept whole (file systems allow 255 bytes per name).
MAX_STEM = 180

_UNSAFE = re.compile(r"[^A-Za-z0-9_\-]")


def encode_id(object_id: str) -> str:
    """The file stem of ``object_id`` (see the module docstring)."""
    stem = _UNSAFE.sub(
        lambda m: "".join(f"%{byte:02X}" for byte in m.group().encode("utf-8", "surrogatepass")),
        object_id,
    )
    if len(stem) > MAX_STEM:
        cut = stem[: MAX_STEM - 20]
        cut = re.sub(r"%[0-9A-F]?$", "", cut)  # never end inside an escape
        stem = (
            f"{cut}~{hashlib.sha256(object_id.encode('utf-8', 'surrogatepass')).hexdigest()[:16]}"
        )
    return stem


def object_path(folder: Path, kind: Kind, object_id: str, fmt: str) -> Path:
    """Where the ``fmt`` file of an object lives in ``folder``."""
    return Path(folder) / KIND_FOLDERS[kind] / f"{encode_id(object_id)}.{fmt}"


def sidecar_path(path: Path) -> Path:
    """The sidecar of a CSV object file (``x.csv`` -> ``x.meta.json``)."""
    return path.with_name(path.name.split(".", 1)[0] + SIDECAR_SUFFIX)


def split_name(name: str) -> tuple[str, str]:
    """``("stem", "rest after the first dot")`` of a file name."""
    stem, _, rest = name.partition(".")
    return stem, rest
