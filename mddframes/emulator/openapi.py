"""The emulator's published contract: per-route declarations, the OpenAPI document, Swagger UI.

Each route of ``app.py`` is declared with :meth:`Contract.operation`, next to its
decorator: the request model it validates its body with, the model of its answer, and
every status it can send. :meth:`Contract.document` builds the OpenAPI 3.1 document
from those declarations and the models of :mod:`.schemas` (the routes validate bodies
with the same models), adds the Spring error body to every error status, the bearer
security scheme, ``servers`` with the API prefix and one example per operation taken
from the sample data (:mod:`.examples`). FastAPI's own generator is not used: it would
declare a 422 that the emulator never sends.

The Swagger UI page is the real Swagger UI 5 (OpenAPI 3.1 support) from the assets the
``fastapi-offline`` package bundles, served by the emulator itself, so it works offline.
"""

from __future__ import annotations

import importlib.resources
import re
from dataclasses import dataclass, field
from typing import Any

from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, TypeAdapter

from mddframes.emulator import schemas
from mddframes.wire.profile import OPENAPI_PATH

REF = "#/components/schemas/{model}"
JSON_MEDIA = "application/json"

#: Why each error status is sent, as the document says it.
_WHY = {
    400: "The request is malformed: a body that is not valid JSON, breaks a limit "
    "(docs/wire-format.md) or does not fit the schema, or a path segment that is "
    "not percent-encoded UTF-8; `message` names what and where.",
    401: "No bearer token, or an unknown, expired or revoked one: empty body, "
    '`WWW-Authenticate: Bearer` (with `error="invalid_token"` for a bad token).',
    404: "Something named in the path or the body does not exist.",
    409: "The object's state forbids the request.",
    413: "The request body is larger than 256 MiB.",
    415: "The body's Content-Type is not the one the operation takes.",
    429: "Too many requests (sent only when faults are injected into the emulator); "
    "`Retry-After` says when to retry.",
    "5XX": "Server error (sent only when faults are injected into the emulator).",
}
_REASONS = {
    400: "Bad Request",
    404: "Not Found",
    409: "Conflict",
    413: "Payload Too Large",
    415: "Unsupported Media Type",
    429: "Too Many Requests",
    "5XX": "Service Unavailable",
}
#: Statuses any operation can send when faults are injected.
FAULT_STATUSES: tuple[int | str, ...] = (429, "5XX")


@dataclass(frozen=True)
class Operation:
    """What one operation takes and answers.

    Attributes
    ----------
    operation_id, tag, summary : str
        As the service's document names them.
    ok : int
        The success status.
    answer : type or None
        The model of the JSON answer; ``None`` when ``answer_media`` is not JSON.
    answer_media : str
        The media type of the success answer.
    errors : tuple
        Every error status the route itself can send (401 and faults are added).
    body : type or None
        The model the route validates the request body with.
    body_media : str
        The media type of the request body.
    body_part : (str, type) or None
        A multipart field holding a JSON document, and the model the route checks it with.
    authenticated : bool
        Whether a bearer token is required (every operation but ``getToken``).
    """

    operation_id: str
    tag: str
    summary: str
    ok: int = 200
    answer: Any = None
    answer_media: str = JSON_MEDIA
    errors: tuple[int, ...] = ()
    body: Any = None
    body_media: str = JSON_MEDIA
    body_description: str = ""
    body_part: tuple[str, Any] | None = None
    description: str = ""
    authenticated: bool = True


@dataclass
class Contract:
    """The declarations of every operation of one app, and the document built from them."""

    title: str
    prefix: str
    operations: dict[str, Operation] = field(default_factory=dict)
    _document: dict[str, Any] | None = None

    def operation(
        self, operation_id: str, tag: str, summary: str, **details: Any
    ) -> dict[str, Any]:
        """Declare one operation; returns the keyword arguments of its route decorator."""
        declared = Operation(operation_id, tag, summary, **details)
        self.operations[operation_id] = declared
        return {
            "operation_id": operation_id,
            "tags": [tag],
            "summary": summary,
            "status_code": declared.ok,
        }

    # ------------------------------------------------------------------ document

    def document(self, routes: list[Any]) -> dict[str, Any]:
        """The OpenAPI 3.1 document of the declared operations (built once)."""
        if self._document is None:
            self._document = _Builder(self).build(routes)
        return self._document


