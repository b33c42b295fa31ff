"""Batch export tasks: start one, follow its status with back-off, download its zip.

The service runs a batch export as an asynchronous task (``structureMassExportAsync`` +
status + result); :class:`ExportTask` follows one.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import weakref
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from mddframes.archive import ExportArchive
from mddframes.bulk import ProgressCallback
from mddframes.disk_modes import as_output
from mddframes.disk_names import id_file_name
from mddframes.doc_sections import documented
from mddframes.errors import (
    DataShapeError,
    ExportFailedError,
    ExportTimeoutError,
    InvalidArgumentError,
    MddError,
    renamed,
)
from mddframes.ids import Ids
from mddframes.ids import id_list as ids_of
from mddframes.progress import progress_shown

if TYPE_CHECKING:
    from mddframes.api import Api

_FINISHED = frozenset({"FINISHED", "DONE", "COMPLETED", "SUCCESS", "SUCCEEDED"})
_FAILED = frozenset({"FAILED", "ERROR", "CANCELLED", "CANCELED", "ABORTED"})


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


@documented
class ExportTask:
    """A batch export task running on the service.

    Get one from :func:`start_export` (``client.start_export``) or attach to an existing
    one with ``client.export_task(task_id)``.

    Parameters
    ----------
    {api}
    task_id : str
    structure_ids : list of str, optional
        The elements the task exports, when known (they make ``list_files()`` exact).
    """

    def __init__(self, api: Api, task_id: Any, structure_ids: list[str] | None = None) -> None:
        if task_id is None or not str(task_id).strip():
            raise InvalidArgumentError("export task: the task id is empty")
        self.api = api
        self.task_id = str(task_id)
        self.structure_ids = structure_ids
        self.polls = 0
        self._status: ExportStatus | None = None
        self.archive: ExportArchive | None = None

    def __repr__(self) -> str:
        shown = [f"task_id={self.task_id!r}"]
        known = self._status
        if known is None:
            shown.append("status=None (not asked yet: refresh() asks)")
        else:
            shown.append(f"status={known.status!r}")
            if known.done is not None or known.total is not None:
                shown.append(f"done={known.done}/{known.total}")
            if known.message:
                shown.append(f"message={known.message!r:.120}")
        shown.append(f"polls={self.polls}")
        if self.archive is not None:
            shown.append(f"archive={str(self.archive.path)!r}")
        return f"ExportTask({', '.join(shown)})"

    @property
    def status(self) -> ExportStatus | None:
        """The last status the service gave (by :meth:`refresh` or :meth:`wait`); None
        before the first poll. Sends nothing: :meth:`refresh` asks again."""
        return self._status

    @property
    def last_status(self) -> ExportStatus | None:
        """The former name of :attr:`status`."""
        return self._status

    def refresh(self) -> ExportStatus:
        """Ask the service for the task's status (one request); :attr:`status` keeps it.

        Returns
        -------
        ExportStatus
        """
        self.polls += 1
        self._status = ExportStatus.from_json(
            self.task_id, self.api.structure_mass_export_async_status(self.task_id)
        )
        return self._status

    def wait(
        self,
        timeout: float | None = None,
        *,
        poll_interval: float = 0.5,
        max_poll_interval: float = 5.0,
        backoff: float = 1.5,
        progress: bool | None = None,
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
        ExportTimeoutError
            The task was still running at ``timeout``; ``task_id`` lets you attach to it
            again with ``client.export_task(task_id)``.
        ExportFailedError
            The task ended as FAILED; carries the service's message.
        """
        if timeout is not None and timeout < 0:
            raise InvalidArgumentError(f"timeout must be >= 0 or None, got {timeout}")
        from tqdm.auto import tqdm

        intervals = poll_intervals(poll_interval, max_poll_interval, backoff)
        deadline = None if timeout is None else time.monotonic() + timeout
        with tqdm(
            desc=f"export {self.task_id}",
            unit="element",
            disable=not progress_shown(progress),
            leave=False,
        ) as bar:
            while True:
                current = self.refresh()
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
                    raise ExportFailedError(
                        f"export task {self.task_id} failed",
                        task_id=self.task_id,
                        operation="structureMassExportAsyncStatus",
                        server_message=current.message or "(the service gave no message)",
                    )
                pause = next(intervals)
                if deadline is not None:
                    remaining = deadline - time.monotonic()
                    if remaining <= 0:
                        raise ExportTimeoutError(
                            f"export task {self.task_id} still {current.status} after "
                            f"{timeout:g} s ({current.done}/{current.total} done); attach to it "
                            f"later with client.export_task({self.task_id!r})",
                            task_id=self.task_id,
                        )
                    pause = min(pause, remaining)
                time.sleep(pause)

    def download(self, path: str | os.PathLike[str]) -> ExportArchive:
        """Stream the task's zip to ``path`` (a file, or an existing folder).

        Parameters
        ----------
        path : str or os.PathLike
            A file to write, or an existing folder to write the zip into.

        Returns
        -------
        ExportArchive
        """
        target = Path(path)
        if target.is_dir():
            target = target / f"export-{id_file_name(self.task_id)}.zip"
        target.parent.mkdir(parents=True, exist_ok=True)
        return self._fetch(target, output=True)

    def _fetch(self, target: Path, *, output: bool) -> ExportArchive:
        """Download the result to ``target``: an output (the user's umask), or a private
        scratch copy (0600, as downloaded)."""
        written = Path(self.api.structure_mass_export_async_result(self.task_id, target) or target)
        if output:
            as_output(written)  # downloaded privately, then named: the user's umask decides
        self.archive = ExportArchive(
            written, task_id=self.task_id, structure_ids=self.structure_ids
        )
        return self.archive

    def _ensure_archive(self) -> ExportArchive:
        if self.archive is None or not self.archive.path.exists():
            folder = Path(tempfile.mkdtemp(prefix="mddframes-export-"))
            # the scratch copy lives as long as this task object
            weakref.finalize(self, shutil.rmtree, folder, ignore_errors=True)
            self._fetch(folder / f"export-{id_file_name(self.task_id)}.zip", output=False)
        assert self.archive is not None
        return self.archive

    def list_files(self) -> pd.DataFrame:
        """The files of the result (downloaded to a temporary file if not yet downloaded).

        Returns
        -------
        pandas.DataFrame
            See :meth:`ExportArchive.files`.
        """
        return self._ensure_archive().list_files()

    files = renamed(list_files, "files")

    def extract(self, dest: str | os.PathLike[str], **limits: int) -> list[Path]:
        """Extract the result safely into ``dest`` (see :meth:`ExportArchive.extract`).

        Parameters
        ----------
        dest : str or os.PathLike
            The folder to extract into.
        **limits : int
            The archive's limits (see :meth:`ExportArchive.extract`).

        Returns
        -------
        list of pathlib.Path
            The files extracted.
        """
        return self._ensure_archive().extract(dest, **limits)


