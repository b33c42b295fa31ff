"""File names of objects in a tables-as-code folder: ``<kind folder>/<encoded id>.<ext>``.

An id becomes a file stem by :func:`mddframes.disk_names.id_file_name`, the one rule of
every on-disk name (percent-encoding outside ``A-Z a-z 0-9 _ -``, Windows device names
escaped, capped at :data:`MAX_STEM` characters with a ``~`` and a digest), so the first
``.`` of a file name always starts its extension. The id itself is kept inside each file
(sidecar, JSON or hidden sheet), so the name only has to be unique and readable, and is
never decoded to find the id.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from mddframes.codec.kinds import Kind
from mddframes.disk_names import MAX_STEM, id_file_name

__all__ = [
    "FORMATS", "KIND_FOLDERS", "MAX_STEM", "SIDECAR_SUFFIX", "FileFormat", "encode_id",
    "object_path", "sidecar_path", "split_name",
]  # fmt: skip

#: The file formats of an object in a tables-as-code folder.
FileFormat = Literal["csv", "json", "xlsx"]

#: The sub-folder of each kind.
KIND_FOLDERS: dict[Kind, str] = {"table": "tables", "mapping": "mappings"}

#: The object file formats, by extension.
FORMATS = ("csv", "json", "xlsx")

#: The extension of the sidecar that keeps a CSV file's envelope and cell encodings.
SIDECAR_SUFFIX = ".meta.json"


def encode_id(object_id: str) -> str:
    """The file stem of ``object_id`` (:func:`mddframes.disk_names.id_file_name`)."""
    return id_file_name(object_id)


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
