"""Dialects: documented variations of the wire format a real service might have.

The ``default`` dialect serves the shapes of docs/wire-format.md. Every other dialect
changes one assumption, consistently for every route, so the client's tolerance of that
alternative is proven against a server rather than against a hand-written fixture:

``spring-page``
    Every list a GET answers is a Spring Data page (``content``, ``totalElements``,
    ``totalPages``, ``number``, ``size``...), 50 entries by default, ``page`` and
    ``size`` query parameters (rows 11, 14, 18).
``snake-case``
    Every field name of the wire format in snake_case (``parent_id``, ``table_id``,
    ``data_type``...), in answers and in request bodies; the keys users own (table rows
    under ``data``, element ``attributes``) are untouched (rows 11-24). A request body
    using a camelCase wire name is refused (400 naming it), as a ``SNAKE_CASE`` Jackson
    does not know it: a client must write in the service's spelling.
``nested-tree``
    The tree as nested ``children`` lists, roots at the top, without parent ids (row 11).
``unprefixed``
    Synchronous operations without the API prefix; the asynchronous (batch export) ones
    keep it (row 2).
``literal-realm``
    The token endpoint answers only under the realm ``tenat`` (the description's
    spelling), the tenant's own realm is unknown (row 4).
``etag``
    ``getTable``/``getMapping`` (and the answers of their updates) carry a strong
    ``ETag``, the quoted SHA-256 of the stored document; ``tableUpdate``/
    ``mappingUpdate`` honour ``If-Match``: a tag that is not the object's current one
    is 412 with nothing written, ``*`` matches any existing object, no header writes
    as in every other dialect (row 29).

Every dialect but ``etag`` is an ASGI middleware outside the operation gate: it rewrites
the path before the gate routes it and the JSON bodies around the app, so the store and
routes stay those of the default dialect. ``etag`` is served by the table and mapping
routes themselves (the store checks the version in the write's own transaction, the
route sets the headers), as a precondition cannot be checked atomically from outside.
The OpenAPI document stays the default dialect's.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal
from urllib.parse import parse_qs

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mddframes.emulator import schemas as wire
from mddframes.emulator.gate import spring_error

#: A dialect's name (the keys of :data:`DIALECTS`).
Dialect = Literal[
    "default", "spring-page", "snake-case", "nested-tree", "unprefixed", "literal-realm", "etag"
]

DIALECTS: dict[Dialect, str] = {
    "default": "the shapes of docs/wire-format.md",
    "spring-page": "every list answer a Spring Data page (page/size parameters, 50 by default)",
    "snake-case": "every field name in snake_case, in answers and request bodies",
    "nested-tree": "the tree as nested children lists without parent ids",
    "unprefixed": "synchronous operations without the API prefix (async ones keep it)",
    "literal-realm": "the token endpoint only under the realm 'tenat'",
    "etag": "tables and mappings carry an ETag; their updates honour If-Match (412)",
}
"""Every dialect and what it changes."""

LITERAL_REALM = "tenat"
PAGE_SIZE = 50
MAX_PAGE_SIZE = 2000  # Spring Data's default maximum page size
_MAX_REWRITTEN_BODY = 64 * 1024 * 1024  # larger bodies pass untouched (the app bounds them)
# Values under these keys are the user's own names (columns, attributes): never renamed.
_USER_KEYS = frozenset({"data", "attributes"})
_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_TOKEN = re.compile(r"^/auth/realms/([^/]*)(/protocol/openid-connect/token)$")
_ASYNC = re.compile(r"^/api/structure/export(/|$)")
#: Dialects the routes serve themselves: the middleware lets their requests pass.
_IN_THE_ROUTES = frozenset({"default", "etag"})


def check_dialect(name: str) -> str:
    """``name`` if it is a dialect, else ``ValueError`` listing the dialects."""
    if name not in DIALECTS:
        raise ValueError(f"unknown dialect {name!r}; known: {', '.join(DIALECTS)}")
    return name


def _wire_names() -> dict[str, str]:
    """camelCase field name -> snake_case, for every name of the wire-format models."""
    names: set[str] = {"sourceName", "sourceType", "sourceSchema", "touchedAt"}
    for model in vars(wire).values():
        fields = getattr(model, "model_fields", None)
        if isinstance(fields, dict):
            names.update(field.alias or name for name, field in fields.items())
    return {n: _BOUNDARY.sub("_", n).lower() for n in names if _BOUNDARY.search(n)}


TO_SNAKE = _wire_names()
TO_CAMEL = {snake: camel for camel, snake in TO_SNAKE.items()}


def rename_keys(value: Any, names: dict[str, str]) -> Any:
    """``value`` with the keys found in ``names`` renamed, users' keys left alone."""
    if isinstance(value, list):
        return [rename_keys(item, names) for item in value]
    if isinstance(value, dict):
        return {
            names.get(key, key): item if key in _USER_KEYS else rename_keys(item, names)
            for key, item in value.items()
        }
    return value