def require_object_type(object_type_id: Any, what: str) -> str:
    """``object_type_id`` as the one id it must be, refused before anything is sent.

    Raises
    ------
    InvalidArgumentError
        It is not a non-empty string (a list of object types, say: the service answers
        such a body with a bare 400).
    """
    if not isinstance(object_type_id, str) or not object_type_id.strip():
        raise InvalidArgumentError(
            f"{what}: object_type_id must be one object type id, a string such as "
            f"'sql-ddl', not {type(object_type_id).__name__} {object_type_id!r:.80}; export "
            "each object type in a call of its own (read_object_types() lists them)"
        )
    return object_type_id


def unknown_object_type(api: Api, object_type_id: str) -> InvalidArgumentError | None:
    """The error to raise when the service has no object type ``object_type_id``.

    None when it has one, or when the object types cannot be read (the caller then
    keeps to its own error).
    """
    try:
        listed = api.get_object_types()
    except MddError:
        return None
    if not isinstance(listed, list):
        return None
    known = sorted(str(e["id"]) for e in listed if isinstance(e, Mapping) and "id" in e)
    if not known or object_type_id in known:
        return None
    return InvalidArgumentError(
        f"object type {object_type_id!r} is not one of the service's object types "
        f"({', '.join(map(repr, known[:20]))}{', ...' if len(known) > 20 else ''}): "
        "check its spelling (read_object_types() lists them)"
    )


@documented
def start_export(api: Api, ids: Ids, object_type_id: str) -> ExportTask:
    """Start a batch export on the service.

    Parameters
    ----------
    {api}
    ids : list, Series or DataFrame
        The elements (duplicates are sent once).
    object_type_id : str

    Returns
    -------
    ExportTask
    """
    require_object_type(object_type_id, "start_export")
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
