"""Script exports: single scripts, asynchronous batch tasks and their zip archives.

The service generates the output script of one element synchronously
(``externalExportStructure``) and of many elements as an asynchronous task
(``structureMassExportAsync`` + status + result). This module wraps both:

- :class:`Script` is one generated script (file name and text), shown as highlighted
  code in a notebook;
- :class:`ExportTask` follows a batch task: status, a polling :meth:`ExportTask.wait`
  with back-off, a time-out that hands back the task id, download and extraction;
- :func:`export_batch` runs start, wait and download, and on a service without batch
  export falls back to concurrent single exports that build the same zip layout
  (:func:`mddframes.archive.archive_entry_name`, shared by both paths); the zip is an
  :class:`mddframes.archive.ExportArchive`.
"""

from __future__ import annotations

import html
import logging
import os
import shutil
import tempfile
import time
import warnings
import weakref
import zipfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.archive import ExportArchive, archive_entry_name, safe_file_name
from mddframes.bulk import ProgressCallback, bulk_status_frame, run_bulk
from mddframes.errors import (
    DataShapeError,
    ExportFailed,
    ExportTimeout,
    InvalidArgumentError,
    LegacyExportWarning,
    MddError,
    NotFoundError,
)
from mddframes.ids import id_list as ids_of

if TYPE_CHECKING:
    from mddframes.api import Api

__all__ = [
    "ExportStatus",
    "ExportTask",
    "LegacyExportWarning",
    "Script",
    "export_batch",
    "export_script",
    "export_scripts",
    "poll_intervals",
    "start_export",
]

log = logging.getLogger(__name__)

_FINISHED = frozenset({"FINISHED", "DONE", "COMPLETED", "SUCCESS", "SUCCEEDED"})
_FAILED = frozenset({"FAILED", "ERROR", "CANCELLED", "CANCELED", "ABORTED"})


# --------------------------------------------------------------------------- scripts


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
            path = path / safe_file_name(self.file_name, fallback=f"{self.structure_id}.txt")
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


def export_script(api: Api, structure_id: Any, object_type_id: Any) -> Script:
    """Generate the output script of one element.

    Parameters
    ----------
    api : Api
    structure_id : str
        The element.
    object_type_id : str
        The object type that selects the template.

    Returns
    -------
    Script
    """
    file_name, text = api.external_export_structure(structure_id, object_type_id)
    return Script(
        file_name=safe_file_name(file_name, fallback=f"{structure_id}.txt"),
        text=text,
        structure_id=str(structure_id),
        object_type_id=str(object_type_id),
    )


def export_scripts(
    api: Api,
    ids: Any,
    object_type_id: Any,
    dest: str | os.PathLike[str] | None = None,
    *,
    max_workers: int | None = None,
    progress: bool = True,
    on_progress: ProgressCallback | None = None,
) -> pd.DataFrame:
    """Generate the scripts of many elements concurrently.

    Parameters
    ----------
    api : Api
    ids : list, Series or DataFrame
        The elements (a frame needs an ``id`` column); duplicates are exported once.
    object_type_id : str
        The object type that selects the template.
    dest : path, optional
        A folder: each script is written there under its file name and the frame's
        ``text`` column stays empty, so memory does not grow with the batch.
    max_workers : int, optional
        Concurrency; the client's ``max_workers`` by default.
    progress : bool
        Show a progress bar.
    on_progress : callable, optional
        Called as ``on_progress(done, total)`` after each export (see :func:`run_bulk`).

    Returns
    -------
    pandas.DataFrame
        One row per id: ``id``, ``ok``, ``error``, ``file_name``, ``size`` (characters),
        ``path`` (when ``dest`` is given) and ``text`` (when it is not). A failed
        export is a row with ``ok`` False and the error in words; nothing is hidden.
    """
    id_list = ids_of(ids, what="export_scripts ids")
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
        max_workers=api.max_workers if max_workers is None else max_workers,
        progress=progress,
        desc="export",
        on_progress=on_progress,
    )
    columns = ["file_name", "size", "path"] if folder is not None else ["file_name", "size", "text"]
    result = _expand(result, columns)
    result["size"] = result["size"].astype("Int64")
    return result


