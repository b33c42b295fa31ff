"""The emulator-only admin routes under ``/_emulator/`` (no authentication, no faults).

They exist for tests and demos: reset, load data, close a package, make a deployment
info file, steer export tasks, inject faults, change token settings, read counters and
change a table behind the client's back. The client library never calls them.
"""

from __future__ import annotations

from typing import Any, Literal, overload
from urllib.parse import unquote

from fastapi import APIRouter, Request
from fastapi.responses import Response

from mddframes.emulator.documents import dumps, parse_json_body
from mddframes.emulator.errors import InvalidInput, UnknownObject
from mddframes.emulator.faults import FaultSettings
from mddframes.emulator.state import EmulatorState, sample_dataset, scale_records
from mddframes.emulator.tasks import ExportTask

ADMIN_PREFIX = "/_emulator"


def _ok(value: Any = None, status: int = 200) -> Response:
    return Response(
        dumps({"ok": True} if value is None else value).encode(),
        status,
        media_type="application/json",
    )


async def _body(request: Request) -> dict[str, Any]:
    raw = await request.body()
    if not raw.strip():
        return {}
    doc = parse_json_body(raw, f"admin call {request.scope['path']}")
    if not isinstance(doc, dict):
        raise InvalidInput(f"admin call {request.scope['path']}: the body must be a JSON object")
    return doc


@overload
def _number(
    doc: dict[str, Any], key: str, default: float = 0, *, integer: Literal[True]
) -> int: ...


@overload
def _number(
    doc: dict[str, Any], key: str, default: float = 0, *, integer: Literal[False] = False
) -> float: ...


def _number(
    doc: dict[str, Any], key: str, default: float = 0, *, integer: bool = False
) -> int | float:
    value = doc.get(key, default)
    if value is None:
        value = default
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise InvalidInput(f"{key} must be a number >= 0, got {value!r}")
    if integer and int(value) != value:
        raise InvalidInput(f"{key} must be a whole number, got {value!r}")
    return int(value) if integer else float(value)


def admin_router(state: EmulatorState) -> APIRouter:
    """The ``/_emulator/`` routes over ``state``."""
    router = APIRouter(prefix=ADMIN_PREFIX, include_in_schema=False)

    def task_or_404(task_id: str) -> ExportTask:
        task = state.tasks.get(unquote(task_id))
        if task is None:
            raise UnknownObject(f"export task {unquote(task_id)!r} not found")
        return task

    @router.get("/info")
    async def info() -> Response:
        config = state.config
        return _ok(
            {
                "tenant": config.tenant,
                "clientId": config.client_id,
                "apiPrefix": config.api_prefix,
                "tokenTtl": state.issuer.ttl,
                "legacy": config.legacy,
                "db": config.db,
                "counts": state.store.counts(),
                "faults": state.faults.settings.to_json(),
            }
        )

    @router.post("/reset")
    async def reset() -> Response:
        state.reset()
        return _ok()

    @router.post("/load-sample")
    async def load_sample() -> Response:
        state.load(sample_dataset())
        return _ok(state.store.counts())

    @router.post("/load-scale")
    async def load_scale(request: Request) -> Response:
        doc = await _body(request)
        n = _number(doc, "elements", integer=True)
        try:
            dataset = scale_records(n)
        except ValueError as exc:
            raise InvalidInput(str(exc)) from None
        state.load(dataset)
        return _ok(state.store.counts())

    @router.post("/packages/close")
    async def close_package(request: Request) -> Response:
        doc = await _body(request)
        system, name = doc.get("system"), doc.get("name")
        if not isinstance(system, str) or not isinstance(name, str):
            raise InvalidInput("close package: the body needs strings 'system' and 'name'")
        return _ok(state.store.close_package(system, name))

    @router.post("/deployment-info")
    async def deployment_info(request: Request) -> Response:
        doc = await _body(request)
        ids = doc.get("structureIds")
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise InvalidInput("deployment info: structureIds must be a list of strings")
        deployment_id = doc.get("deploymentId")
        if deployment_id is not None and not isinstance(deployment_id, str):
            raise InvalidInput("deployment info: deploymentId must be a string")
        return _ok(state.store.make_deployment_info(ids, deployment_id))

    @router.post("/tasks/hold-next")
    async def hold_next(request: Request) -> Response:
        doc = await _body(request)
        state.tasks.hold_next(_number(doc, "polls", integer=True), _number(doc, "seconds"))
        return _ok()

    @router.post("/tasks/fail-next")
    async def fail_next(request: Request) -> Response:
        doc = await _body(request)
        state.tasks.fail_next(str(doc.get("message") or "export failed (injected)"))
        return _ok()

    @router.post("/tasks/{task_id}/hold")
    async def hold_task(task_id: str, request: Request) -> Response:
        doc = await _body(request)
        task = task_or_404(task_id)
        state.tasks.hold(task, _number(doc, "polls", integer=True), _number(doc, "seconds"))
        return _ok()

    @router.post("/tasks/{task_id}/fail")
    async def fail_task(task_id: str, request: Request) -> Response:
        doc = await _body(request)
        task = task_or_404(task_id)
        state.tasks.fail(task, str(doc.get("message") or "export failed (injected)"))
        return _ok()

    @router.get("/faults")
    async def get_faults() -> Response:
        return _ok(state.faults.settings.to_json())

    @router.put("/faults")
    async def set_faults(request: Request) -> Response:
        doc = await _body(request)
        try:
            settings = FaultSettings.from_json(doc)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"faults: {exc}") from None
        state.faults.configure(settings)
        return _ok(settings.to_json())

    @router.delete("/faults")
    async def clear_faults() -> Response:
        state.faults.clear()
        return _ok()

    @router.put("/token-ttl")
    async def set_token_ttl(request: Request) -> Response:
        doc = await _body(request)
        seconds = _number(doc, "seconds", -1)
        if seconds <= 0:
            raise InvalidInput("token-ttl: seconds must be a number > 0")
        state.issuer.ttl = seconds
        return _ok({"seconds": seconds})

    @router.post("/tokens/revoke")
    async def revoke_tokens() -> Response:
        return _ok({"revoked": state.issuer.revoke_all()})

    @router.put("/legacy")
    async def set_legacy(request: Request) -> Response:
        doc = await _body(request)
        if not isinstance(doc.get("legacy"), bool):
            raise InvalidInput("legacy: the body needs a boolean 'legacy'")
        state.config.legacy = doc["legacy"]
        return _ok({"legacy": state.config.legacy})

    @router.get("/counters")
    async def counters() -> Response:
        return _ok(state.counters())

    @router.delete("/counters")
    async def reset_counters() -> Response:
        state.reset_counters()
        return _ok()

    @router.post("/tables/{table_id}/touch")
    async def touch_table(table_id: str) -> Response:
        return _ok(state.store.touch_table(unquote(table_id)))

    return router
