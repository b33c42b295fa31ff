"""Doctor checks against the service's OpenAPI document (rows 2 and 3).

The document (springdoc's ``<prefix>/v3/api-docs``) lists every operation with its id,
method and path. The doctor compares it with mddframes' endpoints table: mddframes
calls paths, never ids, so an operation found under another id is a difference it
copes with; an operation missing from the document is one it would fail on (the
batch export excepted: an older service lacks it and mddframes falls back, row 25).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from mddframes.doctor.findings import Finding, worst
from mddframes.errors import MddError
from mddframes.http.endpoints import ENDPOINTS, Endpoint
from mddframes.wire.profile import ROUTES

if TYPE_CHECKING:
    from mddframes.api import Api

DOCUMENT = Endpoint("openApiDocument", *ROUTES["openApiDocument"])
"""Where springdoc publishes the OpenAPI document, below the API prefix (row 3)."""

_PLACEHOLDER = re.compile(r"\{[^}/]*\}")
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
_SHOWN = 4  # how many mismatches the evidence names before it just counts
#: Each kind of mismatch with the document: what the evidence calls it and what to do,
#: in the order the finding says them.
_MISMATCHES = (
    ("renamed", "under other ids", "mddframes calls paths, not ids: nothing to do"),
    ("no batch", "no batch export", "export_batch falls back to single exports (row 25)"),
    ("moved", "elsewhere", "mddframes would call the wrong path for those: report it"),
    ("missing", "not in the document", "those operations would answer 404: report it"),
)


def fetch_document(api: Api) -> tuple[Finding, dict[str, Any] | None]:
    """The OpenAPI document, looked for under each prefix the client would try."""
    tried: list[str] = []
    for prefix in dict.fromkeys([api.settings.api_prefix, *api.http.discovery.prefixes()]):
        url = api.http.url_for(DOCUMENT, DOCUMENT.path, prefix)
        try:
            response = api.http.probe(DOCUMENT, url)
        except MddError as exc:
            tried.append(f"{url}: {exc}")
            continue
        try:
            status = response.status_code
            document = response.json() if status == 200 else None
        except ValueError:
            document = None
        finally:
            response.close()
        if isinstance(document, dict) and isinstance(document.get("paths"), dict):
            version = document.get("openapi", "?")
            return (
                Finding(
                    "OpenAPI document",
                    "3",
                    "ok",
                    f"OpenAPI {version} at {url}, {len(document['paths'])} paths",
                ),
                document,
            )
        tried.append(f"{url}: {status}" + ("" if status != 200 else " (not an OpenAPI document)"))
    return (
        Finding(
            "OpenAPI document",
            "3",
            "unknown",
            "no OpenAPI document found: " + "; ".join(tried),
            "mddframes never needs it at run time; the endpoints could not be compared",
        ),
        None,
    )


def _normalised(path: str, strip: list[str]) -> str:
    for prefix in strip:
        if prefix and (path == prefix or path.startswith(prefix + "/")):
            path = path[len(prefix) :]
            break
    return _PLACEHOLDER.sub("{}", path.rstrip("/") or "/")


def documented_operations(
    document: dict[str, Any], api_prefixes: list[str]
) -> list[tuple[object, str, str]]:
    """``(operation id, METHOD, path)`` of every operation, paths without the prefix.

    The operation id is the document's value as it is (a string, or ``None`` when the
    operation has none).

    Paths are taken relative to the document's ``servers`` (and to the API prefix when
    a path still carries it) with every placeholder written ``{}``: parameter names
    are the service's own business.
    """
    servers = [urlsplit(str(s.get("url", ""))).path.rstrip("/") for s in _servers(document)]
    strip = sorted({*servers, *(p.rstrip("/") for p in api_prefixes)}, key=len, reverse=True)
    found: list[tuple[object, str, str]] = []
    for path, item in document.get("paths", {}).items():
        if not isinstance(item, dict):
            continue
        for method in _METHODS:
            operation = item.get(method)
            if isinstance(operation, dict):
                found.append(
                    (operation.get("operationId"), method.upper(), _normalised(path, strip))
                )
    return found


def _servers(document: dict[str, Any]) -> list[dict[str, Any]]:
    servers = document.get("servers")
    return [s for s in servers if isinstance(s, dict)] if isinstance(servers, list) else []


def check_endpoints(api: Api, document: dict[str, Any] | None) -> Finding:
    """Compare the document's operation ids, methods and paths with the endpoints table."""
    if document is None:
        return Finding(
            "endpoints",
            "2, 3",
            "unknown",
            "no OpenAPI document to compare the endpoints table with",
            "run the read checks below; they call the synchronous operations themselves",
        )
    prefixes = [api.settings.api_prefix, *api.http.discovery.prefixes()]
    documented = documented_operations(document, prefixes)
    by_id = {op_id: (method, path) for op_id, method, path in documented if op_id}
    by_route = {(method, path): op_id for op_id, method, path in documented}
    results: list[str] = []
    notes: dict[str, list[str]] = {kind: [] for kind, _, _ in _MISMATCHES}
    for entry in ENDPOINTS.values():
        if entry.operation == "getToken":
            continue  # the identity provider's, not the service's (checked by the token)
        route = (entry.method, _normalised(entry.path, []))
        if by_id.get(entry.operation) == route:
            results.append("ok")
        elif route in by_route:
            results.append("differs")
            notes["renamed"].append(f"{entry.operation} is {by_route[route]!r}")
        elif entry.operation in by_id:
            results.append("breaks")
            method, path = by_id[entry.operation]
            notes["moved"].append(
                f"{entry.operation} is {method} {path}, not {route[0]} {route[1]}"
            )
        elif entry.asynchronous:
            results.append("differs")
            notes["no batch"].append(entry.operation)
        else:
            results.append("breaks")
            notes["missing"].append(f"{entry.operation} ({route[0]} {route[1]})")
    compared = len(results)
    extra = len(
        {(m, p) for _, m, p in documented}
        - {(e.method, _normalised(e.path, [])) for e in ENDPOINTS.values()}
    )
    evidence = [f"{compared} operations compared, {results.count('ok')} match by id, method "
                f"and path; the document has {extra} other operations"]  # fmt: skip
    actions = []
    for kind, called, action in _MISMATCHES:
        if notes[kind]:
            evidence.append(f"{called}: {_some(notes[kind])}")
            actions.append(action)
    return Finding("endpoints", "2, 3", worst(results), "; ".join(evidence), "; ".join(actions))


def _some(items: list[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")
