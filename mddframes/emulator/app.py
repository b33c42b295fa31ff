"""The emulator's HTTP layer: a FastAPI app whose routes translate to the state's calls.

Every request passes :class:`~mddframes.emulator.gate.OperationGate` first (raw-path
routing, counters, faults, bearer tokens). Each route is declared with its contract
(:mod:`.openapi`): the models of :mod:`.schemas` it checks its body with and answers
with, and every status it sends; the OpenAPI document is built from those declarations.

Bodies are read raw and parsed with ``json.loads`` (big integers survive) and answers are
sent as the stored JSON text, never through FastAPI's encoders: :mod:`.bodies` does both,
so this module is the route table alone (kept whole: its order decides which route a
path reaches, e.g. the literal ``export`` segment before ``structure/{id}``).
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.requests import ClientDisconnect

from mddframes.emulator import generation, openapi
from mddframes.emulator import schemas as wire
from mddframes.emulator.bodies import (
    checked,
    content_disposition,
    form_file,
    if_match,
    json_answer,
    json_body,
    read_body,
    segment,
)
from mddframes.emulator.documents import dumps, parse_json_body
from mddframes.emulator.errors import EmulatorError, InvalidInput, StateConflict, UnknownObject
from mddframes.emulator.gate import OperationGate, error_response
from mddframes.emulator.state import EmulatorState
from mddframes.emulator.tasks import ExportTask
from mddframes.wire.dialects import DIALECTS
from mddframes.wire.profile import OPENAPI_PATH, ROUTES

logger = logging.getLogger(__name__)

TOKEN_PATH = ROUTES["getToken"][1]


def create_app(state: EmulatorState) -> FastAPI:
    """Build the emulator's ASGI app over ``state``.

    Parameters
    ----------
    state : EmulatorState
        The data, tokens, tasks and faults the routes work on.

    Returns
    -------
    fastapi.FastAPI
        All 17 operations under ``state.config.api_prefix``, the token endpoint, the
        OpenAPI document, a Swagger UI page and the ``/_emulator/`` admin routes.
    """
    prefix = state.config.api_prefix.rstrip("/")
    title = "Metadata Service Integration API (mddframes emulator)"
    app = FastAPI(
        title=title,
        version="emulator",
        openapi_url=None,  # the document is built by openapi.Contract, served below
        docs_url=None,
        redoc_url=None,
        redirect_slashes=False,  # a trailing slash is a 404, as in Spring Boot 3
    )
    contract = openapi.Contract(title, prefix)
    op = contract.operation
    store = state.store
    # the etag dialect: table and mapping answers carry their version, writes honour If-Match
    etags = DIALECTS[state.config.dialect].kind == "etag"

    @app.exception_handler(EmulatorError)
    async def _emulator_error(request: Request, exc: EmulatorError) -> Response:
        return error_response(exc.status, exc.message, request.scope["path"])

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        message = (
            exc.detail
            if exc.status_code != 404
            else f"No endpoint {request.method} {request.scope['path']}"
        )
        return error_response(exc.status_code, str(message), request.scope["path"], exc.headers)

    @app.exception_handler(ClientDisconnect)
    async def _client_gone(request: Request, exc: ClientDisconnect) -> Response:
        # A writer killed mid-upload: nothing was done (the body never completed), and
        # its traceback would say nothing more than this line.
        logger.warning(
            "client disconnected in the middle of the request body: %s %s (nothing changed)",
            request.method,
            request.scope["path"],
        )
        return Response(status_code=400)  # nobody reads it

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> Response:
        return error_response(500, f"{type(exc).__name__}: {exc}", request.scope["path"])

    # ------------------------------------------------------------------ token

    @app.post(
        TOKEN_PATH,
        **op(
            "getToken",
            "token",
            "Issue an access token",
            answer=wire.TokenResponse,
            errors=(400, 401, 404, 413, 415),
            body=wire.TokenForm,
            body_media="application/x-www-form-urlencoded",
            body_description="client_credentials grant; the client may also authenticate "
            "with HTTP Basic (both parts form-url-encoded), which wins over form fields",
            authenticated=False,
        ),
    )
    async def get_token(realm: str, request: Request) -> Response:
        try:
            realm_name = segment(realm)
        except InvalidInput:  # no realm has a name that is not text
            return JSONResponse({"error": "Realm does not exist"}, status_code=404)
        answer = state.issuer.token_request(
            realm_name,
            request.headers.get("content-type"),
            await read_body(request),
            request.headers.get("authorization"),
        )
        return JSONResponse(answer.body, status_code=answer.status, headers=answer.headers)

    # ------------------------------------------------------------------ reads

    def at(operation: str) -> str:  # the operation's path (the wire profile's)
        return prefix + ROUTES[operation][1]

    @app.get(
        at("getTree"),
        **op(
            "getTree",
            "system",
            "The elements of a system, parents before children",
            answer=list[wire.TreeEntry],
            errors=(400, 404),
        ),
    )
    async def get_tree(name: str) -> Response:
        return json_answer(store.tree_json(segment(name)))

    @app.get(
        at("getObjectTypes"),
        **op("getObjectTypes", "object-type", "All object types", answer=list[wire.ObjectType]),
    )
    async def get_object_types() -> Response:
        return json_answer(store.object_types_json())

    @app.get(
        at("getTable"),
        **op(
            "getTable",
            "table",
            "A table's metadata and rows",
            answer=wire.TableDocument,
            errors=(400, 404),
        ),
    )
    async def get_table(tableId: str) -> Response:
        return json_answer(store.table_json(segment(tableId)), etag=etags)

    @app.put(
        at("tableUpdate"),
        **op(
            "tableUpdate",
            "table",
            "Replace a table's metadata and rows",
            answer=wire.TableDocument,
            errors=(400, 404, 413, 415),
            body=wire.TableDocument,
            body_description="The whole table: what is left out is lost. Stored as sent "
            "(key order, integers of any size); the owning element's version rises by 1",
        ),
    )
    async def table_update(tableId: str, request: Request) -> Response:
        table_id = segment(tableId)
        payload = await json_body(request, f"table {table_id!r}", wire.TableDocument)
        expected = if_match(request) if etags else None
        return json_answer(store.replace_table(table_id, payload, expected), etag=etags)

    @app.get(
        at("getMapping"),
        **op(
            "getMapping",
            "mapping",
            "A mapping and its column mappings",
            answer=wire.MappingDocument,
            errors=(400, 404),
        ),
    )
    async def get_mapping(mappingId: str) -> Response:
        return json_answer(store.mapping_json(segment(mappingId)), etag=etags)

    @app.put(
        at("mappingUpdate"),
        **op(
            "mappingUpdate",
            "mapping",
            "Replace a mapping",
            answer=wire.MappingDocument,
            errors=(400, 404, 413, 415),
            body=wire.MappingDocument,
            body_description="The whole mapping: what is left out is lost",
        ),
    )
    async def mapping_update(mappingId: str, request: Request) -> Response:
        mapping_id = segment(mappingId)
        payload = await json_body(request, f"mapping {mapping_id!r}", wire.MappingDocument)
        expected = if_match(request) if etags else None
        return json_answer(store.replace_mapping(mapping_id, payload, expected), etag=etags)

    @app.get(
        at("listDeploymentPackages"),
        **op(
            "listDeploymentPackages",
            "deployment-package",
            "The open deployment packages of a system",
            answer=list[wire.Package],
            errors=(400, 404),
        ),
    )
    async def list_packages(systemName: str) -> Response:
        return json_answer(store.open_packages_json(segment(systemName)))

    @app.post(
        at("addToDeploymentPackage"),
        **op(
            "addToDeploymentPackage",
            "deployment-package",
            "Add elements to an open deployment package",
            answer=wire.Package,
            errors=(400, 404, 409, 413, 415),
            body=wire.PackageAdd,
            body_description="Element ids of the package's system; duplicates are "
            "ignored; all or nothing",
        ),
    )
    async def add_to_package(systemName: str, dpName: str, request: Request) -> Response:
        system, name = segment(systemName), segment(dpName)
        body = await json_body(request, f"deployment package {name!r}", wire.PackageAdd)
        return json_answer(dumps(store.add_to_package(system, name, body)))

    # ------------------------------------------------------------------ export tasks
    # (before the structure routes: "export" is a literal segment here)

    @app.post(
        at("structureMassExportAsync"),
        **op(
            "structureMassExportAsync",
            "structure",
            "Start a batch export",
            ok=202,
            answer=wire.TaskStarted,
            errors=(400, 404, 413, 415),
            body=wire.ExportRequest,
            body_description="Elements and the object type; a repeated id is exported "
            "once. Everything is checked before a task exists",
            description="404 when the service predates batch export (emulator --legacy).",
        ),
    )
    async def start_export(request: Request) -> Response:
        if state.config.legacy:
            raise UnknownObject(f"No endpoint POST {request.scope['path']}")
        body = await json_body(request, "batch export", wire.ExportRequest)
        # a repeated id would give the archive two entries of one name: export it once,
        # as addToDeploymentPackage ignores repeated ids
        ids = list(dict.fromkeys(body["structureIds"]))
        object_type_id = body["objectTypeId"]
        object_type = store.object_type(object_type_id)
        missing = store.missing_elements(ids)
        if missing:
            raise UnknownObject(
                f"batch export: element(s) not found: {', '.join(map(repr, missing))}"
            )
        for sid in ids:
            element = store.element(sid)
            if not generation.applies(object_type, element):
                raise InvalidInput(
                    f"batch export: object type {object_type_id!r} does not apply to element "
                    f"{sid!r} of type {element.get('type')!r}"
                )
        task = state.tasks.start(ids, object_type_id)
        return json_answer(dumps({"taskId": task.task_id}), status=202)

    def _task(task_id: str, path: str) -> ExportTask:
        if state.config.legacy:
            raise UnknownObject(f"No endpoint GET {path}")
        task = state.tasks.get(task_id)
        if task is None:
            raise UnknownObject(f"export task {task_id!r} not found")
        return task

    @app.get(
        at("structureMassExportAsyncStatus"),
        **op(
            "structureMassExportAsyncStatus",
            "structure",
            "The status of a batch export",
            answer=wire.TaskStatus,
            errors=(400, 404),
        ),
    )
    async def export_status(taskId: str, request: Request) -> Response:
        return json_answer(dumps(_task(segment(taskId), request.scope["path"]).poll()))

    @app.get(
        at("structureMassExportAsyncResult"),
        **op(
            "structureMassExportAsyncResult",
            "structure",
            "The archive of a finished batch export",
            answer_media="application/zip",
            errors=(400, 404, 409),
            description="One file per element, named `<safe id>__<file name>`; "
            "409 while the task runs or when it failed.",
        ),
        response_class=Response,
    )
    async def export_result(taskId: str, request: Request) -> Response:
        task = _task(segment(taskId), request.scope["path"])
        status = task.visible_status()
        if status == "RUNNING":
            raise StateConflict(
                f"export task {task.task_id!r} is still running ({task.done}/{task.total})"
            )
        if status == "FAILED" or task.result is None:
            raise StateConflict(f"export task {task.task_id!r} failed: {task.message}")
        return Response(
            task.result,
            media_type="application/zip",
            headers={"Content-Disposition": content_disposition(f"{task.task_id}.zip")},
        )

    @app.post(
        at("confirmStructureDeployment"),
        **op(
            "confirmStructureDeployment",
            "structure",
            "Mark the elements of a deployment info file deployed",
            answer=list[wire.Element],
            errors=(400, 404, 413, 415),
            body=wire.DeploymentUpload,
            body_media="multipart/form-data",
            body_part=("file", wire.DeploymentInfo),
            body_description="The deployment info file written by the 'push to git' "
            "action, in the field `file`: a JSON document (schema DeploymentInfo)",
        ),
    )
    async def confirm_deployment(request: Request) -> Response:
        what = "deployment info file"
        content = await form_file(request, "file", what)
        info = checked(wire.DeploymentInfo, parse_json_body(content, what), what)
        return json_answer(dumps(store.confirm_deployment(info)))

    # ------------------------------------------------------------------ structures

    @app.get(
        at("getStructure"),
        **op(
            "getStructure",
            "structure",
            "The latest version of one element",
            answer=wire.Element,
            errors=(400, 404),
        ),
    )
    async def get_structure(id: str) -> Response:  # noqa: A002 - the service's name
        return json_answer(store.element_json(segment(id)))

    @app.get(
        at("getRawData"),
        **op(
            "getRawData",
            "structure",
            "The data a template receives for one element",
            answer=wire.RawData,
            errors=(400, 404),
        ),
    )
    async def get_raw_data(structureId: str) -> Response:
        return json_answer(dumps(generation.raw_data(store, segment(structureId))))

    @app.post(
        at("createChildStructure"),
        **op(
            "createChildStructure",
            "structure",
            "Create a child element",
            ok=201,
            answer=wire.Element,
            errors=(400, 404, 413, 415),
            body=wire.NewChild,
            body_description="`name` and attributes: every key but `name` becomes an "
            "attribute (an `attributes` object is merged in)",
        ),
    )
    async def create_child(parentId: str, type: str, request: Request) -> Response:  # noqa: A002
        parent_id = segment(parentId)
        body = await json_body(request, f"new child of {parent_id!r}", wire.NewChild)
        return json_answer(dumps(store.create_child(parent_id, segment(type), body)), status=201)

    @app.post(
        at("externalExportStructure"),
        **op(
            "externalExportStructure",
            "structure",
            "Generate the output script of one element",
            answer_media="text/plain",
            errors=(400, 404),
            description="400 when the object type does not apply to the element's type.",
        ),
        response_class=Response,
    )
    async def export_structure(id: str, objectTypeId: str) -> Response:  # noqa: A002
        file_name, text = state.render(segment(id), segment(objectTypeId))
        return Response(
            text.encode("utf-8"),
            media_type="text/plain; charset=utf-8",
            headers={"Content-Disposition": content_disposition(file_name)},
        )

    @app.post(
        at("deployStructure"),
        **op(
            "deployStructure",
            "structure",
            "Mark one element deployed",
            answer=wire.Element,
            errors=(400, 404),
        ),
    )
    async def deploy_structure(id: str, deploymentId: str) -> Response:  # noqa: A002
        return json_answer(dumps(store.deploy(segment(id), segment(deploymentId))))

    # ------------------------------------------------------------------ docs and admin

    def document() -> dict[str, Any]:
        return contract.document(app.router.routes)

    # FastAPI's documented way to serve one's own document; fastapi declares openapi as a
    # method, so mypy refuses the assignment
    app.openapi = document  # type: ignore[method-assign]

    @app.get(prefix + OPENAPI_PATH, include_in_schema=False)
    async def api_docs() -> Response:
        return json_answer(dumps(document()))

    @app.get(f"{prefix}/swagger-ui/index.html", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return openapi.swagger_page(prefix, title)

    app.mount(
        f"{prefix}/swagger-ui",
        StaticFiles(directory=str(openapi.SWAGGER_ASSETS)),
        name="swagger-ui-assets",
    )

    from mddframes.emulator.admin import admin_router

    app.include_router(admin_router(state))
    app.add_middleware(OperationGate, state=state, routes=app.router.routes)
    if DIALECTS[state.config.dialect].kind != "reference":
        from mddframes.emulator.dialects import DialectMiddleware

        # outermost: it rewrites the path before the gate routes and counts it
        app.add_middleware(
            DialectMiddleware, dialect=state.config.dialect, prefix=prefix,
            tenant=state.config.tenant,
        )  # fmt: skip
    if state.replay is not None:
        from mddframes.emulator.replay import ReplayMiddleware

        # outermost: a 404 names the recording whichever layer answered it
        app.add_middleware(ReplayMiddleware, replay=state.replay, state=state)
    return app
