"""A tiny dataset with known contents for the machinery's own tests (private)."""

from __future__ import annotations

from typing import Any

from mddframes.emulator.dataset import Dataset

_STAMP = "2024-01-15T09:30:00.000Z"


def _element(
    eid: str, name: str, etype: str, parent: str | None, system: str = "DWH", **extra: Any
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "id": eid,
        "name": name,
        "type": etype,
        "parentId": parent,
        "systemName": system,
        "version": 1,
        "modifiedAt": _STAMP,
        "deployed": False,
        "deploymentId": None,
        "attributes": extra.pop("attributes", {}),
    }
    doc.update(extra)
    return doc


def tiny_dataset() -> Dataset:
    """DWH: a folder of six tables (one mapped), an object type, an open and a closed package.
    LAB: awkward ids (``/``, ``..``, ``%``, space, non-ASCII) next to the ids of their pieces."""
    columns = [
        {
            "name": "id",
            "dataType": "BIGINT",
            "nullable": False,
            "primaryKey": True,
            "description": "key",
        },
        {
            "name": "name",
            "dataType": "STRING",
            "nullable": True,
            "primaryKey": False,
            "description": "",
        },
    ]
    elements = [_element("dwh-0001", "Sources", "FOLDER", None)]
    tables = []
    for number in range(2, 8):
        eid, tid = f"dwh-{number:04d}", f"tbl-{number - 1:04d}"
        etype = "SOURCE_TABLE" if number % 2 == 0 else "STAGE_TABLE"
        elements.append(
            _element(
                eid, f"table_{number}", etype, "dwh-0001", tableId=tid, attributes={"schema": "src"}
            )
        )
        tables.append(
            {
                "id": tid,
                "name": f"table_{number}",
                "structureId": eid,
                "metadata": {"description": f"table {number}", "columns": columns},
                "data": [{"id": number, "name": f"row of {number}"}],
            }
        )
    tables[0]["data"] = [
        {"id": 9007199254740993, "name": "Zoë"},
        {"id": 2, "name": None},
        {"id": 3},
    ]
    elements[2]["mappingId"] = "map-0001"
    mappings = [
        {
            "id": "map-0001",
            "name": "table_2 to table_3",
            "sourceId": "dwh-0002",
            "targetId": "dwh-0003",
            "description": "",
            "columnMappings": [{"source": "id", "target": "id", "transformation": None}],
        },
    ]
    awkward = ["tbl/with/slash", "tbl", "slash", "..", "100%", "name with space", "Zürich-Ω"]
    elements.append(_element("lab-root", "Lab", "FOLDER", None, system="LAB"))
    for position, name in enumerate(awkward):
        elements.append(
            _element(name, name, "SOURCE_TABLE", "lab-root", system="LAB", tableId=name)
        )
        tables.append(
            {
                "id": name,
                "name": name,
                "structureId": name,
                "metadata": {"columns": columns},
                "data": [{"id": position, "name": name}],
            }
        )
    object_types = [
        {
            "id": "ddl",
            "name": "DDL",
            "description": "CREATE TABLE",
            "fileExtension": "sql",
            "elementTypes": ["SOURCE_TABLE", "STAGE_TABLE"],
            "template": "CREATE TABLE {{ element.name }} (\n"
            "{% for c in table.columns %}  {{ c.name }} {{ c.dataType }}"
            "{{ ',' if not loop.last }}\n{% endfor %});\n",
        },
    ]
    packages = [
        {
            "systemName": "DWH",
            "name": "release-1",
            "description": "open",
            "status": "OPEN",
            "createdAt": _STAMP,
            "structureIds": ["dwh-0002"],
        },
        {
            "systemName": "DWH",
            "name": "release-0",
            "description": "closed",
            "status": "CLOSED",
            "createdAt": _STAMP,
            "structureIds": [],
        },
    ]
    return Dataset(
        systems=[
            {"name": "DWH", "description": "tiny stand-in"},
            {"name": "LAB", "description": "awkward ids"},
        ],
        elements=elements,
        tables=tables,
        mappings=mappings,
        object_types=object_types,
        packages=packages,
    )