# --------------------------------------------------------------------------- tasks


def poll_intervals(
    initial: float = 0.5, maximum: float = 5.0, factor: float = 1.5
) -> Iterator[float]:
    """The waits between status polls: ``initial`` growing by ``factor`` up to ``maximum``.

    Parameters
    ----------
    initial : float
        The first wait (seconds), > 0.
    maximum : float
        The ceiling (seconds), >= ``initial``.
    factor : float
        Growth per poll, >= 1.

    Yields
    ------
    float
    """
    if initial <= 0:
        raise InvalidArgumentError(f"poll_interval must be > 0, got {initial}")
    if maximum < initial:
        raise InvalidArgumentError(
            f"max_poll_interval ({maximum}) must be >= poll_interval ({initial})"
        )
    if factor < 1:
        raise InvalidArgumentError(f"back-off factor must be >= 1, got {factor}")
    interval = initial
    while True:
        yield interval
        interval = min(interval * factor, maximum)


def _int_or_none(value: Any) -> int | None:
    try:
        return None if value is None else int(value)
    except (TypeError, ValueError):
        return None


@dataclass(frozen=True)
class ExportStatus(Mapping[str, Any]):
    """The status of an export task; also readable as the dict the service sent.

    Attributes
    ----------
    task_id : str
    status : str
        Upper-cased: ``RUNNING``, ``FINISHED``, ``FAILED`` (or what the service said).
    total, done : int or None
        Progress counts, when the service gives them.
    message : str or None
        The service's message (the reason of a failure).
    raw : dict
        The status record as received.
    """

    task_id: str
    status: str
    total: int | None = None
    done: int | None = None
    message: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def from_json(cls, task_id: str, body: Any) -> ExportStatus:
        """Read a status record tolerantly (``status`` or ``state``; camel or snake)."""
        if not isinstance(body, Mapping):
            raise DataShapeError(
                f"export task {task_id}: the status is not a JSON object: {body!r:.200}"
            )
        state = body.get("status", body.get("state"))
        if state is None:
            raise DataShapeError(
                f"export task {task_id}: the status record has no 'status' (keys: {sorted(body)})"
            )
        message = body.get("message", body.get("error"))
        return cls(
            task_id=str(body.get("taskId", body.get("task_id", task_id))),
            status=str(state).upper(),
            total=_int_or_none(body.get("total")),
            done=_int_or_none(body.get("done", body.get("processed"))),
            message=None if message is None else str(message),
            raw=dict(body),
        )

    @property
    def finished(self) -> bool:
        """The task ended well and its result can be downloaded."""
        return self.status in _FINISHED

    @property
    def failed(self) -> bool:
        """The task ended in failure."""
        return self.status in _FAILED

    def __getitem__(self, key: str) -> Any:
        return self.raw[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.raw)

    def __len__(self) -> int:
        return len(self.raw)


