"""The Client: the frame-level facade users call, over the raw :class:`~mddframes.api.Api`.

Every public method has an explicit signature and hands its arguments to one function
of a layer below (loaders in :mod:`mddframes.frames`, :mod:`mddframes.writing`,
:mod:`mddframes.exports`, :mod:`mddframes.elements`), passing ``client.api``; those
functions never see the Client, so the arrows point one way. The raw operations live on
``client.api``.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Self

import pandas as pd

from mddframes import doctor, elements, exports, lineage
from mddframes import snapshot as snapshots
from mddframes._facade import facade_of
from mddframes.api import Api
from mddframes.archive import ExportArchive
from mddframes.bulk import ErrorPolicy, ProgressCallback
from mddframes.client_panels import Panels
from mddframes.client_writes import Writes
from mddframes.codec.values import JsonObject, JsonValue
from mddframes.config import Settings
from mddframes.context import ContextRegistry, registry_for
from mddframes.errors import InvalidArgumentError
from mddframes.exports import ExportTask, Script
from mddframes.frames import bulk_tables, listing, structures, table, tree
from mddframes.frames.backends import DtypeBackend
from mddframes.http.session import HttpSession
from mddframes.ids import Ids
from mddframes.writing.backups import emulator_backup_root
from mddframes.writing.locks import emulator_lock_dir

if TYPE_CHECKING:
    from mddframes.recording.recorder import Recorder
    from mddframes.snapshot.reader import Snapshot


class Client(Writes, Panels):
    """A connection to one tenant of the service: DataFrames in, DataFrames out.

    Parameters
    ----------
    settings : Settings
        Resolved settings; :func:`connect` and :meth:`from_emulator` build them.

    Attributes
    ----------
    api : Api
        The raw layer: one method per service operation, returning decoded JSON.

    Notes
    -----
    A client is safe to share between threads (bulk calls do). Use it as a context
    manager, or call :meth:`close`, to release its pooled connections.
    """

    def __init__(self, settings: Settings) -> None:
        if not isinstance(settings, Settings):
            raise InvalidArgumentError(
                "Client() takes resolved Settings; use mddframes.connect(...) or "
                "Client.from_emulator(emu)"
            )
        self.settings = settings
        self.api = Api(settings)
        from mddframes.recording.active import attach_if_recording

        attach_if_recording(self.api.http)  # only under ``mddframes record``

    @classmethod
    def from_emulator(cls, emulator: Any, **overrides: Any) -> Client:
        """A client connected to a running emulator (``mddframes.emulator.serve()``).

        Parameters
        ----------
        emulator : emulator handle
            Anything with ``base_url``, ``tenant``, ``realm``, ``client_id``,
            ``client_secret`` and ``api_prefix``.
        **overrides
            Other settings of :class:`~mddframes.config.Settings` (``timeout``,
            ``max_retries``, ``max_workers``...).

        Returns
        -------
        Client

        Notes
        -----
        Unless ``backup_dir`` or ``lock_dir`` is given, the backups, journals and locks of
        the client's writes live under ``.emulator`` in the backup and lock folders
        (:func:`~mddframes.writing.backups.emulator_backup_root`), never in a tenant's
        folder: a replay serves a real tenant's name.
        """
        values: dict[str, Any] = {
            "backup_dir": str(emulator_backup_root()),
            "lock_dir": str(emulator_lock_dir()),
            "tenant": emulator.tenant,
            "base_url": emulator.base_url.rstrip("/"),
            "client_id": emulator.client_id,
            "client_secret": emulator.client_secret,
            "realm": emulator.realm,
            "api_prefix": emulator.api_prefix.rstrip("/"),
        }
        values.update(overrides)
        return cls(Settings(**values))

    # -- housekeeping ------------------------------------------------------------

    @property
    def tenant(self) -> str | None:
        """The tenant this client talks to."""
        return self.settings.tenant

    @property
    def base_url(self) -> str:
        """The tenant's base URL."""
        return self.settings.base_url

    @property
    def max_workers(self) -> int:
        """Default concurrency of bulk calls (the connection pool is sized for it)."""
        return self.settings.max_workers

    @property
    def http(self) -> HttpSession:
        """The HTTP layer (token provider, counters); for diagnostics and tests."""
        return self.api.http

    def close(self) -> None:
        """Release the pooled connections; later calls raise ``MddError``."""
        self.api.close()

    def recording(
        self, path: str | os.PathLike[str], *, redact_values: bool = False
    ) -> contextlib.AbstractContextManager[Recorder]:
        """Record every call of this client inside a ``with`` block into a HAR 1.2 file.

        The client secret, every access token, the credential headers, cookies and the
        tenant's host are scrubbed before anything touches the disk; the file is written
        when the block ends (also when it raises), atomically and owner-only. Replay it
        with ``mddframes.emulator.serve(replay=path)``; see the guide's "Your tenant,
        offline".

        Parameters
        ----------
        path : path
            The HAR file to write.
        redact_values : bool
            Also replace every string and number of table, mapping, element and
            raw-data bodies by a stable placeholder (for a public bug report).

        Returns
        -------
        context manager
            Yields the :class:`~mddframes.recording.Recorder`.

        Examples
        --------
        >>> with client.recording("tenant.har"):
        ...     tree = client.read_tree("DWH")
        >>> import json
        >>> json.loads(open("tenant.har", encoding="utf-8").read())["log"]["version"]
        '1.2'
        """
        from mddframes.recording.active import recording

        return recording(self.api.http, path, redact_values=redact_values)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client(tenant={self.settings.tenant!r}, base_url={self.settings.base_url!r})"

    # -- loaders: tree, elements, listings (frames/) ------------------------------

    @facade_of(tree.read_tree)
    def read_tree(
        self,
        system: str,
        *,
        types: str | Iterable[str] | None = None,
        dtype_backend: DtypeBackend = "numpy_nullable",
    ) -> pd.DataFrame:
        return tree.read_tree(self.api, system, types=types, dtype_backend=dtype_backend)

    @facade_of(structures.read_structure)
    def read_structure(self, structure_id: str) -> pd.Series:
        return structures.read_structure(self.api, structure_id)

    @facade_of(structures.read_structures)
    def read_structures(
        self,
        ids: Iterable[str],
        *,
        max_workers: int | None = None,
        progress: bool | None = None,
        errors: ErrorPolicy = "raise",
        dtype_backend: DtypeBackend = "numpy_nullable",
    ) -> pd.DataFrame:
        return structures.read_structures(
            self.api, ids, max_workers=max_workers, progress=progress, errors=errors,
            dtype_backend=dtype_backend,
        )  # fmt: skip

    @facade_of(listing.read_raw_data)
    def read_raw_data(self, structure_id: str, *, flatten: bool = False) -> JsonValue:
        return listing.read_raw_data(self.api, structure_id, flatten=flatten)

    @facade_of(listing.read_object_types)
    def read_object_types(self, *, dtype_backend: DtypeBackend = "numpy_nullable") -> pd.DataFrame:
        return listing.read_object_types(self.api, dtype_backend=dtype_backend)

    @facade_of(listing.read_packages)
    def read_packages(
        self, system: str, *, dtype_backend: DtypeBackend = "numpy_nullable"
    ) -> pd.DataFrame:
        return listing.read_packages(self.api, system, dtype_backend=dtype_backend)

    # -- tables and mappings: frames and safe writes (frames/, writing/) ---------

    @property
    def contexts(self) -> ContextRegistry:
        """The write-back context of the latest read of each table and mapping.

        A registry kept by the client, not a read: ``contexts.get("table", id)`` is the
        :class:`~mddframes.context.ReadContext` a ``write_table`` of that id starts from
        when the frame no longer carries its own (concat and merge drop ``attrs``).

        Returns
        -------
        ContextRegistry
            Created on first use; see :mod:`mddframes.context`.
        """
        return registry_for(self.api)

    @facade_of(table.read_table)
    def read_table(
        self, table_id: str, *, dtype_backend: DtypeBackend = "numpy_nullable"
    ) -> pd.DataFrame:
        return table.read_table(self.api, table_id, dtype_backend=dtype_backend)

    @facade_of(table.read_table_columns)
    def read_table_columns(self, table_id: str) -> pd.DataFrame:
        return table.read_table_columns(self.api, table_id)

    @facade_of(table.read_mapping)
    def read_mapping(
        self, mapping_id: str, *, dtype_backend: DtypeBackend = "numpy_nullable"
    ) -> pd.DataFrame:
        return table.read_mapping(self.api, mapping_id, dtype_backend=dtype_backend)

    @facade_of(bulk_tables.read_tables)
    def read_tables(
        self,
        ids: Iterable[str],
        *,
        max_workers: int | None = None,
        progress: bool | None = None,
        errors: ErrorPolicy = "raise",
        dtype_backend: DtypeBackend = "numpy_nullable",
    ) -> pd.DataFrame:
        return bulk_tables.read_tables(
            self.api, ids, max_workers=max_workers, progress=progress, errors=errors,
            dtype_backend=dtype_backend,
        )  # fmt: skip

    @facade_of(bulk_tables.read_mappings)
    def read_mappings(
        self,
        ids: Iterable[str],
        *,
        max_workers: int | None = None,
        progress: bool | None = None,
        errors: ErrorPolicy = "raise",
        dtype_backend: DtypeBackend = "numpy_nullable",
    ) -> pd.DataFrame:
        return bulk_tables.read_mappings(
            self.api, ids, max_workers=max_workers, progress=progress, errors=errors,
            dtype_backend=dtype_backend,
        )  # fmt: skip

    @facade_of(lineage.read_lineage)
    def read_lineage(
        self,
        system: str,
        *,
        max_workers: int | None = None,
        progress: bool | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> pd.DataFrame:
        return lineage.read_lineage(
            self.api, system, max_workers=max_workers, progress=progress, on_progress=on_progress
        )

    @facade_of(lineage.search)
    def search(
        self,
        system: str,
        text_or_regex: str | re.Pattern[str],
        *,
        in_: Iterable[str] = lineage.PLACES,
        max_workers: int | None = None,
        progress: bool | None = None,
    ) -> pd.DataFrame:
        return lineage.search(
            self.api, system, text_or_regex, in_=in_, max_workers=max_workers, progress=progress
        )

    @facade_of(bulk_tables.iter_tables)
    def iter_tables(
        self,
        ids: Iterable[str],
        *,
        chunksize: int = 100,
        max_workers: int | None = None,
        progress: bool | None = None,
        errors: ErrorPolicy = "raise",
        dtype_backend: DtypeBackend = "numpy_nullable",
    ) -> Iterator[pd.DataFrame]:
        return bulk_tables.iter_tables(
            self.api, ids, chunksize=chunksize, max_workers=max_workers, progress=progress,
            errors=errors, dtype_backend=dtype_backend,
        )  # fmt: skip

    @facade_of(bulk_tables.iter_mappings)
    def iter_mappings(
        self,
        ids: Iterable[str],
        *,
        chunksize: int = 100,
        max_workers: int | None = None,
        progress: bool | None = None,
        errors: ErrorPolicy = "raise",
        dtype_backend: DtypeBackend = "numpy_nullable",
    ) -> Iterator[pd.DataFrame]:
        return bulk_tables.iter_mappings(
            self.api, ids, chunksize=chunksize, max_workers=max_workers, progress=progress,
            errors=errors, dtype_backend=dtype_backend,
        )  # fmt: skip

    @facade_of(snapshots.snapshot)
    def snapshot(
        self,
        system: str,
        path: str | os.PathLike[str] | None = None,
        *,
        max_workers: int | None = None,
        progress: bool | None = None,
        structures: bool = True,
        history: str | os.PathLike[str] | None = None,
    ) -> Snapshot:
        return snapshots.snapshot(
            self.api, system, path, max_workers=max_workers, progress=progress,
            structures=structures, history=history,
        )  # fmt: skip

    # -- exports (exports/) ------------------------------------------------------

    @facade_of(exports.export_script)
    def export_script(self, structure_id: str, object_type_id: str) -> Script:
        return exports.export_script(self.api, structure_id, object_type_id)

    @facade_of(exports.export_scripts)
    def export_scripts(
        self,
        ids: Ids,
        object_type_id: str,
        dest: str | os.PathLike[str] | None = None,
        *,
        max_workers: int | None = None,
        progress: bool | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> pd.DataFrame:
        return exports.export_scripts(
            self.api, ids, object_type_id, dest, max_workers=max_workers, progress=progress,
            on_progress=on_progress,
        )  # fmt: skip

    @facade_of(exports.start_export)
    def start_export(self, ids: Ids, object_type_id: str) -> ExportTask:
        return exports.start_export(self.api, ids, object_type_id)

    def export_task(self, task_id: str) -> ExportTask:
        """Attach to an export task started earlier (e.g. after ``ExportTimeoutError``).

        Parameters
        ----------
        task_id : str
            The task id (``ExportTimeoutError.task_id``).

        Returns
        -------
        ExportTask
        """
        return ExportTask(self.api, task_id)

    @facade_of(exports.export_batch)
    def export_batch(
        self,
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
        return exports.export_batch(
            self.api, ids, object_type_id, dest, timeout=timeout, poll_interval=poll_interval,
            max_poll_interval=max_poll_interval, max_workers=max_workers, progress=progress,
            on_progress=on_progress,
        )  # fmt: skip

    # -- elements, packages, deployment (elements/) ------------------------------

    @facade_of(elements.create_child)
    def create_child(
        self, parent_id: str, type: str, name: str, **attributes: JsonValue
    ) -> pd.Series:
        return elements.create_child(self.api, parent_id, type, name, **attributes)

    @facade_of(elements.create_children)
    def create_children(self, frame: pd.DataFrame, *, progress: bool | None = None) -> pd.DataFrame:
        return elements.create_children(self.api, frame, progress=progress)

    @facade_of(elements.add_to_package)
    def add_to_package(self, system: str, package: str, ids: Ids) -> pd.DataFrame:
        return elements.add_to_package(self.api, system, package, ids)

    @facade_of(elements.deploy)
    def deploy(self, structure_id: str, deployment_id: str) -> pd.Series:
        return elements.deploy(self.api, structure_id, deployment_id)

    @facade_of(elements.deploy_many)
    def deploy_many(
        self,
        items: Ids,
        deployment_id: str | None = None,
        *,
        max_workers: int | None = None,
        progress: bool | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> pd.DataFrame:
        return elements.deploy_many(
            self.api, items, deployment_id, max_workers=max_workers, progress=progress,
            on_progress=on_progress,
        )  # fmt: skip

    @facade_of(elements.confirm_deployed)
    def confirm_deployed(self, info: str | os.PathLike[str] | JsonObject | bytes) -> pd.DataFrame:
        return elements.confirm_deployed(self.api, info)

    # -- checking a service (doctor/) -------------------------------------------

    @facade_of(doctor.run_doctor)
    def doctor(self, system: str | None = None) -> pd.DataFrame:
        return doctor.run_doctor(self.api, system)
