"""Field names of the wire format in camelCase, whichever case the service writes.

The description shows no field names of most answers (wire-format rows 11-24); the
emulator writes them in camelCase, as Jackson does by default, and a service configured
with ``SNAKE_CASE`` naming writes ``parent_id``, ``table_id``, ``data_type``... The raw
layer renames the known snake_case names of an answer to camelCase (:func:`to_camel`),
so every layer above reads one spelling, and writes bodies it composes itself in the
case the service answered in (:func:`to_snake`). The keys users own (table rows under
``data``, element ``attributes``) are never renamed; table and mapping documents are
kept as served, because they are written back whole.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

WIRE_NAMES: tuple[str, ...] = (
    "parentId",
    "tableId",
    "mappingId",
    "systemName",
    "modifiedAt",
    "deploymentId",
    "structureId",
    "structureIds",
    "dataType",
    "primaryKey",
    "sourceId",
    "targetId",
    "columnMappings",
    "createdAt",
    "fileExtension",
    "elementTypes",
    "objectTypeId",
    "taskId",
    "sourceName",
    "sourceType",
    "sourceSchema",
)
"""Every camelCase field name of docs/wire-format.md."""

_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
TO_SNAKE: dict[str, str] = {name: _BOUNDARY.sub("_", name).lower() for name in WIRE_NAMES}
TO_CAMEL: dict[str, str] = {snake: camel for camel, snake in TO_SNAKE.items()}
_USER_KEYS = frozenset({"data", "attributes"})  # their keys are the user's own names


def _sampled_keys(value: Any, depth: int = 4) -> Iterator[str]:
    """Keys along the first entry of every list, a few levels deep (a cheap look)."""
    if depth == 0:
        return
    if isinstance(value, list):
        if value:
            yield from _sampled_keys(value[0], depth - 1)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            if key not in _USER_KEYS:
                yield from _sampled_keys(item, depth - 1)


def is_snake_case(value: Any) -> bool:
    """Whether ``value`` (a decoded answer) spells any wire name in snake_case."""
    return any(key in TO_CAMEL for key in _sampled_keys(value))


def spelling(value: Any) -> str | None:
    """How ``value`` spells the wire names: ``"snake_case"``, ``"camelCase"`` or ``None``.

    ``None`` when it holds none of them (a bare list of ids, say).
    """
    keys = set(_sampled_keys(value))
    if keys & TO_CAMEL.keys():
        return "snake_case"
    return "camelCase" if keys & TO_SNAKE.keys() else None


def rename(value: Any, names: dict[str, str]) -> Any:
    """``value`` with the keys found in ``names`` renamed; users' keys left alone."""
    if isinstance(value, list):
        return [rename(item, names) for item in value]
    if isinstance(value, dict):
        return {
            names.get(key, key): item if key in _USER_KEYS else rename(item, names)
            for key, item in value.items()
        }
    return value


def to_camel(value: Any) -> Any:
    """``value`` with snake_case wire names in camelCase (unchanged when it has none)."""
    return rename(value, TO_CAMEL) if is_snake_case(value) else value


def to_snake(value: Any) -> Any:
    """``value`` with camelCase wire names in snake_case."""
    return rename(value, TO_SNAKE)
