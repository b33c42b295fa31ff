"""A tables-as-code folder: which files hold objects, and which object each one holds.

Layout::

    DIR/tables/<encoded id>.csv + <encoded id>.meta.json   (or .json, or .xlsx)
    DIR/mappings/<encoded id>.csv + ...

(:mod:`.names` encodes ids; :mod:`.files` reads and writes the formats.) Other files
are ignored: hidden files, editor lock files (``~$x.xlsx``), anything outside the two
kind folders.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from mddframes.codec.kinds import Kind
from mddframes.errors import DataShapeError, InvalidArgumentError
from mddframes.tables_as_code.names import FORMATS, KIND_FOLDERS, SIDECAR_SUFFIX, split_name


def object_files(folder: Path) -> Iterator[tuple[Kind, Path]]:
    """Every object file of ``folder``, tables first, each kind sorted by name.

    Raises
    ------
    InvalidArgumentError
        ``folder`` is not a folder.
    DataShapeError
        Two files of one name stem (``x.csv`` and ``x.xlsx``): one object, two files.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise InvalidArgumentError(f"{folder} is not a folder (pull a system into it first)")
    for kind, sub in KIND_FOLDERS.items():
        place = folder / sub
        if not place.is_dir():
            continue
        stems: dict[str, Path] = {}
        for path in sorted(place.iterdir()):
            if path.name.startswith((".", "~")) or not path.is_file():
                continue
            stem, rest = split_name(path.name)
            if rest not in FORMATS:
                continue  # sidecars (.meta.json) and foreign files
            if stem in stems:
                raise DataShapeError(
                    f"{stems[stem]} and {path.name} are two files of one object: keep one"
                )
            stems[stem] = path
            yield kind, path


def existing_files(folder: Path, kind: Kind, stem: str) -> list[Path]:
    """The files of one object stem already in ``folder`` (any format, sidecar too)."""
    place = Path(folder) / KIND_FOLDERS[kind]
    names = [f"{stem}.{fmt}" for fmt in FORMATS] + [stem + SIDECAR_SUFFIX]
    return [place / name for name in names if (place / name).is_file()]
