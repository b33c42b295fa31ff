"""Many elements into one zip: a batch task, or single exports on a service without one."""

from __future__ import annotations

import io
import os
import tempfile
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mddframes.archive import ExportArchive, archive_entry_name
from mddframes.bulk import ProgressCallback, resolve_workers, run_bulk
from mddframes.disk_modes import open_private
from mddframes.doc_sections import documented
from mddframes.errors import (
    ExportFailedError,
    LegacyExportWarning,
    MddError,
    NotFoundError,
    issue_warning,
)
from mddframes.exports.tasks import require_object_type, start_export, unknown_object_type
from mddframes.ids import Ids
from mddframes.ids import id_list as ids_of

if TYPE_CHECKING:
    from mddframes.api import Api


@documented
def export_batch(
    api: Api,
    ids: Ids,
    object_type_id: str,
    dest: str | os.PathLike[str],
    *,
    timeout: float | None = None,
    poll_interval: float = 0.5,
    max_poll_interval: float = 5.0,
    max_workers: int | None = None,
    progress: bool | None = None,
    on_progress: ProgressCallback | None = None,
) -> ExportArchive:
    """Export many elements into one zip: start a task, wait for it, download it.

    On a service without batch export (404 on start) this warns
    (:class:`LegacyExportWarning`) and falls back to concurrent single exports,
    written into a zip with the same layout. A 404 for an object type the service does
    not list is an error about the object type instead.

    Parameters
    ----------
    {api}
    ids : list, Series or DataFrame
    object_type_id : str
    dest : path
        The zip file to write (or an existing folder to write it in).
    timeout, poll_interval, max_poll_interval : float
        See :meth:`ExportTask.wait`.
    max_workers : int, optional
        Concurrency of the legacy fallback.
    {progress}
    on_progress : callable, optional
        Called as ``on_progress(done, total)`` while the task runs (or after each
        single export of the fallback).

    Returns
    -------
    ExportArchive

    Raises
    ------
    InvalidArgumentError
        ``object_type_id`` is not one string (checked before sending), or the service
        has no such object type.
    ExportTimeoutError, ExportFailedError
        See :meth:`ExportTask.wait`. In the legacy fallback, the first single export
        that fails stops the others and raises ``ExportFailedError`` naming it (``task_id``
        is ``"legacy"``, the cause chained), as a failing batch task would; no zip is
        left behind.

    Examples
    --------
    >>> tree = client.read_tree("DWH")
    >>> hubs = tree.loc[tree["type"] == "HUB", "id"]
    >>> archive = client.export_batch(hubs, "sql-ddl", "hubs.zip", progress=False)
    >>> len(archive.structure_ids), archive.path.name
    (18, 'hubs.zip')
    """
    require_object_type(object_type_id, "export_batch")
    id_list = ids_of(ids, what="export_batch ids")
    workers = resolve_workers(max_workers, api.max_workers)
    try:
        task = start_export(api, id_list, object_type_id)
    except NotFoundError as exc:
        # a 404 on start is a service without batch export, or a mistyped object type:
        # the object types tell them apart (a fallback would only fail per element)
        unknown = unknown_object_type(api, object_type_id)
        if unknown is not None:
            raise unknown from exc
        issue_warning(
            "this service has no batch export (404 on start): exporting the "
            f"{len(id_list)} elements one by one instead ({exc.url or 'structureMassExportAsync'})",
            LegacyExportWarning,
        )
        return _legacy_export(
            api,
            id_list,
            object_type_id,
            dest,
            max_workers=workers,
            progress=progress,
            on_progress=on_progress,
        )
    try:
        task.wait(
            timeout,
            poll_interval=poll_interval,
            max_poll_interval=max_poll_interval,
            progress=progress,
            on_progress=on_progress,
        )
        return task.download(dest)
    except KeyboardInterrupt as exc:
        # the task runs on without us: its id is the only way back to its result
        exc.add_note(
            f"export task {task.task_id} still runs on the service: attach to it again "
            f"with client.export_task({task.task_id!r}).wait() and .download(dest)"
        )
        # KeyboardInterrupt declares no such attribute (typeshed is right): callers getattr it
        exc.export_task_id = task.task_id  # type: ignore[attr-defined]
        raise


def _legacy_export(
    api: Api,
    ids: list[str],
    object_type_id: Any,
    dest: str | os.PathLike[str],
    *,
    max_workers: int,
    progress: bool | None,
    on_progress: ProgressCallback | None,
) -> ExportArchive:
    """Single exports, concurrently, into a zip laid out as a batch result is."""
    target = Path(dest)
    if target.is_dir():
        target = target / "export-legacy.zip"
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="mddframes-legacy-") as scratch:
        # Each script goes to its own file first, so memory stays flat and the zip is
        # written in the order of the ids, whatever order the workers finish in.
        folder = Path(scratch)
        position = {structure_id: pos for pos, structure_id in enumerate(ids)}

        def one(structure_id: str) -> dict[str, Any]:
            # the raw file name, not Script's reduced one: the batch rule applies to it
            try:
                file_name, text = api.external_export_structure(structure_id, object_type_id)
            except MddError as exc:
                raise ExportFailedError(
                    f"legacy export: the single export of element {structure_id!r} failed, "
                    f"so no zip was written: {exc.message}",
                    task_id="legacy",
                    **exc.request_details(),
                ) from exc
            part = folder / f"{position[structure_id]}.part"
            with io.TextIOWrapper(open_private(part, "xb"), encoding="utf-8", newline="") as fh:
                fh.write(text)  # a scratch copy: owner-only, as everything mddframes keeps
            return {"entry": archive_entry_name(structure_id, file_name), "part": str(part)}

        # errors="raise": the first failure cancels the rest, as a failing task would
        outcome = run_bulk(
            one,
            ids,
            max_workers=max_workers,
            progress=progress,
            errors="raise",
            desc="export (single)",
            on_progress=on_progress,
        )
        partial = target.with_name(target.name + ".part")
        try:
            with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as zf:
                for _structure_id, row in outcome.succeeded:  # all: errors="raise"
                    zf.write(row["part"], arcname=row["entry"])
            os.replace(partial, target)
        except BaseException:  # Ctrl-C or a full disk: no half-written zip beside dest
            partial.unlink(missing_ok=True)
            raise
    return ExportArchive(target, task_id=None, structure_ids=list(ids))
