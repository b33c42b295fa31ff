"""The raw data of an element: the nested JSON object a script template receives.

``getRawData`` serves it and ``rendering.render_script`` renders it. The shape::

    {
      "element":  the element as getStructure serves it ("attributes" always a dict),
      "schema":   the element's attributes.schema, else its table's metadata.schema,
                  else the system name in lower case (templates qualify names with it),
      "path":     names from the root down to and including the element,
      "children": [{"id", "name", "type"}, ...] in display order,
      "table":    {"id", "name", "metadata": {...without columns}, "columns": [...]}
                  or null; never the rows,
      "mappings": [{"id", "name", "description", "sourceId", "sourceName",
                    "sourceType", "sourceSchema", "targetId", "columnMappings": [...]}]
                  the mappings whose targetId is the element,
    }

The function is pure: the caller (the store) looks the records up. It tolerates
records that a PUT made odd (a table without columns, a mapping without
columnMappings, entries that are not objects) by leaving the odd parts out rather
than failing, so an export of such an element still renders.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

JSON = dict[str, Any]


def build_raw_data(
    element: Mapping[str, Any],
    *,
    path: Sequence[str],
    children: Sequence[Mapping[str, Any]],
    table: Mapping[str, Any] | None,
    mappings: Sequence[Mapping[str, Any]],
) -> JSON:
    """Build the raw data sent to a template for one element.

    Parameters
    ----------
    element : mapping
        The element record (``getStructure`` shape).
    path : sequence of str
        Names from the root down to and including the element.
    children : sequence of mapping
        The element's direct children; only ``id``, ``name`` and ``type`` are kept.
    table : mapping or None
        The element's table (``getTable`` payload, rows included or not), or None.
    mappings : sequence of mapping
        The mappings whose ``targetId`` is the element, each a ``getMapping``
        payload, optionally with ``sourceName``, ``sourceType`` and ``sourceSchema``
        (the source element's name, type and ``attributes.schema``) added by the caller.

    Returns
    -------
    dict
        Plain JSON, new objects throughout except leaf values and the element's
        attribute values (shared, not copied: treat the result as read-only).
    """
    attributes = element.get("attributes")
    element_out = dict(element)
    element_out["attributes"] = dict(attributes) if isinstance(attributes, Mapping) else {}
    table_out = _table(table)
    return {
        "element": element_out,
        "schema": _schema(element_out, table_out),
        "path": [str(name) for name in path],
        "children": [
            {"id": c.get("id"), "name": c.get("name"), "type": c.get("type")} for c in children
        ],
        "table": table_out,
        "mappings": [_mapping(m) for m in mappings if isinstance(m, Mapping)],
    }


def _table(table: Mapping[str, Any] | None) -> JSON | None:
    if table is None:
        return None
    metadata = table.get("metadata")
    metadata = metadata if isinstance(metadata, Mapping) else {}
    columns = metadata.get("columns")
    columns = columns if isinstance(columns, list) else []
    return {
        "id": table.get("id"),
        "name": table.get("name"),
        "metadata": {k: v for k, v in metadata.items() if k != "columns"},
        "columns": [
            dict(c) for c in columns if isinstance(c, Mapping) and isinstance(c.get("name"), str)
        ],
    }


def _mapping(mapping: Mapping[str, Any]) -> JSON:
    entries = mapping.get("columnMappings")
    entries = entries if isinstance(entries, list) else []
    return {
        "id": mapping.get("id"),
        "name": mapping.get("name"),
        "description": mapping.get("description"),
        "sourceId": mapping.get("sourceId"),
        "sourceName": mapping.get("sourceName"),
        "sourceType": mapping.get("sourceType"),
        "sourceSchema": mapping.get("sourceSchema"),
        "targetId": mapping.get("targetId"),
        "columnMappings": [dict(e) for e in entries if isinstance(e, Mapping)],
    }


def _schema(element: Mapping[str, Any], table: Mapping[str, Any] | None) -> str:
    schema = element["attributes"].get("schema")
    if not (isinstance(schema, str) and schema) and table is not None:
        schema = table["metadata"].get("schema")
    if isinstance(schema, str) and schema:
        return schema
    return str(element.get("systemName") or "public").lower()


def element_path(element: Mapping[str, Any], by_id: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Names from the root down to and including ``element`` (stops at a missing parent).

    Parameters
    ----------
    element : mapping
        The element.
    by_id : mapping
        Every element of the system by id.
    """
    names = [element["name"]]
    seen = {element["id"]}
    parent_id = element.get("parentId")
    while parent_id is not None and parent_id not in seen and parent_id in by_id:
        seen.add(parent_id)
        parent = by_id[parent_id]
        names.append(parent["name"])
        parent_id = parent.get("parentId")
    return names[::-1]


def raw_data_from_dataset(dataset: Any, element_id: str) -> JSON:
    """The raw data of one element of a :class:`~mddframes.emulator.dataset.Dataset`.

    Looks the records up as the store does and calls :func:`build_raw_data`; for
    tests and tools that work on a dataset without a server. Builds its indexes on
    every call, so use it for a few elements, not for thousands.

    Raises
    ------
    KeyError
        No element has the id ``element_id``.
    """
    by_id = {e["id"]: e for e in dataset.elements}
    if element_id not in by_id:
        raise KeyError(f"no element with id {element_id!r} in the dataset")
    element = by_id[element_id]
    tables = {t["id"]: t for t in dataset.tables}
    mappings = []
    for m in dataset.mappings:
        if m["targetId"] != element_id:
            continue
        source = by_id.get(m["sourceId"])
        source_attributes = (source or {}).get("attributes") or {}
        mappings.append(
            {
                **m,
                "sourceName": source["name"] if source else None,
                "sourceType": source["type"] if source else None,
                "sourceSchema": source_attributes.get("schema"),
            }
        )
    return build_raw_data(
        element,
        path=element_path(element, by_id),
        children=[e for e in dataset.elements if e["parentId"] == element_id],
        table=tables.get(element.get("tableId")) if element.get("tableId") else None,
        mappings=mappings,
    )
