"""A tiny stand-in dataset, served only while ``sample.py`` is missing (private)."""

from __future__ import annotations

from mddframes.emulator.dataset import Dataset

_STAMP = "2024-01-15T09:30:00.000Z"


def _element(eid: str, name: str, etype: str, parent: str | None, system: str = "DWH", **extra):
    doc = {
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
    """A DWH system with a folder, two tables, a mapping, one object type and two packages."""
    elements = [
        _element("dwh-0001", "Sources", "FOLDER", None),
        _element(
            "dwh-0002",
            "crm_customer",
            "SOURCE_TABLE",
            "dwh-0001",
            tableId="tbl-0001",
            attributes={"schema": "src"},
        ),
        _element(
            "dwh-0003",
            "stg_customer",
            "STAGE_TABLE",
            "dwh-0001",
            tableId="tbl-0002",
            mappingId="map-0001",
            attributes={"schema": "stg"},
        ),
    ]
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
    tables = [
        {
            "id": "tbl-0001",
            "name": "crm_customer",
            "structureId": "dwh-0002",
            "metadata": {"description": "customers", "columns": columns},
            "data": [{"id": 9007199254740993, "name": "Zoë"}, {"id": 2, "name": None}, {"id": 3}],
        },
        {
            "id": "tbl-0002",
            "name": "stg_customer",
            "structureId": "dwh-0003",
            "metadata": {"description": "staged customers", "columns": columns},
            "data": [],
        },
    ]
    mappings = [
        {
            "id": "map-0001",
            "name": "crm_customer to stg_customer",
            "sourceId": "dwh-0002",
            "targetId": "dwh-0003",
            "description": "",
            "columnMappings": [{"source": "id", "target": "id", "transformation": None}],
        },
    ]
    object_types = [
        {
            "id": "ddl",
            "name": "DDL",
            "description": "CREATE TABLE",
            "fileExtension": "sql",
            "elementTypes": ["SOURCE_TABLE", "STAGE_TABLE"],
            "template": "CREATE TABLE {{ element.name }} (\n"
            "{% for c in table.metadata.columns %}  {{ c.name }} {{ c.dataType }}"
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
        systems=[{"name": "DWH", "description": "tiny stand-in"}],
        elements=elements,
        tables=tables,
        mappings=mappings,
        object_types=object_types,
        packages=packages,
    )
