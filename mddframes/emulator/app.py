"""The emulator's HTTP layer: a FastAPI app whose routes translate to the state's calls.

Request flow (:class:`OperationGate`, a plain ASGI middleware in front of the routes):

1. route on the *raw* path, so a path parameter holding ``%2F`` stays one segment
   (handlers percent-decode their parameters themselves);
2. find the operation id of the route; requests of no operation (docs, admin, unknown
   paths) pass straight through;
3. count the request, then apply injected faults (latency, 5xx, 429, dropped connection);
4. check the bearer token (every operation but ``getToken``);
5. run the route.

Bodies are read raw and parsed with ``json.loads`` (big integers survive) and answers are
sent as the stored JSON text, never through FastAPI's encoders.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from email.message import Message
from typing import Any
from urllib.parse import quote, unquote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match

from mddframes.emulator import generation, openapi
from mddframes.emulator.faults import drop_connection
from mddframes.emulator.state import EmulatorState
from mddframes.emulator.store import (
    EmulatorError,
    InvalidInput,
    StateConflict,
    UnknownObject,
    UnsupportedMedia,
    dumps,
    parse_json_body,
)

TOKEN_PATH = "/auth/realms/{realm}/protocol/openid-connect/token"
_REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    415: "Unsupported Media Type",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}


def spring_error(status: int, message: str, path: str) -> dict[str, Any]:
    """Spring Boot's default error body (plus ``message``)."""
    return {
        "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "status": status,
        "error": _REASONS.get(status, "Error"),
        "message": message,
        "path": path,
    }


