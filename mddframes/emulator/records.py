"""Builders of wire-shaped records shared by the sample and the scale data.

Each builder returns a plain JSON dict whose keys are in the fixed order of the
wire contract (docs/wire-format.md), so that loaders and writers can be tested
for reproducing key order. Nothing here reads a clock or an unseeded random
source: timestamps come from :func:`timestamp`.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

JSON = dict[str, Any]

#: The instant every generated timestamp counts from (fixed, never "now").
EPOCH = datetime(2024, 3, 4, 8, 0, 0, tzinfo=UTC)


def timestamp(step: int, *, minutes_per_step: int = 197) -> str:
    """An ISO-8601 UTC timestamp ``step`` steps after :data:`EPOCH`.

    Parameters
    ----------
    step : int
        How many steps after the epoch (any non-negative integer).
    minutes_per_step : int, default 197
        Length of one step; an odd length spreads values over hours and days.

    Returns
    -------
    str
        E.g. ``"2024-03-04T11:17:00Z"`` (seconds precision, ``Z`` suffix).
    """
    moment = EPOCH + timedelta(minutes=step * minutes_per_step)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def element(
    *,
    id: str,
    name: str,
    type: str,
    parent_id: str | None,
    system: str,
    version: int,
    modified_at: str,
    deployment_id: str | None,
    attributes: JSON,
    table_id: str | None = None,
    mapping_id: str | None = None,
) -> JSON:
    """An element in the ``getStructure`` shape.

    ``deployed`` is derived from ``deployment_id``; ``tableId`` and ``mappingId``
    are present only when the element owns a table or a mapping.
    """
    record: JSON = {
        "id": id,
        "name": name,
        "type": type,
        "parentId": parent_id,
        "systemName": system,
        "version": version,
        "modifiedAt": modified_at,
        "deployed": deployment_id is not None,
        "deploymentId": deployment_id,
    }
    if table_id is not None:
        record["tableId"] = table_id
    if mapping_id is not None:
        record["mappingId"] = mapping_id
    record["attributes"] = attributes
    return record


def column(
    name: str,
    data_type: str,
    *,
    nullable: bool = True,
    primary_key: bool = False,
    description: str | None = None,
    **extra: Any,
) -> JSON:
    """A column of a table's metadata: the five contract keys, then ``extra`` keys."""
    record: JSON = {
        "name": name,
        "dataType": data_type,
        "nullable": nullable,
        "primaryKey": primary_key,
        "description": description if description is not None else humanize(name),
    }
    record.update(extra)
    return record


def table(
    *,
    id: str,
    name: str,
    structure_id: str,
    description: str,
    columns: list[JSON],
    data: list[JSON],
    **metadata: Any,
) -> JSON:
    """A table in the ``getTable`` shape; ``metadata`` keys go between description and columns."""
    meta: JSON = {"description": description}
    meta.update(metadata)
    meta["columns"] = columns
    return {"id": id, "name": name, "structureId": structure_id, "metadata": meta, "data": data}


def mapping(
    *,
    id: str,
    name: str,
    source_id: str,
    target_id: str,
    description: str,
    column_mappings: list[JSON],
) -> JSON:
    """A mapping in the ``getMapping`` shape."""
    return {
        "id": id,
        "name": name,
        "sourceId": source_id,
        "targetId": target_id,
        "description": description,
        "columnMappings": column_mappings,
    }


def package(
    *,
    system: str,
    name: str,
    description: str,
    status: str,
    created_at: str,
    structure_ids: list[str],
) -> JSON:
    """A deployment package record (``status`` is ``"OPEN"`` or ``"CLOSED"``)."""
    return {
        "systemName": system,
        "name": name,
        "description": description,
        "status": status,
        "createdAt": created_at,
        "structureIds": structure_ids,
    }


def humanize(identifier: str) -> str:
    """``"customer_no"`` -> ``"Customer no"``: a readable default description."""
    text = identifier.replace("_", " ").strip()
    return text[:1].upper() + text[1:]