class _Builder:
    def __init__(self, contract: Contract) -> None:
        self.contract = contract
        self.components: dict[str, Any] = {}
        from mddframes.emulator.examples import sample_examples

        self.examples = sample_examples(contract.prefix)

    def schema(self, model: Any) -> dict[str, Any]:
        """The JSON Schema of ``model``; named models go to components and are referenced."""
        generated = TypeAdapter(model).json_schema(ref_template=REF, mode="validation")
        self.components.update(generated.pop("$defs", {}))
        if isinstance(model, type) and issubclass(model, BaseModel):
            self.components[model.__name__] = generated
            return {"$ref": REF.format(model=model.__name__)}
        return generated

    def build(self, routes: list[Any]) -> dict[str, Any]:
        prefix = self.contract.prefix
        paths: dict[str, dict[str, Any]] = {}
        for route in routes:
            operation_id = getattr(route, "operation_id", None)
            declared = self.contract.operations.get(operation_id or "")
            if declared is None:
                continue
            path = route.path
            relative = path[len(prefix) :] if prefix and path.startswith(prefix + "/") else path
            for method in sorted(route.methods or ()):
                if method == "HEAD":
                    continue
                item = self.operation(declared, path)
                if relative == path and prefix:  # outside the prefix: the token endpoint
                    item["servers"] = [{"url": "/", "description": "the identity provider"}]
                paths.setdefault(relative, {})[method.lower()] = item
        return {
            "openapi": "3.1.0",
            "info": {
                "title": self.contract.title,
                "version": "emulator",
                "description": "The integration API as the mddframes emulator serves it; "
                "shapes and statuses follow docs/wire-format.md. Examples use the ids "
                "of the sample data.",
            },
            "servers": [{"url": prefix or "/", "description": "the API prefix"}],
            "paths": paths,
            "components": {
                "schemas": dict(sorted(self.components.items())),
                "securitySchemes": {
                    "bearerAuth": {
                        "type": "http",
                        "scheme": "bearer",
                        "description": "An opaque access token from getToken "
                        "(client_credentials grant)",
                    }
                },
            },
            "tags": [
                {"name": tag} for tag in sorted({o.tag for o in self.contract.operations.values()})
            ],
        }

    def operation(self, declared: Operation, path: str) -> dict[str, Any]:
        example = self.examples.get(declared.operation_id, {})
        names = re.findall(r"{(\w+)}", path)
        item: dict[str, Any] = {
            "tags": [declared.tag],
            "summary": declared.summary,
            "operationId": declared.operation_id,
            "parameters": [
                {
                    "name": name,
                    "in": "path",
                    "required": True,
                    "description": "One path segment, percent-encoded (`/` as `%2F`)",
                    "schema": {"type": "string"},
                    **(
                        {"example": example["path"][name]}
                        if name in example.get("path", {})
                        else {}
                    ),
                }
                for name in names
            ],
            "responses": self.responses(declared, example),
        }
        if declared.description:
            item["description"] = declared.description
        if declared.body is not None:
            item["requestBody"] = self.request_body(declared, example)
        item["security"] = [{"bearerAuth": []}] if declared.authenticated else []
        return item

    def request_body(self, declared: Operation, example: dict[str, Any]) -> dict[str, Any]:
        content: dict[str, Any] = {"schema": self.schema(declared.body)}
        if "body" in example:
            content["examples"] = {
                "sample": {"summary": "from the sample data", "value": example["body"]}
            }
        if declared.body_part is not None:
            name, model = declared.body_part
            content["encoding"] = {name: {"contentType": JSON_MEDIA}}
            body_name = declared.body.__name__
            part = self.components[body_name]["properties"][name]
            part["contentSchema"] = self.schema(model)
        return {
            "required": True,
            "description": declared.body_description,
            "content": {declared.body_media: content},
        }

    def responses(self, declared: Operation, example: dict[str, Any]) -> dict[str, Any]:
        answers: dict[str, Any] = {}
        ok: dict[str, Any] = {"description": "Success"}
        if declared.answer is not None:
            content: dict[str, Any] = {"schema": self.schema(declared.answer)}
        elif declared.answer_media == "application/zip":
            content = {"schema": {"type": "string", "format": "binary"}}
        else:
            content = {"schema": {"type": "string"}}
        if "answer" in example:
            content["examples"] = {
                "sample": {"summary": "from the sample data", "value": example["answer"]}
            }
        ok["content"] = {declared.answer_media: content}
        if declared.answer_media != JSON_MEDIA:
            ok["headers"] = {
                "Content-Disposition": {
                    "description": "attachment; filename=\"<ascii>\"; filename*=UTF-8''<utf-8>",
                    "schema": {"type": "string"},
                }
            }
        answers[str(declared.ok)] = ok
        statuses: list[int | str] = sorted(
            set(declared.errors) | ({401} if declared.authenticated else set())
        )
        for status in [*statuses, *FAULT_STATUSES]:
            answers[str(status)] = self.error(declared, status, example)
        return answers

    def error(
        self, declared: Operation, status: int | str, example: dict[str, Any]
    ) -> dict[str, Any]:
        if status == 401 and declared.authenticated:
            return {
                "description": _WHY[401],
                "headers": {"WWW-Authenticate": {"schema": {"type": "string"}}},
            }
        if not declared.authenticated and status in (400, 401, 415):
            return {
                "description": "OAuth 2 error (Keycloak): see docs/wire-format.md row 6",
                "content": {JSON_MEDIA: {"schema": self.schema(schemas.OAuthError)}},
            }
        if not declared.authenticated and status == 404:
            return {
                "description": "The realm does not exist (or its name is not UTF-8)",
                "content": {JSON_MEDIA: {"schema": self.schema(schemas.RealmError)}},
            }
        answer: dict[str, Any] = {
            "description": _WHY[status],
            "content": {
                JSON_MEDIA: {
                    "schema": self.schema(schemas.SpringError),
                    "example": {
                        "timestamp": "2024-07-01T07:00:00.000+00:00",
                        "status": 503 if status == "5XX" else status,
                        "error": _REASONS.get(status, "Error"),
                        "message": "what is wrong and where",
                        "path": example.get("url", ""),
                    },
                }
            },
        }
        if status == 429:
            answer["headers"] = {"Retry-After": {"schema": {"type": "integer"}}}
        return answer


# ---------------------------------------------------------------------- Swagger UI

#: The Swagger UI 5 assets bundled by ``fastapi-offline`` (swagger-ui-bundle.js, .css).
SWAGGER_ASSETS = importlib.resources.files("fastapi_offline") / "static"


def swagger_page(prefix: str, title: str) -> HTMLResponse:
    """The Swagger UI page: assets from ``<prefix>/swagger-ui/``, deep links per operation.

    ``deepLinking`` gives every operation the anchor ``#/<tag>/<operationId>``, as the
    service's page has.
    """
    base = f"{prefix}/swagger-ui"
    return get_swagger_ui_html(
        openapi_url=prefix + OPENAPI_PATH,
        title=f"{title} - Swagger UI",
        swagger_js_url=f"{base}/swagger-ui-bundle.js",
        swagger_css_url=f"{base}/swagger-ui.css",
        swagger_favicon_url=f"{base}/favicon.png",
        swagger_ui_parameters={
            "deepLinking": True,
            "displayOperationId": True,
            "docExpansion": "list",
            "tryItOutEnabled": False,
        },
    )
