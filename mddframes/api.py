"""The raw layer: one method per service operation, named after the operation.

:class:`Api` sends exactly one operation per call through the HTTP session (token,
retries, error translation: :mod:`mddframes.http`) and returns what the service
answered, decoded: JSON values, a script's text, a file on disk. It knows nothing of
DataFrames, the codec, writing or exports; those layers take an ``Api`` and build on it.
Users reach it as ``client.api``.

Method names are the snake_case of the operation ids of the service description
(``getTree`` -> ``get_tree``), except ``tableUpdate``/``mappingUpdate``, which read
as what they do: ``put_table``/``put_mapping``. :data:`OPERATION_METHODS` is the table.
How an answer is read (decoded, spelled, paged, tagged) is :mod:`mddframes.api_answers`.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from mddframes.api_answers import AnswerReader
from mddframes.api_bodies import (
    attachment_filename_fallback,
    deployment_info_bytes,
    require_document,
)
from mddframes.codec.values import JsonObject, JsonValue
from mddframes.config import Settings
from mddframes.context import ContextRegistry
from mddframes.doc_sections import documented_with
from mddframes.errors import MddError, ResponseFormatError
from mddframes.http.endpoints import endpoint
from mddframes.http.etags import Tagged, if_match_headers
from mddframes.http.session import (
    BodyStream,
    EncodedJson,
    HttpSession,
    attachment_filename,
    decode_text,
    stream_to_file,
)
from mddframes.ids import id_list
from mddframes.known_ids import KnownIds
from mddframes.wire.spelling import to_snake

DEPLOYMENT_INFO_FILENAME = "deployment-info.json"

logger = logging.getLogger(__name__)

#: The Api method of every service operation (all but the token, which the session gets).
OPERATION_METHODS: dict[str, str] = {
    "getTree": "get_tree",
    "getStructure": "get_structure",
    "getRawData": "get_raw_data",
    "getObjectTypes": "get_object_types",
    "getTable": "get_table",
    "tableUpdate": "put_table",
    "getMapping": "get_mapping",
    "mappingUpdate": "put_mapping",
    "listDeploymentPackages": "list_deployment_packages",
    "addToDeploymentPackage": "add_to_deployment_package",
    "createChildStructure": "create_child_structure",
    "externalExportStructure": "external_export_structure",
    "structureMassExportAsync": "structure_mass_export_async",
    "structureMassExportAsyncStatus": "structure_mass_export_async_status",
    "structureMassExportAsyncResult": "structure_mass_export_async_result",
    "deployStructure": "deploy_structure",
    "confirmStructureDeployment": "confirm_structure_deployment",
}


#: What the table and mapping twins' docstrings share, written once.
_documented = documented_with(
    {
        "tagged": "Tagged\n    ``(document, etag)``; ``etag`` is what the matching put "
        "(``put_table``,\n    ``put_mapping``) takes as ``if_match``, ``None`` when the service "
        "sent no\n    strong ETag (row 29).",
        "refused": "Raises\n------\nConcurrentModificationError\n"
        "    If the service answered 412 (``If-Match`` failed); nothing was written.",
    }
)


class Api(AnswerReader):
    """The service's operations, one method each, over one HTTP session.

    Parameters
    ----------
    settings : Settings
        Resolved settings (tenant, base URL, credentials, retries, time-outs).

    Notes
    -----
    Safe to share between threads. ``close()`` releases the pooled connections.
    """

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        #: Ids seen in the tree frames read through this Api: a 404's close matches.
        self.known_ids = KnownIds()
        self.http = HttpSession(settings, known_ids=self.known_ids)
        #: Operations whose answer came as a Spring page, with the entries collected.
        self.paged: dict[str, int] = {}
        #: How the service spells the wire names, once an answer showed it:
        #: ``"snake_case"`` or ``"camelCase"`` (:mod:`.wire.spelling`); ``None`` until then.
        self.key_style: str | None = None
        #: Operations that answered in snake_case (``mddframes doctor`` reports them).
        self.snake_case_answers: set[str] = set()
        #: Show a progress bar while a paged list is followed (the command line turns it
        #: off when stderr is not a terminal).
        self.progress = True
        #: The write-back context of each table and mapping read through this Api
        #: (bounded: :class:`~mddframes.context.ContextRegistry`).
        self.read_contexts = ContextRegistry()

    @property
    def tenant(self) -> str | None:
        """The tenant this Api talks to."""
        return self.settings.tenant

    @property
    def max_workers(self) -> int:
        """Default concurrency of bulk calls (the connection pool is sized for it)."""
        return self.settings.max_workers

    def close(self) -> None:
        """Release the pooled connections; later calls raise ``MddError``."""
        self.http.close()

    def __repr__(self) -> str:
        return f"Api(tenant={self.settings.tenant!r}, base_url={self.settings.base_url!r})"

    def get_tree(self, system: str) -> JsonValue:
        """The element tree of ``system`` as the service sent it (``getTree``).

        Parameters
        ----------
        system : str
            The system name.

        Returns
        -------
        Any
            Decoded JSON: a flat list of elements with their ids and parent ids (or
            what the service sends instead); a Spring page is followed to its end and
            its entries returned as one list.
        """
        return self._list("getTree", {"name": system}, f"tree of system {system!r}", 11)

    def get_tree_stream(self, system: str) -> BodyStream:
        """The answer of ``getTree`` with its body still unread, for large trees.

        One request, no paging: a service that answers in pages gives the first page
        here (:meth:`get_tree` follows every page). Use it as a context manager and
        read the body in chunks (``.chunks()``), as ``read_tree(...,
        dtype_backend="pyarrow")`` does.

        Parameters
        ----------
        system : str
            The system name.

        Returns
        -------
        BodyStream
            The unread answer (a context manager).
        """
        return self._stream("getTree", {"name": system})

    def get_structure(self, structure_id: str) -> JsonObject:
        """The latest version of one element (``getStructure``).

        Parameters
        ----------
        structure_id : str
            The element id.

        Returns
        -------
        JsonObject
            The element as the service sends it.
        """
        return self._json_object("getStructure", {"id": structure_id})

    def get_raw_data(self, structure_id: str) -> JsonValue:
        """The data the service sends to a template for one element (``getRawData``).

        Parameters
        ----------
        structure_id : str
            The element id.

        Returns
        -------
        JsonValue
            The raw template data, decoded.
        """
        return self._json("getRawData", {"structureId": structure_id})

    def get_object_types(self) -> JsonValue:
        """All object types defined in the settings (``getObjectTypes``).

        Returns
        -------
        JsonValue
            The object types, decoded (a list of objects).
        """
        return self._list("getObjectTypes", None, "list of object types", 14)

    def get_table(self, table_id: str) -> JsonObject:
        """The full content of a table: data and metadata (``getTable``).

        Parameters
        ----------
        table_id : str
            The table id.

        Returns
        -------
        JsonObject
            The table document as the service sends it.
        """
        return self._json_object("getTable", {"tableId": table_id})

    @_documented
    def get_table_with_etag(self, table_id: str) -> Tagged:
        """:meth:`Api.get_table` with the answer's strong ``ETag`` (``getTable``).

        Parameters
        ----------
        table_id : str
            The table id.

        Returns
        -------
        {tagged}
        """
        return self._tagged("getTable", {"tableId": table_id})

    def get_table_stream(self, table_id: str) -> BodyStream:
        """The answer of ``getTable`` with its body still unread, for large tables.

        Use it as a context manager and read the body whole (``.json()``) or in
        chunks (``.chunks()``); ``.length`` is its announced size, if any, ``.etag``
        its strong ETag, if any (what ``put_table``'s ``if_match`` takes).

        Parameters
        ----------
        table_id : str
            The table id.

        Returns
        -------
        BodyStream
            The unread answer (a context manager).
        """
        return self._stream("getTable", {"tableId": table_id})

    @_documented
    def put_table(
        self,
        table_id: str,
        payload: JsonObject | EncodedJson,
        *,
        answer: bool = True,
        if_match: str | None = None,
    ) -> JsonValue:
        """Replace the whole content of a table (``tableUpdate``).

        This is the raw call: omitted attributes are lost on the service. Prefer
        ``write_table``, which rebuilds and checks the full payload.

        Parameters
        ----------
        table_id : str
            The table id.
        payload : dict or EncodedJson
            The complete table document (or its UTF-8 JSON, as :class:`EncodedJson`).
        answer : bool, default True
            Decode the answer. False reads it and drops it (the service answers with
            the whole table again: ``write_table`` reads it back anyway).
        if_match : str, optional
            The strong ETag of the read the payload was built from (or ``"*"``), sent
            as ``If-Match``: a service that honours it refuses the write if the table
            changed since (row 29).

        Returns
        -------
        Any
            The decoded answer, or ``None`` if the service sent no body (or ``answer``
            is False).

        {refused}
        """
        if not isinstance(payload, EncodedJson):
            require_document("put_table", "payload", payload)
        headers = if_match_headers(if_match, "put_table")
        if answer:
            return self._json("tableUpdate", {"tableId": table_id}, json_body=payload,
                              headers=headers)  # fmt: skip
        response = self.http.call("tableUpdate", {"tableId": table_id}, json_body=payload,
                                  stream=True, headers=headers)  # fmt: skip
        with BodyStream(endpoint("tableUpdate"), response.url, response) as body:
            for _ in body.chunks():  # read to the end: the connection goes back to the pool
                pass
        return None

    def get_mapping(self, mapping_id: str) -> JsonObject:
        """The full content of a mapping (``getMapping``).

        Parameters
        ----------
        mapping_id : str
            The mapping id.

        Returns
        -------
        JsonObject
            The mapping document as the service sends it.
        """
        return self._json_object("getMapping", {"mappingId": mapping_id})

    @_documented
    def get_mapping_with_etag(self, mapping_id: str) -> Tagged:
        """:meth:`Api.get_mapping` with the answer's strong ``ETag`` (``getMapping``).

        Parameters
        ----------
        mapping_id : str
            The mapping id.

        Returns
        -------
        {tagged}
        """
        return self._tagged("getMapping", {"mappingId": mapping_id})

    @_documented
    def put_mapping(
        self, mapping_id: str, payload: JsonObject, *, if_match: str | None = None
    ) -> JsonValue:
        """Replace the whole content of a mapping (``mappingUpdate``).

        Parameters
        ----------
        mapping_id : str
            The mapping id.
        payload : dict
            The complete mapping document.
        if_match : str, optional
            As for :meth:`put_table`.

        Returns
        -------
        Any
            The decoded answer, or ``None`` if the service sent no body.

        {refused}
        """
        require_document("put_mapping", "payload", payload)
        headers = if_match_headers(if_match, "put_mapping")
        return self._json("mappingUpdate", {"mappingId": mapping_id}, json_body=payload,
                          headers=headers)  # fmt: skip

    def list_deployment_packages(self, system: str) -> JsonValue:
        """The open deployment packages of ``system`` (``listDeploymentPackages``).

        Parameters
        ----------
        system : str
            The system name.

        Returns
        -------
        JsonValue
            The open packages, decoded (a list of objects).
        """
        return self._list(
            "listDeploymentPackages",
            {"systemName": system},
            f"deployment packages of system {system!r}",
            18,
        )

    def add_to_deployment_package(self, system: str, package: str, ids: list[str]) -> JsonValue:
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

        Returns
        -------
        JsonValue
            The service's answer, decoded (its shape: docs/wire-format.md).

        Raises
        ------
        PackageClosedError
            If the package is not open.
        """
        wanted = id_list(ids, what="add_to_deployment_package ids")
        return self._json(
            "addToDeploymentPackage",
            {"systemName": system, "dpName": package},
            json_body=self._nonempty(wanted, "add_to_deployment_package"),
        )

    def create_child_structure(self, parent_id: str, type: str, body: JsonObject) -> JsonObject:
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
        require_document("create_child_structure", "body", body)
        return self._json_object(
            "createChildStructure", {"parentId": parent_id, "type": type}, json_body=body
        )

    def external_export_structure(self, structure_id: str, object_type_id: str) -> tuple[str, str]:
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
        response = self.http.call(operation, {"id": structure_id, "objectTypeId": object_type_id})
        try:
            text = decode_text(entry, response.url, response)
            name = attachment_filename(response)
        finally:
            response.close()
        if name is None:
            name = attachment_filename_fallback(structure_id)
        return name, text

    def structure_mass_export_async(self, ids: list[str], object_type_id: str) -> JsonObject:
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
        wanted = id_list(ids, what="structure_mass_export_async ids")
        body = {
            "structureIds": self._nonempty(wanted, "structure_mass_export_async"),
            "objectTypeId": object_type_id,
        }
        if self.key_style is None:
            # The body's names must be spelled as the service spells them, and nothing
            # read yet showed how: one small read tells (a 400 would not say why). If it
            # fails, the start goes out in camelCase, the wire format's spelling.
            try:
                self.get_object_types()
            except MddError as exc:
                logger.debug("could not learn the service's key spelling: %s", exc)
        answer = self._json_object(
            "structureMassExportAsync",
            json_body=to_snake(body) if self.key_style == "snake_case" else body,
        )
        if "taskId" not in answer:
            raise ResponseFormatError(
                f"the export start answer has no taskId (it has {sorted(answer)})",
                operation="structureMassExportAsync",
                method="POST",
            )
        return answer

    def structure_mass_export_async_status(self, task_id: str) -> JsonObject:
        """The status of a batch export task (``structureMassExportAsyncStatus``).

        Parameters
        ----------
        task_id : str
            The task id returned by :meth:`structure_mass_export_async`.

        Returns
        -------
        JsonObject
            The task's status document.
        """
        return self._json_object("structureMassExportAsyncStatus", {"taskId": task_id})

    def structure_mass_export_async_result(
        self, task_id: str, path: str | os.PathLike[str]
    ) -> Path:
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
        response = self.http.call(operation, {"taskId": task_id}, stream=True)
        return stream_to_file(endpoint(operation), response.url, response, path)

    def deploy_structure(self, structure_id: str, deployment_id: str) -> JsonValue:
        """Mark an element as deployed (``deployStructure``). Sent once, never retried.

        Parameters
        ----------
        structure_id : str
            The element id.
        deployment_id : str
            The deployment id.

        Returns
        -------
        JsonValue
            The service's answer, decoded (its shape: docs/wire-format.md).
        """
        return self._json("deployStructure", {"id": structure_id, "deploymentId": deployment_id})

    def confirm_structure_deployment(
        self, info: str | os.PathLike[str] | JsonObject | bytes
    ) -> JsonValue:
        """Upload a deployment info file (``confirmStructureDeployment``).

        Sent once, never retried, as the multipart field ``file``
        (``deployment-info.json``, ``application/json``).

        Parameters
        ----------
        info : str, os.PathLike, dict or bytes
            A path to the file, the document itself, or its bytes.

        Returns
        -------
        JsonValue
            The service's answer, decoded (its shape: docs/wire-format.md).
        """
        content = deployment_info_bytes(info)
        files = {"file": (DEPLOYMENT_INFO_FILENAME, content, "application/json")}
        return self._json("confirmStructureDeployment", files=files)
