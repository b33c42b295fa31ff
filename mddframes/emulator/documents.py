"""The emulator's documents in their wire shape: serialising, parsing, validating.

Plain functions over JSON values, shared by the store (:mod:`.store`), the routes and
the admin calls; nothing here holds state or knows SQL or HTTP. A validator raises
:class:`~mddframes.emulator.errors.InvalidInput` naming what is wrong and where, before
anything is stored.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from typing import Any

from mddframes.emulator.errors import InvalidInput, PreconditionFailed
from mddframes.emulator.limits import parse_json

JSON = dict[str, Any]


# The fields of an element that its tree entry carries (docs/wire-format.md).
TREE_FIELDS = ("id", "name", "type", "parentId", "systemName", "version", "deployed")
OWNED_FIELDS = ("tableId", "mappingId")


def dumps(value: Any) -> str:
    """Serialise JSON compactly, keeping non-ASCII text and refusing NaN/Infinity."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def content_version(text: str) -> str:
    """The version of a stored document: the SHA-256 (hex) of its JSON text.

    A strong validator of the content: it changes whenever a byte of the stored
    document changes, and only then (writing the same document again keeps it, as a
    content-hashing ETag such as Spring's ``ShallowEtagHeaderFilter`` does).
    """
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_version(current: str, expected: frozenset[str] | None, what: str) -> None:
    """Refuse (412) a write when ``expected`` holds no version of the ``current`` text.

    ``expected`` is ``None`` when the write has no precondition (no ``If-Match``, or
    ``If-Match: *``, which any existing object meets).
    """
    if expected is not None and content_version(current) not in expected:
        raise PreconditionFailed(
            f"{what} is no longer the version named in If-Match (it changed since it was "
            "read); nothing was written"
        )


def parse_json_body(body: bytes, what: str) -> Any:
    """Parse a request body as strict JSON within the emulator's limits (:mod:`.limits`).

    ``json.loads`` keeps integers of any size exactly, which is why bodies are parsed
    here rather than by the web framework.
    """
    return parse_json(body, what)


def utc_now() -> str:
    """The current time as ISO-8601 UTC with milliseconds, e.g. ``2024-05-01T12:00:00.000Z``."""
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def tree_entry(element: JSON) -> JSON:
    """The tree entry of an element: the tree fields plus ``tableId``/``mappingId`` if owned."""
    entry = {key: element.get(key) for key in TREE_FIELDS}
    for key in OWNED_FIELDS:
        if element.get(key) is not None:
            entry[key] = element[key]
    return entry


def describe_kind(value: Any) -> str:
    """How an error message names the JSON kind of ``value`` (``"a list"``, ``"null"``...)."""
    return {
        dict: "an object",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def require_list_of_objects(value: Any, where: str) -> None:
    if not isinstance(value, list):
        raise InvalidInput(f"{where} must be a list of objects, got {describe_kind(value)}")
    for position, item in enumerate(value):
        if not isinstance(item, dict):
            raise InvalidInput(f"{where}[{position}] must be an object, got {describe_kind(item)}")


def validate_table_payload(payload: Any, table_id: str) -> None:
    """Check the envelope of a ``tableUpdate`` body: an object with ``metadata`` and ``data``."""
    where = f"table {table_id!r}"
    if not isinstance(payload, dict):
        raise InvalidInput(f"{where}: the body must be a JSON object, got {describe_kind(payload)}")
    missing = [key for key in ("metadata", "data") if key not in payload]
    if missing:
        raise InvalidInput(
            f"{where}: the body lacks {', '.join(missing)} (a write replaces the whole table)"
        )
    metadata = payload["metadata"]
    if not isinstance(metadata, dict):
        raise InvalidInput(f"{where}: metadata must be an object, got {describe_kind(metadata)}")
    if "columns" in metadata:
        require_list_of_objects(metadata["columns"], f"{where}: metadata.columns")
    require_list_of_objects(payload["data"], f"{where}: data")


def validate_mapping_payload(payload: Any, mapping_id: str) -> None:
    """Check the envelope of a ``mappingUpdate`` body: an object with ``columnMappings``."""
    where = f"mapping {mapping_id!r}"
    if not isinstance(payload, dict):
        raise InvalidInput(f"{where}: the body must be a JSON object, got {describe_kind(payload)}")
    if "columnMappings" not in payload:
        raise InvalidInput(
            f"{where}: the body lacks columnMappings (a write replaces the whole mapping)"
        )
    require_list_of_objects(payload["columnMappings"], f"{where}: columnMappings")


def child_name_and_attributes(element_type: str, body: Any) -> tuple[str, JSON]:
    """The name and attributes of a ``createChildStructure`` body ``{"name", ...}``.

    Every body key but ``name`` becomes an attribute; a body key ``attributes``
    holding an object is merged into the attributes rather than nested.
    """
    if not element_type.strip():
        raise InvalidInput("the element type in the URL is empty")
    if not isinstance(body, dict):
        raise InvalidInput(f"the body must be a JSON object with a name, got {describe_kind(body)}")
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidInput("the body must carry a non-empty string 'name'")
    attributes: JSON = {}
    if isinstance(body.get("attributes"), dict):
        attributes.update(body["attributes"])
    attributes.update({k: v for k, v in body.items() if k not in ("name", "attributes")})
    return name, attributes


def validate_package_ids(body: Any) -> None:
    """Check an ``addToDeploymentPackage`` body: a non-empty JSON list of id strings."""
    if not isinstance(body, list) or not body:
        raise InvalidInput(
            f"the body must be a non-empty JSON list of element ids, got {describe_kind(body)}"
        )
    for position, value in enumerate(body):
        if not isinstance(value, str):
            raise InvalidInput(
                f"element id at position {position} must be a string, got {describe_kind(value)}"
            )


def deployment_info_ids(info: Any) -> tuple[str, list[str]]:
    """The deployment id and the element ids of a deployment info document."""
    if not isinstance(info, dict):
        raise InvalidInput(f"the deployment info must be a JSON object, got {describe_kind(info)}")
    deployment_id = info.get("deploymentId")
    if not isinstance(deployment_id, str) or not deployment_id.strip():
        raise InvalidInput("the deployment info lacks a non-empty string 'deploymentId'")
    structures = info.get("structures")
    if not isinstance(structures, list) or not structures:
        raise InvalidInput("the deployment info lacks a non-empty list 'structures'")
    ids: list[str] = []
    for position, item in enumerate(structures):
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            raise InvalidInput(
                f"structures[{position}] must be an object with a string 'id', got {dumps(item)[:80]}"
            )
        if "version" in item and not (
            isinstance(item["version"], int) and not isinstance(item["version"], bool)
        ):
            raise InvalidInput(f"structures[{position}].version must be an integer")
        ids.append(item["id"])
    return deployment_id, ids
