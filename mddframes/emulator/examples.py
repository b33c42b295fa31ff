"""One example per operation for the OpenAPI document, computed from the sample data.

Each example is ``{"path": {param: value}, "body": ..., "answer": ..., "url": ...}`` with
real ids of the sample (``sample.build_sample``), so a request built from an example
works against an emulator serving the sample (tests/emulator/test_emulator_contract.py sends
them all). Answers are computed by the same store and renderer the routes use, from a
private in-memory store, and shortened (two rows of a table, three tree entries).
"""

from __future__ import annotations

import functools
import hashlib
import json
from typing import Any
from urllib.parse import quote

from mddframes.emulator import generation
from mddframes.emulator.documents import dumps
from mddframes.emulator.store import Store
from mddframes.wire.profile import ROUTES

#: The ids the examples use (all in the sample data).
SYSTEM = "DWH"
TABLE_ELEMENT = "dwh-0005"  # a SOURCE_TABLE owning tbl-0001
TABLE = "tbl-0001"
MAPPING = "map-0001"
OPEN_PACKAGE = "release-2024.07"
OBJECT_TYPE = "sql-ddl"
DEPLOYMENT = "deploy-0001"
FIRST_TASK = "task-000001"


def _short_table(table: dict[str, Any]) -> dict[str, Any]:
    return {**table, "data": table["data"][:2]}


def _short_mapping(mapping: dict[str, Any]) -> dict[str, Any]:
    return {**mapping, "columnMappings": mapping["columnMappings"][:3]}


@functools.cache
def _computed() -> dict[str, Any]:
    from mddframes.emulator.sample import build_sample

    store = Store(None)
    try:
        store.load(build_sample())
        element = store.element(TABLE_ELEMENT)
        table = _short_table(json.loads(store.table_json(TABLE)))
        mapping = _short_mapping(json.loads(store.mapping_json(MAPPING)))
        package = next(
            p for p in json.loads(store.open_packages_json(SYSTEM)) if p["name"] == OPEN_PACKAGE
        )
        extra = next(
            e["id"]
            for e in json.loads(store.tree_json(SYSTEM))
            if e["id"] not in package["structureIds"]
        )
        file_name, script = generation.render(store, TABLE_ELEMENT, OBJECT_TYPE)
        raw = generation.raw_data(store, TABLE_ELEMENT)
        if raw.get("table"):
            raw["table"]["columns"] = raw["table"]["columns"][:2]
        structures = [{"id": TABLE_ELEMENT, "version": element["version"]}]
        return {
            "tree": json.loads(store.tree_json(SYSTEM))[:3],
            "element": element,
            "raw": raw,
            "object_types": json.loads(store.object_types_json()),
            "table": table,
            "mapping": mapping,
            "packages": json.loads(store.open_packages_json(SYSTEM)),
            "package": package,
            "package_add": [extra],
            "script": (file_name, script),
            "info": {
                "deploymentId": DEPLOYMENT,
                "systemName": SYSTEM,
                "commit": hashlib.sha1(dumps([DEPLOYMENT, structures]).encode()).hexdigest(),
                "structures": structures,
            },
        }
    finally:
        store.close()


def sample_examples(prefix: str) -> dict[str, dict[str, Any]]:
    """The example of every operation id, for an API under ``prefix``."""
    c = _computed()
    deployed = {**c["element"], "deployed": True, "deploymentId": DEPLOYMENT}
    examples: dict[str, dict[str, Any]] = {
        "getToken": {
            "path": {"realm": "acme"},
            "body": {
                "grant_type": "client_credentials",
                "client_id": "mddframes-demo",
                "client_secret": "<the secret shown when the emulator starts>",
            },
            "answer": {
                "access_token": "q0x1mK8v3s5b2Yc9nQh7TzJ4wR6dA1eF0gL8pU2iO5k",
                "expires_in": 300,
                "refresh_expires_in": 0,
                "token_type": "Bearer",
                "not-before-policy": 0,
                "scope": "email profile",
            },
        },
        "getTree": {
            "path": {"name": SYSTEM},
            "answer": c["tree"],
        },
        "getStructure": {
            "path": {"id": TABLE_ELEMENT},
            "answer": c["element"],
        },
        "getRawData": {
            "path": {"structureId": TABLE_ELEMENT},
            "answer": c["raw"],
        },
        "getObjectTypes": {"answer": c["object_types"]},
        "getTable": {
            "path": {"tableId": TABLE},
            "answer": c["table"],
        },
        "tableUpdate": {
            "path": {"tableId": TABLE},
            "body": c["table"],
            "answer": c["table"],
        },
        "getMapping": {
            "path": {"mappingId": MAPPING},
            "answer": c["mapping"],
        },
        "mappingUpdate": {
            "path": {"mappingId": MAPPING},
            "body": c["mapping"],
            "answer": c["mapping"],
        },
        "listDeploymentPackages": {
            "path": {"systemName": SYSTEM},
            "answer": c["packages"],
        },
        "addToDeploymentPackage": {
            "path": {"systemName": SYSTEM, "dpName": OPEN_PACKAGE},
            "body": c["package_add"],
            "answer": {
                **c["package"],
                "structureIds": c["package"]["structureIds"] + c["package_add"],
            },
        },
        "createChildStructure": {
            "path": {"parentId": "dwh-0001", "type": "FOLDER"},
            "body": {"name": "Archive", "description": "Retired sources"},
            "answer": {
                "id": "dwh-new-folder-00001",
                "name": "Archive",
                "type": "FOLDER",
                "parentId": "dwh-0001",
                "systemName": SYSTEM,
                "version": 1,
                "modifiedAt": "2024-07-01T07:00:00.000Z",
                "deployed": False,
                "deploymentId": None,
                "attributes": {"description": "Retired sources"},
            },
        },
        "externalExportStructure": {
            "path": {"id": TABLE_ELEMENT, "objectTypeId": OBJECT_TYPE},
            "answer": c["script"][1],
        },
        "structureMassExportAsync": {
            "body": {"structureIds": [TABLE_ELEMENT, "dwh-0006"], "objectTypeId": OBJECT_TYPE},
            "answer": {"taskId": FIRST_TASK},
        },
        "structureMassExportAsyncStatus": {
            "path": {"taskId": FIRST_TASK},
            "answer": {
                "taskId": FIRST_TASK,
                "status": "FINISHED",
                "total": 2,
                "done": 2,
                "message": "exported 2 element(s)",
            },
        },
        "structureMassExportAsyncResult": {
            "path": {"taskId": FIRST_TASK},
        },
        "deployStructure": {
            "path": {"id": TABLE_ELEMENT, "deploymentId": DEPLOYMENT},
            "answer": deployed,
        },
        "confirmStructureDeployment": {
            "body": {"file": json.dumps(c["info"])},
            "answer": [deployed],
        },
    }
    for operation, example in examples.items():  # the URL from the wire profile's path
        path = ROUTES[operation][1].format(
            **{name: quote(str(value), safe="") for name, value in example.get("path", {}).items()}
        )
        example["url"] = path if operation == "getToken" else prefix + path
    return examples
