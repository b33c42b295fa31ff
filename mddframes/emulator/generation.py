"""Raw data and script generation: looks records up in the store and hands them to the
content modules :func:`rawdata.build_raw_data` and :func:`rendering.render_script`."""

from __future__ import annotations

import json
from typing import Any

from mddframes.emulator.errors import InvalidInput
from mddframes.emulator.rawdata import build_raw_data
from mddframes.emulator.rendering import render_script
from mddframes.emulator.store import Store

JSON = dict[str, Any]


def raw_data(store: Store, structure_id: str) -> JSON:
    """The ``getRawData`` answer: what a template receives for one element."""
    element = store.element(structure_id)
    table = json.loads(store.table_json(element["tableId"])) if element.get("tableId") else None
    mappings = []
    for mapping in store.mappings_targeting(structure_id):
        source_id = mapping.get("sourceId")
        source: JSON = {}
        if isinstance(source_id, str) and not store.missing_elements([source_id]):
            source = store.element(source_id)
        attributes = source.get("attributes")
        mappings.append(
            {
                **mapping,
                "sourceName": source.get("name"),
                "sourceType": source.get("type"),
                "sourceSchema": attributes.get("schema") if isinstance(attributes, dict) else None,
            }
        )
    return build_raw_data(
        element,
        path=store.element_path(element),
        children=store.children(structure_id),
        table=table,
        mappings=mappings,
    )


def applies(object_type: JSON, element: JSON) -> bool:
    """Whether ``object_type`` can render an element of ``element``'s type."""
    types = object_type.get("elementTypes")
    return not types or element.get("type") in types


def render(store: Store, structure_id: str, object_type_id: str) -> tuple[str, str]:
    """Render one element with one object type -> (file name, script text).

    Raises
    ------
    UnknownObject
        No such element or object type.
    InvalidInput
        The object type does not apply to the element's type.
    """
    object_type = store.object_type(object_type_id)
    data = raw_data(store, structure_id)
    try:
        return render_script(object_type, data)
    except ValueError as exc:  # TemplateNotApplicableError: a client error, not a crash
        raise InvalidInput(str(exc)) from None