def nest_tree(entries: list[Any]) -> list[Any]:
    """A flat tree (parents first, ``parentId``) as nested ``children`` lists."""
    nodes: dict[Any, dict[str, Any]] = {}
    roots: list[dict[str, Any]] = []
    for entry in entries:
        node = {k: v for k, v in entry.items() if k != "parentId"}
        node["children"] = []
        nodes[entry.get("id")] = node
        parent = nodes.get(entry.get("parentId"))
        (parent["children"] if parent is not None else roots).append(node)
    return roots


def spring_page(entries: list[Any], query: str) -> dict[str, Any]:
    """One page of ``entries`` as Spring Data serialises a ``Page`` (``PageImpl``)."""
    params = parse_qs(query)

    def number(name: str, default: int) -> int:
        try:  # Spring falls back to the default on a value it cannot read
            return int(params[name][0])
        except (KeyError, ValueError):
            return default

    page = max(number("page", 0), 0)
    size = number("size", PAGE_SIZE)
    size = PAGE_SIZE if size < 1 else min(size, MAX_PAGE_SIZE)
    content = entries[page * size : (page + 1) * size]
    total_pages = -(-len(entries) // size)
    return {
        "content": content,
        "pageable": {"pageNumber": page, "pageSize": size, "offset": page * size},
        "totalElements": len(entries),
        "totalPages": total_pages,
        "last": page >= total_pages - 1,
        "first": page == 0,
        "number": page,
        "size": size,
        "numberOfElements": len(content),
        "empty": not content,
    }


class DialectMiddleware:
    """ASGI middleware serving the app in one dialect (see the module's docstring)."""

    def __init__(self, app: ASGIApp, dialect: str, prefix: str, tenant: str) -> None:
        self.app = app
        self.dialect = check_dialect(dialect)
        self.prefix = prefix.rstrip("/")
        self.tenant = tenant

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.dialect in _IN_THE_ROUTES:
            await self.app(scope, receive, send)
            return
        raw = scope.get("raw_path") or scope["path"].encode("latin-1")
        path = raw.decode("latin-1").split("?", 1)[0]
        if self.dialect == "literal-realm":
            scope = self._realm(scope, path)
        elif self.dialect == "unprefixed":
            moved = self._unprefixed(path)
            if moved is None:
                answer = json.dumps(
                    spring_error(404, f"No endpoint {scope['method']} {path}", path)
                )
                await _send_json(send, 404, answer.encode())
                return
            scope = _with_path(scope, moved)
        api_root = f"{self.prefix}/api/"
        if not (scope["path"].startswith(api_root) or path.startswith("/api/")):
            await self.app(scope, receive, send)
            return
        if self.dialect == "snake-case":
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
        return _with_path(scope, f"/auth/realms/{target}{rest}")

    def _unprefixed(self, path: str) -> str | None:
        """The path the app serves, or ``None`` for a prefixed synchronous path (404)."""
        prefixed = path.startswith(f"{self.prefix}/api/")
        if self.prefix and not prefixed and path.startswith(f"{self.prefix}/"):
            return path  # the prefix's own documents (OpenAPI, Swagger UI) stay put
        bare = path[len(self.prefix) :] if prefixed else path
        if not bare.startswith("/api/"):
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
            if self.dialect == "snake-case":
                value = rename_keys(value, TO_SNAKE)
            elif self.dialect == "nested-tree" and scope["path"].endswith("/tree"):
                value = nest_tree(value) if isinstance(value, list) else value
            elif self.dialect == "spring-page" and scope["method"] == "GET":
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
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            found.update(k for k in item if k in TO_SNAKE)
            stack.extend(v for k, v in item.items() if k not in _USER_KEYS)
    return found


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