class ExportTask:
    """A batch export task running on the service.

    Get one from :func:`start_export` (``client.start_export``) or attach to an existing
    one with ``client.export_task(task_id)``.

    Parameters
    ----------
    api : Api
    task_id : str
    structure_ids : list of str, optional
        The elements the task exports, when known (they make ``files()`` exact).
    """

    def __init__(
        self, api: Api, task_id: Any, structure_ids: list[str] | None = None
    ) -> None:
        if task_id is None or not str(task_id).strip():
            raise InvalidArgumentError("export task: the task id is empty")
        self.api = api
        self.task_id = str(task_id)
        self.structure_ids = structure_ids
        self.polls = 0
        self.last_status: ExportStatus | None = None
        self.archive: ExportArchive | None = None

    def __repr__(self) -> str:
        state = self.last_status.status if self.last_status else "unknown"
        return f"ExportTask(task_id={self.task_id!r}, status={state})"

    def status(self) -> ExportStatus:
        """Ask the service for the task's status (one request).

        Returns
        -------
        ExportStatus
        """
        self.polls += 1
        self.last_status = ExportStatus.from_json(
            self.task_id, self.api.structure_mass_export_async_status(self.task_id)
        )
        return self.last_status

    def wait(
        self,
        timeout: float | None = None,
        *,
        poll_interval: float = 0.5,
        max_poll_interval: float = 5.0,
        backoff: float = 1.5,
        progress: bool = True,
        on_progress: ProgressCallback | None = None,
    ) -> ExportStatus:
        """Poll until the task finishes.

        The wait between polls starts at ``poll_interval`` and grows by ``backoff`` up to
        ``max_poll_interval``. A token expiring during a long wait is renewed by the
        client.

        Parameters
        ----------
        timeout : float, optional
            Give up after this many seconds; None waits as long as it takes.
        poll_interval, max_poll_interval, backoff : float
            The polling back-off.
        progress : bool
            Show a done/total progress bar.
        on_progress : callable, optional
            Called as ``on_progress(done, total)`` after every poll that reports them
            (``total`` None while the service has not said).

        Returns
        -------
        ExportStatus
            The finished status.

        Raises
        ------
        ExportTimeout
            The task was still running at ``timeout``; ``task_id`` lets you attach to it
            again with ``client.export_task(task_id)``.
        ExportFailed
            The task ended as FAILED; carries the service's message.
        """
        if timeout is not None and timeout < 0:
            raise InvalidArgumentError(f"timeout must be >= 0 or None, got {timeout}")
        from tqdm.auto import tqdm

        intervals = poll_intervals(poll_interval, max_poll_interval, backoff)
        deadline = None if timeout is None else time.monotonic() + timeout
        with tqdm(
            desc=f"export {self.task_id}", unit="element", disable=not progress, leave=False
        ) as bar:
            while True:
                current = self.status()
                if current.total is not None and bar.total != current.total:
                    bar.total = current.total
                if current.done is not None and current.done != bar.n:
                    bar.n = current.done
                    bar.refresh()
                if on_progress is not None and current.done is not None:
                    on_progress(current.done, current.total)
                if current.finished:
                    return current
                if current.failed:
                    raise ExportFailed(
                        f"export task {self.task_id} failed",
                        task_id=self.task_id,
                        operation="structureMassExportAsyncStatus",
                        server_message=current.message or "(the service gave no message)",
                    )
                pause = next(intervals)
                if deadline is not None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise ExportTimeout(
                            f"export task {self.task_id} still {current.status} after "
                            f"{timeout:g} s ({current.done}/{current.total} done); attach to it "
                            f"later with client.export_task({self.task_id!r})",
                            task_id=self.task_id,
                        )
                    pause = min(pause, remaining)
                time.sleep(pause)

    def download(self, path: str | os.PathLike[str]) -> ExportArchive:
        """Stream the task's zip to ``path`` (a file, or an existing folder).

        Returns
        -------
        ExportArchive
        """
        target = Path(path)
        if target.is_dir():
            target = target / f"export-{safe_file_name(self.task_id, fallback='task')}.zip"
        target.parent.mkdir(parents=True, exist_ok=True)
        written = self.api.structure_mass_export_async_result(self.task_id, target)
        self.archive = ExportArchive(
            Path(written or target), task_id=self.task_id, structure_ids=self.structure_ids
        )
        return self.archive

    def _ensure_archive(self) -> ExportArchive:
        if self.archive is None or not self.archive.path.exists():
            folder = Path(tempfile.mkdtemp(prefix="mddframes-export-"))
            # the scratch copy lives as long as this task object
            weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)
            self.download(folder / f"export-{safe_file_name(self.task_id, fallback='task')}.zip")
        assert self.archive is not None
        return self.archive

    def files(self) -> pd.DataFrame:
        """The files of the result (downloaded to a temporary file if not yet downloaded).

        Returns
        -------
        pandas.DataFrame
            See :meth:`ExportArchive.files`.
        """
        return self._ensure_archive().files()

    def extract(self, dest: str | os.PathLike[str], **limits: int) -> list[Path]:
        """Extract the result safely into ``dest`` (see :meth:`ExportArchive.extract`)."""
        return self._ensure_archive().extract(dest, **limits)


