"""Dialects: documented variations of the wire format a real service might have.

The ``default`` dialect serves the shapes of docs/wire-format.md. Every other dialect
changes one assumption, consistently for every route, so the client's tolerance of that
alternative is proven against a server rather than against a hand-written fixture.
What each dialect changes is its entry in :data:`mddframes.wire.dialects.DIALECTS`
(its ``kind`` and parameters); this module serves the entry: a Spring Data page of
``spring-page``'s size, the profile's wire names in snake_case (a request body using a
camelCase wire name is refused, 400 naming it, as a ``SNAKE_CASE`` Jackson does not
know it), the tree nested under the entry's ``children_key``, the synchronous paths
without the prefix, the token endpoint only under the literal realm.

Every dialect but ``etag`` (and the reference) is an ASGI middleware outside the
operation gate: it rewrites the path before the gate routes it and the JSON bodies
around the app, so the store and routes stay those of the default dialect. ``etag`` is
served by the table and mapping routes themselves (the store checks the version in the
write's own transaction, the route sets the headers), as a precondition cannot be
checked atomically from outside.
The OpenAPI document stays the default dialect's.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mddframes.emulator import schemas
from mddframes.emulator.gate import spring_error
from mddframes.wire import spelling
from mddframes.wire.dialects import DIALECTS, DialectEntry
from mddframes.wire.dialects import Dialect as Dialect  # (read from here too)
from mddframes.wire.dialects import check_dialect as check_dialect  # (read from here too)
from mddframes.wire.profile import (
    API_ROOT,
    ASYNC_PATH,
    LITERAL_REALM,
    MAX_SERVED_PAGE_SIZE,
    PAGE_PARAMETERS,
    ROUTES,
    SERVED_PAGE_SIZE,
    served_page,
)

_MAX_REWRITTEN_BODY = 64 * 1024 * 1024  # larger bodies pass untouched (the app bounds them)
_BEFORE_REALM, _AFTER_REALM = ROUTES["getToken"][1].split("{realm}")
_TOKEN = re.compile(f"^{re.escape(_BEFORE_REALM)}([^/]*)({re.escape(_AFTER_REALM)})$")
_ASYNC = re.compile("^" + re.escape(ASYNC_PATH) + "(/|$)")
#: Kinds of dialect the routes serve themselves: the middleware lets their requests pass.
_IN_THE_ROUTES = frozenset({"reference", "etag"})


def _emulator_names() -> dict[str, str]:
    """The profile's wire names, and any other camelCase field of the emulator's models."""
    names: set[str] = {"touchedAt"}  # set by the emulator's touch_table (admin route)
    for model in vars(schemas).values():
        fields = getattr(model, "model_fields", None)
        if isinstance(fields, dict):
            names.update(field.alias or name for name, field in fields.items())
    extra = {n: spelling.snake(n) for n in names if spelling.snake(n) != n}
    return {**spelling.TO_SNAKE, **extra}


TO_SNAKE = _emulator_names()
TO_CAMEL = {snake: camel for camel, snake in TO_SNAKE.items()}


def rename_keys(value: Any, names: dict[str, str]) -> Any:
    """``value`` with the keys found in ``names`` renamed, users' keys left alone."""
    return spelling.rename(value, names)


def nest_tree(entries: list[Any], children_key: str) -> list[Any]:
    """A flat tree (parents first, ``parentId``) as nested lists under ``children_key``."""
    nodes: dict[Any, dict[str, Any]] = {}
    roots: list[dict[str, Any]] = []
    for entry in entries:
        node = {k: v for k, v in entry.items() if k != "parentId"}
        node[children_key] = []
        nodes[entry.get("id")] = node
        parent = nodes.get(entry.get("parentId"))
        (parent[children_key] if parent is not None else roots).append(node)
    return roots


def spring_page(entries: list[Any], query: str) -> dict[str, Any]:
    """One page of ``entries`` as Spring Data serialises a ``Page`` (``PageImpl``)."""
    params = parse_qs(query)

    def number(name: str, default: int) -> int:
        try:  # Spring falls back to the default on a value it cannot read
            return int(params[name][0])
        except (KeyError, ValueError):
            return default

    page_name, size_name = PAGE_PARAMETERS
    page = max(number(page_name, 0), 0)
    size = number(size_name, SERVED_PAGE_SIZE)
    size = SERVED_PAGE_SIZE if size < 1 else min(size, MAX_SERVED_PAGE_SIZE)
    return served_page(entries, page, size)


