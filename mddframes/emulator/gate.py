"""The gate in front of the emulator's routes, and the Spring error answers it and they send.

Request flow (:class:`OperationGate`, a plain ASGI middleware in front of the routes):

1. route on the *raw* path, so a path parameter holding ``%2F`` stays one segment
   (handlers percent-decode their parameters themselves);
2. find the operation id of the route; requests of no operation (docs, admin, unknown
   paths) pass straight through;
3. count the request, then apply injected faults (latency, 5xx, 429, a rate limit,
   dropped connection);
4. check the bearer token (every operation but ``getToken``);
5. run the route (and, for a "lose the answer" fault, close the connection instead of
   answering).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from fastapi.responses import Response
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mddframes.emulator.documents import dumps
from mddframes.emulator.faults import drop_connection
from mddframes.emulator.state import EmulatorState

_REASONS = {
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    409: "Conflict",
    412: "Precondition Failed",
    413: "Payload Too Large",
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


def error_response(
    status: int, message: str, path: str, headers: Mapping[str, str] | None = None
) -> Response:
    """A response with :func:`spring_error`'s body."""
    return Response(
        dumps(spring_error(status, message, path)).encode(),
        status_code=status,
        media_type="application/json",
        headers=headers,
    )


class OperationGate:
    """ASGI middleware: raw-path routing, counters, faults and bearer authentication."""

    def __init__(self, app: ASGIApp, state: EmulatorState, routes: Sequence[BaseRoute]) -> None:
        self.app = app
        self.state = state
        self.routes = routes

    def _operation(self, scope: Scope) -> str | None:
        for route in self.routes:
            match, _ = route.matches(scope)
            if match is Match.FULL:
                return getattr(route, "operation_id", None)
        return None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
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
        fault = self.state.faults.decide(operation, scope.get("method", "GET"))
        self.state.count(operation, faulted=fault.action is not None)
        if fault.latency:
            await asyncio.sleep(fault.latency)
        path = scope["path"]
        if fault.action == "drop" and await drop_connection(scope):
            return
        if fault.action in ("error", "drop"):  # "drop" only when the socket was not found
            status = fault.status or 500
            await error_response(status, "injected fault", path)(scope, receive, send)
            return
        if fault.action == "rate_limit":
            header = fault.retry_after_header
            if header is None and fault.retry_after is not None:
                header = str(fault.retry_after)
            response = error_response(
                429, "injected rate limit", path, {"Retry-After": header} if header else None
            )
            await response(scope, receive, send)
            return
        if operation != "getToken":
            refusal = self._authenticate(scope)
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        if fault.lose_answer:
            await self._act_then_drop(scope, receive, send, operation)
            return
        await self.app(scope, receive, send)

    async def _act_then_drop(
        self, scope: Scope, receive: Receive, send: Send, operation: str
    ) -> None:
        """Carry the request out, then close the connection instead of answering (when
        the service acted, 2xx; any other answer is sent as it is), or answer
        ``lose_answer_status`` as a gateway would."""
        held: list[Message] = []

        async def hold(message: Message) -> None:
            held.append(message)

        await self.app(scope, receive, hold)
        start = next((m for m in held if m["type"] == "http.response.start"), None)
        if start is not None and 200 <= int(start["status"]) < 300:
            self.state.count_fault(operation)
            status = self.state.faults.settings.lose_answer_status
            if status is not None:
                answer = error_response(status, "injected: the answer was lost", scope["path"])
                await answer(scope, receive, send)
                return
            if await drop_connection(scope):
                return
        for message in held:
            await send(message)

    def _authenticate(self, scope: Scope) -> Response | None:
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