def start_export(api: Api, ids: Any, object_type_id: Any) -> ExportTask:
    """Start a batch export on the service.

    Parameters
    ----------
    api : Api
    ids : list, Series or DataFrame
        The elements (duplicates are sent once).
    object_type_id : str

    Returns
    -------
    ExportTask
    """
    id_list = ids_of(ids, what="start_export ids")
    if not id_list:
        raise InvalidArgumentError("start_export: no element ids given")
    answer = api.structure_mass_export_async(id_list, object_type_id)
    task_id = None
    if isinstance(answer, Mapping):
        task_id = answer.get("taskId", answer.get("task_id", answer.get("id")))
    elif isinstance(answer, str | int):
        task_id = answer
    if task_id is None:
        raise DataShapeError(
            f"start_export: the service's answer carries no taskId: {answer!r:.200}"
        )
    return ExportTask(api, task_id, structure_ids=id_list)


def export_batch(
    api: Api,
    ids: Any,
    object_type_id: Any,
    dest: str | os.PathLike[str],
    *,
    timeout: float | None = None,
    poll_interval: float = 0.5,
    max_poll_interval: float = 5.0,
    max_workers: int | None = None,
    progress: bool = True,
    on_progress: ProgressCallback | None = None,
) -> ExportArchive:
    """Export many elements into one zip: start a task, wait for it, download it.

    On a service without batch export (404 on start) this warns
    (:class:`LegacyExportWarning`) and falls back to concurrent single exports,
    written into a zip with the same layout.

    Parameters
    ----------
    api : Api
    ids : list, Series or DataFrame
    object_type_id : str
    dest : path
        The zip file to write (or an existing folder to write it in).
    timeout, poll_interval, max_poll_interval : float
        See :meth:`ExportTask.wait`.
    max_workers : int, optional
        Concurrency of the legacy fallback.
    progress : bool
    on_progress : callable, optional
        Called as ``on_progress(done, total)`` while the task runs (or after each
        single export of the fallback).

    Returns
    -------
    ExportArchive

    Raises
    ------
    ExportTimeout, ExportFailed
        See :meth:`ExportTask.wait`. In the legacy fallback, the first single export
        that fails stops the others and raises ``ExportFailed`` naming it (``task_id``
        is ``"legacy"``, the cause chained), as a failing batch task would; no zip is
        left behind.
    """
    id_list = ids_of(ids, what="export_batch ids")
    try:
        task = start_export(api, id_list, object_type_id)
    except NotFoundError as exc:
        warnings.warn(
            "this service has no batch export (404 on start): exporting the "
            f"{len(id_list)} elements one by one instead ({exc.url or 'structureMassExportAsync'})",
            LegacyExportWarning,
            stacklevel=2,
        )
        return _legacy_export(
            api,
            id_list,
            object_type_id,
            dest,
            max_workers=api.max_workers if max_workers is None else max_workers,
            progress=progress,
            on_progress=on_progress,
        )
    task.wait(
        timeout,
        poll_interval=poll_interval,
        max_poll_interval=max_poll_interval,
        progress=progress,
        on_progress=on_progress,
    )
    return task.download(dest)


def _legacy_export(
    api: Api,
    ids: list[str],
    object_type_id: Any,
    dest: str | os.PathLike[str],
    *,
    max_workers: int,
    progress: bool,
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
                raise ExportFailed(
                    f"legacy export: the single export of element {structure_id!r} failed, "
                    f"so no zip was written: {exc.message}",
                    task_id="legacy",
                    operation=exc.operation,
                    method=exc.method,
                    url=exc.url,
                    status=exc.status,
                    server_message=exc.server_message,
                ) from exc
            part = folder / f"{position[structure_id]}.part"
            with open(part, "w", encoding="utf-8", newline="") as fh:
                fh.write(text)
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
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for row in outcome.results:
                zf.write(row["part"], arcname=row["entry"])
        os.replace(partial, target)
    return ExportArchive(target, task_id=None, structure_ids=list(ids))


# --------------------------------------------------------------------------- bulk glue


def _expand(result: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Spread the dict in ``value`` into ``columns`` (NA for failed rows)."""
    out = result.drop(columns="value").copy()
    for column in columns:
        out[column] = [v.get(column) if isinstance(v, dict) else None for v in result["value"]]
    for column in columns:
        if column not in ("size",):
            out[column] = out[column].astype("string")
    return out