class DialectMiddleware:
    """ASGI middleware serving the app in one dialect (see the module's docstring)."""

    def __init__(self, app: ASGIApp, dialect: str, prefix: str, tenant: str) -> None:
        self.app = app
        self.dialect = check_dialect(dialect)
        self.entry: DialectEntry = DIALECTS[dialect]
        self.prefix = prefix.rstrip("/")
        self.tenant = tenant

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.entry.kind in _IN_THE_ROUTES:
            await self.app(scope, receive, send)
            return
        raw = scope.get("raw_path") or scope["path"].encode("latin-1")
        path = raw.decode("latin-1").split("?", 1)[0]
        if self.entry.kind == "realm":
            scope = self._realm(scope, path)
        elif self.entry.kind == "unprefixed":
            moved = self._unprefixed(path)
            if moved is None:
                answer = json.dumps(
                    spring_error(404, f"No endpoint {scope['method']} {path}", path)
                )
                await _send_json(send, 404, answer.encode())
                return
            scope = _with_path(scope, moved)
        api_root = self.prefix + API_ROOT
        if not (scope["path"].startswith(api_root) or path.startswith(API_ROOT)):
            await self.app(scope, receive, send)
            return
        if self.entry.kind == "snake":
            receive, camel = await _renamed_request(scope, receive)
            if camel:  # a SNAKE_CASE Jackson does not know these: refused, not ignored
                message = f"Unrecognized field(s) {', '.join(sorted(camel))} (snake_case names)"
                answer = json.dumps(spring_error(400, message, path))
                await _send_json(send, 400, answer.encode())
                return
        await self._rewritten_answer(scope, receive, send)

    def _realm(self, scope: Scope, path: str) -> Scope:
        match = _TOKEN.match(path)
        if match is None:
            return scope
        realm, rest = match.groups()
        # swap: the literal realm reaches the tenant's realm, the tenant's realm (or any
        # other) reaches the literal one, which the token issuer does not know (404)
        target = self.tenant if realm == LITERAL_REALM else LITERAL_REALM
        return _with_path(scope, _BEFORE_REALM + target + rest)

    def _unprefixed(self, path: str) -> str | None:
        """The path the app serves, or ``None`` for a prefixed synchronous path (404)."""
        prefixed = path.startswith(self.prefix + API_ROOT)
        if self.prefix and not prefixed and path.startswith(f"{self.prefix}/"):
            return path  # the prefix's own documents (OpenAPI, Swagger UI) stay put
        bare = path[len(self.prefix) :] if prefixed else path
        if not bare.startswith(API_ROOT):
            return path
        if _ASYNC.match(bare):
            return path if prefixed else None
        return None if prefixed else self.prefix + path

    async def _rewritten_answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        start: dict[str, Any] = {}
        chunks: list[bytes] = []

        async def capture(message: Message) -> None:
            if message["type"] == "http.response.start":
                start.update(message)
                return
            if message["type"] != "http.response.body":
                await send(message)
                return
            chunks.append(message.get("body", b""))
            if message.get("more_body"):
                return
            headers = dict(start.get("headers", []))
            body = b"".join(chunks)
            if headers.get(b"content-type", b"").startswith(b"application/json") and body:
                body = self._rewrite(scope, json.loads(body), start.get("status", 200))
            kept = [(k, v) for k, v in start.get("headers", []) if k != b"content-length"]
            kept.append((b"content-length", str(len(body)).encode()))
            await send({**start, "headers": kept})
            await send({"type": "http.response.body", "body": body})

        await self.app(scope, receive, capture)

    def _rewrite(self, scope: Scope, value: Any, status: int) -> bytes:
        if 200 <= status < 300:
            kind = self.entry.kind
            if kind == "snake":
                value = rename_keys(value, TO_SNAKE)
            elif kind == "nested" and scope["path"].endswith("/tree"):
                if isinstance(value, list):
                    value = nest_tree(value, self.entry.children_key)
            elif kind == "paged" and scope["method"] == "GET":
                if isinstance(value, list):
                    value = spring_page(value, scope.get("query_string", b"").decode("latin-1"))
        return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _with_path(scope: Scope, path: str) -> Scope:
    return {**scope, "path": path, "raw_path": path.encode("latin-1")}


async def _send_json(send: Send, status: int, body: bytes) -> None:
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def camel_names(value: Any) -> set[str]:
    """The camelCase wire names used as keys in ``value`` (users' keys not looked at)."""
    return spelling.camel_names(value, TO_SNAKE)


async def _renamed_request(scope: Scope, receive: Receive) -> tuple[Receive, set[str]]:
    """A ``receive`` whose JSON body has its snake_case wire names in camelCase.

    Also returns the camelCase wire names the body used: a snake_case service does not
    know them.
    """
    headers = dict(scope.get("headers", []))
    if not headers.get(b"content-type", b"").startswith(b"application/json"):
        return receive, set()
    parts: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return _replay([message], receive), set()
        parts.append(message.get("body", b""))
        size += len(parts[-1])
        if not message.get("more_body") or size > _MAX_REWRITTEN_BODY:
            break
    body = b"".join(parts)
    more = message.get("more_body", False)
    camel: set[str] = set()
    if not more:
        try:
            value = json.loads(body)
        except ValueError:
            pass  # invalid JSON: the route answers 400 naming it
        else:
            camel = camel_names(value)
            body = json.dumps(rename_keys(value, TO_CAMEL)).encode("utf-8")
    first: Message = {"type": "http.request", "body": body, "more_body": more}
    return _replay([first], receive), camel


def _replay(messages: list[Message], then: Receive) -> Receive:
    """``messages`` first, then the connection's own ``receive`` (more body, disconnect)."""

    async def replayed() -> Message:
        if messages:
            return messages.pop(0)
        return await then()

    return replayed
