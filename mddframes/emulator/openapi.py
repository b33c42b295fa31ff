"""OpenAPI pieces the routes declare, and an offline Swagger UI stand-in page.

FastAPI builds the OpenAPI document from the routes (served at ``<prefix>/v3/api-docs``);
the routes read their bodies raw, so their request bodies are declared here. The real
Swagger UI loads its assets from the internet, so ``<prefix>/swagger-ui/index.html`` is a
plain page instead: it links the document and lists every operation with an anchor
named after its operation id (as the service description's anchors are).
"""

from __future__ import annotations

import html
from typing import Any


def json_body(description: str) -> dict[str, Any]:
    """An ``openapi_extra`` declaring a required JSON request body."""
    return {
        "requestBody": {
            "required": True,
            "description": description,
            "content": {"application/json": {"schema": {}}},
        }
    }


def multipart_body() -> dict[str, Any]:
    """An ``openapi_extra`` declaring the deployment info upload (multipart field ``file``)."""
    return {
        "requestBody": {
            "required": True,
            "description": "The deployment info file written by the 'push to git' action",
            "content": {
                "multipart/form-data": {
                    "schema": {
                        "type": "object",
                        "properties": {"file": {"type": "string", "format": "binary"}},
                        "required": ["file"],
                    }
                }
            },
        }
    }


def operations(spec: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """``(tag, operation id, method, path)`` of every operation in an OpenAPI document."""
    found = []
    for path, item in spec.get("paths", {}).items():
        for method, operation in item.items():
            if isinstance(operation, dict) and "operationId" in operation:
                tag = (operation.get("tags") or ["default"])[0]
                found.append((tag, operation["operationId"], method.upper(), path))
    return sorted(found)


def swagger_page(spec: dict[str, Any], spec_url: str) -> str:
    """A self-contained HTML page listing the operations of ``spec``."""
    rows = "\n".join(
        f'<tr id="/{html.escape(tag)}/{html.escape(op)}"><td><a href="#/{html.escape(tag)}/{html.escape(op)}">'
        f"{html.escape(op)}</a></td><td>{method}</td><td><code>{html.escape(path)}</code></td></tr>"
        for tag, op, method, path in operations(spec)
    )
    title = html.escape(spec.get("info", {}).get("title", "API"))
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>
<body>
<h1>{title}</h1>
<p>OpenAPI document: <a href="{html.escape(spec_url)}">{html.escape(spec_url)}</a></p>
<table>
<tr><th>Operation</th><th>Method</th><th>Path</th></tr>
{rows}
</table>
</body></html>
"""