def _error_response(
    status: int, message: str, path: str, headers: dict[str, str] | None = None
) -> Response:
    return Response(
        dumps(spring_error(status, message, path)).encode(),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


def _json(text: str, status: int = 200) -> Response:
    return Response(text.encode("utf-8"), status_code=status, media_type="application/json")


def _segment(value: str) -> str:
    """A path parameter as the client meant it (the router sees the raw, encoded path)."""
    return unquote(value, encoding="utf-8", errors="strict")


def _media_type(request: Request) -> str:
    message = Message()
    message["content-type"] = request.headers.get("content-type", "")
    return message.get_content_type() if request.headers.get("content-type") else ""


def _require_json(request: Request) -> None:
    media = _media_type(request)
    if media != "application/json" and not media.endswith("+json"):
        raise UnsupportedMedia(
            f"Content-Type '{media or 'none'}' is not supported; send application/json"
        )


async def _json_body(request: Request, what: str) -> Any:
    _require_json(request)
    return parse_json_body(await request.body(), what)


def _content_disposition(file_name: str) -> str:
    fallback = (
        file_name.encode("ascii", "replace").decode("ascii").replace("?", "_").replace('"', "_")
    )
    return f"attachment; filename=\"{fallback}\"; filename*=UTF-8''{quote(file_name, safe='')}"


class OperationGate:
    """ASGI middleware: raw-path routing, counters, faults and bearer authentication."""

    def __init__(
        self, app: Callable[..., Awaitable[None]], state: EmulatorState, routes: list
    ) -> None:
        self.app = app
        self.state = state
        self.routes = routes

    def _operation(self, scope: dict[str, Any]) -> str | None:
        for route in self.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return getattr(route, "operation_id", None)
        return None

    async def __call__(self, scope: dict[str, Any], receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw_path = scope.get("raw_path")
        if raw_path:
            scope = {**scope, "path": raw_path.decode("latin-1").split("?", 1)[0]}
        operation = self._operation(scope)
        if operation is None:
            await self.app(scope, receive, send)
            return
        fault = self.state.faults.decide(operation)
        self.state.count(operation, faulted=fault.action is not None)
        if fault.latency:
            await asyncio.sleep(fault.latency)
        path = scope["path"]
        if fault.action == "drop" and await drop_connection(scope):
            return
        if fault.action in ("error", "drop"):  # "drop" only when the socket was not found
            status = fault.status or 500
            await _error_response(status, "injected fault", path)(scope, receive, send)
            return
        if fault.action == "rate_limit":
            response = _error_response(
                429, "injected rate limit", path, {"Retry-After": str(fault.retry_after)}
            )
            await response(scope, receive, send)
            return
        if operation != "getToken":
            refusal = self._authenticate(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def _authenticate(self, scope: dict[str, Any]) -> Response | None:
        header = next(
            (v.decode("latin-1") for k, v in scope.get("headers", []) if k == b"authorization"), ""
        )
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            return Response(status_code=401, headers={"WWW-Authenticate": "Bearer"})
        problem = self.state.issuer.check(token.strip())
        if problem is None:
            return None
        return Response(
            status_code=401,
            headers={
                "WWW-Authenticate": f'Bearer error="invalid_token", error_description="{problem}"'
            },
        )


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
    app = FastAPI(
        title="Metadata Service Integration API (mddframes emulator)",
        version="emulator",
        openapi_url=f"{prefix}/v3/api-docs",
        docs_url=None,
        redoc_url=None,
    )
    store = state.store

    @app.exception_handler(EmulatorError)
    async def _emulator_error(request: Request, exc: EmulatorError) -> Response:
        return _error_response(exc.status, exc.message, request.scope["path"])

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        message = (
            exc.detail
            if exc.status_code != 404
            else f"No endpoint {request.method} {request.scope['path']}"
        )
        return _error_response(exc.status_code, str(message), request.scope["path"], exc.headers)

    @app.exception_handler(Exception)
    async def _crash(request: Request, exc: Exception) -> Response:
        return _error_response(500, f"{type(exc).__name__}: {exc}", request.scope["path"])

    # ------------------------------------------------------------------ token

    @app.post(TOKEN_PATH, operation_id="getToken", tags=["token"], summary="Issue an access token")
    async def get_token(realm: str, request: Request) -> Response:
        answer = state.issuer.token_request(
            _segment(realm),
            request.headers.get("content-type"),
            await request.body(),
            request.headers.get("authorization"),
        )
        return JSONResponse(answer.body, status_code=answer.status, headers=answer.headers)

    # ------------------------------------------------------------------ reads

    api = f"{prefix}/api"

    @app.get(f"{api}/system/{{name}}/tree", operation_id="getTree", tags=["system"])
    async def get_tree(name: str) -> Response:
        return _json(store.tree_json(_segment(name)))

    @app.get(f"{api}/object-type", operation_id="getObjectTypes", tags=["object-type"])
    async def get_object_types() -> Response:
        return _json(store.object_types_json())

    @app.get(f"{api}/table/{{tableId}}", operation_id="getTable", tags=["table"])
    async def get_table(tableId: str) -> Response:
        return _json(store.table_json(_segment(tableId)))

    @app.put(
        f"{api}/table/{{tableId}}",
        operation_id="tableUpdate",
        tags=["table"],
        openapi_extra=openapi.json_body("The whole table: metadata and data"),
    )
    async def table_update(tableId: str, request: Request) -> Response:
        table_id = _segment(tableId)
        payload = await _json_body(request, f"table {table_id!r}")
        return _json(store.replace_table(table_id, payload))

    @app.get(f"{api}/mapping/{{mappingId}}", operation_id="getMapping", tags=["mapping"])
    async def get_mapping(mappingId: str) -> Response:
        return _json(store.mapping_json(_segment(mappingId)))

    @app.put(
        f"{api}/mapping/{{mappingId}}",
        operation_id="mappingUpdate",
        tags=["mapping"],
        openapi_extra=openapi.json_body("The whole mapping"),
    )
    async def mapping_update(mappingId: str, request: Request) -> Response:
        mapping_id = _segment(mappingId)
        payload = await _json_body(request, f"mapping {mapping_id!r}")
        return _json(store.replace_mapping(mapping_id, payload))

    @app.get(
        f"{api}/system/{{systemName}}/deployment-package",
        operation_id="listDeploymentPackages",
        tags=["deployment-package"],
    )
    async def list_packages(systemName: str) -> Response:
        return _json(store.open_packages_json(_segment(systemName)))

    @app.post(
        f"{api}/system/{{systemName}}/deployment-package/{{dpName}}/structure",
        operation_id="addToDeploymentPackage",
        tags=["deployment-package"],
        openapi_extra=openapi.json_body("A JSON list of element ids"),
    )
    async def add_to_package(systemName: str, dpName: str, request: Request) -> Response:
        system, name = _segment(systemName), _segment(dpName)
        body = await _json_body(request, f"deployment package {name!r}")
        return _json(dumps(store.add_to_package(system, name, body)))

    # ------------------------------------------------------------------ export tasks
    # (before the structure routes: "export" is a literal segment here)

    @app.post(
        f"{api}/structure/export",
        operation_id="structureMassExportAsync",
        tags=["structure"],
        status_code=202,
        openapi_extra=openapi.json_body('{"structureIds": [...], "objectTypeId": "..."}'),
    )
    async def start_export(request: Request) -> Response:
        if state.config.legacy:
            raise UnknownObject(f"No endpoint POST {request.scope['path']}")
        body = await _json_body(request, "batch export")
        if not isinstance(body, dict):
            raise InvalidInput(
                "batch export: the body must be a JSON object with structureIds and objectTypeId"
            )
        ids, object_type_id = body.get("structureIds"), body.get("objectTypeId")
        if not isinstance(ids, list) or not ids or not all(isinstance(i, str) for i in ids):
            raise InvalidInput("batch export: structureIds must be a non-empty list of strings")
        if not isinstance(object_type_id, str) or not object_type_id:
            raise InvalidInput("batch export: objectTypeId must be a non-empty string")
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
        return _json(dumps({"taskId": task.task_id}), status=202)

    def _task(task_id: str, path: str):
        if state.config.legacy:
            raise UnknownObject(f"No endpoint GET {path}")
        task = state.tasks.get(task_id)
        if task is None:
            raise UnknownObject(f"export task {task_id!r} not found")
        return task

    @app.get(
        f"{api}/structure/export/{{taskId}}",
        operation_id="structureMassExportAsyncStatus",
        tags=["structure"],
    )
    async def export_status(taskId: str, request: Request) -> Response:
        return _json(dumps(_task(_segment(taskId), request.scope["path"]).poll()))

    @app.get(
        f"{api}/structure/export/{{taskId}}/result",
        operation_id="structureMassExportAsyncResult",
        tags=["structure"],
        response_class=Response,
    )
    async def export_result(taskId: str, request: Request) -> Response:
        task = _task(_segment(taskId), request.scope["path"])
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
            headers={"Content-Disposition": _content_disposition(f"{task.task_id}.zip")},
        )

    @app.post(
        f"{api}/structure/deployed",
        operation_id="confirmStructureDeployment",
        tags=["structure"],
        openapi_extra=openapi.multipart_body(),
    )
    async def confirm_deployment(request: Request) -> Response:
        if _media_type(request) != "multipart/form-data":
            raise UnsupportedMedia(
                f"Content-Type '{_media_type(request) or 'none'}' is not supported; "
                "send multipart/form-data with the deployment info file in the field 'file'"
            )
        try:
            form = await request.form()
        except Exception as exc:  # a broken multipart body is the client's fault
            raise InvalidInput(f"the multipart body could not be read: {exc}") from None
        try:
            part = form.get("file")
            if part is None:
                raise InvalidInput("the multipart body lacks the field 'file'")
            content = await part.read() if hasattr(part, "read") else str(part).encode("utf-8")
        finally:
            await form.close()
        info = parse_json_body(content, "deployment info file")
        return _json(dumps(store.confirm_deployment(info)))

    # ------------------------------------------------------------------ structures

    @app.get(f"{api}/structure/{{id}}", operation_id="getStructure", tags=["structure"])
    async def get_structure(id: str) -> Response:  # noqa: A002 - the service's name
        return _json(store.element_json(_segment(id)))

    @app.get(
        f"{api}/structure/{{structureId}}/raw-data", operation_id="getRawData", tags=["structure"]
    )
    async def get_raw_data(structureId: str) -> Response:
        return _json(dumps(generation.raw_data(store, _segment(structureId))))

    @app.post(
        f"{api}/structure/{{parentId}}/children/{{type}}",
        operation_id="createChildStructure",
        tags=["structure"],
        status_code=201,
        openapi_extra=openapi.json_body('{"name": ..., other attributes}'),
    )
    async def create_child(parentId: str, type: str, request: Request) -> Response:  # noqa: A002
        parent_id = _segment(parentId)
        body = await _json_body(request, f"new child of {parent_id!r}")
        return _json(dumps(store.create_child(parent_id, _segment(type), body)), status=201)

    @app.post(
        f"{api}/structure/{{id}}/export/{{objectTypeId}}",
        operation_id="externalExportStructure",
        tags=["structure"],
        response_class=Response,
    )
    async def export_structure(id: str, objectTypeId: str) -> Response:  # noqa: A002
        file_name, text = generation.render(store, _segment(id), _segment(objectTypeId))
        return Response(
            text.encode("utf-8"),
            media_type="text/plain; charset=utf-8",
            headers={"Content-Disposition": _content_disposition(file_name)},
        )

    @app.post(
        f"{api}/structure/{{id}}/deploy/{{deploymentId}}",
        operation_id="deployStructure",
        tags=["structure"],
    )
    async def deploy_structure(id: str, deploymentId: str) -> Response:  # noqa: A002
        return _json(dumps(store.deploy(_segment(id), _segment(deploymentId))))

    # ------------------------------------------------------------------ docs and admin

    @app.get(f"{prefix}/swagger-ui/index.html", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return HTMLResponse(openapi.swagger_page(app.openapi(), f"{prefix}/v3/api-docs"))

    from mddframes.emulator.admin import admin_router

    app.include_router(admin_router(state))
    app.add_middleware(OperationGate, state=state, routes=app.router.routes)
    return app
