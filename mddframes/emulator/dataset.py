"""The plain-data shape that seeds the emulator's store.

Sample and scale builders produce a :class:`Dataset`; the store loads one. Every
record is already in its wire shape (docs/wire-format.md), so the store keeps JSON
documents and the routes serve them as they are.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

JSON = dict[str, Any]

#: The kinds of record, each the name of one list of :class:`Dataset` without its "s",
#: in the order a store loads them (an element before its table or mapping).
KINDS = ("system", "element", "table", "mapping", "object_type", "package")


@dataclass
class Dataset:
    """Everything the emulator serves, as wire-shaped JSON records.

    Attributes
    ----------
    systems : list of dict
        ``{"name", "description"}``.
    elements : list of dict
        The ``getStructure`` shape: ``{"id", "name", "type", "parentId", "systemName",
        "version", "modifiedAt", "deployed", "deploymentId", "attributes": {...}}`` plus
        ``"tableId"`` or ``"mappingId"`` when the element owns a table or a mapping.
        Listed parents before children, siblings in display order.
    tables : list of dict
        The ``getTable`` payload: ``{"id", "name", "structureId", "metadata": {...,
        "columns": [...]}, "data": [...]}``.
    mappings : list of dict
        The ``getMapping`` payload: ``{"id", "name", "sourceId", "targetId",
        "description", "columnMappings": [...]}``; ``sourceId``/``targetId`` are element ids.
    object_types : list of dict
        The ``getObjectTypes`` entry ``{"id", "name", "description", "fileExtension",
        "elementTypes": [...]}`` plus ``"template"``: the jinja2 source (never served).
    packages : list of dict
        ``{"systemName", "name", "description", "status": "OPEN" | "CLOSED",
        "createdAt", "structureIds": [...]}``.
    """

    systems: list[JSON] = field(default_factory=list)
    elements: list[JSON] = field(default_factory=list)
    tables: list[JSON] = field(default_factory=list)
    mappings: list[JSON] = field(default_factory=list)
    object_types: list[JSON] = field(default_factory=list)
    packages: list[JSON] = field(default_factory=list)

    def records(self) -> Iterator[tuple[str, JSON]]:
        """Every record as ``(kind, record)``, kinds in the order of :data:`KINDS`."""
        for kind in KINDS:
            for record in getattr(self, kind + "s"):
                yield kind, record

    @classmethod
    def from_records(cls, records: Iterable[tuple[str, JSON]]) -> Dataset:
        """The dataset of ``(kind, record)`` pairs (see :meth:`records`)."""
        dataset = cls()
        lists = {kind: getattr(dataset, kind + "s") for kind in KINDS}
        for kind, record in records:
            lists[kind].append(record)
        return dataset
