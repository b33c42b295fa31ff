"""One generated script (:class:`Script`), and the scripts of many elements at once.

The service generates the output script of one element synchronously
(``externalExportStructure``); :func:`export_scripts` calls it concurrently.
"""

from __future__ import annotations

import html
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.api_bodies import attachment_filename_fallback
from mddframes.bulk import ProgressCallback, bulk_status_frame, resolve_workers
from mddframes.disk_names import bare_name, id_file_name, served_file_name
from mddframes.doc_sections import documented
from mddframes.errors import MddError
from mddframes.exports.tasks import require_object_type
from mddframes.ids import Ids
from mddframes.ids import id_list as ids_of

if TYPE_CHECKING:
    from mddframes.api import Api

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Script:
    """One generated output script.

    Attributes
    ----------
    file_name : str
        The file name the service gave the script.
    text : str
        The script itself.
    structure_id : str or None
        The element it was generated for.
    object_type_id : str or None
        The object type that selected the template.
    """

    file_name: str
    text: str
    structure_id: str | None = None
    object_type_id: str | None = None

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        lines = self.text.count("\n") + (1 if self.text and not self.text.endswith("\n") else 0)
        return (
            f"Script(file_name={self.file_name!r}, structure_id={self.structure_id!r}, "
            f"object_type_id={self.object_type_id!r}, lines={lines})"
        )

    def save(self, dest: str | os.PathLike[str]) -> Path:
        """Write the script to ``dest`` (a file path, or an existing folder).

        Parameters
        ----------
        dest : path
            A file path, or a folder in which the script is saved under its file name.

        Returns
        -------
        pathlib.Path
            Where the script was written.
        """
        path = Path(dest)
        if path.is_dir():
            fallback = f"{id_file_name(str(self.structure_id))}.txt"
            path = path / served_file_name(self.file_name, fallback=fallback)
        path.parent.mkdir(parents=True, exist_ok=True)
        # newline="" keeps the service's line endings byte-for-byte
        with open(path, "w", encoding="utf-8", newline="") as fh:
            fh.write(self.text)
        return path

    def _repr_html_(self) -> str:
        title = html.escape(self.file_name)
        try:
            return f"<div><b>{title}</b>{_highlight(self.file_name, self.text)}</div>"
        except Exception:  # highlighting is cosmetic: never let it hide the script
            log.debug("highlighting %s failed", self.file_name, exc_info=True)
            return f"<div><b>{title}</b><pre>{html.escape(self.text)}</pre></div>"


def _highlight(file_name: str, text: str) -> str:
    """HTML of ``text`` highlighted by Pygments when installed, else an escaped <pre>."""
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import TextLexer, get_lexer_for_filename
        from pygments.util import ClassNotFound
    except ImportError:
        return f"<pre>{html.escape(text)}</pre>"
    try:
        lexer = get_lexer_for_filename(file_name, text)
    except ClassNotFound:
        lexer = TextLexer()
    return highlight(text, lexer, HtmlFormatter(noclasses=True, nowrap=False))


@documented
def export_script(api: Api, structure_id: str, object_type_id: str) -> Script:
    """Generate the output script of one element.

    Parameters
    ----------
    {api}
    structure_id : str
        The element.
    object_type_id : str
        The object type that selects the template.

    Returns
    -------
    Script
    """
    require_object_type(object_type_id, "export_script")
    file_name, text = api.external_export_structure(structure_id, object_type_id)
    served = bare_name(file_name)
    if served is None or file_name == attachment_filename_fallback(structure_id):
        served = fallback_name(api, structure_id, object_type_id)  # none or none usable
    return Script(
        file_name=served,
        text=text,
        structure_id=str(structure_id),
        object_type_id=str(object_type_id),
    )


@documented
def fallback_name(api: Api, structure_id: str, object_type_id: str) -> str:
    """The file name of a script whose served name is unusable (none, ``..``, ``/``):
    the element id (:func:`~mddframes.disk_names.id_file_name`) with the object type's
    ``fileExtension`` (``.txt`` when the object type does not say).

    Parameters
    ----------
    {api}
    structure_id : str
        The element.
    object_type_id : str
        The object type that selected the template.

    Returns
    -------
    str
    """
    extension = "txt"
    try:
        listed = api.get_object_types()
    except MddError as exc:  # the name is a courtesy: the script itself was received
        log.debug("object types for the file name of %s: %s", structure_id, exc)
        listed = None
    for entry in listed if isinstance(listed, list) else []:
        if isinstance(entry, dict) and str(entry.get("id")) == str(object_type_id):
            given = str(entry.get("fileExtension") or "").strip().lstrip(".")
            if given and bare_name(f"x.{given}") == f"x.{given}" and len(given) <= 16:
                extension = given
            break
    return f"{id_file_name(str(structure_id))}.{extension}"


@documented
def export_scripts(
    api: Api,
    ids: Ids,
    object_type_id: str,
    dest: str | os.PathLike[str] | None = None,
    *,
    max_workers: int | None = None,
    progress: bool | None = None,
    on_progress: ProgressCallback | None = None,
) -> pd.DataFrame:
    """Generate the scripts of many elements concurrently.

    Parameters
    ----------
    {api}
    ids : list, Series or DataFrame
        The elements (a frame needs an ``id`` column); duplicates are exported once.
    object_type_id : str
        The object type that selects the template.
    dest : path, optional
        A folder: each script is written there under its file name and the frame's
        ``text`` column stays empty, so memory does not grow with the batch.
    {max_workers}
    {progress}
    on_progress : callable, optional
        Called as ``on_progress(done, total)`` after each export (see :func:`run_bulk`).

    Returns
    -------
    pandas.DataFrame
        One row per id: ``id``, ``ok``, ``error``, ``file_name``, ``size`` (characters),
        ``path`` (when ``dest`` is given) and ``text`` (when it is not). A failed
        export is a row with ``ok`` False and the error in words; nothing is hidden.
    """
    require_object_type(object_type_id, "export_scripts")
    id_list = ids_of(ids, what="export_scripts ids")
    workers = resolve_workers(max_workers, api.max_workers)
    folder = Path(dest) if dest is not None else None
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)

    def one(structure_id: str) -> dict[str, Any]:
        script = export_script(api, structure_id, object_type_id)
        row: dict[str, Any] = {"file_name": script.file_name, "size": len(script.text)}
        if folder is not None:
            row["path"] = str(script.save(folder / script.file_name))
        else:
            row["text"] = script.text
        return row

    result = bulk_status_frame(
        one,
        id_list,
        max_workers=workers,
        progress=progress,
        desc="export",
        on_progress=on_progress,
    )
    columns = ["file_name", "size", "path"] if folder is not None else ["file_name", "size", "text"]
    result = _expand(result, columns)
    result["size"] = result["size"].astype("Int64")
    return result


def _expand(result: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Spread the dict in ``value`` into ``columns`` (NA for failed rows)."""
    out = result.drop(columns="value").copy()
    for column in columns:
        out[column] = [v.get(column) if isinstance(v, dict) else None for v in result["value"]]
    for column in columns:
        if column not in ("size",):
            out[column] = out[column].astype("string")
    return out
