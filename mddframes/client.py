"""The Client: one raw method per service operation, plus :func:`connect`.

Raw methods return the decoded JSON the service sent (text or a file for exports) and
raise :class:`~mddframes.errors.MddError` subclasses. Higher layers (DataFrame loaders,
the safe writer, exports, element helpers) add their methods to :class:`Client` as thin
delegations to module functions that take the client as their first argument.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mddframes.config import Secret, Settings, resolve_settings
from mddframes.errors import InvalidArgumentError, ResponseFormatError
from mddframes.http.endpoints import endpoint
from mddframes.http.session import (
    BodyStream,
    HttpSession,
    attachment_filename,
    decode_json,
    decode_text,
    stream_to_file,
)

if TYPE_CHECKING:
    import pandas as pd

    from mddframes.archive import ExportArchive
    from mddframes.context import ContextRegistry  # tables and mappings section
    from mddframes.exports import ExportTask, Script
    from mddframes.widgets import DeployPanel, ExportPanel, PackagePanel, WriteReview
    from mddframes.writing import WriteResult  # tables and mappings section

DEPLOYMENT_INFO_FILENAME = "deployment-info.json"


def connect(
    tenant: str | None = None,
    *,
    base_url: str | None = None,
    client_id: str | None = None,
    client_secret: str | Secret | None = None,
    realm: str | None = None,
    api_prefix: str | None = None,
    timeout: float | tuple[float, float] | None = None,
    max_retries: int | None = None,
    verify: bool | str | None = None,
    max_workers: int | None = None,
    allow_insecure_http: bool | None = None,
    profile: str | None = None,
) -> Client:
    """Connect to a tenant of the service.

    Each setting comes from its argument, else its ``MDD_*`` environment variable, else
    the profile file (see :mod:`mddframes.config`), else its default. Nothing is sent
    until the first call: the token is fetched lazily.

    Parameters
    ----------
    tenant : str, optional
        Tenant name (``MDD_TENANT``); fills ``{tenant}`` in the base URL and is the
        default realm.
    base_url : str, optional
        e.g. ``"https://{tenant}.example.com"`` (``MDD_BASE_URL``).
    client_id, client_secret : str, optional
        The API user's credentials (``MDD_CLIENT_ID``, ``MDD_CLIENT_SECRET``).
    realm : str, optional
        Token realm (``MDD_REALM``), default the tenant.
    api_prefix : str, optional
        API path prefix (``MDD_API_PREFIX``), default ``"/api/mdd-backend"``.
    timeout : float or (float, float), optional
        ``(connect, read)`` time-outs in seconds (``MDD_TIMEOUT``), default ``(5, 60)``.
    max_retries : int, optional
        Retries of GET/PUT on 429/5xx and connection errors (``MDD_MAX_RETRIES``), default 5.
    verify : bool or str, optional
        TLS verification or a CA bundle path (``MDD_VERIFY``), default ``True``.
    max_workers : int, optional
        Default concurrency of bulk calls (``MDD_MAX_WORKERS``), default 8.
    allow_insecure_http : bool, optional
        Allow plain ``http://`` to a host that is not loopback.
    profile : str, optional
        Profile of the configuration file (``MDD_PROFILE``), default ``"default"``.

    Returns
    -------
    Client

    Raises
    ------
    ConfigurationError
        If a required setting is missing or a value is invalid.

    Examples
    --------
    >>> client = mddframes.connect("acme", base_url="https://{tenant}.example.com",
    ...                            client_id="ci-bot", client_secret="...")  # doctest: +SKIP
    """
    settings = resolve_settings(
        tenant,
        base_url=base_url,
        client_id=client_id,
        client_secret=client_secret,
        realm=realm,
        api_prefix=api_prefix,
        timeout=timeout,
        max_retries=max_retries,
        verify=verify,
        max_workers=max_workers,
        allow_insecure_http=allow_insecure_http,
        profile=profile,
    )
    return Client(settings)


class Client:
    """A connection to one tenant of the service.

    Parameters
    ----------
    settings : Settings
        Resolved settings; :func:`connect` and :meth:`from_emulator` build them.

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
        self._http = HttpSession(settings)

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
        """
        values: dict[str, Any] = {
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
        return self._http

    def close(self) -> None:
        """Release the pooled connections; later calls raise ``MddError``."""
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client(tenant={self.settings.tenant!r}, base_url={self.settings.base_url!r})"

    # -- raw operations: one per service operation --------------------------------

    def _json(
        self, operation: str, path_params: dict[str, Any] | None = None, **kwargs: Any
    ) -> Any:
        return self._json_with_url(operation, path_params, **kwargs)[0]

    def _json_with_url(
        self, operation: str, path_params: dict[str, Any] | None, **kwargs: Any
    ) -> tuple[Any, str]:
        entry = endpoint(operation)
        response = self._http.call(operation, path_params, **kwargs)
        try:
            return decode_json(entry, response.url, response), response.url
        finally:
            response.close()

    def _json_object(
        self, operation: str, path_params: dict[str, Any] | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        value, url = self._json_with_url(operation, path_params, **kwargs)
        if not isinstance(value, dict):
            raise ResponseFormatError(
                f"expected a JSON object, got {type(value).__name__}",
                operation=operation,
                method=endpoint(operation).method,
                url=url,
            )
        return value

    def get_tree(self, system: str) -> Any:
        """The element tree of ``system`` as the service sent it (``getTree``).

        Parameters
        ----------
        system : str
            The system name.

        Returns
        -------
        Any
            Decoded JSON: a flat list of elements with their ids and parent ids.
        """
        return self._json("getTree", {"name": system})

    def get_structure(self, structure_id: str) -> dict[str, Any]:
        """The latest version of one element (``getStructure``).

        Parameters
        ----------
        structure_id : str
            The element id.
        """
        return self._json_object("getStructure", {"id": structure_id})

    def get_raw_data(self, structure_id: str) -> Any:
        """The data the service sends to a template for one element (``getRawData``).

        Parameters
        ----------
        structure_id : str
            The element id.
        """
        return self._json("getRawData", {"structureId": structure_id})

    def get_object_types(self) -> Any:
        """All object types defined in the settings (``getObjectTypes``)."""
        return self._json("getObjectTypes")

    def get_table(self, table_id: str) -> dict[str, Any]:
        """The full content of a table: data and metadata (``getTable``).

        Parameters
        ----------
        table_id : str
            The table id.
        """
        return self._json_object("getTable", {"tableId": table_id})

    def get_table_stream(self, table_id: str) -> BodyStream:
        """The answer of ``getTable`` with its body still unread, for large tables.

        Use it as a context manager and read the body whole (``.json()``) or in
        chunks (``.chunks()``); ``.length`` is its announced size, if any.

        Parameters
        ----------
        table_id : str
            The table id.
        """
        operation = "getTable"
        response = self._http.call(operation, {"tableId": table_id}, stream=True)
        return BodyStream(endpoint(operation), response.url, response)

    def put_table(self, table_id: str, payload: dict[str, Any]) -> Any:
        """Replace the whole content of a table (``tableUpdate``).

        This is the raw call: omitted attributes are lost on the service. Prefer
        ``write_table``, which rebuilds and checks the full payload.

        Parameters
        ----------
        table_id : str
            The table id.
        payload : dict
            The complete table document.

        Returns
        -------
        Any
            The decoded answer, or ``None`` if the service sent no body.
        """
        _require_dict("put_table", "payload", payload)
        return self._json("tableUpdate", {"tableId": table_id}, json_body=payload)

    def get_mapping(self, mapping_id: str) -> dict[str, Any]:
        """The full content of a mapping (``getMapping``).

        Parameters
        ----------
        mapping_id : str
            The mapping id.
        """
        return self._json_object("getMapping", {"mappingId": mapping_id})

    def put_mapping(self, mapping_id: str, payload: dict[str, Any]) -> Any:
        """Replace the whole content of a mapping (``mappingUpdate``).

        Parameters
        ----------
        mapping_id : str
            The mapping id.
        payload : dict
            The complete mapping document.

        Returns
        -------
        Any
            The decoded answer, or ``None`` if the service sent no body.
        """
        _require_dict("put_mapping", "payload", payload)
        return self._json("mappingUpdate", {"mappingId": mapping_id}, json_body=payload)

    def list_packages(self, system: str) -> Any:
        """The open deployment packages of ``system`` (``listDeploymentPackages``).

        Parameters
        ----------
        system : str
            The system name.
        """
        return self._json("listDeploymentPackages", {"systemName": system})

    def post_package_structures(self, system: str, package: str, ids: list[str]) -> Any:
        """Add elements to a deployment package (raw ``addToDeploymentPackage``).

        Sent once, never retried.

        Parameters
        ----------
        system : str
            The system name.
        package : str
            The package name.
        ids : list of str
            The element ids to add.

        Raises
        ------
        PackageClosedError
            If the package is not open.
        """
        id_list = _require_id_list("post_package_structures", "ids", ids)
        return self._json(
            "addToDeploymentPackage",
            {"systemName": system, "dpName": package},
            json_body=id_list,
        )

    def post_child(self, parent_id: str, type: str, body: dict[str, Any]) -> dict[str, Any]:
        """Create an element of ``type`` below ``parent_id`` (raw ``createChildStructure``).

        Sent once, never retried.

        Parameters
        ----------
        parent_id : str
            The parent element's id.
        type : str
            The new element's type.
        body : dict
            ``{"name": ..., **attributes}``.

        Returns
        -------
        dict
            The new element as the service created it.
        """
        _require_dict("post_child", "body", body)
        return self._json_object(
            "createChildStructure", {"parentId": parent_id, "type": type}, json_body=body
        )

    def export_structure(self, structure_id: str, object_type_id: str) -> tuple[str, str]:
        """Generate the output script of one element (``externalExportStructure``).

        Parameters
        ----------
        structure_id : str
            The element id.
        object_type_id : str
            The object type that selects the template.

        Returns
        -------
        (str, str)
            The file name (from ``Content-Disposition``, reduced to a base name; else
            ``"<structure_id>.txt"``) and the script text.
        """
        operation = "externalExportStructure"
        entry = endpoint(operation)
        response = self._http.call(operation, {"id": structure_id, "objectTypeId": object_type_id})
        try:
            text = decode_text(entry, response.url, response)
            name = attachment_filename(response)
        finally:
            response.close()
        if name is None:
            name = attachment_filename_fallback(structure_id)
        return name, text

    def post_export(self, ids: list[str], object_type_id: str) -> dict[str, Any]:
        """Start a batch script generation (raw ``structureMassExportAsync``).

        Sent once, never retried.

        Parameters
        ----------
        ids : list of str
            The element ids.
        object_type_id : str
            The object type that selects the template.

        Returns
        -------
        dict
            The decoded answer, ``{"taskId": ...}``.
        """
        id_list = _require_id_list("post_export", "ids", ids)
        answer = self._json_object(
            "structureMassExportAsync",
            json_body={"structureIds": id_list, "objectTypeId": object_type_id},
        )
        if "taskId" not in answer:
            raise ResponseFormatError(
                f"the export start answer has no taskId (it has {sorted(answer)})",
                operation="structureMassExportAsync",
                method="POST",
            )
        return answer

    def get_export_status(self, task_id: str) -> dict[str, Any]:
        """The status of a batch export task (``structureMassExportAsyncStatus``).

        Parameters
        ----------
        task_id : str
            The task id returned by :meth:`post_export`.
        """
        return self._json_object("structureMassExportAsyncStatus", {"taskId": task_id})

    def get_export_result(self, task_id: str, path: str | os.PathLike[str]) -> Path:
        """Stream the result file of a finished task to ``path``
        (``structureMassExportAsyncResult``).

        The file is written to a temporary name in the same folder and renamed when
        complete, so ``path`` never holds a partial file.

        Parameters
        ----------
        task_id : str
            The task id.
        path : str or os.PathLike
            Where to write the file (a zip).

        Returns
        -------
        Path
            ``path``.

        Raises
        ------
        ConflictError
            If the task is still running.
        """
        operation = "structureMassExportAsyncResult"
        response = self._http.call(operation, {"taskId": task_id}, stream=True)
        return stream_to_file(endpoint(operation), response.url, response, path)

    def deploy_structure(self, structure_id: str, deployment_id: str) -> Any:
        """Mark an element as deployed (``deployStructure``). Sent once, never retried.

        Parameters
        ----------
        structure_id : str
            The element id.
        deployment_id : str
            The deployment id.
        """
        return self._json("deployStructure", {"id": structure_id, "deploymentId": deployment_id})

    def confirm_deployment(self, info: str | os.PathLike[str] | dict[str, Any] | bytes) -> Any:
        """Upload a deployment info file (``confirmStructureDeployment``).

        Sent once, never retried, as the multipart field ``file``
        (``deployment-info.json``, ``application/json``).

        Parameters
        ----------
        info : str, os.PathLike, dict or bytes
            A path to the file, the document itself, or its bytes.
        """
        content = _deployment_info_bytes(info)
        files = {"file": (DEPLOYMENT_INFO_FILENAME, content, "application/json")}
        return self._json("confirmStructureDeployment", files=files)

    # --- exports, elements, packages, deployment (exports.py, elements.py) ---

    def export_script(self, structure_id: str, object_type_id: str) -> Script:
        """The output script of one element; see :func:`mddframes.exports.export_script`."""
        from mddframes.exports import export_script

        return export_script(self, structure_id, object_type_id)

    def export_scripts(
        self, ids: Any, object_type_id: str, dest: str | os.PathLike[str] | None = None, **kw: Any
    ) -> pd.DataFrame:
        """Scripts of many elements, concurrently; see :func:`mddframes.exports.export_scripts`."""
        from mddframes.exports import export_scripts

        return export_scripts(self, ids, object_type_id, dest, **kw)

    def start_export(self, ids: Any, object_type_id: str) -> ExportTask:
        """Start a batch export task; see :func:`mddframes.exports.start_export`."""
        from mddframes.exports import start_export

        return start_export(self, ids, object_type_id)

    def export_task(self, task_id: str) -> ExportTask:
        """Attach to an export task started earlier (e.g. after ``ExportTimeout``)."""
        from mddframes.exports import ExportTask

        return ExportTask(self, task_id)

    def export_batch(
        self, ids: Any, object_type_id: str, dest: str | os.PathLike[str], **kw: Any
    ) -> ExportArchive:
        """Start, wait for and download a batch export (legacy fallback included); see
        :func:`mddframes.exports.export_batch`."""
        from mddframes.exports import export_batch

        return export_batch(self, ids, object_type_id, dest, **kw)

    def create_child(self, parent_id: str, type: str, name: str, **attributes: Any) -> pd.Series:
        """Create one child element; see :func:`mddframes.elements.create_child`."""
        from mddframes.elements import create_child

        return create_child(self, parent_id, type, name, **attributes)

    def create_children(self, frame: pd.DataFrame, **kw: Any) -> pd.DataFrame:
        """Create many elements, parents first; see :func:`mddframes.elements.create_children`."""
        from mddframes.elements import create_children

        return create_children(self, frame, **kw)

    def add_to_package(self, system: str, package: str, ids: Any) -> pd.DataFrame:
        """Add elements to an open package; see :func:`mddframes.elements.add_to_package`."""
        from mddframes.elements import add_to_package

        return add_to_package(self, system, package, ids)

    def deploy(self, structure_id: str, deployment_id: str) -> pd.Series:
        """Mark one element as deployed; see :func:`mddframes.elements.deploy`."""
        from mddframes.elements import deploy

        return deploy(self, structure_id, deployment_id)

    def deploy_many(self, items: Any, deployment_id: str | None = None, **kw: Any) -> pd.DataFrame:
        """Mark many elements as deployed; see :func:`mddframes.elements.deploy_many`."""
        from mddframes.elements import deploy_many

        return deploy_many(self, items, deployment_id, **kw)

    def confirm_deployed(self, info: Any) -> pd.DataFrame:
        """Confirm a deployment info file; see :func:`mddframes.elements.confirm_deployed`."""
        from mddframes.elements import confirm_deployed

        return confirm_deployed(self, info)

    # --- loaders: tree, structures, listings, bulk (frames/) ---

    def read_tree(self, system: str, *, types: Any = None) -> pd.DataFrame:
        """The element tree of a system, one row per element; see
        :func:`mddframes.frames.tree.read_tree`."""
        from mddframes.frames.tree import read_tree

        return read_tree(self, system, types=types)

    def read_structure(self, structure_id: str) -> pd.Series:
        """One element as a Series; see :func:`mddframes.frames.structures.read_structure`."""
        from mddframes.frames.structures import read_structure

        return read_structure(self, structure_id)

    def read_structures(self, ids: Any, **kw: Any) -> pd.DataFrame:
        """Many elements, concurrently; see :func:`mddframes.frames.structures.read_structures`."""
        from mddframes.frames.structures import read_structures

        return read_structures(self, ids, **kw)

    def read_raw_data(self, structure_id: str, *, flatten: bool = False) -> Any:
        """The data a template receives; see :func:`mddframes.frames.listing.read_raw_data`."""
        from mddframes.frames.listing import read_raw_data

        return read_raw_data(self, structure_id, flatten=flatten)

    def read_object_types(self) -> pd.DataFrame:
        """Every object type; see :func:`mddframes.frames.listing.read_object_types`."""
        from mddframes.frames.listing import read_object_types

        return read_object_types(self)

    def read_packages(self, system: str) -> pd.DataFrame:
        """The open deployment packages; see :func:`mddframes.frames.listing.read_packages`."""
        from mddframes.frames.listing import read_packages

        return read_packages(self, system)

    def read_tables(self, ids: Any, **kw: Any) -> pd.DataFrame:
        """Many tables as one long frame; see :func:`mddframes.frames.bulk_tables.read_tables`."""
        from mddframes.frames.bulk_tables import read_tables

        return read_tables(self, ids, **kw)

    def read_mappings(self, ids: Any, **kw: Any) -> pd.DataFrame:
        """Many mappings as one long frame; see
        :func:`mddframes.frames.bulk_tables.read_mappings`."""
        from mddframes.frames.bulk_tables import read_mappings

        return read_mappings(self, ids, **kw)

    # --- tables and mappings: frames and safe writes (frames/table.py, writing.py) ---

    @property
    def read_contexts(self) -> ContextRegistry:
        """The write-back context of the latest read of each table and mapping
        (created on first use); see :mod:`mddframes.context`."""
        from mddframes.context import registry_for

        return registry_for(self)

    def read_table(self, table_id: str) -> pd.DataFrame:
        """A table's rows as a frame, ready to edit and write back; see
        :func:`mddframes.frames.table.read_table`."""
        from mddframes.frames.table import read_table

        return read_table(self, table_id)

    def read_table_columns(self, table_id: str) -> pd.DataFrame:
        """A table's column metadata as a frame; see
        :func:`mddframes.frames.table.read_table_columns`."""
        from mddframes.frames.table import read_table_columns

        return read_table_columns(self, table_id)

    def read_mapping(self, mapping_id: str) -> pd.DataFrame:
        """A mapping's column mappings as a frame; see
        :func:`mddframes.frames.table.read_mapping`."""
        from mddframes.frames.table import read_mapping

        return read_mapping(self, mapping_id)

    def write_table(self, table_id: str, frame: pd.DataFrame, **kw: Any) -> WriteResult:
        """Write an edited table frame back safely (conflict check, completeness check,
        backup, verification); see :func:`mddframes.writing.write_table`."""
        from mddframes.writing import write_table

        return write_table(self, table_id, frame, **kw)

    def write_mapping(self, mapping_id: str, frame: pd.DataFrame, **kw: Any) -> WriteResult:
        """Write an edited mapping frame back safely; see
        :func:`mddframes.writing.write_mapping`."""
        from mddframes.writing import write_mapping

        return write_mapping(self, mapping_id, frame, **kw)

    def restore(self, backup: str | os.PathLike[str], **kw: Any) -> WriteResult:
        """Put a backup back (backing up first); see :func:`mddframes.writing.restore`."""
        from mddframes.writing import restore

        return restore(self, backup, **kw)

    def write_tables(self, frame: pd.DataFrame, **kw: Any) -> pd.DataFrame:
        """Write every table of a long frame, all checked before any is sent; see
        :func:`mddframes.writing.write_tables`."""
        from mddframes.writing import write_tables

        return write_tables(self, frame, **kw)

    def write_mappings(self, frame: pd.DataFrame, **kw: Any) -> pd.DataFrame:
        """Write every mapping of a long frame, all checked before any is sent; see
        :func:`mddframes.writing.write_mappings`."""
        from mddframes.writing import write_mappings

        return write_mappings(self, frame, **kw)

    # --- notebook panels (widgets/) ---

    def export_panel(
        self,
        system: str,
        *,
        dest: str | os.PathLike[str] = ".",
        timeout: float | None = None,
    ) -> ExportPanel:
        """A notebook panel that exports scripts of picked elements.

        See :class:`mddframes.widgets.ExportPanel`.
        """
        from mddframes.widgets import ExportPanel

        return ExportPanel(self, system, dest=dest, timeout=timeout)

    def package_panel(self, system: str) -> PackagePanel:
        """A notebook panel that adds picked elements to an open deployment package.

        See :class:`mddframes.widgets.PackagePanel`.
        """
        from mddframes.widgets import PackagePanel

        return PackagePanel(self, system)

    def deploy_panel(self, system: str) -> DeployPanel:
        """A notebook panel that deploys picked elements or confirms a deployment info file.

        See :class:`mddframes.widgets.DeployPanel`.
        """
        from mddframes.widgets import DeployPanel

        return DeployPanel(self, system)

    def review_write(
        self,
        object_id: str,
        frame: pd.DataFrame,
        *,
        kind: str | None = None,
        allow_deletes: bool = False,
        backup_dir: str | os.PathLike[str] | None = None,
    ) -> WriteReview:
        """A notebook panel showing an edit's dry-run diff and check report, then writing it.

        See :class:`mddframes.widgets.WriteReview`.
        """
        from mddframes.widgets import WriteReview

        return WriteReview(
            self, object_id, frame, kind=kind, allow_deletes=allow_deletes, backup_dir=backup_dir
        )


def attachment_filename_fallback(structure_id: str) -> str:
    """The file name of a single export whose answer names none."""
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in str(structure_id))
    return f"{safe.strip('.') or 'export'}.txt"


def _require_dict(method: str, name: str, value: Any) -> None:
    if not isinstance(value, dict):
        raise InvalidArgumentError(
            f"{method}(): {name} must be a dict (the whole JSON document), "
            f"got {type(value).__name__}"
        )


def _require_id_list(method: str, name: str, ids: Any) -> list[Any]:
    if isinstance(ids, str | bytes) or not hasattr(ids, "__iter__"):
        raise InvalidArgumentError(
            f"{method}(): {name} must be a list of element ids, got {type(ids).__name__}"
        )
    id_list = list(ids)
    if not id_list:
        raise InvalidArgumentError(f"{method}(): {name} is empty; give at least one element id")
    for position, value in enumerate(id_list):
        if value is None or (isinstance(value, str) and not value.strip()):
            raise InvalidArgumentError(
                f"{method}(): {name}[{position}] is {value!r}, not an element id"
            )
    return id_list


def _deployment_info_bytes(info: Any) -> bytes:
    if isinstance(info, bytes | bytearray):
        content = bytes(info)
    elif isinstance(info, dict):
        content = json.dumps(info, allow_nan=False, ensure_ascii=False).encode("utf-8")
    elif isinstance(info, str | os.PathLike):
        path = Path(info)
        if not path.is_file():
            raise InvalidArgumentError(
                f"confirm_deployment(): the deployment info file {str(path)!r} does not exist"
            )
        content = path.read_bytes()
    else:
        raise InvalidArgumentError(
            f"confirm_deployment(): info must be a path, a dict or bytes, got {type(info).__name__}"
        )
    try:
        json.loads(content)
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidArgumentError(
            f"confirm_deployment(): the deployment info is not valid JSON: {exc}"
        ) from None
    return content
