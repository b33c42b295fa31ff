"""``pull``: write the files of a system's tables and mappings into a folder.

What pull does with an existing folder: each pulled object's file is rewritten in
place (same bytes when nothing changed, so git sees no change), in the format it
already has unless ``fmt`` is given; a file of the object in another format is
removed (one file per object). Files of objects that were not pulled are left
alone; a full pull (no ``ids``) names in its result the files whose object the
system no longer has (``action`` "not on the service"), without removing them.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.bulk import run_bulk
from mddframes.codec.kinds import Kind
from mddframes.doc_sections import documented
from mddframes.errors import DeclaredTypeWarning, InvalidArgumentError
from mddframes.frames.table import read_mapping, read_table
from mddframes.frames.tree import read_tree
from mddframes.ids import close_matches, id_list
from mddframes.tables_as_code.files import read_object, write_object
from mddframes.tables_as_code.folder import existing_files, object_files
from mddframes.tables_as_code.names import FORMATS, KIND_FOLDERS, FileFormat, encode_id, split_name

if TYPE_CHECKING:
    from mddframes.api import Api

#: The columns of :func:`pull_folder`'s result.
PULL_COLUMNS = ("kind", "id", "file", "rows", "action")


#: The tree's column of each kind's id.
_ID_COLUMNS: tuple[tuple[Kind, str], ...] = (("table", "table_id"), ("mapping", "mapping_id"))


def system_objects(
    api: Api, system: str, ids: Iterable[str] | None = None
) -> list[tuple[Kind, str]]:
    """The (kind, id) of every table and mapping of ``system`` (tree order).

    ``ids`` keeps only some: each may be a table id, a mapping id or an element id
    (its table and mapping). An id the system does not know is refused.
    """
    tree = read_tree(api, system)
    found: dict[tuple[Kind, str], None] = {}
    by_element: dict[str, list[tuple[Kind, str]]] = {}
    for record in tree.to_dict("records"):
        for kind, column in _ID_COLUMNS:
            value = record.get(column)
            if isinstance(value, str) and value:
                found[(kind, value)] = None
                by_element.setdefault(str(record["id"]), []).append((kind, value))
    everything = list(found)
    if ids is None:
        return everything
    wanted = id_list(ids, what="ids")
    chosen: dict[tuple[Kind, str], None] = {}
    unknown = []
    for object_id in wanted:
        matches = [key for key in everything if key[1] == object_id] + by_element.get(object_id, [])
        if not matches:
            unknown.append(object_id)
        chosen.update(dict.fromkeys(matches))
    if unknown:
        raise InvalidArgumentError(
            f"system {system!r} has no table, mapping or element {unknown[:10]!r}"
            + close_matches(unknown, [key[1] for key in everything] + list(by_element))
            + "; nothing was written"
        )
    return list(chosen)


@documented
def pull_folder(
    api: Api,
    system: str,
    folder: str | Path,
    *,
    ids: Iterable[str] | None = None,
    fmt: FileFormat | None = None,
    max_workers: int | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Write every table and mapping of ``system`` (or the ``ids``) into ``folder``.

    Parameters
    ----------
    {api}
    system : str
        The system whose tree lists the tables and mappings.
    folder : path
        The tables-as-code folder (created if missing); layout in
        :mod:`mddframes.tables_as_code.folder`.
    ids : iterable of str, optional
        Only these tables, mappings or elements' objects.
    fmt : {"csv", "json", "xlsx"}, optional
        The format of the files; default each object's existing format, else csv.
    {max_workers}
    {progress}

    Returns
    -------
    pandas.DataFrame
        One row per object: ``kind``, ``id``, ``file`` (relative to the folder),
        ``rows``, ``action`` ("written", "unchanged" when its files already held
        these bytes, or "not on the service" for a file the system no longer has).

    Raises
    ------
    InvalidArgumentError
        An unknown format or id, or two ids whose file names differ only in case
        (they would collide on macOS and Windows); nothing is written.

    Examples
    --------
    >>> pulled = mddframes.pull_folder(client.api, "DWH", "tables", progress=False)
    >>> pulled["action"].value_counts().to_dict()  # one file per table and mapping
    {'written': 213}
    >>> pulled.loc[pulled["id"] == "tbl-0109", "file"].item()
    'tables/tbl-0109.csv'
    """
    if fmt is not None and fmt not in FORMATS:
        raise InvalidArgumentError(f"format must be one of {', '.join(FORMATS)}, not {fmt!r}")
    folder = Path(folder)
    objects = system_objects(api, system, ids)
    _refuse_case_collisions(objects)
    folder.mkdir(parents=True, exist_ok=True)

    def pull_one(item: tuple[Kind, str]) -> dict[str, Any]:
        kind, object_id = item
        with warnings.catch_warnings():  # the files hold text: a dtype misfit is no news
            warnings.simplefilter("ignore", DeclaredTypeWarning)
            frame = read_table(api, object_id) if kind == "table" else read_mapping(api, object_id)
        payload = frame.attrs["mddframes"].load_document()
        stem = encode_id(object_id)
        present = existing_files(folder, kind, stem)
        chosen: str = fmt or next(
            (split_name(p.name)[1] for p in present if split_name(p.name)[1] in FORMATS), "csv"
        )
        path = folder / KIND_FOLDERS[kind] / f"{stem}.{chosen}"
        written = write_object(path, kind, object_id, payload)
        keep = {p for p, _ in written}
        for old in present:
            if old not in keep:
                old.unlink()
        changed = any(flag for _, flag in written) or len(present) > len(keep)
        return {"kind": kind, "id": object_id, "file": path.relative_to(folder).as_posix(),
                "rows": len(frame), "action": "written" if changed else "unchanged"}  # fmt: skip

    outcome = run_bulk(pull_one, objects, max_workers=max_workers or api.max_workers,
                       progress=progress, desc="pull", label=lambda item: item[1])  # fmt: skip
    rows = [row for _item, row in outcome.succeeded]  # all: errors="raise"
    if ids is None:
        # any other object file holds an object the system no longer lists
        pulled = {row["file"] for row in rows}
        for kind, path in object_files(folder):
            if path.relative_to(folder).as_posix() in pulled:
                continue
            try:
                held = read_object(path)
            except Exception:  # an unreadable file is plan's business, not pull's
                continue
            if (held.kind, held.object_id) not in set(objects):
                rows.append({"kind": kind, "id": held.object_id,
                             "file": path.relative_to(folder).as_posix(), "rows": len(held.frame),
                             "action": "not on the service"})  # fmt: skip
    frame = pd.DataFrame(rows, columns=list(PULL_COLUMNS))
    return frame.astype({"kind": "string", "id": "string", "file": "string", "rows": "Int64",
                         "action": "string"})  # fmt: skip


def _refuse_case_collisions(objects: list[tuple[Kind, str]]) -> None:
    seen: dict[tuple[Kind, str], str] = {}
    for kind, object_id in objects:
        key = (kind, encode_id(object_id).lower())
        if key in seen and seen[key] != object_id:
            raise InvalidArgumentError(
                f"{kind}s {seen[key]!r} and {object_id!r} would get file names that differ "
                "only in case (one file on macOS and Windows); pull them into separate "
                "folders with --ids-file; nothing was written"
            )
        seen[key] = object_id
